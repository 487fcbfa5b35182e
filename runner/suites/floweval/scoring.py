"""FlowEval scoring (§3.3): featurize reference and generated flow traces, compare them with DTW (eq. 1),
eBLEU (eq. 2) and WMD (eq. 3), keep the best of the reference x generated run pairings per flow
("Aggregation": all nine pairings of three runs each), and average over the site's flows.

A trace's sequence is its states: the page at every step (`screenshot_before`, `observation`) and the page
after the last action (`summary["final_screenshot"]`, `["final_text"]`). With `exclude_regions` (an option, off by
default: the paper's reading is the whole visible text) a state's text leaves out the regions the actor recorded
(runner/actors/flow_text.py).

Beside the paper's metrics, completion (not the paper's): of a scripted flow's steps, how many each generated
trace performed and where it stopped (`flow_completion`). The metrics compare states only, so a trace that
stopped early can still score close to the reference; completion says that it did.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

import numpy as np

from runner.actors.flow_text import EXCLUDED_TEXT_KEY, without_regions
from runner.suites.floweval.traces import dtw_distance, ebleu, wmd_distance
from runner.suites.floweval.flows import load_trace

# Which direction is better, per metric (traces.py: DTW and WMD distances, eBLEU a similarity).
LOWER_IS_BETTER = {"dtw": True, "ebleu": False, "wmd": True}
METRICS = tuple(LOWER_IS_BETTER)
# Completion, reported beside the metrics (a fraction of the flow's steps: higher is better).
COMPLETION = "completion"

# (screenshots, texts) of one trace's states -> (states, dim) embeddings.
Embed = Callable[[list[Path], list[str]], np.ndarray]


@dataclass
class TraceStates:
    screenshots: list[Path]
    texts: list[str]


class RegionsNotRecorded(ValueError):
    """Region exclusion was asked for on a trace whose actor did not record the regions' text."""


def trace_states(path: Path, *, exclude_regions: bool = False) -> TraceStates:
    """The states of one saved flow trace, screenshots resolved beside its trace.json. A step the actor could
    not shoot (its page had crashed) ends the states: nothing after it was seen. `exclude_regions`: each
    state's text without the regions the trace recorded (runner/actors/flow_text.py)."""
    data = load_trace(path)
    folder = Path(path).parent
    summary = data.get("summary", {})
    excluded = summary.get(EXCLUDED_TEXT_KEY)
    if exclude_regions and not isinstance(excluded, list):
        raise RegionsNotRecorded(f"{path}: the trace has no text of excluded regions (summary.{EXCLUDED_TEXT_KEY}): "
                                 "it was recorded without suite.exclude_regions; trace the flows again with it set")

    def text_of(state: int, text: str) -> str:
        if not exclude_regions:
            return text
        return without_regions(text, excluded[state] if state < len(excluded) else [])

    screenshots: list[Path] = []
    texts: list[str] = []
    for step in data["steps"]:
        if not step.get("screenshot_before"):
            return TraceStates(screenshots, texts)
        screenshots.append(folder / step["screenshot_before"])
        texts.append(text_of(len(texts), step.get("observation", "")))
    if summary.get("final_screenshot"):
        screenshots.append(folder / summary["final_screenshot"])
        texts.append(text_of(len(texts), str(summary.get("final_text", ""))))
    return TraceStates(screenshots, texts)


def trace_completion(path: Path) -> dict[str, Any] | None:
    """How far one trace got through its scripted flow: {"steps", "of", "complete", "stopped_at"} (the step it
    stopped at: index, action kind, reason), or None for a trace with no scripted flow (a computer-use actor's:
    its steps are its own, not the reference flow's)."""
    summary = load_trace(path).get("summary", {})
    if not isinstance(summary.get("flow_steps"), int):
        return None
    stopped = summary.get("stopped_at")
    where = None
    if isinstance(stopped, dict):
        action = stopped.get("action") or {}
        where = {"index": stopped.get("index"), "action": action.get("kind", ""), "error": stopped.get("error", "")}
    return {"steps": int(summary.get("completed_steps", 0)), "of": summary["flow_steps"],
            "complete": where is None, "stopped_at": where}


def flow_completion(references: Sequence[str], generated: Sequence[str]) -> dict[str, Any] | None:
    """A flow's completion on the generated site: the furthest of its runs (as the best pairing is kept for the
    metrics), every run's record, and whether the reference's own runs completed (a flow that does not complete
    on its reference is a broken flow, not a weak analog). None where the traces carry no scripted flow."""
    runs = [trace_completion(Path(path)) for path in generated]
    found = [run for run in runs if run is not None]
    if not found:
        return None
    best = max(found, key=lambda run: (run["steps"], run["complete"]))
    reference = [trace_completion(Path(path)) for path in references]
    return {"value": best["steps"] / best["of"] if best["of"] else 1.0, "steps": best["steps"], "of": best["of"],
            "complete": best["complete"], "stopped_at": best["stopped_at"], "runs": runs,
            "reference_complete": all(run is None or run["complete"] for run in reference)}


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


def score_flows(flow_traces: dict[str, dict[str, list[str]]], embed: Embed, *,
                exclude_regions: bool = False) -> dict[str, Any]:
    """flow id -> {"reference": [trace.json...], "generated": [...]} -> per-flow best values and their means,
    and beside them each flow's completion and its mean (`completion`: absent where no flow was scripted)."""
    per_flow: dict[str, dict[str, float]] = {}
    completion: dict[str, dict[str, Any]] = {}
    for flow_id, sides in sorted(flow_traces.items()):
        embedded = {side: [embed(s.screenshots, s.texts) for s in
                           (trace_states(Path(p), exclude_regions=exclude_regions) for p in sides[side])]
                    for side in ("reference", "generated")}
        per_flow[flow_id] = best_of_pairings(embedded["reference"], embedded["generated"])
        reached = flow_completion(sides["reference"], sides["generated"])
        if reached is not None:
            completion[flow_id] = reached
    means = {name: mean(values[name] for values in per_flow.values()) for name in METRICS} if per_flow else {}
    result: dict[str, Any] = {"flows": per_flow, "means": means}
    if completion:
        result["completion"] = {"flows": completion, "mean": mean(flow["value"] for flow in completion.values()),
                                "incomplete": sorted(f for f, flow in completion.items() if not flow["complete"])}
    return result
