"""Tool backends of tool-grounded EvoGenUI tasks: loading, validation and the public tool contract."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from runner.suites.evogenui.backends import (
    BackendError,
    MissingBackendError,
    load_backend,
    public_tool_contract,
    task_backends,
)
from runner.suites.evogenui.loader import load_tasks

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "formats" / "evogenui"
TOOL_GROUNDED = SAMPLES / "Tool Grounded Consumer Plant Rescue Diagnostic Bench.json"
PLANT_TOOLS = [
    "plant_get_sensor_readings",
    "plant_get_care_history",
    "plant_get_species_profile",
    "plant_get_weather_window",
    "plant_validate_rescue_plan",
    "plant_save_rescue_plan",
    "plant_get_rescue_plan_status",
]

needs_samples = pytest.mark.skipif(not TOOL_GROUNDED.is_file(), reason="shared EvoGenUI samples are absent")


def _backend_source(tools: list[str], marker: str = "a") -> str:
    """A small backend module: each tool echoes its arguments and counts calls in the state."""
    return textwrap.dedent(
        f"""
        TOOL_SCHEMAS = {{
            name: {{
                "description": "tool " + name,
                "inputSchema": {{"type": "object"}},
                "outputSchema": {{"type": "object"}},
                "fixture": "PRIVATE-{marker}",
            }}
            for name in {tools!r}
        }}
        MARKER = {marker!r}

        def invoke(tool, args, state):
            state["calls"] = state.get("calls", 0) + 1
            return {{"ok": True, "tool": tool, "args": args, "marker": MARKER}}
        """
    )


def _write_backend(folder: Path, fixture_id: str, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / f"{fixture_id}.py"
    file.write_text(source)
    return file


def test_load_backend_and_invoke(tmp_path: Path) -> None:
    _write_backend(tmp_path, "cases_v1", _backend_source(["get_case"]))
    module = load_backend(tmp_path, "cases_v1")
    state: dict = {}
    assert module.invoke("get_case", {"id": 1}, state) == {"ok": True, "tool": "get_case", "args": {"id": 1}, "marker": "a"}
    assert state == {"calls": 1}


def test_same_fixture_id_in_two_folders_are_distinct_modules(tmp_path: Path) -> None:
    _write_backend(tmp_path / "one", "cases_v1", _backend_source(["get_case"], "one"))
    _write_backend(tmp_path / "two", "cases_v1", _backend_source(["get_case"], "two"))
    first = load_backend(tmp_path / "one", "cases_v1")
    second = load_backend(tmp_path / "two", "cases_v1")
    assert first.__name__ != second.__name__
    assert (first.MARKER, second.MARKER) == ("one", "two")


@pytest.mark.parametrize(
    "source, problem",
    [
        ("def invoke(tool, args, state):\n    return {}\n", "TOOL_SCHEMAS must be a dict"),
        ("TOOL_SCHEMAS = {'t': {'description': 'd', 'inputSchema': {}, 'outputSchema': {}}}\n", "invoke(tool, args, state) is missing"),
        ("TOOL_SCHEMAS = {'t': {'inputSchema': {}, 'outputSchema': {}}}\ninvoke = print\n", "TOOL_SCHEMAS['t'].description"),
        ("TOOL_SCHEMAS = {'t': {'description': 'd', 'inputSchema': {}}}\ninvoke = print\n", "TOOL_SCHEMAS['t'].outputSchema"),
        ("raise RuntimeError('boom')\n", "import failed: RuntimeError: boom"),
    ],
)
def test_malformed_backend_is_named(tmp_path: Path, source: str, problem: str) -> None:
    file = _write_backend(tmp_path, "broken_v1", source)
    with pytest.raises(BackendError) as raised:
        load_backend(tmp_path, "broken_v1")
    message = str(raised.value)
    assert "'broken_v1'" in message and str(file) in message and problem in message


def test_missing_and_unsafe_fixture_ids(tmp_path: Path) -> None:
    with pytest.raises(MissingBackendError, match=rf"'absent_v1': absent_v1\.py not found in {tmp_path}"):
        load_backend(tmp_path, "absent_v1")
    for bad in ("../escape", "a/b", ".hidden", ""):
        with pytest.raises(BackendError, match="not a valid backend file name"):
            load_backend(tmp_path, bad)


@needs_samples
def test_tool_grounded_sample_names_its_missing_backend(tmp_path: Path) -> None:
    (task,) = load_tasks(str(TOOL_GROUNDED))
    with pytest.raises(MissingBackendError) as raised:
        public_tool_contract(task, tmp_path)
    message = str(raised.value)
    assert "daily_life_discovery_cases_v1" in message
    assert str(tmp_path) in message
    assert isinstance(raised.value, FileNotFoundError)


@needs_samples
def test_public_contract_comes_from_backend_schemas_only(tmp_path: Path) -> None:
    (task,) = load_tasks(str(TOOL_GROUNDED))
    _write_backend(tmp_path, "daily_life_discovery_cases_v1", _backend_source(PLANT_TOOLS))
    assert list(task_backends(task, tmp_path)) == ["daily_life_discovery_cases_v1"]
    contract = public_tool_contract(task, tmp_path)
    assert [tool["name"] for tool in contract["tools"]] == PLANT_TOOLS
    assert all(set(tool) == {"name", "description", "inputSchema", "outputSchema"} for tool in contract["tools"])
    assert contract["tools"][0]["description"] == "tool plant_get_sensor_readings"
    assert "PRIVATE" not in json.dumps(contract)
    assert task.public_contract["tools"][0] == {"name": "plant_get_sensor_readings"}  # the placeholder is untouched


@needs_samples
def test_tool_absent_from_backend_is_named(tmp_path: Path) -> None:
    (task,) = load_tasks(str(TOOL_GROUNDED))
    _write_backend(tmp_path, "daily_life_discovery_cases_v1", _backend_source(PLANT_TOOLS[:-1]))
    with pytest.raises(BackendError, match="'plant_get_rescue_plan_status' is not in TOOL_SCHEMAS of backend 'daily_life_discovery_cases_v1'"):
        public_tool_contract(task, tmp_path)
