"""Leaderboards per suite, in the table shapes of the seed papers.

A table is plain data (runner/report/tables.py); the same data is written as leaderboard.json, leaderboard.md
and leaderboard.html.

Tables: the overview of every run (all suites; the smoke shape), then the tables suites add over the runs
(REPORT_TABLES, runner/report/sections.py: EvoGenUI-Bench Table 2, I-WebGenBench's per-domain Table 2,
MT-Web2Code Table 3), then each run's own (REPORT_RUN_TABLES: FlowEval Table 1), each only where its data exists.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import Any

from runner.report.collect import RunData
from runner.report.sections import run_table_sections, table_sections
from runner.report.tables import Table, column, number, with_ci


def _run_cells(run: RunData) -> dict[str, Any]:
    return {"run": run.label, "model": run.model, "judge": run.judge, "actor": run.actor}


# --------------------------------------------------------------------------- overview


def overview_table(runs: list[RunData]) -> Table:
    rows = []
    for run in runs:
        summary = run.summary
        overall = (summary.get("reliability") or {}).get("overall") or {}
        ci = (overall.get("ci") or {}).get("turn_pass")
        rows.append({
            **_run_cells(run),
            "tasks": (summary.get("run") or {}).get("tasks"),
            "slots": f"{summary.get('recorded_slots', len(run.records))}/{summary.get('requested_slots', len(run.records))}",
            "turn_pass": with_ci(summary.get("turn_pass"), ci),
            "bsr": number(summary.get("build_success_rate")),
            "ir": number(summary.get("interaction_rate")),
            "score": number(summary.get("score")),
            "infra": summary.get("infra_failures"),
            "statuses": ", ".join(f"{k}: {v}" for k, v in sorted((summary.get("status_counts") or {}).items())),
        })
    rows.sort(key=lambda row: -(row["turn_pass"] or {}).get("value", -1.0))
    columns = [column("run", "run"), column("tasks", "tasks", "int"), column("slots", "slots"),
               column("turn_pass", "turn pass %", "pct_ci"), column("bsr", "BSR %", "pct"), column("ir", "IR %", "pct")]
    if any(row["score"] is not None for row in rows):
        columns.append(column("score", "score", "score100"))
    columns += [column("infra", "infra", "int"), column("statuses", "statuses")]
    return {"id": "overview", "title": "Overview", "columns": columns, "rows": rows,
            "caption": "Turn pass over all requested slots (95% task-bootstrap CI where the suite reports one); "
                       "BSR: build success rate; IR: mean interaction rate (I-WebGenBench §3)."}


# --------------------------------------------------------------------------- assembly


def build_leaderboard(runs: list[RunData]) -> dict[str, Any]:
    suites: dict[str, list[RunData]] = {}
    for run in runs:
        suites.setdefault(run.suite or "unknown", []).append(run)
    result: dict[str, Any] = {
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runs": [{"label": run.label, "suite": run.suite, "model": run.model, "judge": run.judge, "actor": run.actor,
                  "path": str(run.path) if run.path else None, "run_id": run.run_id} for run in runs],
        "suites": {},
    }
    sections, run_sections = table_sections(), run_table_sections()
    for suite, members in suites.items():
        tables = [overview_table(members)]
        for section in sections:
            tables += section(members)
        for run in members:  # each run's own tables (FlowEval's ratings) after those over all of them
            tables += [table for section in run_sections if (table := section(run)) is not None]
        result["suites"][suite] = tables
    return result


def format_cell(value: Any, kind: str) -> str:
    if value is None or value == "":
        return "-"
    if kind in ("pct_ci", "num_ci"):
        scale, digits = (100.0, 1) if kind == "pct_ci" else (1.0, 2)
        text = f"{value['value'] * scale:.{digits}f}"
        low, high = value.get("ci") or [None, None]
        if low is not None and high is not None:
            text += f" [{low * scale:.{digits}f}, {high * scale:.{digits}f}]"
        return text
    if kind == "pct":
        return f"{float(value) * 100:.1f}"
    if kind == "score100":
        return f"{float(value) * 100:.1f}"
    if kind == "num":
        return f"{float(value):.2f}"
    if kind == "int":
        return str(int(value)) if isinstance(value, (int, float)) else str(value)
    return str(value)


def to_markdown(board: dict[str, Any]) -> str:
    lines = ["# Leaderboard", "", f"Generated {board['generated']} from {len(board['runs'])} run(s).", ""]
    for suite, tables in board["suites"].items():
        lines += [f"## suite: {suite}", ""]
        for table in tables:
            lines += [f"### {table['title']}", ""]
            labels = [c["label"] for c in table["columns"]]
            lines.append("| " + " | ".join(labels) + " |")
            lines.append("|" + "|".join("---" for _ in labels) + "|")
            for row in table["rows"]:
                cells = [format_cell(row.get(c["key"]), c["kind"]).replace("|", "\\|") for c in table["columns"]]
                lines.append("| " + " | ".join(cells) + " |")
            lines += ["", f"_{table.get('caption', '')}_", ""]
    return "\n".join(lines)


CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0 4px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}th:first-child,td:first-child{text-align:left}
th{background:#f3f3f3}caption{caption-side:bottom;text-align:left;color:#555;font-size:12px;padding-top:4px}
img{max-width:720px;border:1px solid #ddd;margin:6px}"""


def to_html(board: dict[str, Any], *, plots: dict[str, str] | None = None, run_links: dict[str, str] | None = None) -> str:
    """A static page: every value escaped, no script. `plots`: name -> data: URI; `run_links`: label -> href."""
    esc = html.escape
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
             f"<title>Leaderboard</title><style>{_STYLE}</style></head><body><h1>Leaderboard</h1>",
             f"<p>Generated {esc(board['generated'])} from {len(board['runs'])} run(s).</p>"]
    if run_links:
        parts.append("<h2>Runs</h2><ul>" + "".join(f"<li><a href='{esc(href, quote=True)}'>{esc(label)}</a></li>"
                                                   for label, href in run_links.items()) + "</ul>")
    for suite, tables in board["suites"].items():
        parts.append(f"<h2>suite: {esc(suite)}</h2>")
        for table in tables:
            parts.append(f"<h3 id='{esc(table['id'], quote=True)}'>{esc(table['title'])}</h3><table><caption>{esc(table.get('caption', ''))}</caption><tr>")
            parts += [f"<th>{esc(c['label'])}</th>" for c in table["columns"]]
            parts.append("</tr>")
            for row in table["rows"]:
                parts.append("<tr>" + "".join(f"<td>{esc(format_cell(row.get(c['key']), c['kind']))}</td>" for c in table["columns"]) + "</tr>")
            parts.append("</table>")
    for name, uri in (plots or {}).items():
        parts.append(f"<h3>{esc(name)}</h3><img alt='{esc(name, quote=True)}' src='{esc(uri, quote=True)}'>")
    parts.append("</body></html>")
    return "".join(parts)


__all__ = ["build_leaderboard", "format_cell", "overview_table", "to_html", "to_markdown"]
