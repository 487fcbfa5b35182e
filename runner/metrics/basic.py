"""Suite-independent metrics over TurnRecords: pass rate over requested slots, buckets, build success."""

from __future__ import annotations

from collections import Counter
from statistics import mean
from typing import Any

from runner.records import FailureBucket, TurnRecord

# Buckets in which a build was attempted: the denominator of the build success rate.
_BUILD_ATTEMPTED = {
    FailureBucket.OK,
    FailureBucket.BUILD_FAILED,
    FailureBucket.RUNTIME_ERROR,
    FailureBucket.JUDGE_ERROR,
    FailureBucket.TIMEOUT,
}


def turn_pass_rate(records: list[TurnRecord]) -> float:
    """Passed turns over ALL requested slots (blocked, failed and unassessed count as not passed)."""
    return sum(1 for r in records if r.passed is True) / len(records) if records else 0.0


def basic_summary(records: list[TurnRecord], *, requested_slots: int) -> dict[str, Any]:
    statuses = Counter(str(r.status) for r in records)
    built = [r for r in records if r.status in _BUILD_ATTEMPTED]
    build_ok = [r for r in built if r.extra.get("build_status") == "ok"]
    rates = [r.scores["interaction_rate"] for r in records if "interaction_rate" in r.scores]
    return {
        "requested_slots": requested_slots,
        "recorded_slots": len(records),
        "turn_pass": turn_pass_rate(records),
        "passed": sum(1 for r in records if r.passed is True),
        "unassessed_turns": sum(1 for r in records if r.passed is None),
        "build_success_rate": len(build_ok) / len(built) if built else 0.0,
        "interaction_rate": mean(rates) if rates else None,
        "status_counts": dict(sorted(statuses.items())),
        "infra_failures": statuses.get(str(FailureBucket.INFRA), 0),
    }
