"""FlowEval scoring (§3.3): featurize reference and generated flow traces, compare them with DTW (eq. 1),
eBLEU (eq. 2) and WMD (eq. 3), keep the best of the reference x generated run pairings per flow
("Aggregation": all nine pairings of three runs each), and average over the site's flows.

A trace's sequence is its states: the page at every step (`screenshot_before`, `observation`) and the page
after the last action (`summary["final_screenshot"]`, `["final_text"]`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

import numpy as np

from runner.suites.floweval.traces import dtw_distance, ebleu, wmd_distance
from runner.suites.floweval.flows import load_trace

# Which direction is better, per metric (traces.py: DTW and WMD distances, eBLEU a similarity).
LOWER_IS_BETTER = {"dtw": True, "ebleu": False, "wmd": True}
METRICS = tuple(LOWER_IS_BETTER)

# (screenshots, texts) of one trace's states -> (states, dim) embeddings.
Embed = Callable[[list[Path], list[str]], np.ndarray]


@dataclass
class TraceStates:
    screenshots: list[Path]
    texts: list[str]


def trace_states(path: Path) -> TraceStates:
    """The states of one saved flow trace, screenshots resolved beside its trace.json. A step the actor could
    not shoot (its page had crashed) ends the states: nothing after it was seen."""
    data = load_trace(path)
    folder = Path(path).parent
    screenshots: list[Path] = []
    texts: list[str] = []
    for step in data["steps"]:
        if not step.get("screenshot_before"):
            return TraceStates(screenshots, texts)
        screenshots.append(folder / step["screenshot_before"])
        texts.append(step.get("observation", ""))
    summary = data.get("summary", {})
    if summary.get("final_screenshot"):
        screenshots.append(folder / summary["final_screenshot"])
        texts.append(str(summary.get("final_text", "")))
    return TraceStates(screenshots, texts)


def compare(ref: np.ndarray, gen: np.ndarray) -> dict[str, float]:
    """The three metrics of one (reference, generated) pair of embedded traces."""
    values = {"dtw": dtw_distance(ref, gen), "ebleu": ebleu(ref, gen)}
    # An empty generated trace transports nothing (WMD undefined): it supports none of the flow, so it
    # gets no finite WMD and loses every pairing it is in.
    values["wmd"] = wmd_distance(ref, gen) if gen.shape[0] else float("inf")
    return values


def best_of_pairings(references: Sequence[np.ndarray], generated: Sequence[np.ndarray]) -> dict[str, float]:
    """Per metric, the best value over every reference x generated pairing (FlowEval §3.3 "Aggregation")."""
    if not references or not generated:
        raise ValueError("best_of_pairings needs at least one reference and one generated trace")
    pairs = [compare(ref, gen) for ref in references for gen in generated]
    return {name: (min if LOWER_IS_BETTER[name] else max)(pair[name] for pair in pairs) for name in METRICS}


def score_flows(flow_traces: dict[str, dict[str, list[str]]], embed: Embed) -> dict[str, Any]:
    """flow id -> {"reference": [trace.json...], "generated": [...]} -> per-flow best values and their means."""
    per_flow: dict[str, dict[str, float]] = {}
    for flow_id, sides in sorted(flow_traces.items()):
        embedded = {side: [embed(s.screenshots, s.texts) for s in map(trace_states, map(Path, sides[side]))]
                    for side in ("reference", "generated")}
        per_flow[flow_id] = best_of_pairings(embedded["reference"], embedded["generated"])
    means = {name: mean(values[name] for values in per_flow.values()) for name in METRICS} if per_flow else {}
    return {"flows": per_flow, "means": means}
