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


# --------------------------------------------------------------------------- parsed once

# Where a section's settings model may be parsed from its raw dict: config resolution itself, the parse helpers it
# calls, and a settings model's own `from_options`. Each other entry says why it is not a re-parse of a section.
PARSE_ALLOWED = {
    ("runner/run/validation.py", "*"),  # config resolution: each section once
    ("runner/kinds.py", "parse"), ("runner/kinds.py", "resolve"),  # Kind.parse, KINDS.resolve (the one parse)
    ("runner/errors.py", "section_settings"),
    ("runner/suites/registry.py", "validate_suite_options"),  # the suite's parse (returns the resolved one)
    ("runner/judges/llm_settings.py", "validate_endpoint"),  # part of a judge's or actor's from_options
    ("runner/suites/webgen/suite.py", "_parse_tester"),  # the suite settings' own validator
    # A provider factory given a section no validation parsed (a one-off tool's, a test's); a run's roles and a
    # judge's or actor's endpoint reach it parsed and are taken as they are.
    ("runner/models/providers.py", "_endpoint_settings"),
    ("runner/run/pull.py", "server_settings"),  # `python -m runner.pull` reads a model section it never runs
}


def _section_settings_names() -> set[str]:
    from runner.kinds import KINDS
    import runner.suites.registry  # noqa: F401  (registers the suites)

    names = {"BrowserSettings", "VLLMServerSettings"}
    for family in KINDS.families:
        for name in KINDS.names(family):
            settings = KINDS.get(family, name).settings
            if settings is not None:
                names.add(settings.__name__)
    return names


def _parses(tree: ast.AST, settings: set[str]) -> list[tuple[str, int]]:
    """(enclosing function, line) of every `X.model_validate(...)`, `section_settings(X, ...)` of a section's
    settings class X, and every `kind.parse(...)` / `provider.parse(...)` (runner.kinds.Kind.parse)."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Call):
                func = child.func
                if isinstance(func, ast.Attribute) and func.attr == "model_validate" and \
                        isinstance(func.value, ast.Name) and func.value.id in settings:
                    found.append((name, child.lineno))
                elif isinstance(func, ast.Name) and func.id == "section_settings" and child.args and \
                        isinstance(child.args[0], ast.Name) and child.args[0].id in settings:
                    found.append((name, child.lineno))
                elif isinstance(func, ast.Attribute) and func.attr == "parse" and isinstance(func.value, ast.Call) \
                        and isinstance(func.value.func, ast.Attribute) and func.value.func.attr in ("get", "find") \
                        and isinstance(func.value.func.value, ast.Name) and func.value.func.value.id == "KINDS":
                    found.append((name, child.lineno))
                elif isinstance(func, ast.Attribute) and func.attr == "parse" and isinstance(func.value, ast.Name) \
                        and func.value.id in ("kind", "provider"):
                    found.append((name, child.lineno))
            visit(child, name)

    visit(tree, "<module>")
    return found


def test_no_module_parses_a_section_again() -> None:
    """Config validation parses every section once (runner/run/validation.py) and the code receives the parsed
    objects (config.<family>.settings, config.suite.settings, config.browser_settings, config.model_roles): a
    parse of a section's settings model anywhere else is a second parse that can drift from the first."""
    settings = _section_settings_names()
    offenders = []
    for path in sorted((REPO_ROOT / "runner").rglob("*.py")):
        relative = str(path.relative_to(REPO_ROOT))
        for function, line in _parses(ast.parse(path.read_text()), settings):
            if function == "from_options" or (relative, function) in PARSE_ALLOWED or (relative, "*") in PARSE_ALLOWED:
                continue
            offenders.append(f"{relative}:{line} ({function})")
    assert not offenders, "sections parsed again outside config validation:\n" + "\n".join(offenders)


def test_the_guard_sees_a_re_parse() -> None:
    """The guard above finds each form of a parse (so it cannot pass by seeing nothing)."""
    source = ("def f(config):\n"
              "    BrowserSettings.model_validate(config.browser)\n"
              "    section_settings(DockerSandboxSettings, config.sandbox.options, 'sandbox.options')\n"
              "    KINDS.get('actor', 'llm').parse({}, 'actor.options')\n"
              "    kind.parse({}, 'judge.options')\n")
    assert [line for _, line in _parses(ast.parse(source), _section_settings_names())] == [2, 3, 4, 5]


def test_validation_resolves_every_section() -> None:
    """The validated config carries each section's parsed settings and every role's model."""
    from runner.browser.launch import BrowserSettings
    from runner.run.validation import compose_config

    config = compose_config(["suite=evogenui", "judge=kimi", "actor=llm", "sandbox=docker"], project_root=REPO_ROOT)
    assert isinstance(config.browser_settings, BrowserSettings)
    assert type(config.sandbox.settings).__name__ == "DockerSandboxSettings"
    assert type(config.judge.settings).__name__ == "LLMJudgeSettings"
    assert type(config.actor.settings).__name__ == "LLMActorSettings"
    assert type(config.suite.settings).__name__ == "EvoGenUISuiteSettings"
    assert set(config.model_roles) == {"generator", "judge", "actor"}
    assert type(config.model_roles["judge"].settings).__name__ == "VLLMModelSettings"
    assert config.model_roles["judge"].capabilities.vllm_served and config.model_roles["judge"].capabilities.vision
