"""FlowEval scoring: a trace's states, the best of the run pairings per metric (§3.3 "Aggregation"), means."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from runner.suites.floweval.scoring import best_of_pairings, compare, score_flows, trace_states

A, B, C = np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0])


def _trace(folder: Path, observations: list[str], final: str | None) -> Path:
    folder.mkdir(parents=True)
    steps = [{"index": i, "action": {"kind": "click"}, "observation": text, "screenshot_before": f"step_{i:02d}.png"}
             for i, text in enumerate(observations)]
    summary = {"final_screenshot": "final.png", "final_text": final} if final is not None else {}
    (folder / "trace.json").write_text(json.dumps({"actor": "scripted", "steps": steps, "summary": summary}))
    return folder / "trace.json"


def test_states_are_every_step_then_the_final_page(tmp_path: Path) -> None:
    states = trace_states(_trace(tmp_path / "t", ["home", "cart"], "done"))
    assert states.texts == ["home", "cart", "done"]
    assert states.screenshots == [tmp_path / "t" / "step_00.png", tmp_path / "t" / "step_01.png", tmp_path / "t" / "final.png"]
    assert trace_states(_trace(tmp_path / "u", ["home"], None)).texts == ["home"]
    crashed = _trace(tmp_path / "v", ["home", "cart"], "done")
    data = json.loads(crashed.read_text())
    data["steps"][1]["screenshot_before"] = ""  # the page could not be shot any more
    crashed.write_text(json.dumps(data))
    assert trace_states(crashed).texts == ["home"]


def test_best_of_pairings_takes_each_metrics_own_best() -> None:
    reference = np.stack([A, B])
    exact, off = np.stack([A, B]), np.stack([C, C, C, C, C])
    best = best_of_pairings([reference], [off, exact])
    assert best == {"dtw": pytest.approx(0.0), "ebleu": pytest.approx(1.0), "wmd": pytest.approx(0.0)}
    worst = compare(reference, off)
    assert worst["dtw"] > 0 and worst["ebleu"] < 1 and worst["wmd"] > 0
    with pytest.raises(ValueError, match="at least one"):
        best_of_pairings([reference], [])


def test_an_empty_generated_trace_loses_every_metric() -> None:
    values = compare(np.stack([A, B]), np.zeros((0, 2)))
    assert values == {"dtw": 2.0, "ebleu": 0.0, "wmd": float("inf")}  # DTW: the reference length (eq. 1)


def test_score_flows_means_over_flows(tmp_path: Path) -> None:
    ref = _trace(tmp_path / "ref", ["a", "b"], "c")
    same = _trace(tmp_path / "same", ["a", "b"], "c")
    other = _trace(tmp_path / "other", ["x"], "y")
    vectors = {"a": A, "b": B, "c": C, "x": -A, "y": -B}

    def embed(screenshots: list[Path], texts: list[str]) -> np.ndarray:
        return np.stack([vectors[text] for text in texts])

    result = score_flows({"f1": {"reference": [str(ref)], "generated": [str(same)]},
                          "f2": {"reference": [str(ref)], "generated": [str(other)]}}, embed)
    assert result["flows"]["f1"]["dtw"] == pytest.approx(0.0)
    assert result["flows"]["f2"]["dtw"] == pytest.approx(3.0)  # 3 vs 2 states, band 0: no warping
    assert result["means"]["dtw"] == pytest.approx(1.5)


def _scripted(path: Path, flow_steps: int, done: int, stopped: dict | None = None, **summary) -> Path:
    data = json.loads(path.read_text())
    data["summary"].update({"flow_steps": flow_steps, "completed_steps": done, "stopped_at": stopped, **summary})
    path.write_text(json.dumps(data))
    return path


def test_completion_is_how_far_the_scripted_flow_got_and_where_it_stopped(tmp_path: Path) -> None:
    from runner.suites.floweval.scoring import flow_completion, trace_completion

    reference = _scripted(_trace(tmp_path / "ref", ["a", "b", "c"], "d"), 3, 3)
    stopped = {"index": 1, "action": {"kind": "dblclick", "target": {"text": "x"}}, "error": "no element matches"}
    short = _scripted(_trace(tmp_path / "short", ["a", "b"], "b"), 3, 1, stopped)
    whole = _scripted(_trace(tmp_path / "whole", ["a", "b", "c"], "d"), 3, 3)
    assert trace_completion(short) == {"steps": 1, "of": 3, "complete": False,
                                       "stopped_at": {"index": 1, "action": "dblclick", "error": "no element matches"}}
    assert trace_completion(_trace(tmp_path / "cua", ["a"], "b")) is None  # a CUA's trace: no scripted flow
    one = flow_completion([str(reference)], [str(short)])
    assert (one["value"], one["complete"], one["reference_complete"]) == (pytest.approx(1 / 3), False, True)
    best = flow_completion([str(reference)], [str(short), str(whole)])  # the furthest run, as the metrics' best
    assert best["value"] == 1.0 and best["complete"] and len(best["runs"]) == 2
    assert flow_completion([str(short)], [str(whole)])["reference_complete"] is False


def test_score_flows_puts_completion_beside_the_unchanged_metrics(tmp_path: Path) -> None:
    ref = _scripted(_trace(tmp_path / "ref", ["a", "b"], "c"), 2, 2)
    # A trace that stopped early keeps the reference's exact states so far: the metrics alone cannot tell.
    early = _scripted(_trace(tmp_path / "early", ["a", "b"], "b"), 2, 1,
                      {"index": 1, "action": {"kind": "click"}, "error": "gone"})
    vectors = {"a": A, "b": B, "c": C}

    def embed(screenshots: list[Path], texts: list[str]) -> np.ndarray:
        return np.stack([vectors[text] for text in texts])

    result = score_flows({"f": {"reference": [str(ref)], "generated": [str(early)]}}, embed)
    plain = score_flows({"f": {"reference": [str(ref)], "generated": [str(early)]}}, embed)["flows"]
    assert result["flows"] == plain  # the metrics as the paper defines them
    assert result["completion"]["mean"] == 0.5 and result["completion"]["incomplete"] == ["f"]
    cua = score_flows({"f": {"reference": [str(_trace(tmp_path / "r2", ["a"], "c"))],
                             "generated": [str(_trace(tmp_path / "g2", ["a"], "c"))]}}, embed)
    assert "completion" not in cua


def test_regions_left_out_of_the_state_text_only_when_asked(tmp_path: Path) -> None:
    from runner.suites.floweval.scoring import RegionsNotRecorded

    path = _trace(tmp_path / "t", ["todos\nBuy milk\nCreated by Ada", "todos\nCreated by Ada"], "todos\nCreated by Ada")
    with pytest.raises(RegionsNotRecorded, match="suite.exclude_regions"):
        trace_states(path, exclude_regions=True)
    data = json.loads(path.read_text())
    data["summary"]["excluded_text"] = [["Created by Ada"], ["Created by Ada"], ["Created by Ada"]]
    path.write_text(json.dumps(data))
    assert trace_states(path).texts[0] == "todos\nBuy milk\nCreated by Ada"  # off by default: the paper's text
    assert trace_states(path, exclude_regions=True).texts == ["todos\nBuy milk", "todos", "todos"]
