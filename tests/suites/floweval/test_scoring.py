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
