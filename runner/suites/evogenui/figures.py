"""EvoGenUI-Bench's figures for the report (REPORT_PLOTS, runner/report/sections.py), each drawn only when its
data exists:

- pass_by_turn.png: pass rate by turn position, one line per run (Fig. 3b).
- suite_difficulty.png: TP, TP@N, APR and CPT by sub-suite, averaged over runs (Fig. 3a).
- failure_mechanisms.png: composition of executed non-passing turns over the six diagnostic mechanisms,
  one bar per run and sub-suite, n per bar (Figs. 4-5).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from runner.metrics.reliability import build_matrix, per_position_pass
from runner.report.collect import RunData
from runner.report.plots import plt, save_figure
from runner.suites.evogenui.report import reliability_groups
from runner.suites.evogenui.table2 import SUB_SUITE_ORDER
from runner.suites.evogenui.taxonomy import Mechanism

MECHANISMS = tuple(mechanism.value for mechanism in Mechanism)  # §6.1, in the paper's order


def _position_pass(run: RunData) -> list[float] | None:
    overall = (run.summary.get("reliability") or {}).get("overall") or {}
    if overall.get("per_position_pass"):
        return [float(v) for v in overall["per_position_pass"]]
    turns = {r.turn for r in run.records}
    if not run.records or run.summary.get("turn_pass") is None:
        return None
    try:
        _, matrix, _ = build_matrix(run.records, max(turns))
    except ValueError:
        return None
    return per_position_pass(matrix)


def pass_by_turn(runs: list[RunData], path: Path) -> Path | None:
    series = [(run.label, _position_pass(run)) for run in runs]
    series = [(label, values) for label, values in series if values]
    if not series:
        return None
    figure, axes = plt.subplots(figsize=(7, 4))
    longest = max(len(values) for _, values in series)
    for position in range(2, longest + 1, 2):  # later revisions shaded, as in Fig. 3b
        axes.axvspan(position - 0.5, position + 0.5, color="0.93", zorder=0)
    for label, values in series:
        axes.plot(range(1, len(values) + 1), [v * 100 for v in values], marker="o", label=label)
    axes.set(xlabel="turn position", ylabel="pass rate (% of requested slots)", ylim=(-3, 103),
             title="Pass rate by turn position", xticks=range(1, longest + 1))
    axes.legend(fontsize=8)
    return save_figure(figure, path)


def suite_difficulty(runs: list[RunData], path: Path) -> Path | None:
    values: dict[str, dict[str, list[float]]] = {}
    for run in runs:
        for name, group in reliability_groups(run.summary).items():
            if name == "overall":
                continue
            for metric in ("turn_pass", "tp_at_k", "apr", "cpt"):
                if group.get(metric):
                    values.setdefault(name, {}).setdefault(metric, []).append(group[metric]["value"])
    if not values:
        return None
    names = [n for n in SUB_SUITE_ORDER if n in values] + sorted(set(values) - set(SUB_SUITE_ORDER))
    figure, panels = plt.subplots(1, 4, figsize=(12, 3.4))
    for axes, (metric, title, scale) in zip(panels, (("turn_pass", "Turn Pass %", 100), ("tp_at_k", "TP@N %", 100),
                                                     ("apr", "APR %", 100), ("cpt", "CPT (turns)", 1))):
        heights = [sum(values[n].get(metric, [0])) / max(1, len(values[n].get(metric, []))) * scale for n in names]
        axes.bar(names, heights, color=["#4C72B0", "#DD8452", "#55A868", "#8172B2"][: len(names)] or None)
        axes.set_title(title)
        axes.tick_params(axis="x", labelrotation=20, labelsize=8)
    figure.suptitle(f"Suite difficulty (mean over {len(runs)} run(s))")
    return save_figure(figure, path)


def _mechanism_rows(run: RunData) -> dict[str, Counter]:
    counts = run.summary.get("failure_mechanisms")
    if isinstance(counts, dict) and counts:
        return {group: Counter({k: v for k, v in row.items() if k in MECHANISMS}) for group, row in counts.items()}
    rows: dict[str, Counter] = {}
    for record in run.records:
        mechanism = record.verdict.mechanism if record.verdict is not None else None
        if mechanism in MECHANISMS and record.passed is not True:
            rows.setdefault("overall", Counter())[mechanism] += 1
            if record.sub_suite:
                rows.setdefault(record.sub_suite, Counter())[mechanism] += 1
    return rows


def failure_mechanisms(runs: list[RunData], path: Path) -> Path | None:
    bars = [(f"{run.label} | {group}", counts) for run in runs for group, counts in _mechanism_rows(run).items()
            if sum(counts.values())]
    if not bars:
        return None
    figure, axes = plt.subplots(figsize=(9, 0.5 * len(bars) + 1.8))
    left = [0.0] * len(bars)
    colours = plt.get_cmap("tab10").colors
    for index, mechanism in enumerate(MECHANISMS):
        shares = [counts[mechanism] / sum(counts.values()) * 100 for _, counts in bars]
        axes.barh(range(len(bars)), shares, left=left, color=colours[index], label=mechanism.replace("_", " "))
        left = [a + b for a, b in zip(left, shares)]
    axes.set_yticks(range(len(bars)), [f"{label} (n={sum(c.values())})" for label, c in bars], fontsize=8)
    axes.invert_yaxis()
    axes.set(xlabel="% of executed non-passing turns", xlim=(0, 100), title="Failure mechanism composition")
    axes.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return save_figure(figure, path)


__all__ = ["MECHANISMS", "failure_mechanisms", "pass_by_turn", "suite_difficulty"]
