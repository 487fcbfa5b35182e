"""Public resources of EvoGenUI tasks: the `resources` contracts, with their contents, served to the artifact.

EvoGenUI-Bench lists "public tool/resource contracts" among the generator-visible materials and "tool and
resource logs" among the evaluator's execution evidence (§4.2). A task declares each resource's public
contract (uri, name, mime_type, description); the contents come, in this order, from

    a backend module of the task:   def read_resource(uri, state) -> value | None   (None: not mine), or
                                    RESOURCES = {uri: value}
    the task's scenario fixtures:   scenario_fixtures.<name>.resources[uri]   (the first fixture that has it)

and are fixed for the turn when its bridge is made (from the state the turn starts with). The artifact reads
them through the template's resource client (src/toolClient.js: readResource, listResources); the artifact
server logs every read to the turn's resource log (EvidenceFolder.RESOURCE_LOG).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from runner.suites.evogenui.backends import BackendError, task_backends
from runner.turns.tasks import Task

NOT_FOUND = object()


def _from_backends(task: Task, backends_path: Path, uri: str, state: dict[str, Any]) -> Any:
    if not task.extra.get("tools"):
        return NOT_FOUND
    for fixture_id, module in sorted(task_backends(task, backends_path).items()):
        reader = getattr(module, "read_resource", None)
        if callable(reader):
            value = reader(uri, copy.deepcopy(state))
            if value is not None:
                return value
        table = getattr(module, "RESOURCES", None)
        if isinstance(table, dict) and uri in table:
            return table[uri]
    return NOT_FOUND


def _from_fixtures(task: Task, uri: str) -> Any:
    fixtures = task.extra.get("scenario_fixtures")
    if not isinstance(fixtures, dict):
        return NOT_FOUND
    for fixture in fixtures.values():
        resources = fixture.get("resources") if isinstance(fixture, dict) else None
        if isinstance(resources, dict) and uri in resources:
            return resources[uri]
    return NOT_FOUND


def served_resources(task: Task, backends_path: Path, state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """uri -> {uri, name, mime_type, description, contents?} for every resource the task declares; a
    resource without contents is listed without `contents` (a read of it answers 404, logged)."""
    served: dict[str, dict[str, Any]] = {}
    for contract in task.public_contract.get("resources", []):
        uri = contract["uri"]
        entry = dict(contract)
        value = _from_backends(task, backends_path, uri, state)
        if value is NOT_FOUND:
            value = _from_fixtures(task, uri)
        if value is not NOT_FOUND:
            try:
                entry["contents"] = json.loads(json.dumps(value))
            except (TypeError, ValueError) as error:
                raise BackendError(f"task {task.id!r}: resource {uri!r} is not JSON: {error}") from error
        served[uri] = entry
    return served
