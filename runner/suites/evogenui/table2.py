"""The results table in the shape of EvoGenUI-Bench's Table 2: rows = sub-suites + Overall, columns TP,
TP@N, CPT, APR, each with a task-level bootstrap 95% CI (Appendix C.2).

Per sub-suite the values are those of §4.3 (TP, TP@N, CPT macro-averaged over tasks; APR pooled over
eligible transitions). The Overall row follows Table 2's caption: "Overall averages the three suites
for TP, TP@5, and CPT and pools eligible transitions for APR". Its interval resamples episodes within
each sub-suite (a stratified version of the task-level bootstrap), so every resample keeps the suite
sizes and the Overall estimate keeps its definition.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from runner.metrics.reliability import (
    Outcome,
    Unobserved,
    bootstrap_draws,
    percentile_interval,
    bootstrap_ratio_ci,
    build_matrix,
    ratio_terms,
)
from runner.turns.records import TurnRecord

SUB_SUITE_ORDER = ("presentation", "interaction", "tool_grounded")
OVERALL = "overall"


def _clean(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _ratio(numerators: np.ndarray, denominators: np.ndarray) -> float:
    return float(numerators.sum() / denominators.sum()) if denominators.sum() else math.nan


def _group_rows(records: list[TurnRecord], turns_per_task: int,
                requested_tasks: Mapping[str, str]) -> dict[str, list[list[Outcome]]]:
    task_ids, matrix, _ = build_matrix(records, turns_per_task, requested_tasks=requested_tasks)
    sub_suite_of: dict[str, str] = {task_id: name or "unknown" for task_id, name in requested_tasks.items()}
    for record in records:
        sub_suite_of.setdefault(record.task_id, record.sub_suite or "unknown")
    groups: dict[str, list[list[Outcome]]] = {}
    for task_id, row in zip(task_ids, matrix):
        groups.setdefault(sub_suite_of[task_id], []).append(row)
    order = [name for name in SUB_SUITE_ORDER if name in groups] + sorted(set(groups) - set(SUB_SUITE_ORDER))
    return {name: groups[name] for name in order}


def table2(
    records: list[TurnRecord],
    turns_per_task: int,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    requested_tasks: Mapping[str, str] | None = None,
    unobserved: Unobserved = "exclude",
) -> dict[str, Any]:
    """`requested_tasks` (task id -> sub-suite): every selected task, recorded or not (a missing slot
    is a non-pass; APR leaves transitions into missing, infra, judge_error and truncated slots out unless
    `unobserved="fail"`, runner.metrics.reliability). {"columns": [...], "order": [row names], "rows": {name: {metric: value, metric_ci: [lo, hi],
    n_tasks}}, ...}. Values are fractions (TP, TP@N, APR) and turns (CPT); the printer shows % like the
    paper."""
    k = turns_per_task
    names = ("turn_pass", f"tp_at_{k}", "cpt", "apr")
    groups = _group_rows(records, k, dict(requested_tasks or {}))
    result: dict[str, Any] = {
        "columns": list(names),
        "labels": {"turn_pass": "TP", f"tp_at_{k}": f"TP@{k}", "cpt": "CPT", "apr": "APR"},
        "turns_per_task": k,
        "ci_level": 1 - alpha,
        "overall_definition": "mean of the sub-suite values for TP, TP@N and CPT; APR pooled over all eligible transitions",
        "order": [],
        "rows": {},
    }
    if not groups:
        return result
    terms = {name: ratio_terms(rows, k, unobserved=unobserved) for name, rows in groups.items()}
    for position, (name, rows) in enumerate(groups.items()):
        row: dict[str, Any] = {"n_tasks": len(rows)}
        for metric in names:
            numerators, denominators = terms[name][metric]
            interval = bootstrap_ratio_ci(numerators, denominators, n_resamples=n_resamples, seed=seed + position, alpha=alpha)
            row[metric] = _clean(interval.estimate)
            row[f"{metric}_ci"] = [_clean(interval.low), _clean(interval.high)]
        result["rows"][name] = row
        result["order"].append(name)
    result["rows"][OVERALL] = _overall(terms, names, n_resamples=n_resamples, seed=seed, alpha=alpha)
    result["order"].append(OVERALL)
    return result


def _overall(terms: dict[str, dict[str, tuple[list[int], list[int]]]], names: tuple[str, ...], *,
             n_resamples: int, seed: int, alpha: float) -> dict[str, Any]:
    """Table 2's Overall with a stratified bootstrap: each sub-suite resamples its own episodes (the
    same draws as that sub-suite's own interval), then the resample's suite values are combined."""
    groups = list(terms)
    draws = {name: bootstrap_draws(len(terms[name]["cpt"][0]), n_resamples, seed + position) for position, name in enumerate(groups)}
    row: dict[str, Any] = {"n_tasks": sum(len(terms[name]["cpt"][0]) for name in groups)}
    for metric in names:
        arrays = {name: (np.asarray(terms[name][metric][0], float), np.asarray(terms[name][metric][1], float)) for name in groups}
        if metric == "apr":  # pooled over every eligible transition of every sub-suite
            estimate = _ratio(np.concatenate([a for a, _ in arrays.values()]), np.concatenate([b for _, b in arrays.values()]))
            top = sum(arrays[name][0][draws[name]].sum(axis=1) for name in groups)
            bottom = sum(arrays[name][1][draws[name]].sum(axis=1) for name in groups)
            with np.errstate(invalid="ignore", divide="ignore"):
                values = np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1), np.nan)
        else:  # the mean of the sub-suite values
            estimate = float(np.mean([_ratio(*arrays[name]) for name in groups]))
            per_group = [arrays[name][0][draws[name]].sum(axis=1) / arrays[name][1][draws[name]].sum(axis=1) for name in groups]
            values = np.mean(per_group, axis=0)
        interval = percentile_interval(estimate, np.asarray(values, dtype=float), alpha)
        row[metric] = _clean(interval.estimate)
        row[f"{metric}_ci"] = [_clean(interval.low), _clean(interval.high)]
    return row
