"""Whole-config validation: config.py checks the run's keys and each section's kind; every section's options
are its owner's, and a typo there is still reported before any work starts, with its dotted key."""

from __future__ import annotations

import ast

import pytest

from runner.compose import compose
from runner.errors import ConfigError
from runner.run.validation import validate_config
from tests.conftest import REPO_ROOT


def _composed(*overrides: str) -> dict:
    return compose(overrides, project_root=REPO_ROOT)


@pytest.mark.parametrize("override, key", [
    ("+actor.probe.max_actionz=3", "actor.probe.max_actionz"),
    ("+judge.rules.check_timeout_z=3", "judge.rules.check_timeout_z"),
    ("+sandbox.local.memory_mbz=3", "sandbox.local.memory_mbz"),
    ("+browser.headlesz=true", "browser.headlesz"),
])
def test_a_typo_in_an_owned_section_names_its_dotted_key(override: str, key: str) -> None:
    with pytest.raises(ConfigError, match=rf"{key.replace('.', r'[.]')}: unknown key"):
        validate_config(_composed(override))


def test_the_default_config_validates() -> None:
    config = validate_config(_composed())
    assert config.actor.kind == "probe" and config.sandbox.kind == "local"


def test_config_module_imports_no_section_owner() -> None:
    # The layering: errors <- config <- owners of each section; config.py names no owner's module.
    tree = ast.parse((REPO_ROOT / "runner" / "config.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert {name for name in imported if name and name.startswith("runner.")} <= {"runner.errors", "runner.tracking.settings"}
