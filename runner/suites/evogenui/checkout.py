"""A checkout of the published EvoGenUI-Bench (MIT), used as it is: its tasks, its tool backends, its prompts.

Layout read (nothing is copied into the project):

    bench/task_subsets/<scenario suite>_50/*.json     the 150 tasks (three suites of 50)
    runtime/types.py                                  ToolDefinition (the object backends receive)
    runtime/tool_backends/<fixture_id>.py             TOOL_SCHEMAS + invoke(*, tool, args, state)
    runner/generation/prompts.py, runner/evaluation/prompts.py   its prompts (benchmark_prompts.py)

The checkout's `runtime` folder is imported as the package `runtime` and nothing else of the checkout
becomes importable (tool_bridge.register_package), here and in the sandboxed artifact server, where the same
folder is mounted read-only.

Per tool the benchmark builds a tool definition from the task's tool entry (name, mode, mock_contract:
fixture_id, handler_ref, allowed, semantic_contract, fixture_policy; `actor_hints` merged into the
fixture policy) and the backend's TOOL_SCHEMAS entry (description, input/output schema). The generator
sees only its `api_doc()`: name, description, mode, inputSchema, outputSchema, with the private schema
annotation `x-genui-derived-enum` removed.
"""

from __future__ import annotations

import copy
import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from runner.suites.evogenui.tool_bridge import register_package
from runner.suites.native import TaskFormatError
from runner.turns.tasks import Task

RUNTIME_PACKAGE = "runtime"
TASK_SUBSETS = Path("bench") / "task_subsets"
SUBSET_GLOB = "*_50"
PRIVATE_SCHEMA_KEYS = ("x-genui-derived-enum",)
_FIXTURE_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MODES = ("read", "write")


class CheckoutError(TaskFormatError):
    """The checkout is incomplete or one of its tasks cannot be bound to its backend."""


def public_schema(schema: Any) -> Any:
    """A schema without the benchmark's private annotations (what `api_doc` shows)."""
    cloned = copy.deepcopy(schema)

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            for key in PRIVATE_SCHEMA_KEYS:
                value.pop(key, None)
            for item in value.values():
                visit(item)
        elif isinstance(value, list):
            for item in value:
                visit(item)

    visit(cloned)
    return cloned


def api_doc(definition: dict[str, Any]) -> dict[str, Any]:
    """The public tool entry, in the benchmark's key order."""
    return {
        "name": definition["name"],
        "description": definition["description"],
        "mode": definition["mode"],
        "inputSchema": public_schema(definition["input_schema"]),
        "outputSchema": public_schema(definition["output_schema"]),
    }


class BenchmarkCheckout:
    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise CheckoutError(f"suite.benchmark_path: {self.root} is not a folder")
        self.runtime_dir = self.root / RUNTIME_PACKAGE
        for needed in (self.root / TASK_SUBSETS, self.runtime_dir / "types.py", self.runtime_dir / "tool_backends"):
            if not needed.exists():
                raise CheckoutError(f"suite.benchmark_path: {self.root} is not an EvoGenUI-Bench checkout "
                                    f"({needed.relative_to(self.root)} is missing)")

    @property
    def backends_dir(self) -> Path:
        return self.runtime_dir / "tool_backends"

    def task_files(self) -> list[Path]:
        """bench/task_subsets/<suite>_50/*.json, sorted."""
        files = sorted((self.root / TASK_SUBSETS).glob(f"{SUBSET_GLOB}/*.json"))
        if not files:
            raise CheckoutError(f"{self.root / TASK_SUBSETS}: no {SUBSET_GLOB}/*.json task files")
        return files

    # -- backends ------------------------------------------------------------------------------------

    def runtime_package(self) -> ModuleType:
        return register_package(RUNTIME_PACKAGE, self.runtime_dir)

    def backend(self, fixture_id: str) -> ModuleType:
        if not isinstance(fixture_id, str) or not _FIXTURE_ID.match(fixture_id):
            raise CheckoutError(f"invalid Python fixture_id {fixture_id!r}")
        self.runtime_package()
        module_name = f"{RUNTIME_PACKAGE}.tool_backends.{fixture_id}"
        if not (self.backends_dir / f"{fixture_id}.py").is_file():
            raise CheckoutError(f"no backend for fixture id {fixture_id!r}: {fixture_id}.py not found in {self.backends_dir}")
        try:
            return importlib.import_module(module_name)
        except Exception as error:
            raise CheckoutError(f"backend {module_name} ({self.backends_dir / (fixture_id + '.py')}): import failed: "
                                f"{type(error).__name__}: {error}") from error

    def tool_definitions(self, task: Task) -> dict[str, dict[str, Any]]:
        """Per tool, the runtime contract the benchmark builds (ToolDefinition's fields), in task order."""
        hints = task.extra.get("actor_hints") or {}
        if not isinstance(hints, dict):
            raise CheckoutError(f"{task.source_path}: actor_hints must be an object")
        unknown = sorted(set(hints) - set(task.extra.get("tools", {})))
        if unknown:
            raise CheckoutError(f"{task.source_path}: actor_hints reference unknown tool names: {', '.join(unknown)}")
        definitions: dict[str, dict[str, Any]] = {}
        for name, binding in task.extra.get("tools", {}).items():
            where = f"{task.source_path}: tool {name!r}"
            module = self.backend(binding["fixture_id"])
            schemas = getattr(module, "TOOL_SCHEMAS", None)
            if not isinstance(schemas, dict) or not isinstance(schemas.get(name), dict):
                raise CheckoutError(f"{where}: not in TOOL_SCHEMAS of backend {binding['fixture_id']!r}")
            entry = schemas[name]
            inputs = entry.get("inputSchema") or entry.get("input_schema")
            outputs = entry.get("outputSchema") or entry.get("output_schema")
            if not isinstance(inputs, dict) or not isinstance(outputs, dict):
                raise CheckoutError(f"{where}: backend schema needs inputSchema and outputSchema objects")
            description = entry.get("description")
            if not isinstance(description, str) or not description.strip():
                raise CheckoutError(f"{where}: backend schema needs a non-empty description")
            mode = str(binding.get("mode") or "read").strip() or "read"  # the benchmark's default for mock tools
            if mode not in _MODES:
                raise CheckoutError(f"{where}: mode {mode!r} must be one of {list(_MODES)}")
            allowed = binding.get("allowed", True)
            if not isinstance(allowed, bool):
                raise CheckoutError(f"{where}: mock_contract.allowed must be a boolean")
            policy = copy.deepcopy(binding.get("fixture_policy") or {})
            policy.update(copy.deepcopy(hints.get(name) or {}))
            definitions[name] = {
                "name": name,
                "description": description,
                "input_schema": copy.deepcopy(inputs),
                "output_schema": copy.deepcopy(outputs),
                "mode": mode,
                "backend": "python",
                "allowed": allowed,
                "handler_ref": binding.get("handler_ref") or None,
                "fixture_id": binding["fixture_id"],
                "semantic_contract": copy.deepcopy(binding.get("semantic_contract") or {}),
                "fixture_policy": policy,
            }
        return definitions


def scenario_fixtures(task: Task) -> dict[str, Any]:
    """The task's scenario fixtures: `scenario_fixtures` as given, else one `default` scenario whose initial
    state is the task's private `initial_state` (the benchmark's rule for mock tools)."""
    declared = task.extra.get("scenario_fixtures")
    initial = task.extra.get("initial_state")
    if declared is not None:
        if initial is not None:
            raise CheckoutError(f"{task.source_path}: initial_state cannot be combined with scenario_fixtures")
        if not isinstance(declared, dict):
            raise CheckoutError(f"{task.source_path}: scenario_fixtures must be an object")
        return copy.deepcopy(declared)
    if initial is not None and not isinstance(initial, dict):
        raise CheckoutError(f"{task.source_path}: initial_state must be an object")
    return {"default": {"tools": {}, "resources": {}, "initial_state": copy.deepcopy(initial or {})}}


def initial_scenario_states(task: Task) -> dict[str, Any]:
    """The runtime state of turn 1 in the benchmark's layout: {"scenarios": {name: initial state}}."""
    return {"scenarios": {name: copy.deepcopy((fixture or {}).get("initial_state") or {})
                          for name, fixture in scenario_fixtures(task).items() if isinstance(fixture, dict)}}
