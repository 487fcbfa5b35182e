"""MT-Web2Code's report sections (runner/report/sections.py), from a summary's `web2code`: the Table 3 shape on
the leaderboard and Fig. 4's chain against independent editing per turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.report.collect import RunData
from runner.report.tables import Table, column, number

TABLE3_ORDER = ("layout", "element", "text", "color", "spacing", "overall", "s_inbox", "s_outbox", "score")
TABLE3_TITLES = {"s_inbox": "S_inbox", "s_outbox": "S_outbox"}


def table3_table(runs: list[RunData]) -> Table | None:
    """Per level (macro/micro track) and mode, the rubric dimensions, Overall, S_inbox, S_outbox and Score
    (eq. 12)."""
    found = [(run, (run.summary.get("web2code") or {})) for run in runs]
    found = [(run, data) for run, data in found if data.get("table3")]
    if not found:
        return None
    keys: list[str] = []
    for _, data in found:
        for row in data["table3"].values():
            keys += [k for k in row if k not in keys and k not in ("turns", "scored_turns")]
    keys = [k for k in TABLE3_ORDER if k in keys] + [k for k in keys if k not in TABLE3_ORDER]
    columns = [column("level", "level"), column("run", "model / judge / actor"), column("mode", "mode")]
    columns += [column(k, TABLE3_TITLES.get(k, k.replace("_", " ").title()), "score100") for k in keys]
    columns.append(column("turns", "turns", "int"))
    rows = []
    for run, data in found:
        for mode, values in data["table3"].items():
            rows.append({"level": f"{data.get('track', '')}".title() + "-Level", "run": run.label, "mode": mode,
                         **{k: number(values.get(k)) for k in keys}, "turns": values.get("turns")})
    rows.sort(key=lambda row: (row["level"], row["mode"] != "overall", -(row.get("score") or -1.0)))
    return {"id": "table3", "title": "MT-Web2Code Table 3 shape", "columns": columns, "rows": rows,
            "caption": "Scores on a 0-100 scale; Score = 0.8 S_inbox + 0.2 S_outbox (MT-Web2Code eq. 12). Rows per "
                       "level (macro / micro track) and editing mode (overall, chain, independent)."}


def table3_tables(runs: list[RunData]) -> list[Table]:
    """REPORT_TABLES entry: the Table 3 shape where the runs' summaries have one."""
    table = table3_table(runs)
    return [table] if table is not None else []


def chain_vs_independent(runs: list[RunData], path: Path) -> Path | None:
    """REPORT_PLOTS entry: per-turn score in chain and independent mode, and the gap (Fig. 4)."""
    from runner.report.plots import plt, save_figure  # matplotlib only when the report draws

    curves: list[tuple[str, dict[str, Any]]] = [(run.label, (run.summary.get("web2code") or {}).get("per_turn") or {})
                                                for run in runs]
    curves = [(label, c) for label, c in curves if {"chain", "independent"} <= set(c)]
    if not curves:
        return None
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for label, curve in curves:
        chain = {row["turn"]: row.get("score") for row in curve["chain"]}
        independent = {row["turn"]: row.get("score") for row in curve["independent"]}
        turns = sorted(set(chain) & set(independent))
        top.plot(turns, [(chain[t] or 0) * 100 for t in turns], marker="o", label=f"{label} chain")
        top.plot(turns, [(independent[t] or 0) * 100 for t in turns], marker="s", linestyle="--", label=f"{label} independent")
        bottom.bar([t + 0.1 * len(bottom.patches) / max(1, len(turns)) for t in turns],
                   [((independent[t] or 0) - (chain[t] or 0)) * 100 for t in turns], width=0.3, label=label)
    top.set(ylabel="score (0-100)", title="Chain vs independent editing per turn")
    top.legend(fontsize=7)
    bottom.set(xlabel="turn", ylabel="independent - chain")
    return save_figure(figure, path)


__all__ = ["chain_vs_independent", "table3_table", "table3_tables"]
