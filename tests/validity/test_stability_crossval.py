"""Stability over repeats (EvoGenUI-Bench Table 8) and judge cross-validation (MT-Web2Code Table 5), by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.validity.crossval import cross_validate
from runner.validity.labels import LabelsError
from runner.validity.stability import mean_sd, stability_report
from tests.validity.handmade import record, write_run


def test_table8s_own_numbers_give_its_mean_and_sd() -> None:
    figures = mean_sd([60.0, 55.2, 62.0])  # Table 8, Presentation, Turn Pass R1-R3
    assert round(figures["mean"], 1) == 59.1 and round(figures["sd"], 1) == 3.5


def test_repeats_summarised_per_suite_and_dimension(tmp_path: Path) -> None:
    passes = [[True, True, True, False, False], [True, True, False, False, False], [True, True, True, True, False]]
    runs = []
    for index, pattern in enumerate(passes):
        records = [record(f"t{n}", passed, dimensions={"presentation": float(index + 3), "execution": None})
                   for n, passed in enumerate(pattern)]
        runs.append(write_run(tmp_path / f"r{index}", records))
    report = stability_report(runs)
    overall = report["groups"]["overall"]
    assert overall["turn_pass"]["mean"] == pytest.approx(0.6) and overall["turn_pass"]["sd"] == pytest.approx(0.2)
    assert overall["dim_presentation"]["mean"] == pytest.approx(4.0)
    assert overall["dim_presentation"]["sd"] == pytest.approx(1.0)
    assert "dim_execution" not in overall  # never scored: left out, not 0
    other = write_run(tmp_path / "other", [record("t0", True, judge="another")])
    with pytest.raises(LabelsError, match="different configurations"):
        stability_report([runs[0], other])


def test_cross_validation_against_a_reference_judge(tmp_path: Path) -> None:
    reference = write_run(tmp_path / "ref", [record(f"t{n}", True, judge="kimi", scores={"overall": s})
                                             for n, s in enumerate([1, 0.5, 0.25, 1])])
    other = write_run(tmp_path / "other", [record(f"t{n}", True, judge="gemini", scores={"overall": s})
                                           for n, s in enumerate([1, 1, 0.5, 1])]
                      + [record("t9", True, judge="gemini")])  # unscored: not a 0
    rows = cross_validate(reference, [other], score="overall", full_mark=1.0)["judges"]
    assert rows[0]["full_mark"] == pytest.approx(0.5) and rows[0]["correlation"] == 1.0
    assert rows[1]["slots"] == 4
    assert rows[1]["delta_mean"] == pytest.approx(0.1875)  # (0 + .5 + .25 + 0) / 4
    assert rows[1]["full_mark"] == pytest.approx(0.75)
    assert rows[1]["correlation"] == pytest.approx(7 / 9)  # .21875 / sqrt(.421875 * .1875)


def test_repeats_are_ordered_by_their_index_and_an_index_twice_is_refused(tmp_path: Path) -> None:
    runs = []
    for index, passed in [(2, False), (0, True), (1, True)]:
        run = write_run(tmp_path / f"r{index}", [record("t0", passed)])
        (run / "config.yaml").write_text(f"repeat: {index}\n")
        runs.append(run)
    report = stability_report(runs)
    assert [item["repeat"] for item in report["repeats"]] == [0, 1, 2]
    assert [item["groups"]["overall"]["turn_pass"] for item in report["repeats"]] == [1.0, 1.0, 0.0]
    (runs[0] / "config.yaml").write_text("repeat: 1\n")
    with pytest.raises(LabelsError, match="share a repeat index"):
        stability_report(runs)
