"""Multi-turn reliability metrics of EvoGenUI-Bench (§4.3 and Appendix C.2).

The input of every metric is an *outcome matrix*: one row per task (episode), each row the outcomes of
that task's requested turns in order (turn 1 first). An outcome is one of

    passed       p=1, e=1   the official turn-level decision passed
    failed       p=0, e=1   a model response exists, the turn did not pass (invalid output, build failure, ...)
    blocked      p=0, e=1   not executed because an earlier required artifact is missing (§4.1)
    no_response  p=0, e=0   provider failure: the generation call returned no model response (§4.3)
    unassessed   p=0, e=1   the judge's verdict could not decide; never counted as a pass
    infra        p=0, e=1   the harness failed (not the model): unobserved
    judge_error  p=0, e=1   the judge gave no verdict at all: unobserved
    truncated    p=0, e=1   the judge's answer was cut at its output cap: no verdict, unobserved
    missing      p=0, e=1   a requested slot that was never recorded (the run stopped): unobserved

`p` is the paper's official pass indicator p_{T,t} and `e` its response indicator e_{T,t} (§4.3, eq. 3).
The paper defines e=0 only for provider failures; a blocked slot therefore keeps e=1 (this never changes
APR: a blocked turn follows a turn without an artifact, which cannot have passed, p_{t-1}=0), and so does
a turn that timed out after the model answered: whether the model answered is read from
TurnRecord.model_call, not from how the slot ended.

Turn Pass, TP@N and CPT count every requested slot (§4.3, "requested-slot accounting"), so an unobserved
slot is a non-pass there. APR is different: eq. 3 conditions on the outcome of turn t, and for an
unobserved slot (infra, judge_error, missing) there is none; counting it as a failed retention would score
an infrastructure failure as the model's regression. By default (`unobserved="exclude"`) such a transition
is left out of eq. 3 and counted beside it (`apr_unobserved`, by cause); `unobserved="fail"` keeps the
older reading, where it is a failed retention.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Literal, NamedTuple

import numpy as np

from runner.turns.records import FailureBucket, TurnRecord


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    BLOCKED = "blocked"
    NO_RESPONSE = "no_response"
    UNASSESSED = "unassessed"
    INFRA = "infra"
    JUDGE_ERROR = "judge_error"
    TRUNCATED = "truncated"
    MISSING = "missing"


# Slots whose outcome was never observed: eq. 3 has no p_{T,t} for them (see the module docstring).
UNOBSERVED = (Outcome.INFRA, Outcome.JUDGE_ERROR, Outcome.TRUNCATED, Outcome.MISSING)
# How APR treats a transition into an unobserved slot: "exclude" (outside eq. 3, counted beside it) or
# "fail" (a failed retention: the reading before unobserved slots were told apart).
Unobserved = Literal["exclude", "fail"]
UNOBSERVED_POLICIES: tuple[str, ...] = ("exclude", "fail")

OutcomeMatrix = Sequence[Sequence[Outcome | str]]
Statistic = Callable[[OutcomeMatrix], float]


def _rows(matrix: OutcomeMatrix) -> list[list[Outcome]]:
    """Validate and normalise a matrix (plain strings are accepted for convenience)."""
    rows = [[value if isinstance(value, Outcome) else Outcome(value) for value in row] for row in matrix]
    if not rows:
        raise ValueError("the outcome matrix has no tasks")
    if any(not row for row in rows):
        raise ValueError("every task needs at least one turn outcome")
    return rows


def _p(outcome: Outcome) -> int:
    """p_{T,t} (§4.3): 1 only for the official pass decision."""
    return 1 if outcome is Outcome.PASSED else 0


def _e(outcome: Outcome) -> int:
    """e_{T,t} (§4.3): 0 only when no model response was obtained (provider failure)."""
    return 0 if outcome is Outcome.NO_RESPONSE else 1


# --- official metrics (§4.3) ---------------------------------------------------------------------


def turn_pass(matrix: OutcomeMatrix) -> float:
    """Turn Pass (§4.3): the mean of p_{T,t} over ALL requested slots (requested-slot accounting:
    failed, blocked, no-response and unassessed slots all count as not passed)."""
    rows = _rows(matrix)
    slots = [_p(outcome) for row in rows for outcome in row]
    return sum(slots) / len(slots)


def episode_tp_at_k(row: Sequence[Outcome | str], k: int = 5) -> int:
    """P_TP@5(T) = prod_{t=1}^{N} p_{T,t} (§4.3, eq. 1): 1 iff all of the first k turns pass.

    The paper's episodes have N=5 turns and TP@5 is the product over all of them; here k must not
    exceed the episode's length, so TP@k with k=N is exactly eq. 1.
    """
    outcomes = [Outcome(value) for value in row]
    if not 1 <= k <= len(outcomes):
        raise ValueError(f"TP@{k} needs at least {k} turns per episode, got {len(outcomes)}")
    return math.prod(_p(outcome) for outcome in outcomes[:k])


def tp_at_k(matrix: OutcomeMatrix, k: int = 5) -> float:
    """TP@k: eq. 1 per episode, macro-averaged over tasks (§4.3: "Suite-level TP@5 and CPT are
    obtained by averaging these episode-level quantities across tasks")."""
    rows = _rows(matrix)
    return sum(episode_tp_at_k(row, k) for row in rows) / len(rows)


def episode_cpt(row: Sequence[Outcome | str]) -> int:
    """CPT(T) = sum_{t=1}^{N} prod_{j=1}^{t} p_{T,j} (§4.3, eq. 1): the length of the initial
    uninterrupted run of passing turns, in turns (0..N; not normalised, Table 9: "turns out of five")."""
    run = 0
    for value in row:
        if Outcome(value) is not Outcome.PASSED:
            break
        run += 1
    return run


def cpt(matrix: OutcomeMatrix) -> float:
    """Consecutive Passed Turns: eq. 1 per episode, macro-averaged over tasks (§4.3)."""
    rows = _rows(matrix)
    return sum(episode_cpt(row) for row in rows) / len(rows)


class AprCounts(NamedTuple):
    retained: int  # numerator of eq. 3: sum e_t p_{t-1} p_t
    eligible: int  # denominator of eq. 3: sum e_t p_{t-1}


def _check_policy(unobserved: str) -> None:
    if unobserved not in UNOBSERVED_POLICIES:
        raise ValueError(f"unobserved={unobserved!r}: expected one of {list(UNOBSERVED_POLICIES)}")


def apr_counts(matrix: OutcomeMatrix, *, unobserved: Unobserved = "exclude") -> AprCounts:
    """The pooled numerator and denominator of eq. 3 (§4.3) over all tasks and t = 2..N_T.

    A transition (t-1 -> t) is eligible when turn t-1 passed and turn t returned a model response
    (e_{T,t}=1); it is retained when turn t passes too. A no-response turn t-1 has p_{t-1}=0, so
    transitions touching a no-response turn on either side are never eligible. A transition into an
    unobserved slot (infra, judge_error, missing) is left out unless `unobserved="fail"`.
    """
    _check_policy(unobserved)
    rows = _rows(matrix)
    retained = eligible = 0
    for row in rows:
        for t in range(1, len(row)):
            if unobserved == "exclude" and row[t] in UNOBSERVED:
                continue
            weight = _e(row[t]) * _p(row[t - 1])
            eligible += weight
            retained += weight * _p(row[t])
    return AprCounts(retained, eligible)


def apr_unobserved(matrix: OutcomeMatrix) -> dict[str, int]:
    """Transitions after a passed turn into an unobserved slot, by its outcome: what eq. 3 leaves out
    under `unobserved="exclude"` (reported beside APR so the gap stays visible)."""
    counts = {outcome.value: 0 for outcome in UNOBSERVED}
    for row in _rows(matrix):
        for t in range(1, len(row)):
            if row[t] in UNOBSERVED and _p(row[t - 1]):
                counts[row[t].value] += 1
    return counts


def apr(matrix: OutcomeMatrix, *, unobserved: Unobserved = "exclude") -> float:
    """Adjacent Pass Retention (§4.3, eq. 3), POOLED over all eligible adjacent transitions of all
    tasks (not macro-averaged). NaN when no transition is eligible (APR is undefined then)."""
    counts = apr_counts(matrix, unobserved=unobserved)
    return counts.retained / counts.eligible if counts.eligible else math.nan


def per_position_pass(matrix: OutcomeMatrix) -> list[float]:
    """p̂_t (§4.3, before eq. 2): the pass rate over all requested slots at turn position t,
    for t = 1..max N (a position averages over the tasks that have that turn)."""
    rows = _rows(matrix)
    rates = []
    for t in range(max(len(row) for row in rows)):
        slots = [_p(row[t]) for row in rows if t < len(row)]
        rates.append(sum(slots) / len(slots))
    return rates


def independence_tp_at_k(matrix: OutcomeMatrix, k: int = 5) -> float:
    """P_indep^{TP@5} = prod_{t=1}^{5} p̂_t (§4.3, eq. 2): the TP@5 expected if the turn outcomes of
    an episode were independent with the position-specific pass rates."""
    rates = per_position_pass(matrix)
    if not 1 <= k <= len(rates):
        raise ValueError(f"the TP@{k} baseline needs {k} turn positions, got {len(rates)}")
    return math.prod(rates[:k])


def independence_cpt(matrix: OutcomeMatrix) -> float:
    """E[CPT] under the same independence assumption: sum_t prod_{j<=t} p̂_j.

    Not in the paper (eq. 2 covers TP@5 only); it applies eq. 1's CPT to eq. 2's independent turns.
    """
    expected, survive = 0.0, 1.0
    for rate in per_position_pass(matrix):
        survive *= rate
        expected += survive
    return expected


# --- countable-only diagnostics (Appendix C.2) ----------------------------------------------------
# "Countable-only variants are diagnostic rather than official: they remove provider failures for
# which no model response was obtained." Invalid output and build failures stay countable (§4.3).
# The paper does not say how an episode with a removed slot enters TP@5/CPT; we drop such episodes,
# because an episode with a hole has no defined "all turns pass" or "initial run".


def countable_turn_pass(matrix: OutcomeMatrix) -> float:
    """Turn Pass over the countable slots only (no-response slots removed). NaN if none is countable."""
    rows = _rows(matrix)
    slots = [_p(outcome) for row in rows for outcome in row if _e(outcome)]
    return sum(slots) / len(slots) if slots else math.nan


def _countable_rows(matrix: OutcomeMatrix) -> list[list[Outcome]]:
    return [row for row in _rows(matrix) if all(_e(outcome) for outcome in row)]


def countable_tp_at_k(matrix: OutcomeMatrix, k: int = 5) -> float:
    """TP@k over the episodes without any no-response slot. NaN if there are none."""
    rows = _countable_rows(matrix)
    return tp_at_k(rows, k) if rows else math.nan


def countable_cpt(matrix: OutcomeMatrix) -> float:
    """CPT over the episodes without any no-response slot. NaN if there are none."""
    rows = _countable_rows(matrix)
    return cpt(rows) if rows else math.nan


def countable_apr(matrix: OutcomeMatrix, *, unobserved: Unobserved = "exclude") -> float:
    """APR already excludes no-response turns through e_{T,t} (eq. 3), so it equals `apr`."""
    return apr(matrix, unobserved=unobserved)


# --- uncertainty (Appendix C.2) -------------------------------------------------------------------


class ConfidenceInterval(NamedTuple):
    estimate: float
    low: float
    high: float


def bootstrap_ci(
    matrix: OutcomeMatrix,
    statistic: Statistic,
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> ConfidenceInterval:
    """Task-level percentile bootstrap (Appendix C.2): resample complete episodes with replacement,
    preserving within-episode correlation, and take the alpha/2 and 1-alpha/2 percentiles.

    Resamples on which the statistic is undefined (NaN, e.g. APR without eligible transitions) are
    left out; if all are, the interval is (NaN, NaN).
    """
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    rows = _rows(matrix)
    estimate = float(statistic(rows))
    draws = bootstrap_draws(len(rows), n_resamples, seed)
    values = np.array([statistic([rows[i] for i in draw]) for draw in draws], dtype=float)
    return percentile_interval(estimate, values, alpha)


def bootstrap_ratio_ci(
    numerators: Sequence[float],
    denominators: Sequence[float],
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> ConfidenceInterval:
    """`bootstrap_ci` for a statistic of the form sum_T a_T / sum_T b_T over tasks, vectorised.

    Every official metric has that form (TP: passes / slots; TP@k and CPT: episode value / 1; APR:
    retained / eligible transitions), so this gives the same interval as `bootstrap_ci` with the same
    seed (the same episodes are drawn), in a fraction of the time.
    """
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    a = np.asarray(numerators, dtype=float)
    b = np.asarray(denominators, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError("numerators and denominators must be equally long, non-empty sequences")
    estimate = float(a.sum() / b.sum()) if b.sum() else math.nan
    draws = bootstrap_draws(a.size, n_resamples, seed)
    totals_a, totals_b = a[draws].sum(axis=1), b[draws].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(totals_b > 0, totals_a / totals_b, np.nan)
    return percentile_interval(estimate, values, alpha)


def bootstrap_draws(n_tasks: int, n_resamples: int, seed: int) -> np.ndarray:
    """Task indices of every resample: n_tasks episodes drawn with replacement, numpy default_rng."""
    return np.random.default_rng(seed).integers(0, n_tasks, size=(n_resamples, n_tasks))


def percentile_interval(estimate: float, values: np.ndarray, alpha: float) -> ConfidenceInterval:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return ConfidenceInterval(estimate, math.nan, math.nan)
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return ConfidenceInterval(estimate, float(low), float(high))


def ratio_terms(matrix: OutcomeMatrix, k: int = 5, *,
                unobserved: Unobserved = "exclude") -> dict[str, tuple[list[int], list[int]]]:
    """Per-task (numerator, denominator) of each official metric, for `bootstrap_ratio_ci`."""
    rows = _rows(matrix)
    apr_terms = [apr_counts([row], unobserved=unobserved) for row in rows]
    return {
        "turn_pass": ([sum(map(_p, row)) for row in rows], [len(row) for row in rows]),
        f"tp_at_{k}": ([episode_tp_at_k(row, k) for row in rows], [1] * len(rows)),
        "cpt": ([episode_cpt(row) for row in rows], [1] * len(rows)),
        "apr": ([terms.retained for terms in apr_terms], [terms.eligible for terms in apr_terms]),
    }


# --- from TurnRecords -----------------------------------------------------------------------------


def outcome_of(record: TurnRecord) -> Outcome:
    """The outcome of one persisted slot; the order of the tests matters (a pass always wins)."""
    if record.passed is True:
        return Outcome.PASSED
    if record.status is FailureBucket.BLOCKED:
        return Outcome.BLOCKED
    if record.provider_failed:
        return Outcome.NO_RESPONSE
    if record.status is FailureBucket.INFRA:
        return Outcome.INFRA
    if record.status is FailureBucket.JUDGE_ERROR:
        return Outcome.JUDGE_ERROR
    if record.status is FailureBucket.TRUNCATED:
        return Outcome.TRUNCATED
    if record.passed is None:
        return Outcome.UNASSESSED
    return Outcome.FAILED


def build_matrix(
    records: Sequence[TurnRecord], turns_per_task: int, *, requested_tasks: Iterable[str] = ()
) -> tuple[list[str], list[list[Outcome]], int]:
    """(task ids, outcome matrix, number of missing slots) from TurnRecords, tasks sorted by id.

    Every requested task and every task seen gets `turns_per_task` slots. A slot without a record (a
    run that stopped, a task that never started) is `missing`: a failure, never silently dropped from
    the denominator (EvoGenUI-Bench §4.3 averages over the requested turns of every task).
    """
    if turns_per_task < 1:
        raise ValueError("turns_per_task must be >= 1")
    by_task: dict[str, dict[int, TurnRecord]] = defaultdict(dict)
    for task_id in requested_tasks:
        by_task[task_id]
    for record in records:
        if not 1 <= record.turn <= turns_per_task:
            raise ValueError(f"record {record.task_id} turn {record.turn} is outside 1..{turns_per_task}")
        by_task[record.task_id][record.turn] = record
    task_ids = sorted(by_task)
    matrix, missing = [], 0
    for task_id in task_ids:
        row = []
        for turn in range(1, turns_per_task + 1):
            record = by_task[task_id].get(turn)
            if record is None:
                missing += 1
                row.append(Outcome.MISSING)
            else:
                row.append(outcome_of(record))
        matrix.append(row)
    return task_ids, matrix, missing


def _clean(value: float | None) -> float | None:
    """JSON has no NaN: undefined metrics are reported as null."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _ci(interval: ConfidenceInterval) -> list[float | None]:
    return [_clean(interval.low), _clean(interval.high)]


def metrics_for(matrix: OutcomeMatrix, *, n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05,
                unobserved: Unobserved = "exclude") -> dict[str, Any]:
    """All reliability metrics of one group of tasks, with bootstrap CIs for the four official ones.
    `unobserved`: how APR treats transitions into infra / judge_error / missing slots (module docstring)."""
    rows = _rows(matrix)
    k = min(len(row) for row in rows)  # TP@N, N = turns per episode (5 in the paper)
    counts = apr_counts(rows, unobserved=unobserved)
    outcome_counts = {outcome.value: sum(row.count(outcome) for row in rows) for outcome in Outcome}
    official: dict[str, Statistic] = {
        "turn_pass": turn_pass,
        f"tp_at_{k}": lambda m: tp_at_k(m, k),
        "cpt": cpt,
        "apr": lambda m: apr(m, unobserved=unobserved),
    }
    result: dict[str, Any] = {name: _clean(function(rows)) for name, function in official.items()}
    # Same intervals as bootstrap_ci(rows, function, ...) with this seed, computed vectorised.
    result["ci"] = {
        name: _ci(bootstrap_ratio_ci(numerators, denominators, n_resamples=n_resamples, seed=seed, alpha=alpha))
        for name, (numerators, denominators) in ratio_terms(rows, k, unobserved=unobserved).items()
    }
    result.update(
        {
            "ci_level": 1 - alpha,
            "apr_retained": counts.retained,
            "apr_eligible": counts.eligible,
            "apr_unobserved": apr_unobserved(rows),  # after a pass, left out of eq. 3 unless "fail"
            "apr_unobserved_policy": unobserved,
            "per_position_pass": per_position_pass(rows),
            f"independence_tp_at_{k}": independence_tp_at_k(rows, k),
            "independence_cpt": independence_cpt(rows),
            "countable_turn_pass": _clean(countable_turn_pass(rows)),
            f"countable_tp_at_{k}": _clean(countable_tp_at_k(rows, k)),
            "countable_cpt": _clean(countable_cpt(rows)),
            "countable_apr": _clean(countable_apr(rows, unobserved=unobserved)),
            "n_tasks": len(rows),
            "n_slots": sum(len(row) for row in rows),
            "outcomes": outcome_counts,
        }
    )
    return result


def summarize(
    records: list[TurnRecord],
    turns_per_task: int,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    requested_tasks: Mapping[str, str] | None = None,
    unobserved: Unobserved = "exclude",
) -> dict[str, Any]:
    """Metrics overall and per sub_suite: {"overall": {...}, "presentation": {...}, ...}.

    `requested_tasks` (task id -> sub-suite) names every selected task, so one that left no record
    still counts, with all its slots missing.

    Overall TP/TP@N/CPT macro-average over all tasks and overall APR pools all eligible transitions
    (§4.3). The paper's Table 2 "Overall" averages the three suite values instead; with equal suite
    sizes (50/50/50 in the paper) the two agree, and `suite_mean` reports the paper's form whenever
    there is more than one sub-suite. Per-status counts are reported so that infra failures stay visible.
    """
    requested_tasks = dict(requested_tasks or {})
    task_ids, matrix, missing = build_matrix(records, turns_per_task, requested_tasks=requested_tasks)
    if not task_ids:
        return {"overall": {"n_tasks": 0, "n_slots": 0}}
    options = {"n_resamples": n_resamples, "seed": seed, "alpha": alpha, "unobserved": unobserved}
    sub_suite_of: dict[str, str] = dict(requested_tasks)
    statuses: dict[str, int] = defaultdict(int)
    for record in records:
        sub_suite_of.setdefault(record.task_id, record.sub_suite)
        statuses[record.status.value] += 1
    summary: dict[str, Any] = {"overall": metrics_for(matrix, **options)}
    summary["overall"]["missing_slots"] = missing
    summary["overall"]["statuses"] = dict(sorted(statuses.items()))
    groups: dict[str, list[list[Outcome]]] = defaultdict(list)
    for task_id, row in zip(task_ids, matrix):
        if sub_suite_of[task_id]:
            groups[sub_suite_of[task_id]].append(row)
    for name in sorted(groups):
        summary[name] = metrics_for(groups[name], **options)
    if len(groups) > 1:
        k = turns_per_task
        summary["overall"]["suite_mean"] = {
            key: float(np.mean([summary[name][key] for name in groups])) for key in ("turn_pass", f"tp_at_{k}", "cpt")
        }
    return summary
