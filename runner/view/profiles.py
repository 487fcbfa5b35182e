"""A model's profile across protocols: every suite it ran, with the leaderboard's tables of that suite over all
runs the viewer has (the model's rows marked, so its numbers stand next to the other models': EvoGenUI-Bench
Table 2 by sub-suite, I-WebGenBench's per-domain Table 2, MT-Web2Code Table 3, FlowEval Table 1, whatever the
suites' report sections give), and plots drawn from the runs: pass rate by turn position (EvoGenUI-Bench
Fig. 3b's shape; the mean per-turn score where a suite has no pass/fail) and the composition of failures by
mechanism (Figs. 4-5's shape) and by failure bucket."""

from __future__ import annotations

from collections import Counter
from typing import Any

from markupsafe import Markup

from runner.metrics.reliability import build_matrix, per_position_pass
from runner.report.collect import RunData
from runner.report.leaderboard import build_leaderboard
from runner.turns.records import FailureBucket
from runner.view.catalog import Catalog, UnknownRun, ViewRun, url_id
from runner.view.compare import SCORE_KEY
from runner.view.svg import Bar, Series, line_chart, stacked_bars


def model_ids(catalog: Catalog) -> dict[str, list[ViewRun]]:
    """URL-safe model id -> its runs, in catalog order."""
    found: dict[str, list[ViewRun]] = {}
    for run in catalog.runs.values():
        found.setdefault(url_id(run.data.model or "unknown"), []).append(run)
    return found


def position_pass(run: RunData) -> list[float] | None:
    """Pass rate by turn position: the summary's (EvoGenUI-Bench §4.3, over requested slots), else from the
    records; None where the suite has no pass/fail."""
    overall = (run.summary.get("reliability") or {}).get("overall") or {}
    if overall.get("per_position_pass"):
        return [float(v) for v in overall["per_position_pass"]]
    if not run.records or all(r.passed is None for r in run.records):
        return None
    try:
        _, matrix, _ = build_matrix(run.records, max(r.turn for r in run.records))
    except ValueError:
        return None
    return per_position_pass(matrix)


def position_score(run: RunData) -> list[float | None] | None:
    """Mean continuous per-turn score by turn position, where the records carry one."""
    by_turn: dict[int, list[float]] = {}
    for record in run.records:
        value = record.scores.get(SCORE_KEY)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            by_turn.setdefault(record.turn, []).append(float(value))
    if not by_turn:
        return None
    return [sum(by_turn[t]) / len(by_turn[t]) if t in by_turn else None for t in range(1, max(by_turn) + 1)]


def mechanism_counts(run: RunData) -> Counter[str]:
    """Executed non-passing turns by failure mechanism: the summary's overall counts (EvoGenUI-Bench §6.1),
    else the verdicts' mechanisms."""
    counts = (run.summary.get("failure_mechanisms") or {}).get("overall")
    if isinstance(counts, dict) and counts:
        return Counter({k: int(v) for k, v in counts.items() if isinstance(v, int) and not isinstance(v, bool) and v})
    found: Counter[str] = Counter()
    for record in run.records:
        if record.passed is not True and record.verdict is not None and record.verdict.mechanism:
            found[record.verdict.mechanism] += 1
    return found


def bucket_counts(run: RunData) -> Counter[str]:
    return Counter(record.status.value for record in run.records)


def _plots(model_runs: list[ViewRun], peers: list[ViewRun]) -> list[Markup]:
    mine = {run.id for run in model_runs}
    ordered = model_runs + [run for run in peers if run.id not in mine]
    plots: list[Markup] = []
    passing = [Series(run.data.label, list(values), run.id in mine) for run in ordered
               if (values := position_pass(run.data))]
    if any(s.highlight for s in passing):
        plots.append(line_chart(passing, title="Pass rate by turn position (EvoGenUI-Bench Fig. 3b shape)",
                                y_label="pass rate %"))
    scored = [Series(run.data.label, values, run.id in mine) for run in ordered
              if (values := position_score(run.data))]
    if any(s.highlight for s in scored):
        plots.append(line_chart(scored, title=f"Mean per-turn {SCORE_KEY} by turn position", y_label=SCORE_KEY,
                                percent=False))
    mechanisms = [Bar(run.data.label, dict(counts), run.id in mine) for run in ordered
                  if (counts := mechanism_counts(run.data))]
    if any(bar.highlight for bar in mechanisms):
        categories = sorted({c for bar in mechanisms for c in bar.counts}, key=lambda c: (c == "unclassified", c))
        plots.append(stacked_bars(mechanisms, categories,
                                  title="Failure mechanisms of non-passing turns (EvoGenUI-Bench Figs. 4-5 shape)"))
    buckets = [Bar(run.data.label, dict(bucket_counts(run.data)), run.id in mine) for run in ordered if run.data.records]
    if buckets:
        order = [bucket.value for bucket in FailureBucket]
        present = [b for b in order if any(b in bar.counts for bar in buckets)]
        plots.append(stacked_bars(buckets, present, title="Turns by failure bucket"))
    return plots


def model_profile(catalog: Catalog, model_id: str) -> dict[str, Any]:
    by_model = model_ids(catalog)
    if model_id not in by_model:
        raise UnknownRun(f"no model {model_id!r} in this viewer (models: {', '.join(by_model) or 'none'})")
    model_runs = by_model[model_id]
    name = model_runs[0].data.model or model_id
    suites = sorted({run.data.suite or "unknown" for run in model_runs})
    peers = [run for run in catalog.runs.values() if (run.data.suite or "unknown") in suites]
    labels = {run.data.label for run in model_runs}
    board = build_leaderboard([run.data for run in peers])
    sections = []
    for suite in suites:
        tables = []
        for table in board["suites"].get(suite, []):
            marked = [{"cells": row, "mine": row.get("run") in labels or row.get("model") == name}
                      for row in table["rows"]]
            tables.append({**table, "marked": marked})
        sections.append({"suite": suite, "tables": tables})
    others = sorted({run.data.model for run in peers if run.id not in {r.id for r in model_runs}})
    return {"id": model_id, "name": name, "runs": model_runs, "suites": sections, "others": others,
            "plots": _plots(model_runs, peers)}


__all__ = ["bucket_counts", "mechanism_counts", "model_ids", "model_profile", "position_pass", "position_score"]
