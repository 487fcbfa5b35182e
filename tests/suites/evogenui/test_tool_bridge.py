"""EvoGenUI-Bench's tool bridge runtime runs inside the sandbox, loaded by the artifact server from beside it, where
nothing of the project can be imported: the standard library and jsonschema only."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from runner.suites.evogenui import tool_bridge
from runner.suites.evogenui.suite import BRIDGE_RUNTIME


def test_the_runtime_imports_the_standard_library_and_jsonschema_only() -> None:
    tree = ast.parse(Path(tool_bridge.__file__).read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a relative import needs the package, which the sandbox does not have"
            roots.add((node.module or "").partition(".")[0])
    assert roots - set(sys.stdlib_module_names) == {"jsonschema"}


def test_the_suite_ships_this_file_and_the_server_finds_its_entry_point() -> None:
    assert BRIDGE_RUNTIME == Path(tool_bridge.__file__)
    assert callable(tool_bridge.create_bridge)
