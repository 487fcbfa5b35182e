"""Requested-slot accounting (EvoGenUI-Bench Appendix D, Table 6): how every requested slot was spent.

Table 6 separates executed generation calls from unexecuted downstream slots and splits the blocked ones by
what left no artifact upstream ("Blocked after earlier build failure", "Blocked after earlier invalid
output"). A blocked slot's cause is the status of the nearest earlier slot of its episode that was not
blocked itself: a chain [build_failed, blocked, blocked] counts two slots blocked after a build failure.
A blocked slot with no recorded earlier cause (its upstream record is missing) counts as `unrecorded`.
Slots never recorded at all are `missing`; every requested slot lands in exactly one row.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from runner.turns.records import FailureBucket, TurnRecord

UNRECORDED = "unrecorded"


def blocked_cause(records_of_task: Mapping[int, TurnRecord], turn: int) -> str:
    """The status of the nearest earlier non-blocked slot of the episode (`unrecorded` when there is none)."""
    for earlier in range(turn - 1, 0, -1):
        record = records_of_task.get(earlier)
        if record is None:
            return UNRECORDED
        if record.status is not FailureBucket.BLOCKED:
            return record.status.value
    return UNRECORDED


def slot_accounting(records: list[TurnRecord], requested: Mapping[str, int]) -> dict[str, Any]:
    """Table 6's lower half for one run. `requested`: task id -> number of requested turns.

    {"executed": n, "blocked_after": {cause: n}, "blocked": n, "missing": n, "total": n, "shares": {...}}:
    `executed` counts recorded slots that were not blocked (their generation was attempted), `blocked_after`
    the blocked ones by upstream cause (most frequent first), `shares` each row over `total`.
    """
    by_task: dict[str, dict[int, TurnRecord]] = defaultdict(dict)
    for record in records:
        by_task[record.task_id][record.turn] = record
    executed = missing = 0
    causes: Counter[str] = Counter()
    for task_id, turns in requested.items():
        found = by_task.get(task_id, {})
        for turn in range(1, turns + 1):
            record = found.get(turn)
            if record is None:
                missing += 1
            elif record.status is FailureBucket.BLOCKED:
                causes[blocked_cause(found, turn)] += 1
            else:
                executed += 1
    total = sum(requested.values())
    blocked_after = dict(sorted(causes.items(), key=lambda item: (-item[1], item[0])))
    rows = {"executed": executed, **{f"blocked_after_{cause}": n for cause, n in blocked_after.items()}, "missing": missing}
    return {
        "executed": executed,
        "blocked_after": blocked_after,
        "blocked": sum(causes.values()),
        "missing": missing,
        "total": total,
        "shares": {name: (n / total if total else None) for name, n in rows.items()},
    }
