"""runner.agreement on a hand-made run and labels file: every figure equals the value computed by hand below.

Six slots, three annotators. Judge: T T F F T F. Annotations (a1 a2 a3) and majority:
    t1 TTT T | t2 TFF F | t3 FFF F | t4 FFT F | t5 TTF T | t6 TTT T
Overall: TP 2 (t1 t5), FP 1 (t2), FN 1 (t6), TN 2: accuracy 4/6, precision 2/3, recall 2/3, F1 2/3.
Cohen: p_o = 2/3, p_e = .5*.5 + .5*.5 = 1/2, kappa = 1/3.
Fleiss: P_i = 1, 1/3, 1, 1/3, 1/3, 1 -> P = 2/3; p_T = 10/18, p_F = 8/18 -> P_e = 41/81; kappa = 13/40.
Table 7 agreement: annotations supporting the judge 3+1+3+2+2+0 = 11 of 18.
Suite a (t1-t3): judge TTF, human TFF: acc 2/3, prec 1/2, rec 1, F1 2/3, kappa (2/3-4/9)/(5/9) = 2/5.
Suite b (t4-t6): judge FTF, human FTT: acc 2/3, prec 1, rec 1/2, F1 2/3, kappa 2/5.
Taxonomy on t3 (judge AB; a1 AB, a2 AB, a3 IA) and t4 (judge IA; a1 IA, a2 AB, a3 IA):
exact per annotator 1, 1/2, 1/2 -> 2/3; Cohen per annotator 1, 0, 0 -> 1/3; Fleiss P_i = 1/3, 1/3, p = 1/2, 1/2
-> (1/3 - 1/2) / (1/2) = -1/3.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.validity.agreement import agreement_report, main
from runner.validity.labels import LabelsError, read_labels
from tests.validity.handmade import record, write_run

AB, IA = "affordance_binding", "information_architecture"
JUDGE = {"t1": True, "t2": True, "t3": False, "t4": False, "t5": True, "t6": False}
HUMANS = {"t1": "TTT", "t2": "TFF", "t3": "FFF", "t4": "FFT", "t5": "TTF", "t6": "TTT"}
JUDGE_MECHANISM = {"t3": AB, "t4": IA}
HUMAN_MECHANISM = {"t3": (AB, AB, IA), "t4": (IA, AB, IA)}


@pytest.fixture
def run_and_labels(tmp_path: Path) -> tuple[Path, Path]:
    records = [record(task, passed, suite="a" if task in ("t1", "t2", "t3") else "b",
                      mechanism=JUDGE_MECHANISM.get(task)) for task, passed in JUDGE.items()]
    run = write_run(tmp_path / "run", records)
    lines = []
    for task, votes in HUMANS.items():
        for index, vote in enumerate(votes):
            mechanism = HUMAN_MECHANISM[task][index] if task in HUMAN_MECHANISM else None
            lines.append({"item": f"i-{task}", "task_id": task, "turn": 1, "annotator": f"a{index + 1}",
                          "passed": vote == "T", "mechanism": mechanism})
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return run, labels


def test_decision_figures_equal_the_hand_computed_ones(run_and_labels: tuple[Path, Path]) -> None:
    run, labels = run_and_labels
    report = agreement_report(run, read_labels(labels))
    overall = report["decision"]["overall"]
    assert overall["compared"] == 6 and overall["annotations"] == 18
    assert overall["accuracy"] == pytest.approx(4 / 6)
    assert overall["precision"] == pytest.approx(2 / 3)
    assert overall["recall"] == pytest.approx(2 / 3)
    assert overall["f1"] == pytest.approx(2 / 3)
    assert overall["cohen_kappa"] == pytest.approx(1 / 3)
    assert overall["fleiss_kappa"] == pytest.approx(13 / 40)
    assert overall["human_agreement"] == pytest.approx(11 / 18)
    a, b = report["decision"]["a"], report["decision"]["b"]
    assert (a["accuracy"], a["precision"], a["recall"], a["f1"]) == pytest.approx((2 / 3, 1 / 2, 1, 2 / 3))
    assert (b["accuracy"], b["precision"], b["recall"], b["f1"]) == pytest.approx((2 / 3, 1, 1 / 2, 2 / 3))
    assert a["cohen_kappa"] == pytest.approx(2 / 5) and b["cohen_kappa"] == pytest.approx(2 / 5)


def test_taxonomy_figures_equal_the_hand_computed_ones(run_and_labels: tuple[Path, Path]) -> None:
    run, labels = run_and_labels
    taxonomy = agreement_report(run, read_labels(labels))["taxonomy"]["overall"]
    assert taxonomy["annotators"] == 3 and taxonomy["pairs"] == 6
    assert taxonomy["exact_agreement"] == pytest.approx(2 / 3)
    assert taxonomy["cohen_kappa"] == pytest.approx(1 / 3)
    assert taxonomy["fleiss_kappa"] == pytest.approx(-1 / 3)


def test_a_corrected_label_replaces_the_earlier_one_and_ties_are_not_compared(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [record("t1", True)])
    labels = tmp_path / "labels.jsonl"
    rows = [("a1", False), ("a2", True), ("a1", True)]  # a1 corrects itself: a tie would have been 1-1
    labels.write_text("".join(json.dumps({"item": "i", "task_id": "t1", "turn": 1, "annotator": who,
                                          "passed": vote}) + "\n" for who, vote in rows))
    assert [(label.annotator, label.passed) for label in read_labels(labels)] == [("a2", True), ("a1", True)]
    overall = agreement_report(run, read_labels(labels))["decision"]["overall"]
    assert overall["accuracy"] == 1.0 and overall["cohen_kappa"] is None  # one class only: undefined, not 0
    labels.write_text(json.dumps({"item": "i", "task_id": "t1", "turn": 1, "annotator": "a1", "passed": True}) + "\n"
                      + json.dumps({"item": "i", "task_id": "t1", "turn": 1, "annotator": "a2", "passed": False}))
    tie = agreement_report(run, read_labels(labels))["decision"]["overall"]
    assert tie["human_ties"] == 1 and tie["compared"] == 0 and tie["accuracy"] is None


def test_a_bad_label_names_the_file_line_and_field(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"item": "i", "task_id": "t", "turn": 1, "annotator": "a", "passed": true}\n'
                      '{"item": "i", "task_id": "t", "turn": 0, "annotator": "a", "passed": "maybe", "colour": 1}\n')
    with pytest.raises(LabelsError) as error:
        read_labels(labels)
    message = str(error.value)
    assert f"{labels}:2" in message and "label.turn" in message and "label.passed" in message
    assert "label.colour: unknown key" in message


def test_the_command_prints_and_writes_the_figures_and_the_actor_judge_grid(
        run_and_labels: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, labels = run_and_labels
    other = write_run(tmp_path / "other", [record(task, True, judge="judge-y", actor="llm",
                                                  suite="a" if task in ("t1", "t2", "t3") else "b")
                                           for task in JUDGE])
    out = tmp_path / "agreement.json"
    assert main([str(run), str(other), str(labels), "--json", str(out)]) == 0
    reports = json.loads(out.read_text())
    assert [(r["actor"], r["judge"]) for r in reports] == [("probe", "judge-x"), ("llm", "judge-y")]
    # judge-y passes everything: the annotations that say pass support it, 3+1+0+1+2+3 = 10 of 18
    assert reports[1]["decision"]["overall"]["human_agreement"] == pytest.approx(10 / 18)
    printed = capsys.readouterr().out
    assert "Table 7" in printed and "61.1" in printed and "55.6" in printed
    assert main([str(run), str(tmp_path / "missing.jsonl")]) == 2
