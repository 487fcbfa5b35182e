"""FlowEval Table 1 end to end on hand-made run dirs and a hand-made labels file, figures computed by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from runner.errors import ConfigError
from runner.suites.floweval.table_command import main
from runner.suites.floweval.pair_labels import PairwiseLabel, read_labels, write_labels
from runner.turns.packets import EvidencePacket, write_packet
from runner.turns.records import FailureBucket, RunDirectory, TurnRecord, Verdict
from runner.sandbox.base import BuildResult
from runner.suites.floweval.pairwise import CRITERIA
from runner.turns.tasks import Task, TurnSpec
from tests.support.fault_server import FaultServer, completion
from runner.suites.floweval.table import build_table, load_outputs, read_human_labels

# (prompt, turn) -> the slot's metric values; None: the slot has no verdict (its site did not build).
RUNS: dict[str, dict[tuple[str, int], dict[str, float] | None]] = {
    "m1": {("p1", 1): {"dtw": 2.0, "ebleu": 0.5, "wmd": 0.1}, ("p2", 1): {"dtw": 3.0, "ebleu": 0.9, "wmd": 0.1}},
    "m2": {("p1", 1): {"dtw": 1.0, "ebleu": 0.5, "wmd": 0.2}, ("p1", 2): {"dtw": 2.0, "ebleu": 0.5, "wmd": 0.2},
           ("p1", 3): None, ("p2", 1): {"dtw": 1.0, "ebleu": 0.6, "wmd": 0.3}},
    "m3": {("p1", 1): {"dtw": 4.0, "ebleu": 0.7, "wmd": 0.3}, ("p2", 1): {"dtw": 2.0, "ebleu": 0.4, "wmd": 0.2}},
    "m4": {("p2", 1): None},
}

# The people's decisions, in order. Label 5: m4's only site on p2 is unassessed, so no metric decides it.
HUMAN = [("p1", "m1", "m2", "a"), ("p1", "m2", "m3", "a"), ("p2", "m1", "m3", "a"), ("p2", "m2", "m3", "b"),
         ("p2", "m4", "m1", "b")]


def _write_runs(root: Path) -> list[Path]:
    dirs = []
    for model, slots in RUNS.items():
        directory = RunDirectory(root / f"run-{model}")
        for (prompt, turn), scores in slots.items():
            verdict = None if scores is None else Verdict(judge="floweval", passed=None, scores=scores)
            status = FailureBucket.BUILD_FAILED if scores is None else FailureBucket.OK
            directory.append(TurnRecord(task_id=prompt, suite="floweval", turn=turn, status=status, passed=None,
                                        verdict=verdict, model=model))
        dirs.append(root / f"run-{model}")
    return dirs


def _labels(path: Path, rows=HUMAN, rater: str = "r1") -> Path:
    write_labels(path, [PairwiseLabel(prompt_id=p, model_a=a, model_b=b, winner=w, rater=rater) for p, a, b, w in rows])
    return path


def _elo(decisions: list[tuple[str, str, float]]) -> dict[str, float]:
    """Chiang et al. 2024 online Elo written out: start 1000, K = 4, E_a = 1 / (1 + 10^((R_b - R_a) / 400))."""
    rating: dict[str, float] = {}
    for a, b, score_a in decisions:
        ra, rb = rating.setdefault(a, 1000.0), rating.setdefault(b, 1000.0)
        delta = 4 * (score_a - 1 / (1 + 10 ** ((rb - ra) / 400)))
        rating[a], rating[b] = ra + delta, rb - delta
    return rating


def _rho(x: list[int], y: list[int]) -> float:
    """Spearman on untied ranks: 1 - 6 sum d^2 / (n (n^2 - 1))."""
    n = len(x)
    return 1 - 6 * sum((a - b) ** 2 for a, b in zip(x, y)) / (n * (n * n - 1))


@pytest.fixture()
def table(tmp_path: Path):
    """The table with online Elo (hand-computable in label order) and, as these labels name no sites, every
    pair decided on the models' generation means."""
    outputs = load_outputs(_write_runs(tmp_path))
    return build_table(outputs, read_human_labels(_labels(tmp_path / "labels.jsonl"), outputs), ratings="online_elo")


def test_human_elo_and_ranking(table) -> None:
    expected = _elo([(a, b, 1.0 if w == "a" else 0.0) for _, a, b, w in HUMAN])
    assert table.human.elo == pytest.approx(expected)
    # m1 won all three; m3 beat m2 once and lost once; m2 lost two of three, so online Elo puts it below m4,
    # which lost its only comparison.
    assert sorted(expected, key=expected.get, reverse=True) == ["m1", "m3", "m4", "m2"]
    assert table.human.rank == {"m1": 1, "m3": 2, "m4": 3, "m2": 4}
    assert table.models == ["m1", "m3", "m4", "m2"]


def test_wmd_agrees_with_people_on_every_pair(table) -> None:
    wmd = next(c for c in table.metrics if c.name == "wmd")
    # Lower WMD wins: p1 0.1 < 0.2 < 0.3; p2 m1 0.1 < m3 0.2 < m2 0.3: the same four decisions as the people.
    assert (wmd.agreement_rate, wmd.cohen_kappa, wmd.pairs, wmd.unassessed) == (1.0, 1.0, 4, 1)
    assert wmd.elo == pytest.approx(_elo([("m1", "m2", 1), ("m2", "m3", 1), ("m1", "m3", 1), ("m2", "m3", 0)]))
    assert wmd.rank == {"m1": 1, "m3": 2, "m2": 3}
    assert wmd.spearman_rho == pytest.approx(1.0)


def test_dtw_uses_the_mean_of_a_models_repeats(table) -> None:
    dtw = next(c for c in table.metrics if c.name == "dtw")
    # m2 on p1: mean(1.0, 2.0) = 1.5 (its third slot is unassessed) < m1's 2.0: m2 wins pair 1.
    # Decisions b, a, b, a against the people's a, a, a, b: one of four agrees.
    assert dtw.agreement_rate == pytest.approx(1 / 4)
    # kappa = (p_o - p_e) / (1 - p_e); p_o = 1/4, p_e = 3/4 * 2/4 + 1/4 * 2/4 = 1/2.
    assert dtw.cohen_kappa == pytest.approx((0.25 - 0.5) / (1 - 0.5))
    elo = _elo([("m1", "m2", 0), ("m2", "m3", 1), ("m1", "m3", 0), ("m2", "m3", 1)])
    assert dtw.elo == pytest.approx(elo)
    assert dtw.rank == {"m2": 1, "m3": 2, "m1": 3}
    # Spearman over m1, m2, m3: human ranks (1, 3, 2) against DTW's (3, 1, 2).
    assert dtw.spearman_rho == pytest.approx(_rho([1, 3, 2], [3, 1, 2]))
    assert dtw.spearman_rho == pytest.approx(-1.0)


def test_ebleu_ties_are_left_out_of_the_binary_figures(table) -> None:
    ebleu = next(c for c in table.metrics if c.name == "ebleu")
    # Higher eBLEU wins: pair 1 0.5 = 0.5 (tie), pair 2 b, pair 3 a, pair 4 m2 0.6 > m3 0.4: a.
    # Binary: pairs 2-4, people a, a, b against b, a, a: p_o = 1/3, p_e = 2/3 * 2/3 + 1/3 * 1/3 = 5/9.
    assert (ebleu.pairs, ebleu.excluded_ties, ebleu.unassessed) == (3, 1, 1)
    assert ebleu.agreement_rate == pytest.approx(1 / 3)
    assert ebleu.cohen_kappa == pytest.approx((1 / 3 - 5 / 9) / (1 - 5 / 9))
    assert ebleu.elo == pytest.approx(_elo([("m1", "m2", 0.5), ("m2", "m3", 0), ("m1", "m3", 1), ("m2", "m3", 1)]))


def test_appendix_d_medians(table) -> None:
    medians = {row.name: row for row in table.medians}
    # DTW over every compared slot: m1 (2, 3) -> 2.5, m2 (1, 2, 1) -> 1, m3 (4, 2) -> 3; m4 has none.
    assert medians["dtw"].median == pytest.approx({"m1": 2.5, "m2": 1.0, "m3": 3.0})
    assert medians["dtw"].rank == {"m2": 1, "m1": 2, "m3": 3}
    assert medians["dtw"].spearman_rho == pytest.approx(_rho([1, 3, 2], [2, 1, 3]))
    # eBLEU higher is better: m1 (0.5, 0.9) -> 0.7, m2 (0.5, 0.5, 0.6) -> 0.5, m3 (0.7, 0.4) -> 0.55.
    assert medians["ebleu"].median == pytest.approx({"m1": 0.7, "m2": 0.5, "m3": 0.55})
    assert medians["ebleu"].rank == {"m1": 1, "m3": 2, "m2": 3}
    assert medians["ebleu"].spearman_rho == pytest.approx(1.0)


def test_command_prints_the_table_and_writes_json(tmp_path: Path, capsys) -> None:
    dirs = _write_runs(tmp_path)
    labels = _labels(tmp_path / "labels.jsonl")
    # Machine raters in the same file are not people: they change nothing.
    with labels.open("a") as handle:
        handle.write(json.dumps({"prompt_id": "p1", "model_a": "m1", "model_b": "m3", "winner": "b",
                                 "rater": "metric:wmd"}) + "\n")
    out = tmp_path / "table.json"
    assert main([*map(str, dirs), "--labels", str(labels), "--json", str(out), "--ebleu-median-lower"]) == 0
    printed = capsys.readouterr().out
    assert "Table 1" in printed and "Appendix D" in printed
    assert "Agreement rate  N/A" in printed and "100.0%" in printed
    data = json.loads(out.read_text())
    assert data["labels"] == 5
    assert [c["name"] for c in data["metrics"]] == ["dtw", "ebleu", "wmd"]
    ebleu = next(m for m in data["medians"] if m["name"] == "ebleu")
    assert ebleu["direction"] == "lower" and ebleu["rank"] == {"m2": 1, "m3": 2, "m1": 3}


@pytest.mark.parametrize("row, message", [
    (("p9", "m1", "m2", "a"), "prompt_id 'p9' is in none of the run dirs"),
    (("p1", "m1", "gpt-x", "a"), "model_b 'gpt-x' is in none of the run dirs"),
    (("p1", "m4", "m1", "a"), "model_a 'm4' has no output for prompt 'p1'"),
])
def test_labels_naming_what_the_runs_lack_are_errors(tmp_path: Path, row, message: str, capsys) -> None:
    dirs = _write_runs(tmp_path)
    labels = _labels(tmp_path / "labels.jsonl", rows=[HUMAN[0], row])
    with pytest.raises(ConfigError, match=f"labels.jsonl:2: {message}"):
        read_human_labels(labels, load_outputs(dirs))
    assert main([*map(str, dirs), "--labels", str(labels)]) == 2
    assert message in capsys.readouterr().err


def test_not_a_run_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a run directory"):
        load_outputs([tmp_path])


# -- the MLLM pairwise judge column (Appendix C), against a scripted OpenAI-compatible server ----------------

STRENGTH = {"m1": 3, "m3": 2, "m2": 1}  # the scripted judge's taste: m1 > m3 > m2


def _write_packets(dirs: list[Path]) -> None:
    """A packet per assessed slot, whose code names its model (so the judge's answer can depend on it)."""
    for run_dir in dirs:
        directory = RunDirectory(run_dir)
        records = directory.load_records()
        directory.records_path.unlink()
        for item in records:
            if item.verdict is None:
                directory.append(item)
                continue
            folder = directory.evidence_dir(item.task_id, item.turn)
            task = Task(id=item.task_id, suite="floweval", title=item.task_id, context="A shop.",
                        turns=[TurnSpec(index=item.turn, prompt=f"{item.task_id}: A shop.")])
            write_packet(folder, EvidencePacket(task=task, turn_index=item.turn, record=item, judged=True,
                                                files={"src/App.jsx": f"export default () => '{item.model}'"},
                                                build=BuildResult(status="ok")))
            directory.append(item.model_copy(update={"evidence_dir": str(folder.relative_to(run_dir))}))


def _scripted_judge(messages: list[dict]) -> tuple[int, str]:
    texts = [part["text"] for part in messages[-1]["content"] if part["type"] == "text"]
    shown = {letter: next(re.search(r"'(m\d)'", t).group(1) for t in texts if t.startswith(f"## Code {letter}"))
             for letter in "AB"}
    a, b = STRENGTH[shown["A"]], STRENGTH[shown["B"]]
    return 200, completion(json.dumps({cid: {"A": a, "B": b} for cid in CRITERIA}))


def test_pairwise_judge_column(tmp_path: Path, capsys) -> None:
    dirs = _write_runs(tmp_path)
    _write_packets(dirs)
    labels = _labels(tmp_path / "labels.jsonl")
    with FaultServer(_scripted_judge) as server:
        model_file = tmp_path / "judge.yaml"
        model_file.write_text(yaml.safe_dump({"name": "judge-x", "provider": "openai", "model": "local",
                                              "base_url": server.base_url, "cache": False, "max_retries": 0}))
        out, judged = tmp_path / "table.json", tmp_path / "judge.jsonl"
        assert main([*map(str, dirs), "--labels", str(labels), "--json", str(out), "--pairwise-judge",
                     str(model_file), "--judge-labels", str(judged)]) == 0
    # Four distinct pairs with packets on both sides; m4's site never built (no packet): unassessed.
    assert server.calls == 4
    assert "unassessed" in capsys.readouterr().err
    mllm = next(c for c in json.loads(out.read_text())["metrics"] if c["name"] == "mllm")
    # Judge a, b, a, b against the people's a, a, a, b: p_o = 3/4, p_e = 3/4 * 1/2 + 1/4 * 1/2 = 1/2.
    assert (mllm["pairs"], mllm["unassessed"]) == (4, 1)
    assert mllm["agreement_rate"] == pytest.approx(3 / 4)
    assert mllm["cohen_kappa"] == pytest.approx((0.75 - 0.5) / (1 - 0.5))
    assert mllm["rank"] == {"m1": 1, "m3": 2, "m2": 3}
    decided = read_labels(judged)
    assert [label.winner for label in decided] == ["a", "b", "a", "b"]
    assert {label.rater for label in decided} == {"mllm:judge-x"}
    assert decided[0].site_a == f"{dirs[0].resolve()}::p1::1"


# -- the metric decision on the rated pair of sites (FlowEval §4, Appendix D) --------------------------------

# Five generations of p1 per model: m1's DTW mean is 2.6 (one bad site), m2's 2.0.
FIVE = {"m1": [1.0, 1.0, 1.0, 1.0, 9.0], "m2": [2.0] * 5}


def _write_five(root: Path) -> dict[str, Path]:
    dirs = {}
    for model, values in FIVE.items():
        directory = RunDirectory(root / f"five-{model}")
        for turn, dtw in enumerate(values, start=1):
            verdict = Verdict(judge="floweval", passed=None, scores={"dtw": dtw, "ebleu": 0.5, "wmd": 0.1})
            directory.append(TurnRecord(task_id="p1", suite="floweval", turn=turn, status=FailureBucket.OK,
                                        passed=None, verdict=verdict, model=model))
        dirs[model] = (root / f"five-{model}").resolve()
    return dirs


def test_a_rated_pair_is_decided_on_the_two_sites_the_person_saw(tmp_path: Path) -> None:
    """Label 1 shows m1's generation 1 (DTW 1.0) against m2's generation 3 (2.0): lower DTW, m1 wins, as the
    person said. On the five-generation means (2.6 against 2.0) m2 would win. Label 2 shows m1's generation 5
    (9.0) against m2's 1 (2.0): m2 wins, as the person said; a second pair of sites of the same models."""
    dirs = _write_five(tmp_path)
    site = lambda model, turn: f"{dirs[model]}::p1::{turn}"  # noqa: E731
    path = tmp_path / "labels.jsonl"
    write_labels(path, [
        PairwiseLabel(prompt_id="p1", model_a="m1", model_b="m2", winner="a", rater="r1",
                      site_a=site("m1", 1), site_b=site("m2", 3)),
        PairwiseLabel(prompt_id="p1", model_a="m1", model_b="m2", winner="b", rater="r1",
                      site_a=site("m1", 5), site_b=site("m2", 1)),
    ])
    outputs = load_outputs(list(dirs.values()))
    human = read_human_labels(path, outputs)
    rated = next(c for c in build_table(outputs, human).metrics if c.name == "dtw")
    assert (rated.agreement_rate, rated.pairs, rated.decided_by_mean) == (1.0, 2, 0)
    # The older reading decides the pair of models once, on the means: m2, so only label 2 agrees.
    mean = next(c for c in build_table(outputs, human, pair_values="generation_mean").metrics if c.name == "dtw")
    assert (mean.agreement_rate, mean.pairs, mean.decided_by_mean) == (0.5, 2, 1)
    # A site named by a relative run dir (as typed, or after the run dirs moved) is found by its path's tail.
    write_labels(path, [PairwiseLabel(prompt_id="p1", model_a="m1", model_b="m2", winner="a", rater="r1",
                                      site_a="five-m1::p1::1", site_b="elsewhere/five-m2::p1::3")])
    assert [(x.site_a, x.site_b) for x in read_human_labels(path, outputs)] == [(site("m1", 1), site("m2", 3))]
    # A label naming a site that is not that model's slot for the prompt is an error naming line and field.
    write_labels(path, [PairwiseLabel(prompt_id="p1", model_a="m1", model_b="m2", winner="a", rater="r1",
                                      site_a=site("m2", 1), site_b=site("m2", 3))])
    with pytest.raises(ConfigError, match=r"labels.jsonl:1: site_a '.*five-m2::p1::1' is no slot of model 'm1'"):
        read_human_labels(path, outputs)


def test_completion_stands_beside_the_metrics_and_names_traces_that_stopped(tmp_path: Path, capsys) -> None:
    """Slots with completion (scripted flows): m1 completes everything; one of m2's two p1 slots stopped short."""
    completion = {("m1", "p1", 1): (1.0, []), ("m1", "p2", 1): (1.0, []), ("m2", "p1", 1): (0.5, ["edit"]),
                  ("m2", "p1", 2): (1.0, []), ("m2", "p2", 1): (1.0, []), ("m3", "p1", 1): (0.75, ["a", "b"]),
                  ("m3", "p2", 1): (1.0, [])}
    dirs = []
    for model, slots in RUNS.items():
        directory = RunDirectory(tmp_path / f"run-{model}")
        for (prompt, turn), scores in slots.items():
            verdict = None
            if scores is not None:
                value, stopped = completion[(model, prompt, turn)]
                verdict = Verdict(judge="floweval", passed=None, scores={**scores, "completion": value},
                                  raw={"completion": {"mean": value, "incomplete": stopped}})
            directory.append(TurnRecord(task_id=prompt, suite="floweval", turn=turn, passed=None, verdict=verdict,
                                        status=FailureBucket.OK if verdict else FailureBucket.BUILD_FAILED, model=model))
        dirs.append(tmp_path / f"run-{model}")
    outputs = load_outputs(dirs)
    table = build_table(outputs, read_human_labels(_labels(tmp_path / "labels.jsonl"), outputs), ratings="online_elo")
    assert table.completion["m1"].mean == 1.0 and table.completion["m1"].incomplete == 0
    assert (table.completion["m2"].mean, table.completion["m2"].slots, table.completion["m2"].incomplete) == \
        (pytest.approx(2.5 / 3), 3, 1)
    assert table.completion["m3"].incomplete == 1 and "m4" not in table.completion  # m4's site did not build
    # The metrics' own columns are unchanged by completion (the paper's metrics, as defined).
    assert [c.name for c in table.metrics] == ["dtw", "ebleu", "wmd"]
    medians = {row.name: row for row in table.medians}
    assert medians["completion"].direction == "higher"
    assert medians["completion"].median == pytest.approx({"m1": 1.0, "m2": 1.0, "m3": 0.875})
    out = tmp_path / "table.json"
    assert main([*map(str, dirs), "--labels", str(tmp_path / "labels.jsonl"), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if line.startswith("m2 "))
    assert row.rstrip().endswith("0.83 (1/3 incomplete)"), row
    assert "Completion (higher better)" in printed
    assert json.loads(out.read_text())["completion"]["m2"]["incomplete"] == 1


def test_runs_without_completion_print_the_paper_table_alone(table) -> None:
    from runner.suites.floweval.table import render

    assert table.completion == {} and "Completion" not in render(table)
