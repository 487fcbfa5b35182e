"""Load tasks in EvoGenUI-Bench's own JSON format (multiturn_tasks.schema.json) into runner.turns.tasks.Task.

A file holds one task object or {"tasks": [...], ...}. Every field of the format goes somewhere:

Public (may reach the generator; EvoGenUI-Bench §3.2, Appendix A.2, B.2, F.2):
    task_id | episode_id                    -> Task.id
    title                                   -> Task.title (default: the id)
    domain                                  -> Task.domain
    suite                                   -> Task.sub_suite: presentation_ui -> presentation,
                                               interactive_tool_ui -> interaction,
                                               tool_grounded_action_ui -> tool_grounded
                                               (Task.suite is always "evogenui")
    metadata.task_world.public_context      -> Task.context
    turns[i].turn | turn_index              -> TurnSpec.index (turns must number 1..N)
    turns[i].prompt | query                 -> TurnSpec.prompt
    tools[j].name (+ description, input_schema/output_schema or api_schema, when the task gives them)
                                            -> Task.public_contract["tools"]: a placeholder; the real
                                               contract comes from the backend modules
                                               (backends.public_tool_contract)
    resources[j] (uri, name, mime_type, description) -> Task.public_contract["resources"]

Private (actor and judge only; never shown to the generator):
    metadata.validation_contract.validation_scenarios[k] (matched on its `turn`), or
    turns[i].metadata.validation_contract   -> TurnSpec.requirements (one Requirement per
                                               evidence_requirements item: id, description = expect
                                               + surface, kind from the surface, optional `check`
                                               parsed as runner.judges.checks.Check) and the scenario
                                               dict itself in TurnSpec.extra["validation_contract"]
    turns[i].reference {assistant_text, files} (our own tasks) -> TurnSpec.reference_text / reference_files
    turns[i].requires_previous_artifact (our own tasks)        -> TurnSpec.requires_previous_artifact
    tools[j].mock_contract (fixture_id, handler_ref, semantic_contract, fixture_policy, allowed) + mode
                                            -> Task.extra["tools"][name]
    the original suite string               -> Task.extra["scenario_suite"]
    every other task field (metadata incl. validation_contract and task_world, core_interaction,
    difficulty, rubric, initial_state, actor_hints, scenario_fixtures, annotator_notes, unknown fields)
                                            -> Task.extra[field], verbatim
    every other turn field (query_tags, actor_guidance, runtime_requirement_refs, annotator_notes,
    metadata, turn-level tools/resources/initial_state/actor_hints/scenario_fixtures, unknown fields)
                                            -> TurnSpec.extra[field], verbatim (turn-level tools are
                                               not merged into the public contract)

Errors raise TaskFormatError naming the file and the JSON path, e.g.
`tasks.json: tasks[0].turns[2].prompt: missing`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from runner.judges.checks import Check
from runner.suites.native import TaskFormatError, expand_task_paths
from runner.turns.tasks import Requirement, Task, TurnSpec

__all__ = ["SUB_SUITES", "TaskFormatError", "load_tasks", "parse_task"]

SUITE_NAME = "evogenui"

# Scenario suite in the task file -> sub_suite (EvoGenUI-Bench §3.3: Presentation, Interaction, Tool-grounded).
SUB_SUITES = {
    "presentation_ui": "presentation",
    "interactive_tool_ui": "interaction",
    "tool_grounded_action_ui": "tool_grounded",
}

_TASK_KEYS = {"task_id", "episode_id", "title", "domain", "suite", "turns", "tools", "resources"}
_TURN_KEYS = {"turn", "turn_index", "prompt", "query", "reference", "requires_previous_artifact"}
_RESOURCE_KEYS = ("uri", "name", "mime_type", "description")


class _Where:
    """The file and JSON path being parsed, so every error can say exactly where it is."""

    def __init__(self, file: Path, path: str = "") -> None:
        self.file = file
        self.path = path

    def key(self, name: str) -> "_Where":
        return _Where(self.file, f"{self.path}.{name}" if self.path else name)

    def index(self, position: int) -> "_Where":
        return _Where(self.file, f"{self.path}[{position}]")

    def error(self, problem: str) -> TaskFormatError:
        return TaskFormatError(f"{self.file}: {self.path or '<root>'}: {problem}")


def _mapping(value: Any, where: _Where) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise where.error(f"expected an object, got {type(value).__name__}")
    return value


def _list(value: Any, where: _Where, *, non_empty: bool = False) -> list[Any]:
    if not isinstance(value, list):
        raise where.error(f"expected a list, got {type(value).__name__}")
    if non_empty and not value:
        raise where.error("must not be empty")
    return value


def _text(value: Any, where: _Where) -> str:
    if not isinstance(value, str) or not value.strip():
        raise where.error("expected a non-empty string")
    return value


def _either(data: dict[str, Any], names: tuple[str, str], where: _Where) -> tuple[Any, _Where]:
    """The value of the first of two alternative keys (`turn`/`turn_index`, `prompt`/`query`)."""
    present = [name for name in names if name in data]
    if not present:
        raise where.key(names[0]).error(f"missing (or `{names[1]}`)")
    if len(present) == 2 and data[names[0]] != data[names[1]]:
        raise where.key(names[1]).error(f"disagrees with `{names[0]}`")
    return data[present[0]], where.key(present[0])


def _turn_number(value: Any, where: _Where) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise where.error(f"expected an integer >= 1, got {value!r}")
    return value


def _sub_suite(data: dict[str, Any], where: _Where) -> str:
    if "suite" not in data:
        raise where.key("suite").error(f"missing (one of {sorted(SUB_SUITES)})")
    suite = data["suite"]
    if suite in SUB_SUITES:
        return SUB_SUITES[suite]
    if suite in SUB_SUITES.values():  # our own tasks may name the sub-suite directly
        return suite
    raise where.key("suite").error(f"unknown scenario suite {suite!r} (one of {sorted(SUB_SUITES)})")


def _kind(surface: str) -> str:
    """Requirement.kind from the evidence surface (informative for LLM judges only)."""
    surface = surface.lower()
    if "assistant" in surface:
        return "alignment"
    if "tool" in surface:
        return "tool"
    if "state" in surface:
        return "state"
    return "evidence"


def _check(value: Any, where: _Where) -> Check:
    try:
        return Check.model_validate(_mapping(value, where))
    except ValidationError as error:
        first = error.errors()[0]
        location = where
        for part in first["loc"]:
            location = location.index(part) if isinstance(part, int) else location.key(str(part))
        raise location.error(first["msg"]) from None


def _requirements(scenario: dict[str, Any], turn: int, where: _Where, seen: set[str]) -> list[Requirement]:
    items = scenario.get("evidence_requirements", [])
    items_where = where.key("evidence_requirements")
    requirements = []
    for position, item in enumerate(_list(items, items_where)):
        item_where = items_where.index(position)
        item = _mapping(item, item_where)
        requirement_id = item.get("id", f"t{turn}_r{len(seen) + 1}")
        _text(requirement_id, item_where.key("id"))
        if requirement_id in seen:
            raise item_where.key("id").error(f"duplicate requirement id {requirement_id!r} in turn {turn}")
        seen.add(requirement_id)
        if "expect" not in item:
            raise item_where.key("expect").error("missing")
        description = _text(item["expect"], item_where.key("expect"))
        surface = item.get("surface", "")
        if not isinstance(surface, str):
            raise item_where.key("surface").error("expected a string")
        if surface:
            description = f"{description} [surface: {surface}]"
        kind = item.get("kind", _kind(surface))
        _text(kind, item_where.key("kind"))
        check = _check(item["check"], item_where.key("check")) if item.get("check") is not None else None
        requirements.append(Requirement(id=requirement_id, description=description, check=check, kind=kind))
    return requirements


def _task_scenarios(data: dict[str, Any], where: _Where, turns: set[int]) -> dict[int, list[tuple[dict, _Where]]]:
    """metadata.validation_contract.validation_scenarios, grouped by turn."""
    by_turn: dict[int, list[tuple[dict, _Where]]] = {}
    metadata = data.get("metadata")
    if metadata is None:
        return by_turn
    metadata = _mapping(metadata, where.key("metadata"))
    if metadata.get("validation_contract") is None:
        return by_turn
    contract_where = where.key("metadata").key("validation_contract")
    contract = _mapping(metadata["validation_contract"], contract_where)
    scenarios_where = contract_where.key("validation_scenarios")
    for position, scenario in enumerate(_list(contract.get("validation_scenarios", []), scenarios_where)):
        scenario_where = scenarios_where.index(position)
        scenario = _mapping(scenario, scenario_where)
        if "turn" not in scenario:
            raise scenario_where.key("turn").error("missing")
        turn = _turn_number(scenario["turn"], scenario_where.key("turn"))
        if turn not in turns:
            raise scenario_where.key("turn").error(f"no such turn (turns are {sorted(turns)})")
        by_turn.setdefault(turn, []).append((scenario, scenario_where))
    return by_turn


def _turn_scenarios(turn_data: dict[str, Any], turn: int, where: _Where) -> list[tuple[dict, _Where]]:
    """turns[i].metadata.validation_contract: a scenario, or {validation_scenarios: [...]} of this turn."""
    metadata = turn_data.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("validation_contract") is None:
        return []
    contract_where = where.key("metadata").key("validation_contract")
    contract = _mapping(metadata["validation_contract"], contract_where)
    if "validation_scenarios" not in contract:
        return [(contract, contract_where)]
    scenarios_where = contract_where.key("validation_scenarios")
    found = []
    for position, scenario in enumerate(_list(contract["validation_scenarios"], scenarios_where)):
        scenario_where = scenarios_where.index(position)
        scenario = _mapping(scenario, scenario_where)
        if "turn" in scenario and _turn_number(scenario["turn"], scenario_where.key("turn")) != turn:
            raise scenario_where.key("turn").error(f"a turn-level contract of turn {turn} names turn {scenario['turn']}")
        found.append((scenario, scenario_where))
    return found


def _reference(turn_data: dict[str, Any], where: _Where) -> tuple[str, dict[str, str] | None]:
    if turn_data.get("reference") is None:
        return "", None
    reference_where = where.key("reference")
    reference = _mapping(turn_data["reference"], reference_where)
    text = reference.get("assistant_text", "")
    if not isinstance(text, str):
        raise reference_where.key("assistant_text").error("expected a string")
    files = reference.get("files")
    if files is None:
        return text, None
    files_where = reference_where.key("files")
    for name, content in _mapping(files, files_where).items():
        if not isinstance(content, str):
            raise files_where.key(name).error("expected the file's text")
    return text, dict(files)


def _turns(data: dict[str, Any], where: _Where) -> list[TurnSpec]:
    turns_where = where.key("turns")
    if "turns" not in data:
        raise turns_where.error("missing")
    raw_turns = _list(data["turns"], turns_where, non_empty=True)
    numbered: dict[int, tuple[dict[str, Any], _Where]] = {}
    for position, turn_data in enumerate(raw_turns):
        turn_where = turns_where.index(position)
        turn_data = _mapping(turn_data, turn_where)
        value, value_where = _either(turn_data, ("turn", "turn_index"), turn_where)
        number = _turn_number(value, value_where)
        if number in numbered:
            raise value_where.error(f"duplicate turn {number}")
        numbered[number] = (turn_data, turn_where)
    if sorted(numbered) != list(range(1, len(numbered) + 1)):
        raise turns_where.error(f"turns must be numbered 1..{len(numbered)}, got {sorted(numbered)}")

    task_scenarios = _task_scenarios(data, where, set(numbered))
    specs = []
    for number in sorted(numbered):
        turn_data, turn_where = numbered[number]
        prompt, prompt_where = _either(turn_data, ("prompt", "query"), turn_where)
        prompt = _text(prompt, prompt_where)
        scenarios = task_scenarios.get(number, []) + _turn_scenarios(turn_data, number, turn_where)
        seen: set[str] = set()
        requirements = [req for scenario, at in scenarios for req in _requirements(scenario, number, at, seen)]
        reference_text, reference_files = _reference(turn_data, turn_where)
        requires_previous = turn_data.get("requires_previous_artifact", True)
        if not isinstance(requires_previous, bool):
            raise turn_where.key("requires_previous_artifact").error("expected true or false")
        extra = {key: value for key, value in turn_data.items() if key not in _TURN_KEYS}
        if scenarios:
            contracts = [scenario for scenario, _ in scenarios]
            extra["validation_contract"] = contracts[0] if len(contracts) == 1 else {"validation_scenarios": contracts}
        specs.append(
            TurnSpec(
                index=number,
                prompt=prompt,
                requirements=requirements,
                reference_text=reference_text,
                reference_files=reference_files,
                requires_previous_artifact=requires_previous,
                extra=extra,
            )
        )
    return specs


def _schema_pair(tool: dict[str, Any]) -> tuple[Any, Any]:
    """A tool's public input/output schemas, from input_schema/output_schema or api_schema."""
    api = tool.get("api_schema") if isinstance(tool.get("api_schema"), dict) else {}
    inputs = tool.get("input_schema", api.get("inputSchema", api.get("input_schema")))
    outputs = tool.get("output_schema", api.get("outputSchema", api.get("output_schema")))
    return inputs, outputs


def _tools(data: dict[str, Any], where: _Where) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """(private bindings by tool name, public placeholder entries)."""
    bindings: dict[str, dict[str, Any]] = {}
    public: list[dict[str, Any]] = []
    tools_where = where.key("tools")
    for position, tool in enumerate(_list(data.get("tools", []), tools_where)):
        tool_where = tools_where.index(position)
        tool = _mapping(tool, tool_where)
        if "name" not in tool:
            raise tool_where.key("name").error("missing")
        name = _text(tool["name"], tool_where.key("name"))
        if name in bindings:
            raise tool_where.key("name").error(f"duplicate tool {name!r}")
        contract_where = tool_where.key("mock_contract")
        if "mock_contract" not in tool:
            raise contract_where.error("missing")
        contract = _mapping(tool["mock_contract"], contract_where)
        if "fixture_id" not in contract:
            raise contract_where.key("fixture_id").error("missing")
        binding = {
            "fixture_id": _text(contract["fixture_id"], contract_where.key("fixture_id")),
            "handler_ref": contract.get("handler_ref", ""),
            "mode": tool.get("mode", ""),
            "allowed": contract.get("allowed", tool.get("allowed", True)),  # the contract's value wins, as upstream
            "semantic_contract": contract.get("semantic_contract", {}),
            "fixture_policy": contract.get("fixture_policy", {}),
        }
        bindings[name] = binding
        entry: dict[str, Any] = {"name": name}
        if isinstance(tool.get("description"), str):
            entry["description"] = tool["description"]
        inputs, outputs = _schema_pair(tool)
        if isinstance(inputs, dict):
            entry["inputSchema"] = inputs
        if isinstance(outputs, dict):
            entry["outputSchema"] = outputs
        public.append(entry)
    return bindings, public


def _resources(data: dict[str, Any], where: _Where) -> list[dict[str, Any]]:
    resources_where = where.key("resources")
    public = []
    for position, resource in enumerate(_list(data.get("resources", []), resources_where)):
        resource_where = resources_where.index(position)
        resource = _mapping(resource, resource_where)
        for key in ("uri", "name"):
            if key not in resource:
                raise resource_where.key(key).error("missing")
        public.append({key: resource[key] for key in _RESOURCE_KEYS if key in resource})
    return public


def _context(data: dict[str, Any], where: _Where) -> str:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("task_world"), dict):
        return ""
    context = metadata["task_world"].get("public_context", "")
    if not isinstance(context, str):
        raise where.key("metadata").key("task_world").key("public_context").error("expected a string")
    return context


def parse_task(data: Any, file: Path, prefix: str = "") -> Task:
    """One task object of the EvoGenUI format (at JSON path `prefix` of `file`) -> Task."""
    where = _Where(file, prefix)
    data = _mapping(data, where)
    id_value, id_where = _either(data, ("task_id", "episode_id"), where)
    task_id = _text(id_value, id_where)
    sub_suite = _sub_suite(data, where)
    title = data.get("title", task_id)
    _text(title, where.key("title"))
    domain = data.get("domain", "")
    if not isinstance(domain, str):
        raise where.key("domain").error("expected a string")
    turns = _turns(data, where)
    bindings, public_tools = _tools(data, where)
    resources = _resources(data, where)
    public_contract: dict[str, Any] = {}
    if public_tools:
        public_contract["tools"] = public_tools
    if resources:
        public_contract["resources"] = resources
    extra = {key: value for key, value in data.items() if key not in _TASK_KEYS}
    extra["scenario_suite"] = data["suite"]
    extra["tools"] = bindings
    return Task(
        id=task_id,
        suite=SUITE_NAME,
        sub_suite=sub_suite,
        title=title,
        domain=domain,
        context=_context(data, where),
        public_contract=public_contract,
        turns=turns,
        source_path=str(file),
        extra=extra,
    )


def _read(file: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise TaskFormatError(f"{file}: <root>: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TaskFormatError(f"{file}: <root>: cannot be read: {error}") from None


def load_file(file: Path) -> list[Task]:
    """The tasks of one file: a single task object or {"tasks": [...]}."""
    document = _read(file)
    if isinstance(document, dict) and "tasks" in document:
        items = _list(document["tasks"], _Where(file, "tasks"), non_empty=True)
        return [parse_task(item, file, f"tasks[{position}]") for position, item in enumerate(items)]
    return [parse_task(document, file)]


def load_tasks(path_spec: str | Path) -> list[Task]:
    """Tasks from a file, a folder (every *.json below it, schema files skipped) or a glob."""
    files = [file for file in expand_task_paths(path_spec, suffixes=(".json",)) if not file.name.endswith(".schema.json")]
    if not files:
        raise TaskFormatError(f"{path_spec}: no EvoGenUI task files found (expected a file, a folder or a glob)")
    tasks: list[Task] = []
    origin: dict[str, str] = {}
    for file in files:
        for task in load_file(file):
            if task.id in origin:
                raise TaskFormatError(f"{file}: task id {task.id!r} already defined in {origin[task.id]}")
            origin[task.id] = str(file)
            tasks.append(task)
    return tasks
