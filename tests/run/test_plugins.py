"""Suite packages register themselves by string maps in their own __init__.py; nothing outside names them."""

from __future__ import annotations

import ast
import sys

import pytest

import runner.suites
from runner.turns.generation import STRATEGIES, build_strategy
from runner.judges.rubrics import RUBRICS, rubric_class
from runner.run import plugins
from runner.suites.base import SuiteSettings
from runner.suites.registry import SUITES
from tests.conftest import REPO_ROOT


def test_every_suite_package_is_found_and_its_entries_load() -> None:
    assert {"smoke", "macro", "micro", "evogenui"} <= set(SUITES)
    for name, (settings_model, constructor) in SUITES.items():
        assert issubclass(settings_model, SuiteSettings), name
        assert callable(constructor), name
    assert rubric_class("evogenui").__name__ == "EvoGenUIRubric"
    assert "evogenui" in RUBRICS
    assert build_strategy("single_pass").name == "single_pass"
    assert set(plugins.declared("GENERATION_STRATEGIES")) <= set(STRATEGIES)


def test_suite_package_inits_import_nothing() -> None:
    # Finding the maps must not import suite code: that is what keeps the registries free of cycles.
    for init in sorted((REPO_ROOT / "runner" / "suites").glob("*/__init__.py")):
        tree = ast.parse(init.read_text())
        imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert not imports, f"{init.relative_to(REPO_ROOT)} imports {ast.unparse(imports[0])}"


@pytest.fixture()
def extra_package(monkeypatch: pytest.MonkeyPatch, tmp_path):
    """A suite package of a test's own on the suites path (a plug-in as a user would add one)."""
    folder = tmp_path / "suites_extra"
    folder.mkdir()
    monkeypatch.setattr(runner.suites, "__path__", [*runner.suites.__path__, str(folder)])
    plugins.declared.cache_clear()
    yield folder
    for name in [name for name in sys.modules if name.startswith("runner.suites.zz_")]:
        del sys.modules[name]
    plugins.declared.cache_clear()


def _package(folder, name: str, body: str) -> None:
    (folder / name).mkdir()
    (folder / name / "__init__.py").write_text(body)


def test_a_new_package_contributes_without_touching_a_registry(extra_package) -> None:
    _package(extra_package, "zz_extra", 'GENERATION_STRATEGIES = {"twice": "runner.turns.generation:SinglePass"}\n')
    assert plugins.declared("GENERATION_STRATEGIES")["twice"] == "runner.turns.generation:SinglePass"
    assert plugins.load("runner.turns.generation:SinglePass")().name == "single_pass"


def test_a_name_declared_twice_names_both_packages(extra_package) -> None:
    _package(extra_package, "zz_clash", 'SUITES = {"smoke": "runner.suites.smoke.suite:SUITE_ENTRY"}\n')
    with pytest.raises(ValueError, match=r"'smoke' is declared by both runner\.suites\.smoke and runner\.suites\.zz_clash"):
        plugins.declared("SUITES")


def test_a_malformed_reference_names_its_file(extra_package) -> None:
    _package(extra_package, "zz_bad", 'RUBRICS = {"broken": "no_colon_here"}\n')
    with pytest.raises(ValueError, match=r"zz_bad/__init__.py: RUBRICS\['broken'\]: 'no_colon_here'"):
        plugins.declared("RUBRICS")


def test_a_map_that_is_not_a_dict_is_refused(extra_package) -> None:
    _package(extra_package, "zz_list", 'SUITES = ["x"]\n')
    with pytest.raises(TypeError, match="zz_list/__init__.py: SUITES must be a dict"):
        plugins.declared("SUITES")

