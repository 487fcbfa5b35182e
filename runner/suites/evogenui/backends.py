"""Tool backends of tool-grounded EvoGenUI tasks: one Python module per fixture id.

A task's tool names a `mock_contract.fixture_id`; the folder of backends holds `<fixture_id>.py`, which
exposes

    TOOL_SCHEMAS = {tool_name: {"description": str, "inputSchema": dict, "outputSchema": dict}}
    def invoke(tool: str, args: dict, state: dict) -> dict

The public tool contract shown to the generator is built from TOOL_SCHEMAS (name, description,
inputSchema, outputSchema only, EvoGenUI-Bench Appendix B.2: "The model sees each tool's name, description,
and public schema"); the module itself, its fixtures and its state stay private.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from runner.errors import UserError
from runner.turns.tasks import Task

_FIXTURE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_SCHEMA_KEYS = ("description", "inputSchema", "outputSchema")


class BackendError(ValueError, UserError):
    """A backend module is unusable; the message names the fixture id and the file."""


class MissingBackendError(BackendError, FileNotFoundError):
    """No `<fixture_id>.py` in the backends folder."""


def backend_file(backends_path: Path, fixture_id: str) -> Path:
    # A fixture id names a file in the folder: no path separators, no "..", so it cannot escape it.
    if not isinstance(fixture_id, str) or not _FIXTURE_ID.match(fixture_id) or ".." in fixture_id:
        raise BackendError(f"fixture id {fixture_id!r} is not a valid backend file name")
    return Path(backends_path) / f"{fixture_id}.py"


def _validate(module: ModuleType, fixture_id: str, file: Path) -> None:
    schemas = getattr(module, "TOOL_SCHEMAS", None)
    if not isinstance(schemas, dict):
        raise BackendError(f"backend {fixture_id!r} ({file}): TOOL_SCHEMAS must be a dict of tool name -> schema")
    for name, schema in schemas.items():
        if not isinstance(schema, dict):
            raise BackendError(f"backend {fixture_id!r} ({file}): TOOL_SCHEMAS[{name!r}] must be a dict")
        if not isinstance(schema.get("description"), str):
            raise BackendError(f"backend {fixture_id!r} ({file}): TOOL_SCHEMAS[{name!r}].description must be a string")
        for key in ("inputSchema", "outputSchema"):
            if not isinstance(schema.get(key), dict):
                raise BackendError(f"backend {fixture_id!r} ({file}): TOOL_SCHEMAS[{name!r}].{key} must be a dict")
    if not callable(getattr(module, "invoke", None)):
        raise BackendError(f"backend {fixture_id!r} ({file}): invoke(tool, args, state) is missing")


def load_backend(backends_path: Path, fixture_id: str) -> ModuleType:
    """Import `<backends_path>/<fixture_id>.py` afresh, under a module name unique to its file."""
    file = backend_file(backends_path, fixture_id)
    if not file.is_file():
        raise MissingBackendError(f"no backend for fixture id {fixture_id!r}: {file.name} not found in {Path(backends_path)}")
    digest = hashlib.sha1(str(file.resolve()).encode()).hexdigest()[:12]
    module_name = f"_evogenui_backend_{re.sub(r'[^A-Za-z0-9_]', '_', fixture_id)}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise BackendError(f"backend {fixture_id!r} ({file}): cannot be imported")
    module = importlib.util.module_from_spec(spec)
    # Registered while executing so dataclasses/pickling inside the module can find it.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the module's own code failed: report it as this backend's error
        sys.modules.pop(module_name, None)
        raise BackendError(f"backend {fixture_id!r} ({file}): import failed: {type(error).__name__}: {error}") from error
    _validate(module, fixture_id, file)
    return module


def task_backends(task: Task, backends_path: Path) -> dict[str, ModuleType]:
    """The backend module of every fixture id the task's tools use (each imported once)."""
    modules: dict[str, ModuleType] = {}
    for binding in task.extra.get("tools", {}).values():
        fixture_id = binding["fixture_id"]
        if fixture_id not in modules:
            modules[fixture_id] = load_backend(backends_path, fixture_id)
    return modules


def public_tool_contract(task: Task, backends_path: Path) -> dict[str, Any]:
    """The task's public contract with its tools described from the backend modules' TOOL_SCHEMAS.

    Only name, description, inputSchema and outputSchema are copied; other keys of a schema entry (and
    everything else in the module) stay private. Resources of the placeholder are kept as they are.
    """
    tools = task.extra.get("tools", {})
    modules = task_backends(task, backends_path)
    entries = []
    for name, binding in tools.items():
        fixture_id = binding["fixture_id"]
        schemas = modules[fixture_id].TOOL_SCHEMAS
        if name not in schemas:
            raise BackendError(
                f"task {task.id!r}: tool {name!r} is not in TOOL_SCHEMAS of backend {fixture_id!r} "
                f"({backend_file(backends_path, fixture_id)})"
            )
        entries.append({"name": name, **{key: schemas[name][key] for key in _SCHEMA_KEYS}})
    contract = dict(task.public_contract)
    if entries:
        contract["tools"] = entries
    return contract
