"""EvoGenUI-Bench's tool bridge: the tool and resource semantics behind an artifact's `callTool` and resource
reads. The sandboxed artifact server (runner/sandbox/server.py) loads this file from beside itself, so it runs
on the standard library plus jsonschema and imports nothing of the project; the suite names it in its
`ToolBridge` (`runtime`) and the sandbox ships it.

Two backend conventions (the bridge config's `layout`):
- `project`: `<fixture_id>.py` modules with `invoke(tool_name, args, state)`; one flat state dict.
- `benchmark`: EvoGenUI-Bench's own `runtime` package, mounted read-only and imported as `runtime`
  (`runtime.tool_backends.<fixture_id>`, `runtime.types.ToolDefinition`); `invoke(*, tool, args, state)`
  with a tool-definition object; one state per scenario seeded from the scenario fixtures; write-mode
  calls appended to `writes`, every call to `tool_trace`; any failure is HTTP 400 `{"error": ...}`.
Every call, in either layout, is logged with the state before, after and the delta.
"""

from __future__ import annotations

import copy
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

RESOURCE_LOG_NAME = "resource_log.jsonl"  # beside the tool log (runner/turns/evidence_folder.py names it too)
RESOURCE_CONTRACT_KEYS = ("uri", "name", "mime_type", "description")


class ToolError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def register_package(name: str, folder: Path) -> ModuleType:
    """Import `folder` as the top-level package `name`, without putting its parent on sys.path.

    Only that one package becomes importable (its submodules resolve through the package's __path__),
    so a checkout's other top-level folders can never shadow anything. A package of the same name
    from another folder is dropped first, with its submodules.
    """
    folder = Path(folder).resolve()
    current = sys.modules.get(name)
    if current is not None and [str(Path(p).resolve()) for p in getattr(current, "__path__", [])] == [str(folder)]:
        return current
    for key in [key for key in sys.modules if key == name or key.startswith(name + ".")]:
        del sys.modules[key]
    init = folder / "__init__.py"
    if init.is_file():
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
    else:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(folder)]
    if spec is None:
        raise ImportError(f"cannot import {folder} as package {name!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        if spec.loader is not None:
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def state_delta(before: Any, after: Any) -> dict[str, Any]:
    """Top-level keys whose value changed (or appeared), with their new value (EvoGenUI-Bench's delta)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return {}
    return {key: copy.deepcopy(value) for key, value in after.items() if before.get(key) != value}


def build_tool_definition(types_module: ModuleType, contract: dict[str, Any]) -> Any:
    """The benchmark's `ToolDefinition` for one tool, from its runtime contract (fields it does not have are left out)."""
    cls = getattr(types_module, "ToolDefinition", None)
    if cls is None:
        raise ToolError(500, f"{types_module.__name__} defines no ToolDefinition")
    import dataclasses  # here: the server starts every turn, and plain serving never needs it

    values = copy.deepcopy(contract)
    if dataclasses.is_dataclass(cls):
        known = {field.name for field in dataclasses.fields(cls)}
        values = {key: value for key, value in values.items() if key in known}
    return cls(**values)


class ToolBridgeRuntime:
    """Backends, current state and the call log of one served artifact."""

    def __init__(self, config: dict[str, Any]):
        self.backends_path = Path(config["backends_path"])
        self.fixture_ids: dict[str, str] = dict(config["fixture_ids"])
        self.log_out = Path(config["log_out"])
        self.state_out = Path(config["state_out"])
        self.runtime_logs_out = self.state_out.with_name("runtime_logs.json")
        self.resource_log_out = self.log_out.with_name(RESOURCE_LOG_NAME)
        self.extra = config.get("extra") or {}
        self.benchmark = self.extra.get("layout") == "benchmark"
        # Public resources (uri -> contract + contents), read-only; every read is logged beside the tool log.
        self.resources: dict[str, dict[str, Any]] = dict(self.extra.get("resources") or {})
        self.resource_seq = 0
        state_in = Path(config["state_in"])
        self.state: dict[str, Any] = json.loads(state_in.read_text()) if state_in.exists() else {}
        if not isinstance(self.state, dict):
            raise ValueError("state_in must hold a JSON object")
        self.seq = 0
        self.lock = threading.Lock()
        self._modules: dict[str, ModuleType] = {}
        self._tools: dict[str, Any] = {}  # benchmark layout: tool name -> ToolDefinition object
        import jsonschema  # noqa: F401 - imported before the server reports ready, not on a page's first call
        if self.benchmark:
            self._init_benchmark(self.extra)
        self._write_state()

    # -- the benchmark layout ------------------------------------------------------------------------

    def _init_benchmark(self, extra: dict[str, Any]) -> None:
        self.package = str(extra.get("package") or "runtime")
        self.definitions: dict[str, dict[str, Any]] = dict(extra.get("tool_definitions") or {})
        self.public_tools: list[dict[str, Any]] = list(extra.get("public_tools") or [])
        self.fixtures: dict[str, Any] = dict(extra.get("scenario_fixtures") or {})
        self.turn = int(extra.get("turn") or 1)
        # state_in holds {"scenarios": {name: state}}; scenarios it lacks start from their fixture.
        scenarios = self.state.get("scenarios", {})
        if not isinstance(scenarios, dict):
            raise ValueError("state_in.scenarios must be a JSON object")
        self.state = {"scenarios": {str(k): v for k, v in scenarios.items() if isinstance(v, dict)}}
        for name in self.fixtures:
            self.scenario_state(name)
        register_package(self.package, self.backends_path)

    def scenario_fixture(self, scenario: str) -> dict[str, Any]:
        fixture = self.fixtures.get(scenario)
        if not isinstance(fixture, dict):
            raise ToolError(400, f"Missing scenario fixture for scenario {scenario}")
        return fixture

    def scenario_state(self, scenario: str) -> dict[str, Any]:
        scenarios = self.state["scenarios"]
        if scenario not in scenarios:
            scenarios[scenario] = copy.deepcopy(self.scenario_fixture(scenario).get("initial_state") or {})
        return scenarios[scenario]

    def tool_object(self, name: str) -> Any:
        if name not in self._tools:
            types_module = importlib.import_module(f"{self.package}.types")
            self._tools[name] = build_tool_definition(types_module, self.definitions[name])
        return self._tools[name]

    def _benchmark_call(self, name: Any, arguments: Any, scenario: Any, entry: dict[str, Any]) -> dict[str, Any]:
        """One call with EvoGenUI-Bench's semantics; returns the result or raises ToolError(400)."""
        import jsonschema

        if not isinstance(scenario, str):
            raise ToolError(400, "Tool call scenario must be a string")
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ToolError(400, "Tool call payload must include name and args")
        definition = self.definitions.get(name)
        if definition is None:
            raise ToolError(400, f"Unknown tool: {name}")
        if definition.get("backend", "python") != "python":
            raise ToolError(400, f"Tool {name} is not a Python-backed tool")
        if not definition.get("allowed", True):
            raise ToolError(400, f"Tool is not allowed: {name}")
        try:
            jsonschema.validate(arguments, definition.get("input_schema") or {})
        except jsonschema.ValidationError as exc:
            raise ToolError(400, f"invalid arguments for {name}: {exc.message}") from exc
        state = self.scenario_state(scenario)
        fixture_id = str(definition.get("fixture_id") or "")
        module = importlib.import_module(f"{self.package}.tool_backends.{fixture_id}")
        try:
            result = module.invoke(tool=self.tool_object(name), args=copy.deepcopy(arguments), state=state)
        except Exception as exc:  # the backend's own rejection (ValueError, ...) goes back as the error
            entry["traceback"] = traceback.format_exc(limit=5)
            raise ToolError(400, str(exc) or type(exc).__name__) from exc
        if not isinstance(result, dict):
            raise ToolError(400, f"Python backend {module.__name__} returned non-object result")
        result = json.loads(json.dumps(result))
        entry["result"] = result
        if definition.get("mode") == "write":
            state.setdefault("writes", []).append(
                {"tool": name, "args": copy.deepcopy(arguments), "result": copy.deepcopy(result)})
        state.setdefault("tool_trace", []).append(
            {"turn": self.turn, "tool": name, "args": copy.deepcopy(arguments), "result": copy.deepcopy(result)})
        # Validated after the state is updated: a result that breaks its schema is an error for the
        # page, while the state keeps what the backend did (as the benchmark's runtime does).
        try:
            jsonschema.validate(result, definition.get("output_schema") or {})
        except jsonschema.ValidationError as exc:
            raise ToolError(400, f"result of {name} violates its outputSchema: {exc.message}") from exc
        return result

    def runtime_logs(self) -> dict[str, Any]:
        """The benchmark's runtime logs: per scenario its initial state (from the fixture) and current state."""
        return {
            "scenarios": {
                name: {"initial_state": copy.deepcopy(fixture.get("initial_state") or {}),
                       "state": copy.deepcopy(self.scenario_state(name))}
                for name, fixture in self.fixtures.items() if isinstance(fixture, dict)
            }
        }

    def read_resource(self, uri: Any, scenario: Any = None) -> tuple[int, dict[str, Any]]:
        """One public resource read, by the bridge's layout; returns (HTTP status, response body)."""
        if not self.benchmark:
            return self._read_task_resource(uri)
        return self._read_benchmark_resource(uri, scenario if scenario is not None else "default")

    def _read_benchmark_resource(self, uri: Any, scenario: Any) -> tuple[int, dict[str, Any]]:
        """A declared resource from the scenario fixture (benchmark layout); every read is logged."""
        with self.lock:
            entry: dict[str, Any] = {"time": time.time(), "uri": uri, "scenario": scenario}
            status, body = 200, {}
            try:
                if not isinstance(uri, str) or not isinstance(scenario, str):
                    raise ToolError(400, "resource read must name a uri and a scenario")
                fixture = (self.scenario_fixture(scenario).get("resources") or {})
                if uri not in fixture:
                    raise ToolError(400, f"Missing fixture for resource {uri} in scenario {scenario}")
                value = fixture[uri]
                if isinstance(value, dict) and "error" in value:
                    raise ToolError(400, str(value["error"]))
                body = {"result": copy.deepcopy(value)}
                entry["result"] = body["result"]
            except ToolError as exc:
                status, body = exc.status, {"error": str(exc)}
                entry["error"] = str(exc)
            with self.resource_log_out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, default=str) + "\n")
            return status, body

    # -- the project layout --------------------------------------------------------------------------

    def module(self, fixture_id: str) -> ModuleType:
        if fixture_id not in self._modules:
            if "/" in fixture_id or fixture_id.startswith("."):
                raise ToolError(500, f"bad fixture id {fixture_id!r}")
            path = self.backends_path / f"{fixture_id}.py"
            spec = importlib.util.spec_from_file_location(f"genui_backend_{fixture_id}", path)
            if spec is None or spec.loader is None:
                raise ToolError(500, f"backend {fixture_id!r} not found")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self._modules[fixture_id] = module
        return self._modules[fixture_id]

    def schema(self, tool: str) -> dict[str, Any] | None:
        fixture_id = self.fixture_ids.get(tool)
        if fixture_id is None:
            return None
        return getattr(self.module(fixture_id), "TOOL_SCHEMAS", {}).get(tool)

    def list_tools(self) -> list[dict[str, Any]]:
        if self.benchmark:  # the public contract the generator saw (the benchmark's api_doc entries)
            return copy.deepcopy(self.public_tools)
        tools = []
        for name in sorted(self.fixture_ids):
            schema = self.schema(name) or {}
            tools.append(
                {
                    "name": name,
                    "description": schema.get("description", ""),
                    "inputSchema": schema.get("inputSchema", {"type": "object"}),
                    "outputSchema": schema.get("outputSchema", {}),
                }
            )
        return tools

    def call(self, tool: Any, arguments: Any, scenario: Any = "default") -> tuple[int, dict[str, Any]]:
        """Run one tool call; returns (HTTP status, response body). Every call is logged."""
        if self.benchmark:
            return self._logged_benchmark_call(tool, arguments, scenario)
        import jsonschema  # imported lazily: plain artifact serving needs no third-party code

        with self.lock:
            self.seq += 1
            entry: dict[str, Any] = {"seq": self.seq, "time": time.time(), "tool": tool, "arguments": arguments}
            before = copy.deepcopy(self.state)
            status, body = 200, {}
            try:
                schema = self.schema(tool) if isinstance(tool, str) else None
                if schema is None:
                    raise ToolError(404, f"unknown tool {tool!r}")
                if arguments is None:
                    arguments = {}
                try:
                    jsonschema.validate(arguments, schema.get("inputSchema", {"type": "object"}))
                except jsonschema.ValidationError as exc:
                    raise ToolError(400, f"invalid arguments for {tool}: {exc.message}") from exc
                module = self.module(self.fixture_ids[tool])
                result = module.invoke(tool, arguments, self.state)
                result = json.loads(json.dumps(result))  # must be JSON; also detaches it from state
                entry["result"] = result
                body = {"result": result}
                try:
                    jsonschema.validate(result, schema.get("outputSchema", {}))
                except jsonschema.ValidationError as exc:
                    # A backend bug, not the artifact's fault: the result still goes back, the log flags it.
                    entry["error"] = f"result violates outputSchema of {tool}: {exc.message}"
            except ToolError as exc:
                status, body = exc.status, {"error": str(exc)}
                entry["error"] = str(exc)
            except Exception as exc:  # backend crashed: report, keep serving
                status, body = 500, {"error": f"{type(exc).__name__}: {exc}"}
                entry["error"] = body["error"]
                entry["traceback"] = traceback.format_exc(limit=5)
            entry["state_before"] = before
            entry["state_after"] = copy.deepcopy(self.state)
            entry["state_delta"] = state_delta(before, entry["state_after"])
            entry["ok"] = "error" not in entry
            self._append_log(entry)
            self._write_state()
            return status, body

    def _logged_benchmark_call(self, tool: Any, arguments: Any, scenario: Any) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.seq += 1
            if arguments is None:
                arguments = {}
            entry: dict[str, Any] = {"seq": self.seq, "time": time.time(), "turn": self.turn, "scenario": scenario,
                                     "tool": tool, "arguments": arguments}
            status, body = 200, {}
            try:  # every call of a known scenario gets its state before/after, also a rejected one
                before = copy.deepcopy(self.scenario_state(scenario)) if isinstance(scenario, str) else None
            except ToolError:
                before = None
            if before is not None:
                entry["state_before"] = before
            try:
                body = {"result": self._benchmark_call(tool, arguments, scenario, entry)}
            except ToolError as exc:
                status, body = exc.status, {"error": str(exc)}
                entry["error"] = str(exc)
            except Exception as exc:  # the harness's own failure (an import, a bad definition): still a 400, logged
                status, body = 400, {"error": f"{type(exc).__name__}: {exc}"}
                entry["error"] = body["error"]
                entry["traceback"] = traceback.format_exc(limit=5)
            if "state_before" in entry and isinstance(scenario, str):
                after = copy.deepcopy(self.scenario_state(scenario))
                entry["state_after"] = after
                entry["state_delta"] = state_delta(entry["state_before"], after)
                entry["relevant_final_state"] = {"writes": copy.deepcopy(after.get("writes", [])),
                                                 "last_tool_trace": copy.deepcopy(after.get("tool_trace", [])[-5:])}
            entry["ok"] = "error" not in entry
            self._append_log(entry)
            self._write_state()
            return status, body

    def _append_log(self, entry: dict[str, Any]) -> None:
        with self.log_out.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, default=str) + "\n")

    def list_resources(self) -> list[dict[str, Any]]:
        return [{key: entry[key] for key in RESOURCE_CONTRACT_KEYS if key in entry}
                for _, entry in sorted(self.resources.items())]

    def _read_task_resource(self, uri: Any) -> tuple[int, dict[str, Any]]:
        """A read of the task's own public resources (project layout); every read is logged, failed ones too."""
        with self.lock:
            self.resource_seq += 1
            entry: dict[str, Any] = {"seq": self.resource_seq, "time": time.time(), "uri": uri}
            resource = self.resources.get(uri) if isinstance(uri, str) else None
            if resource is None:
                status, body = 404, {"error": f"unknown resource {uri!r}"}
            elif "contents" not in resource:
                status, body = 404, {"error": f"resource {uri!r} has no contents in this task"}
            else:
                status = 200
                body = {"resource": {"uri": uri, "mime_type": resource.get("mime_type", ""),
                                     "contents": resource["contents"]}}
                entry["mime_type"] = resource.get("mime_type", "")
                entry["contents"] = resource["contents"]
            if status != 200:
                entry["error"] = body["error"]
            entry["ok"] = status == 200
            with self.resource_log_out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, default=str) + "\n")
            return status, body

    def _write_state(self) -> None:
        self._write_json(self.state_out, self.state)
        if self.benchmark:
            self._write_json(self.runtime_logs_out, self.runtime_logs())

    @staticmethod
    def _write_json(path: Path, value: Any) -> None:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps(value, default=str))
        os.replace(tmp, path)


def create_bridge(config: dict[str, Any]) -> ToolBridgeRuntime:
    """The artifact server's entry point: the bridge of one served artifact, from its bridge config."""
    return ToolBridgeRuntime(config)


__all__ = ["RESOURCE_LOG_NAME", "ToolBridgeRuntime", "ToolError", "create_bridge", "register_package", "state_delta"]
