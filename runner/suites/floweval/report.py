"""FlowEval's report section (runner/report/sections.py): the Table 1 shape, one table per run whose summary
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


__all__ = ["floweval_table"]
