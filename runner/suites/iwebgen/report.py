"""I-WebGenBench's report sections (runner/report/sections.py), for any suite whose tasks carry domains or
whose summary has BSR and IR: the Table 2 shape per domain, and Fig. 3 (left)'s BSR against IR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.metrics.basic import basic_summary
from runner.report.collect import RunData
from runner.report.tables import Table, column
from runner.turns.records import TurnRecord


def _domain_cells(records: list[TurnRecord]) -> dict[str, Any]:
    basics = basic_summary(records, requested_slots=len(records))
    scores = [r.scores["score"] for r in records if "score" in r.scores]
    return {"score": sum(scores) / len(scores) if scores else None, "bsr": basics["build_success_rate"] if records else None,
            "ir": basics["interaction_rate"]}


def per_domain_table(runs: list[RunData]) -> Table | None:
    """Score, BSR and IR per domain and overall (I-WebGenBench Table 2)."""
    domains = sorted({d for run in runs for d in run.domains.values() if d})
    if not domains:
        return None
    columns = [column("run", "model / judge / actor")]
    for domain in [*domains, "overall"]:
        title = "Overall" if domain == "overall" else domain
        columns += [column(f"{domain}.score", f"{title} score", "score100"), column(f"{domain}.bsr", f"{title} BSR", "pct"),
                    column(f"{domain}.ir", f"{title} IR", "pct")]
    rows = []
    for run in runs:
        of = run.domains
        row: dict[str, Any] = {"run": run.label}
        for domain in domains:
            chosen = [r for r in run.records if of.get(r.task_id) == domain]
            row.update({f"{domain}.{k}": v for k, v in _domain_cells(chosen).items()} if chosen else {})
        row.update({f"overall.{k}": v for k, v in _domain_cells(run.records).items()})
        rows.append(row)
    return {"id": "per_domain", "title": "Per-domain score, BSR and IR (I-WebGenBench Table 2 shape)", "columns": columns,
            "rows": rows, "caption": "Score: the suite's 0-100 score where it reports one; BSR: build success rate; IR: mean "
                                     "interaction rate (DOM mutations per probed action); '-' where there is no data."}


def per_domain_tables(runs: list[RunData]) -> list[Table]:
    """REPORT_TABLES entry: the per-domain table where the runs' tasks have domains."""
    table = per_domain_table(runs)
    return [table] if table is not None else []


def bsr_vs_ir(runs: list[RunData], path: Path) -> Path | None:
    """REPORT_PLOTS entry: build success rate against interaction rate, one point per run."""
    from runner.report.plots import plt, save_figure  # matplotlib only when the report draws

    points = [(run.label, run.summary.get("build_success_rate"), run.summary.get("interaction_rate")) for run in runs]
    points = [(label, b, i) for label, b, i in points if isinstance(b, (int, float)) and isinstance(i, (int, float))]
    if not points:
        return None
    figure, axes = plt.subplots(figsize=(5.5, 4.5))
    for label, bsr, ir in points:
        axes.scatter(bsr * 100, ir * 100, s=40)
        axes.annotate(label, (bsr * 100, ir * 100), fontsize=7, xytext=(4, 4), textcoords="offset points")
    axes.set(xlabel="BSR (%)", ylabel="IR (%)", xlim=(-5, 105), ylim=(-5, 105), title="Build success vs interaction rate")
    axes.grid(alpha=0.3)
    return save_figure(figure, path)


__all__ = ["bsr_vs_ir", "per_domain_table", "per_domain_tables"]
