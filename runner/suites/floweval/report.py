"""FlowEval's report sections (runner/report/sections.py).

`floweval_slots`: a FlowEval run's slots, each with its DTW, eBLEU and WMD (FlowEval §3.3) and beside them its
flow completion (not the paper's), a slot with a flow that stopped short saying which flow and at which step.

`floweval_table`: the Table 1 shape, one table per run whose summary
has `floweval` = {"reference": "human", "elo": {rater: {model: rating}}, "agreement": {rater: {"spearman",
"kappa", "agreement_rate"}}}: Elo (and rank) per rater, then Spearman rho, Cohen's kappa and agreement rate
against the reference rater. A run's own summary has no `elo` (its per-slot metrics only), so the table
appears for summaries that add the rankings."""

from __future__ import annotations

from typing import Any

from runner.report.collect import RunData
from runner.report.tables import Table, column, number

AGREEMENT_ROWS = (("spearman", "Spearman rho"), ("kappa", "Cohen's kappa"), ("agreement_rate", "Agreement rate"))


def floweval_table(run: RunData) -> Table | None:
    """REPORT_RUN_TABLES entry: the run's Table 1, where its summary has Elo ratings."""
    data = run.summary.get("floweval")
    if not isinstance(data, dict) or not data.get("elo"):
        return None
    raters = list(data["elo"])
    models = sorted({m for ratings in data["elo"].values() for m in ratings})
    reference = data.get("reference")
    if reference in data["elo"]:
        models.sort(key=lambda m: -(number(data["elo"][reference].get(m)) or -1e9))
    rows = []
    for model in models:
        row: dict[str, Any] = {"model": model}
        for rater in raters:
            ratings = data["elo"][rater]
            value = number(ratings.get(model))
            rank = 1 + sum(1 for other in ratings.values() if (number(other) or -1e9) > (value or -1e9)) if value is not None else None
            row[rater] = None if value is None else f"{value:.0f} ({rank})"
        rows.append(row)
    agreement = data.get("agreement") or {}
    for key, label in AGREEMENT_ROWS:
        row = {"model": label}
        for rater in raters:
            value = number((agreement.get(rater) or {}).get(key))
            row[rater] = "N/A" if value is None else (f"{value * 100:.1f}%" if key == "agreement_rate" else f"{value:.2f}")
        rows.append(row)
    return {"id": "floweval", "title": f"FlowEval Table 1 shape ({run.label})",
            "columns": [column("model", "model")] + [column(r, r) for r in raters], "rows": rows,
            "caption": f"Elo (rank) per rater; agreement rows against the reference rater ({reference})."}


def floweval_slots(run: RunData) -> Table | None:
    """REPORT_RUN_TABLES entry: every scored slot of a FlowEval run, its metrics and its completion."""
    if run.suite != "floweval":
        return None
    rows = []
    for record in sorted(run.records, key=lambda r: (r.task_id, r.turn)):
        scores = record.verdict.scores if record.verdict is not None else {}
        if "dtw" not in scores:
            continue
        reached = (record.verdict.raw or {}).get("completion") if record.verdict is not None else None
        rows.append({"slot": f"{record.task_id}/{record.turn}", "dtw": number(scores.get("dtw")),
                     "ebleu": number(scores.get("ebleu")), "wmd": number(scores.get("wmd")),
                     "completion": number(scores.get("completion")), "stopped": _stopped(reached)})
    if not rows:
        return None
    return {"id": "floweval_slots", "title": f"FlowEval slots ({run.label})",
            "columns": [column("slot", "slot"), column("dtw", "DTW ↓", "num"), column("ebleu", "eBLEU ↑", "num"),
                        column("wmd", "WMD ↓", "num"), column("completion", "completion ↑", "num"),
                        column("stopped", "flows that stopped short")], "rows": rows,
            "caption": "FlowEval §3.3 metrics, the mean over flows of the best pairing; completion (not the paper's): "
                       "the mean share of each flow's scripted steps the generated site let the actor perform."}


def _stopped(completion: Any) -> str:
    """'-' when every flow ran to its end; else each flow that stopped, at which step of how many."""
    if not isinstance(completion, dict):
        return "n/a (no scripted flow)"
    parts = []
    for flow_id in completion.get("incomplete") or []:
        flow = (completion.get("flows") or {}).get(flow_id) or {}
        where = flow.get("stopped_at") or {}
        index = where.get("index")
        step = f"step {index + 1} ({where.get('action', '')})" if isinstance(index, int) else "a step"
        parts.append(f"{flow_id}: {step} of {flow.get('of', '?')}")
    return "; ".join(parts) or "-"


__all__ = ["floweval_slots", "floweval_table"]
