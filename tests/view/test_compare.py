"""Fast tests of the viewer's pure logic: the paired task bootstrap of the comparison page, the turn rows (with
people's labels from a sample folder), the rows script, the headline metrics and the model profile's data."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from runner.report.collect import RunData
from runner.turns.records import FailureBucket, TurnRecord, Verdict
from runner.view.catalog import Catalog
from runner.view.compare import compare_all, compare_pair, paired_difference, task_pass_rates, task_scores
from runner.view.headline import headline
from runner.view.profiles import mechanism_counts, model_ids, model_profile, position_pass
from runner.view.rows import build_rows, read_human_labels, rows_script


def _record(task: str, turn: int, passed: bool | None, *, status: FailureBucket = FailureBucket.OK,
            mechanism: str | None = None, score: float | None = None, model: str = "m") -> TurnRecord:
    return TurnRecord(task_id=task, suite="demo", sub_suite="presentation", turn=turn, status=status, passed=passed,
                      verdict=Verdict(judge="rules", passed=passed, mechanism=mechanism),
                      scores={} if score is None else {"score": score}, model=model, judge="rules", actor="probe")


def _run(label: str, records: list[TurnRecord], path: Path | None = None, model: str = "m") -> RunData:
    return RunData(label=label, config={"model": {"name": model}, "suite": {"name": "demo"}}, summary={},
                   records=records, path=path)


# --------------------------------------------------------------------------- paired bootstrap


def test_a_known_difference_lies_inside_the_interval() -> None:
    rng = random.Random(3)
    a = {f"t{i}": rng.random() for i in range(200)}
    b = {task: value - 0.1 + rng.gauss(0, 0.05) for task, value in a.items()}  # A is better by 0.1 per task
    found = paired_difference(a, b)
    assert found is not None and found.n == 200
    assert found.low is not None and found.high is not None
    assert found.low < 0.1 < found.high
    assert found.low < found.mean < found.high
    assert found.excludes_zero
    assert 0.005 < found.high - found.low < 0.05  # tight: the per-task noise is small and the pairs cancel the rest


def test_identical_runs_differ_by_exactly_zero() -> None:
    values = {f"t{i}": i / 10 for i in range(10)}
    found = paired_difference(values, dict(values))
    assert found is not None
    assert (found.mean, found.low, found.high) == (0.0, 0.0, 0.0)
    assert not found.excludes_zero


def test_the_bootstrap_is_seeded_and_uses_only_matched_tasks() -> None:
    a = {"x": 1.0, "y": 0.0, "z": 1.0, "only-a": 1.0}
    b = {"x": 0.0, "y": 0.0, "z": 0.5, "only-b": 0.0}
    first, second = paired_difference(a, b), paired_difference(a, b)
    assert first == second and first is not None
    assert first.n == 3 and first.mean == pytest.approx(0.5)
    assert paired_difference({"a": 1.0}, {"b": 1.0}) is None


def test_pairs_count_matched_tasks_and_say_when_none_match() -> None:
    a = [_record("t1", 1, True), _record("t1", 2, False), _record("t2", 1, True), _record("t2", 2, True)]
    b = [_record("t1", 1, False), _record("t1", 2, False), _record("t2", 1, True), _record("t2", 2, None)]
    other = [_record("elsewhere", 1, True)]
    assert task_pass_rates(a) == {"t1": 0.5, "t2": 1.0}
    assert task_pass_rates(b) == {"t1": 0.0, "t2": 0.5}  # unassessed counts as not passed, as in turn pass
    pairs = compare_all({"A": a, "B": b, "C": other})
    assert [(p.a, p.b, p.matched) for p in pairs] == [("A", "B", 2), ("A", "C", 0), ("B", "C", 0)]
    (difference,) = pairs[0].differences
    assert difference.metric == "task pass rate" and difference.mean == pytest.approx(0.5)
    assert pairs[1].differences == []


def test_a_continuous_score_gets_its_own_difference_and_no_pass_rate_without_pass_fail() -> None:
    a = [_record("t1", 1, None, score=0.8), _record("t1", 2, None, score=0.6), _record("t2", 1, None, score=0.5)]
    b = [_record("t1", 1, None, score=0.5), _record("t2", 1, None, score=0.5)]
    assert task_scores(a) == {"t1": pytest.approx(0.7), "t2": 0.5}
    pair = compare_pair("A", a, "B", b)
    assert [d.metric for d in pair.differences] == ["per-turn score"]
    assert pair.differences[0].mean == pytest.approx(0.1)


# --------------------------------------------------------------------------- rows


def _sample(folder: Path, run_dir: Path, labels: list[tuple[str, str, int, list[bool]]]) -> Path:
    folder.mkdir(parents=True)
    key, lines = [], []
    for item, task, turn, votes in labels:
        key.append({"item": item, "run_dir": str(run_dir), "task_id": task, "turn": turn, "model": "m", "suite": "demo",
                    "judge": "rules", "judge_passed": None})
        lines += [{"item": item, "task_id": task, "turn": turn, "annotator": f"ann{n}", "passed": vote}
                  for n, vote in enumerate(votes)]
    (folder / "key.jsonl").write_text("".join(json.dumps(entry) + "\n" for entry in key))
    (folder / "labels.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def test_rows_carry_outcomes_and_the_judge_disagreeing_with_the_majority_label(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    records = [_record("t1", 1, True), _record("t1", 2, False, mechanism="state_regression"),
               _record("t1", 3, None, status=FailureBucket.BUILD_FAILED), _record("t2", 1, True)]
    catalog = Catalog([_run("demo run", records, run_dir)])
    sample = _sample(tmp_path / "sample", run_dir, [
        ("s-1", "t1", 1, [False, False, True]),  # people say fail, the judge passed it: disagrees
        ("s-2", "t1", 2, [False]),               # agree
        ("s-3", "t1", 3, [True, True]),          # unassessed by the judge: nothing to disagree with
        ("s-4", "t2", 1, [True, False]),         # a tie: no human reference
    ])
    human = read_human_labels(sample)
    assert human == {(str(run_dir.resolve()), "t1", 1): False, (str(run_dir.resolve()), "t1", 2): False,
                     (str(run_dir.resolve()), "t1", 3): True}
    rows = build_rows(catalog, human)
    assert [(r["task"], r["turn"], r["outcome"], r["human"], r["disagree"]) for r in rows] == [
        ("t1", 1, "pass", "fail", True), ("t1", 2, "fail", "fail", False),
        ("t1", 3, "unassessed", "pass", False), ("t2", 1, "pass", "", False)]
    assert rows[1]["mechanism"] == "state_regression" and rows[2]["bucket"] == "build_failed"
    assert {r["run"] for r in rows} == {"demo_run"} and rows[0]["model"] == "m"
    assert build_rows(catalog, None, "demo_run") == build_rows(catalog, {}, None)


def test_the_rows_script_sets_a_global_and_keeps_markup_inert() -> None:
    script = rows_script([{"task": "</script><script>alert(1)</script>", "turn": 1}])
    assert script.startswith("window.GENUI_ROWS = [") and "<" not in script
    assert json.loads(script[len("window.GENUI_ROWS = "):].rstrip().rstrip(";"))[0]["task"].startswith("</script>")


# --------------------------------------------------------------------------- headline and profiles


def test_headline_takes_the_summary_numbers_and_their_intervals() -> None:
    summary = {"turn_pass": 0.5, "build_success_rate": 0.75, "interaction_rate": None,
               "reliability": {"overall": {"n_tasks": 2, "turn_pass": 0.5, "tp_at_3": 0.25, "cpt": 1.5, "apr": 0.4,
                                           "ci": {"turn_pass": [0.3, 0.7], "tp_at_3": [0.0, 0.5], "cpt": [1.0, 2.0],
                                                  "apr": [0.1, 0.6]}}},
               "floweval": {"dtw": {"mean": 0.4, "median": 0.35, "slots": 3}}}
    run = RunData(label="r", config={}, summary=summary, records=[_record("t1", 1, True)])
    shown = {metric.label: metric.text for metric in headline(run)}
    assert shown["turn pass %"] == "50.0 [30.0, 70.0]"
    assert shown["BSR %"] == "75.0"
    assert shown["Overall TP@3"] == "25.0 [0.0, 50.0]" and shown["Overall APR"] == "40.0 [10.0, 60.0]"
    assert shown["dtw (median)"] == "0.35"
    assert "IR %" not in shown


def test_headline_of_floweval_shows_completion_beside_dtw_and_the_slots_that_stopped() -> None:
    summary = {"floweval": {"dtw": {"mean": 0.4, "median": 0.35, "slots": 3},
                            "completion": {"mean": 0.9, "median": 1.0, "slots": 3,
                                           "incomplete_slots": {"todomvc/2": ["edit-todo"]}}}}
    run = RunData(label="r", config={}, summary=summary, records=[_record("t1", 1, None)])
    shown = {metric.label: metric.text for metric in headline(run)}
    assert shown["dtw (median)"] == "0.35" and shown["completion (median)"] == "1.00"
    assert shown["slots with an incomplete flow"] == "1"


def test_headline_of_a_suite_without_pass_fail_shows_its_table_once() -> None:
    table3 = {"overall": {"overall": 0.6, "s_inbox": 0.7, "s_outbox": 0.3, "score": 0.62, "turns": 4},
              "chain": {"overall": 0.1, "s_inbox": 0.1, "s_outbox": 0.1, "score": 0.1, "turns": 2}}
    summary = {"turn_pass": None, "score": 0.62, "build_success_rate": 1.0,
               "web2code": {"track": "macro", "table3": table3}}
    run = RunData(label="w", config={}, summary=summary, records=[_record("t1", 1, None, score=0.62)])
    shown = [(metric.label, metric.text) for metric in headline(run)]
    assert shown == [("BSR %", "100.0"), ("score", "62.0"), ("Overall", "60.0"), ("S_inbox", "70.0"),
                     ("S_outbox", "30.0")]  # the overall mode's row (MT-Web2Code Table 3), its Score shown once


def test_a_model_profile_has_its_runs_the_peers_and_the_data_of_its_plots() -> None:
    mine = [_record("t1", 1, True), _record("t1", 2, False, mechanism="spec_omission"), _record("t2", 1, True),
            _record("t2", 2, True)]
    theirs = [_record("t1", 1, False, mechanism="tool_misuse", model="other"), _record("t1", 2, False, model="other")]
    catalog = Catalog([_run("mine", mine, model="m"), _run("theirs", theirs, model="other")])
    assert list(model_ids(catalog)) == ["m", "other"]
    assert position_pass(catalog.runs["mine"].data) == [1.0, 0.5]
    assert mechanism_counts(catalog.runs["mine"].data) == {"spec_omission": 1}
    profile = model_profile(catalog, "m")
    assert profile["others"] == ["other"] and [run.id for run in profile["runs"]] == ["mine"]
    chart = str(profile["plots"][0])
    assert chart.startswith("<svg") and 'data-series="mine" data-turn="2" data-value="0.5000"' in chart
    assert 'data-series="theirs"' in chart  # the other model's line, next to this one's
    overview = profile["suites"][0]["tables"][0]
    assert [row["mine"] for row in overview["marked"]] == [True, False]
