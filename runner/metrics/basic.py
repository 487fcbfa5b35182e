"""Suite-independent metrics over TurnRecords: pass rate over requested slots, buckets, build success."""

from __future__ import annotations

from collections import Counter
from statistics import mean
from typing import Any

from runner.turns.records import FailureBucket, TurnRecord

# Buckets in which a build was attempted: the denominator of the build success rate.
_BUILD_ATTEMPTED = {
    FailureBucket.OK,
    FailureBucket.BUILD_FAILED,
    FailureBucket.RUNTIME_ERROR,
    FailureBucket.JUDGE_ERROR,
    FailureBucket.TRUNCATED,
    FailureBucket.TIMEOUT,
}


def turn_pass_rate(records: list[TurnRecord], requested_slots: int | None = None) -> float:
    """Passed turns over ALL requested slots (blocked, failed, unassessed and never-recorded slots count
    as not passed). `requested_slots` None: the recorded slots are all that was requested."""
    denominator = max(len(records), requested_slots or 0)
    return sum(1 for r in records if r.passed is True) / denominator if denominator else 0.0


def basic_summary(records: list[TurnRecord], *, requested_slots: int) -> dict[str, Any]:
    """Pass rate and counts over the requested slots; a requested slot without a record is a failure
    and is counted in `missing_slots`."""
    statuses = Counter(str(r.status) for r in records)
    built = [r for r in records if r.status in _BUILD_ATTEMPTED]
    build_ok = [r for r in built if r.extra.get("build_status") == "ok"]
    rates = [r.scores["interaction_rate"] for r in records if "interaction_rate" in r.scores]
    return {
        "requested_slots": requested_slots,
        "recorded_slots": len(records),
        "missing_slots": max(requested_slots - len(records), 0),
        "turn_pass": turn_pass_rate(records, requested_slots),
        "passed": sum(1 for r in records if r.passed is True),
        "unassessed_turns": sum(1 for r in records if r.passed is None),
        "build_success_rate": len(build_ok) / len(built) if built else 0.0,
        "interaction_rate": mean(rates) if rates else None,
        "interaction_rate_probe_modes": sorted({str(r.extra["probe_mode"]) for r in records if "probe_mode" in r.extra}),
        "status_counts": dict(sorted(statuses.items())),
        "infra_failures": statuses.get(str(FailureBucket.INFRA), 0),
    }
