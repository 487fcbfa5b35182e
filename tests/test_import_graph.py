"""The package's import graph has no cycle, counting every import: top level, inside functions, under
TYPE_CHECKING. A cycle hidden by a late import still couples the modules both ways; the layering is
errors (leaf) <- config <- owners of each section <- registries <- experiment <- entry points.

Importing `runner.a.b` runs `runner/a/__init__.py` too, so each import also counts as one of its packages.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "runner"


def _module_files() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _imported_names(module: str, path: Path) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: strip level-1 trailing parts off the package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return names


def import_graph() -> dict[str, set[str]]:
    """module -> the runner modules (and their packages) it imports anywhere in its body."""
    modules = _module_files()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module, path in modules.items():
        for name in _imported_names(module, path):
            while name:
                # Its own packages are initialised before it runs: not an edge of a cycle.
                if name in modules and name != module and not module.startswith(name + "."):
                    graph[module].add(name)
                name = name.rpartition(".")[0]
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path [a, b, ..., a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    for root in sorted(graph):
        if state.get(root):
            continue
        path = [root]
        pending = [iter(sorted(graph[root]))]
        state[root] = 1
        while pending:
            child = next(pending[-1], None)
            if child is None:
                state[path.pop()] = 2
                pending.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                pending.append(iter(sorted(graph[child])))
    return None


def test_the_runner_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 100 and "runner.turns.engine" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_check_sees_imports_inside_functions_and_relative_ones(tmp_path: Path) -> None:
    # The analysis itself: a late import inside a function closes a cycle just like a top-level one.
    graph = {"runner.a": {"runner.b"}, "runner.b": set()}
    assert find_cycle(graph) is None
    graph["runner.b"].add("runner.a")
    assert find_cycle(graph) == ["runner.a", "runner.b", "runner.a"]
    module = tmp_path / "late.py"
    module.write_text("def f():\n    from runner.config import X\n    from . import sibling\n    from ..up import y\n")
    names = _imported_names("runner.pkg.late", module)
    assert {"runner.config", "runner.pkg.sibling", "runner.up", "runner.up.y"} <= names


def test_no_module_imports_another_modules_private_names() -> None:
    """A leading underscore says "mine alone": a name another module needs is made public where it is defined."""
    found = []
    for module, path in _module_files().items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("runner"):
                found += [f"{module}: {node.module}.{alias.name}" for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert not found, found


# The package's layers, lowest first: a module imports its own layer and those below. A module is in the layer of
# the longest prefix that names it; entry points (`__main__`, `*_command` modules and the command aliases at the
# package's top) sit above everything. What run/ lent to the layers below it (progress, processes, composition,
# the preflight's Problem, the suite packages' maps) lives below them, so only the imports counted by
# UPWARD_CEILING still run back up (the report's collection reads a merged run's records through run/merge.py).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("runner.errors", "runner.kinds", "runner.config", "runner.compose", "runner.progress",
                    "runner.processes", "runner.problems", "runner.host_probes", "runner.tracking.settings")),
    ("records", ("runner.turns.tasks", "runner.turns.records", "runner.turns.evidence",
                 "runner.turns.evidence_folder", "runner.judges.checks")),
    ("services", ("runner.models", "runner.sandbox", "runner.browser", "runner.tracking", "runner.metrics")),
    ("players", ("runner.actors", "runner.judges", "runner.agents", "runner.turns.generation", "runner.turns.packets",
                 "runner.turns.preview")),
    ("engine", ("runner.turns", "runner.suites.base", "runner.suites.paper_data")),
    ("outputs", ("runner.report", "runner.validity", "runner.view")),
    ("suites", ("runner.suites",)),
    ("wiring", ("runner.run",)),
    ("entry", ("runner.__main__", "runner.reward")),
)
UPWARD_CEILING = 1  # imports that run back up a layer (22 before run/'s helpers moved below their users)


def layer_of(module: str, modules: dict[str, Path]) -> int:
    """The index in LAYERS of the module's layer."""
    last = module.rpartition(".")[2]
    prefixes = [(prefix, index) for index, (_, names) in enumerate(LAYERS) for prefix in names]
    matches = [(len(prefix), index) for prefix, index in prefixes if module == prefix or module.startswith(prefix + ".")]
    top_level_alias = module.count(".") == 1 and modules[module].name != "__init__.py" and not matches
    if last == "__main__" or last.endswith("_command") or top_level_alias:
        return len(LAYERS) - 1
    assert matches, f"{module} is in no layer of tests/test_import_graph.py LAYERS"
    return max(matches)[1]


def upward_imports(graph: dict[str, set[str]], modules: dict[str, Path]) -> list[str]:
    """"importer -> imported" for every import of a module in a higher layer (packages' __init__ not counted)."""
    found = []
    for module, imported in sorted(graph.items()):
        if module == "runner":
            continue
        for name in sorted(imported):
            if modules[name].name == "__init__.py":
                continue
            if layer_of(name, modules) > layer_of(module, modules):
                found.append(f"{module} -> {name}")
    return found


def test_few_imports_run_back_up_a_layer() -> None:
    found = upward_imports(import_graph(), _module_files())
    assert len(found) <= UPWARD_CEILING, f"{len(found)} imports run back up a layer:\n" + "\n".join(found)


def test_the_layer_check_counts_an_import_of_a_higher_layer_only() -> None:
    modules = {name: Path(f"{name.replace('.', '/')}.py") for name in
               ("runner.errors", "runner.run.progress", "runner.models.vllm_server", "runner.run.experiment",
                "runner.pull")}
    graph = {"runner.models.vllm_server": {"runner.run.progress", "runner.errors"},
             "runner.run.experiment": {"runner.models.vllm_server"}, "runner.pull": {"runner.run.experiment"},
             "runner.errors": set(), "runner.run.progress": set()}
    assert upward_imports(graph, modules) == ["runner.models.vllm_server -> runner.run.progress"]
