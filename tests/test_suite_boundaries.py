"""Each benchmark's code stays in its folder: no module outside `runner/suites/<benchmark>/` imports
`runner.suites.<benchmark>` or anything in it, counting every import (tests/test_import_graph.py's graph). The
shared modules of runner/suites/ (base, registry, native, payload) are outside every benchmark's folder, so
they are held to it too, and so is one suite importing another's internals. What the rest of the runner needs
of a suite it finds through the string maps in the suite's `__init__.py` (runner/kinds.py), which import
nothing until used and are no edge of the graph.
"""

from __future__ import annotations

from tests.conftest import REPO_ROOT
from tests.test_import_graph import import_graph

SUITES_PACKAGE = "runner.suites"
def benchmark_packages() -> list[str]:
    """Every suite package: a folder with an __init__.py directly under runner/suites/."""
    folder = REPO_ROOT / "runner" / "suites"
    return sorted(f"{SUITES_PACKAGE}.{path.name}" for path in folder.iterdir() if (path / "__init__.py").is_file())


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def crossings(graph: dict[str, set[str]], packages: list[str]) -> list[str]:
    """"importer -> imported" for every import of a suite package's module from outside that package."""
    found = []
    for module, imported in sorted(graph.items()):
        for name in sorted(imported):
            owner = next((package for package in packages if _inside(name, package)), None)
            if owner is not None and not _inside(module, owner):
                found.append(f"{module} -> {name}")
    return found


def test_no_module_outside_a_suite_folder_imports_the_suite() -> None:
    packages = benchmark_packages()
    assert {"runner.suites.evogenui", "runner.suites.smoke", "runner.suites.web2code"} <= set(packages)
    found = crossings(import_graph(), packages)
    assert not found, "imports of a suite's modules from outside its folder:\n" + "\n".join(found)


def test_the_check_flags_shared_modules_and_other_suites_but_not_the_suite_itself() -> None:
    packages = ["runner.suites.alpha", "runner.suites.beta"]
    graph = {
        "runner.suites.alpha.suite": {"runner.suites.alpha.metrics", "runner.suites.base", "runner.metrics.basic"},
        "runner.suites.beta.suite": {"runner.suites.alpha.metrics", "runner.suites.alpha"},
        "runner.suites.registry": {"runner.suites.alphabet"},  # a name sharing a prefix is another package
        "runner.report.leaderboard": {"runner.suites.beta.report"},
    }
    assert crossings(graph, packages) == ["runner.report.leaderboard -> runner.suites.beta.report",
                                          "runner.suites.beta.suite -> runner.suites.alpha",
                                          "runner.suites.beta.suite -> runner.suites.alpha.metrics"]
