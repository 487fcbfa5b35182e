"""Paired comparison of runs over the tasks they share: per task a value of each run (its turn pass rate, or
the mean of a suite's continuous per-turn score), the mean of the per-task differences, and a percentile
bootstrap interval that resamples tasks with replacement (the task-level bootstrap of EvoGenUI-Bench
Appendix C.2, here on paired differences so the tasks' shared difficulty cancels out)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from runner.metrics.reliability import bootstrap_draws, percentile_interval
from runner.turns.records import TurnRecord

N_RESAMPLES = 2000
SEED = 0
ALPHA = 0.05
SCORE_KEY = "score"  # the continuous per-turn score suites write into TurnRecord.scores (I-WebGenBench, MT-Web2Code)


@dataclass(frozen=True)
class PairedDifference:
    """mean over matched tasks of (A - B), with its bootstrap interval; n: the matched tasks."""

    metric: str
    n: int
    mean: float
    low: float | None
    high: float | None

    @property
    def excludes_zero(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


def task_pass_rates(records: list[TurnRecord]) -> dict[str, float]:
    """task -> share of its recorded turns that passed (unassessed and failed turns alike count as not passed,
    as in the turn pass rate)."""
    totals: dict[str, list[int]] = {}
    for record in records:
        entry = totals.setdefault(record.task_id, [0, 0])
        entry[0] += record.passed is True
        entry[1] += 1
    return {task: passed / count for task, (passed, count) in totals.items()}


def task_scores(records: list[TurnRecord], key: str = SCORE_KEY) -> dict[str, float]:
    """task -> mean of the turns' continuous score, for tasks with at least one scored turn."""
    values: dict[str, list[float]] = {}
    for record in records:
        value = record.scores.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            values.setdefault(record.task_id, []).append(float(value))
    return {task: sum(v) / len(v) for task, v in values.items()}


def paired_difference(a: dict[str, float], b: dict[str, float], *, metric: str = "",
                      n_resamples: int = N_RESAMPLES, seed: int = SEED) -> PairedDifference | None:
    """A - B over the tasks both have; None when they share none."""
    tasks = sorted(set(a) & set(b))
    if not tasks:
        return None
    differences = np.array([a[task] - b[task] for task in tasks], dtype=float)
    estimate = float(differences.mean())
    draws = bootstrap_draws(len(tasks), n_resamples, seed)
    interval = percentile_interval(estimate, differences[draws].mean(axis=1), ALPHA)
    low = None if math.isnan(interval.low) else interval.low
    high = None if math.isnan(interval.high) else interval.high
    return PairedDifference(metric, len(tasks), estimate, low, high)


@dataclass
class PairComparison:
    """Two runs (by id) and their paired differences; `matched`: the tasks both ran."""

    a: str
    b: str
    matched: int
    differences: list[PairedDifference]


def compare_pair(a: str, records_a: list[TurnRecord], b: str, records_b: list[TurnRecord]) -> PairComparison:
    matched = len({r.task_id for r in records_a} & {r.task_id for r in records_b})
    found: list[PairedDifference] = []
    if matched:
        # A suite with no pass/fail (every turn unassessed) has no pass-rate difference to show.
        if any(r.passed is not None for r in records_a) or any(r.passed is not None for r in records_b):
            difference = paired_difference(task_pass_rates(records_a), task_pass_rates(records_b), metric="task pass rate")
            if difference is not None:
                found.append(difference)
        scores = paired_difference(task_scores(records_a), task_scores(records_b), metric=f"per-turn {SCORE_KEY}")
        if scores is not None:
            found.append(scores)
    return PairComparison(a, b, matched, found)


def compare_all(runs: dict[str, list[TurnRecord]]) -> list[PairComparison]:
    """Every pair of the given runs (run id -> records), in the order given."""
    return [compare_pair(a, runs[a], b, runs[b]) for a, b in combinations(runs, 2)]


__all__ = ["N_RESAMPLES", "PairComparison", "PairedDifference", "compare_all", "compare_pair", "paired_difference",
           "task_pass_rates", "task_scores"]
