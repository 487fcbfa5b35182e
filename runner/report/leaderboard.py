"""Leaderboards per suite, in the table shapes of the seed papers.

A table is plain data: {"id", "title", "caption", "columns": [{"key", "label", "kind"}], "rows": [{key: value}]}.
`kind` says how a value is shown: text, int, pct (a fraction shown in %), pct_ci / num_ci (a value with a
bootstrap interval: {"value": x, "ci": [lo, hi]}), num, score100 (a 0..1 score shown on the paper's 0-100
scale), elo. The same data is written as leaderboard.json, leaderboard.md and leaderboard.html.

Tables (each only where its data exists):
- overview: every run: turn pass (with CI), BSR, IR, score, infra failures (all suites; the smoke shape).
- table2: EvoGenUI-Bench Table 2: per sub-suite and Overall TP / TP@N / CPT / APR with task-bootstrap CIs, models
  ordered by overall TP, and the caption's Aggregate row (macro-average of model rows for TP, TP@N, CPT;
  eligible transitions pooled for APR).
- per_domain: I-WebGenBench Table 2: score, BSR and IR per domain and overall.
- table3: MT-Web2Code Table 3: per level (macro/micro track) and mode, the rubric dimensions, Overall,
  S_inbox, S_outbox and Score (eq. 12).
- floweval: FlowEval Table 1: Elo (and rank) per rater, then Spearman rho, Cohen's kappa and agreement rate
  against the reference rater. It reads `summary["floweval"]` = {"reference": "human", "elo": {rater:
  {model: rating}}, "agreement": {rater: {"spearman", "kappa", "agreement_rate"}}} (no suite writes it yet).
"""

from __future__ import annotations

import html
import math
from datetime import datetime, timezone
from typing import Any

from runner.metrics.basic import basic_summary
from runner.turns.records import TurnRecord

from runner.report.collect import RunData

SUB_SUITE_ORDER = ("presentation", "interaction", "tool_grounded")
GROUP_TITLES = {"presentation": "Presentation", "interaction": "Interaction", "tool_grounded": "Tool-grounded",
                "overall": "Overall"}
TABLE3_ORDER = ("layout", "element", "text", "color", "spacing", "overall", "s_inbox", "s_outbox", "score")
TABLE3_TITLES = {"s_inbox": "S_inbox", "s_outbox": "S_outbox"}


def _col(key: str, label: str, kind: str = "text") -> dict[str, str]:
    return {"key": key, "label": label, "kind": kind}


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        return None
    return float(value)


def _with_ci(value: Any, ci: Any) -> dict[str, Any] | None:
    value = _num(value)
    if value is None:
        return None
    interval = list(ci) if isinstance(ci, (list, tuple)) and len(ci) == 2 else [None, None]
    return {"value": value, "ci": [_num(interval[0]), _num(interval[1])]}


def _run_cells(run: RunData) -> dict[str, Any]:
    return {"run": run.label, "model": run.model, "judge": run.judge, "actor": run.actor}


# --------------------------------------------------------------------------- overview


def overview_table(runs: list[RunData]) -> dict[str, Any]:
    rows = []
    for run in runs:
        summary = run.summary
        overall = (summary.get("reliability") or {}).get("overall") or {}
        ci = (overall.get("ci") or {}).get("turn_pass")
        rows.append({
            **_run_cells(run),
            "tasks": (summary.get("run") or {}).get("tasks"),
            "slots": f"{summary.get('recorded_slots', len(run.records))}/{summary.get('requested_slots', len(run.records))}",
            "turn_pass": _with_ci(summary.get("turn_pass"), ci),
            "bsr": _num(summary.get("build_success_rate")),
            "ir": _num(summary.get("interaction_rate")),
            "score": _num(summary.get("score")),
            "infra": summary.get("infra_failures"),
            "statuses": ", ".join(f"{k}: {v}" for k, v in sorted((summary.get("status_counts") or {}).items())),
        })
    rows.sort(key=lambda row: -(row["turn_pass"] or {}).get("value", -1.0))
    columns = [_col("run", "run"), _col("tasks", "tasks", "int"), _col("slots", "slots"),
               _col("turn_pass", "turn pass %", "pct_ci"), _col("bsr", "BSR %", "pct"), _col("ir", "IR %", "pct")]
    if any(row["score"] is not None for row in rows):
        columns.append(_col("score", "score", "score100"))
    columns += [_col("infra", "infra", "int"), _col("statuses", "statuses")]
    return {"id": "overview", "title": "Overview", "columns": columns, "rows": rows,
            "caption": "Turn pass over all requested slots (95% task-bootstrap CI where the suite reports one); "
                       "BSR: build success rate; IR: mean interaction rate (I-WebGenBench §3)."}


# --------------------------------------------------------------------------- EvoGenUI Table 2


def _reliability_groups(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """group -> {"turn_pass", "tp_at_k", "cpt", "apr": (value, ci)} plus APR terms, from `table2` or
    `reliability` (smoke and other suites with episode metrics)."""
    groups: dict[str, dict[str, Any]] = {}
    reliability = summary.get("reliability") or {}
    table = summary.get("table2") or {}
    names = list(table.get("order") or []) or [name for name in reliability if isinstance(reliability.get(name), dict)]
    for name in names:
        row = (table.get("rows") or {}).get(name)
        source = reliability.get(name) or {}
        if row is None and not source.get("n_tasks"):
            continue
        entry: dict[str, Any] = {"n_tasks": (row or source).get("n_tasks")}
        for metric in ("turn_pass", "tp_at_k", "cpt", "apr"):
            key = metric
            if metric == "tp_at_k":
                key = next((k for k in (row or source) if k.startswith("tp_at_") and not k.endswith("_ci")), "")
                entry["k"] = key[len("tp_at_"):] if key else ""
            if row is not None:
                entry[metric] = _with_ci(row.get(key), row.get(f"{key}_ci"))
            else:
                entry[metric] = _with_ci(source.get(key), (source.get("ci") or {}).get(key))
        entry["apr_terms"] = (source.get("apr_retained"), source.get("apr_eligible"))
        groups[name] = entry
    return groups


def table2_table(runs: list[RunData]) -> dict[str, Any] | None:
    per_run = [(run, _reliability_groups(run.summary)) for run in runs]
    per_run = [(run, groups) for run, groups in per_run if groups]
    if not per_run:
        return None
    seen = {name for _, groups in per_run for name in groups}
    order = [n for n in SUB_SUITE_ORDER if n in seen] + sorted(seen - set(SUB_SUITE_ORDER) - {"overall"})
    order += ["overall"] if "overall" in seen else []
    ks = {groups[name].get("k") for _, groups in per_run for name in groups}
    k = ks.pop() if len(ks) == 1 else "N"
    columns = [_col("run", "model / judge / actor")]
    for name in order:
        title = GROUP_TITLES.get(name, name)
        columns += [_col(f"{name}.turn_pass", f"{title} TP", "pct_ci"), _col(f"{name}.tp_at_k", f"{title} TP@{k}", "pct_ci"),
                    _col(f"{name}.cpt", f"{title} CPT", "num_ci"), _col(f"{name}.apr", f"{title} APR", "pct_ci")]
    rows = []
    for run, groups in per_run:
        row: dict[str, Any] = {"run": run.label}
        for name in order:
            for metric in ("turn_pass", "tp_at_k", "cpt", "apr"):
                row[f"{name}.{metric}"] = (groups.get(name) or {}).get(metric)
        rows.append(row)
    rows.sort(key=lambda row: -((row.get("overall.turn_pass") or {}).get("value", -1.0)))
    if len(per_run) > 1:
        rows.append(_aggregate_row(per_run, order))
    return {"id": "table2", "title": "EvoGenUI-Bench Table 2 shape", "columns": columns, "rows": rows,
            "caption": "Models ordered by overall TP. TP: turn pass rate (%); TP@N: episodes whose N turns all pass (%); "
                       "CPT: mean initial run of passed turns; APR: adjacent pass retention (%). Brackets: 95% task-level "
                       "bootstrap interval (Appendix C.2). Aggregate: macro-average of model rows for TP, TP@N and CPT; "
                       "eligible transitions pooled for APR (EvoGenUI-Bench Table 2 caption)."}


def _aggregate_row(per_run: list[tuple[RunData, dict[str, Any]]], order: list[str]) -> dict[str, Any]:
    row: dict[str, Any] = {"run": "Aggregate"}
    for name in order:
        present = [groups[name] for _, groups in per_run if name in groups]
        for metric in ("turn_pass", "tp_at_k", "cpt"):
            values = [g[metric]["value"] for g in present if g.get(metric)]
            row[f"{name}.{metric}"] = {"value": sum(values) / len(values), "ci": [None, None]} if values else None
        terms = [g["apr_terms"] for g in present if None not in g["apr_terms"]]
        eligible = sum(e for _, e in terms)
        row[f"{name}.apr"] = {"value": sum(r for r, _ in terms) / eligible, "ci": [None, None]} if eligible else None
    return row


# --------------------------------------------------------------------------- I-WebGenBench per domain


def _domain_cells(records: list[TurnRecord]) -> dict[str, Any]:
    basics = basic_summary(records, requested_slots=len(records))
    scores = [r.scores["score"] for r in records if "score" in r.scores]
    return {"score": sum(scores) / len(scores) if scores else None, "bsr": basics["build_success_rate"] if records else None,
            "ir": basics["interaction_rate"]}


def per_domain_table(runs: list[RunData]) -> dict[str, Any] | None:
    domains = sorted({d for run in runs for d in run.domains.values() if d})
    if not domains:
        return None
    columns = [_col("run", "model / judge / actor")]
    for domain in [*domains, "overall"]:
        title = "Overall" if domain == "overall" else domain
        columns += [_col(f"{domain}.score", f"{title} score", "score100"), _col(f"{domain}.bsr", f"{title} BSR", "pct"),
                    _col(f"{domain}.ir", f"{title} IR", "pct")]
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


# --------------------------------------------------------------------------- MT-Web2Code Table 3


def table3_table(runs: list[RunData]) -> dict[str, Any] | None:
    found = [(run, (run.summary.get("web2code") or {})) for run in runs]
    found = [(run, data) for run, data in found if data.get("table3")]
    if not found:
        return None
    keys: list[str] = []
    for _, data in found:
        for row in data["table3"].values():
            keys += [k for k in row if k not in keys and k not in ("turns", "scored_turns")]
    keys = [k for k in TABLE3_ORDER if k in keys] + [k for k in keys if k not in TABLE3_ORDER]
    columns = [_col("level", "level"), _col("run", "model / judge / actor"), _col("mode", "mode")]
    columns += [_col(k, TABLE3_TITLES.get(k, k.replace("_", " ").title()), "score100") for k in keys]
    columns.append(_col("turns", "turns", "int"))
    rows = []
    for run, data in found:
        for mode, values in data["table3"].items():
            rows.append({"level": f"{data.get('track', '')}".title() + "-Level", "run": run.label, "mode": mode,
                         **{k: _num(values.get(k)) for k in keys}, "turns": values.get("turns")})
    rows.sort(key=lambda row: (row["level"], row["mode"] != "overall", -(row.get("score") or -1.0)))
    return {"id": "table3", "title": "MT-Web2Code Table 3 shape", "columns": columns, "rows": rows,
            "caption": "Scores on a 0-100 scale; Score = 0.8 S_inbox + 0.2 S_outbox (MT-Web2Code eq. 12). Rows per "
                       "level (macro / micro track) and editing mode (overall, chain, independent)."}


# --------------------------------------------------------------------------- FlowEval Table 1


def floweval_tables(runs: list[RunData]) -> list[dict[str, Any]]:
    tables = []
    for run in runs:
        data = run.summary.get("floweval")
        if not isinstance(data, dict) or not data.get("elo"):
            continue
        raters = list(data["elo"])
        models = sorted({m for ratings in data["elo"].values() for m in ratings})
        reference = data.get("reference")
        if reference in data["elo"]:
            models.sort(key=lambda m: -(_num(data["elo"][reference].get(m)) or -1e9))
        rows = []
        for model in models:
            row: dict[str, Any] = {"model": model}
            for rater in raters:
                ratings = data["elo"][rater]
                value = _num(ratings.get(model))
                rank = 1 + sum(1 for other in ratings.values() if (_num(other) or -1e9) > (value or -1e9)) if value is not None else None
                row[rater] = None if value is None else f"{value:.0f} ({rank})"
            rows.append(row)
        agreement = data.get("agreement") or {}
        for key, label in (("spearman", "Spearman rho"), ("kappa", "Cohen's kappa"), ("agreement_rate", "Agreement rate")):
            row = {"model": label}
            for rater in raters:
                value = _num((agreement.get(rater) or {}).get(key))
                row[rater] = "N/A" if value is None else (f"{value * 100:.1f}%" if key == "agreement_rate" else f"{value:.2f}")
            rows.append(row)
        tables.append({"id": "floweval", "title": f"FlowEval Table 1 shape ({run.label})",
                       "columns": [_col("model", "model")] + [_col(r, r) for r in raters], "rows": rows,
                       "caption": f"Elo (rank) per rater; agreement rows against the reference rater ({reference})."})
    return tables


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
    for suite, members in suites.items():
        tables = [overview_table(members)]
        for build in (table2_table, per_domain_table, table3_table):
            table = build(members)
            if table is not None:
                tables.append(table)
        tables += floweval_tables(members)
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


__all__ = ["build_leaderboard", "format_cell", "overview_table", "per_domain_table", "table2_table", "table3_table",
           "floweval_tables", "to_html", "to_markdown"]
