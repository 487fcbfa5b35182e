"""Each preset end to end, with its model roles served for real by the CPU vLLM build on the tiny random vision
models (tests/support/tiny_models.py): one record per requested slot (MT-Web2Code Table 3 micro, which serves
no model, runs in tests/test_presets_run.py).

Two tiny VLMs, made differently (tests/support/tiny_vlm.py: byte-level BPE and `<|role|>` turns;
tiny_vlm_unigram.py: a Unigram tokenizer, Gemma's turns, and a decoder that loops on JSON whitespace wherever the
grammar admits it). EvoGenUI-Bench Table 2, whose actor, evaluator and diagnostic judge ask every kind of
structured question the presets ask, runs on both. The other presets repeat those roles' calls under other
rubrics or counts and each take minutes of CPU, so each runs on one of the two, the two taking turns: Table 8
(Table 2 three times) on the Unigram model, I-WebGenBench Table 2, MT-Web2Code Table 3 macro and FlowEval Table 1
on the BPE one (docs/vllm.md, "Tests"; MT-Web2Code's judge and caption model and WebGen-Bench's tester hold on the
Unigram one in tests/suites/*/test_served.py).

Only the role configs are overridden (where the role's weights come from and what the CPU build needs: one
device, a context the tiny model has, no reasoning parser for tokens it lacks); every other key is the preset's
(turns, repeats, step caps, screenshot kind, probe mode). The generator is the oracle, so the actor and the judge
see real artifacts. The task set is the project's own, chosen explicitly (`suite.task_set=project`: the papers' data is not pulled
here), cut to one task (`suite.limit=1`), a selection, not a setting of the paper (I-WebGenBench runs its five
reference apps; FlowEval two of its five generations of the prompt).
FlowEval Table 1 featurizes with UIClip, read from a local hub cache holding a tiny random CLIP under its names
(where UIClip is absent the preset stops in preflight naming it: tests/suites/floweval/test_featurizers.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.tiny_uiclip import write_tiny_uiclip_cache
from tests.support.served_runs import ServedRun, assert_completed, run_served
from tests.support.tiny_models import (NO_VLLM_REASON, READY_TIMEOUT_S, TINY_VLMS, VLLM_PYTHON, served_overrides,
                                       tiny_model_dir)

pytestmark = [pytest.mark.vllm, pytest.mark.served, pytest.mark.slow, pytest.mark.browser, pytest.mark.build,
              pytest.mark.sandbox, pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=NO_VLLM_REASON)]

RUN_S = 3600


def tiny_role(key: str, model_dir: Path, *, drop: tuple[str, ...] = ()) -> list[str]:
    """A shipped `provider: vllm` role served on the tiny model: its weights and the CPU build's settings, one
    device instead of the paper model's node, and no server flag that names tokens the tiny model lacks."""
    return [*served_overrides(key, model_dir), f"++{key}.server.tensor_parallel_size=1",
            f"++{key}.server.max_model_len=32768", *(f"~{key}.server.{flag}" for flag in drop)]


def run_preset(tmp_path: Path, preset: str, *overrides: str, env: dict[str, str] | None = None) -> ServedRun:
    """The preset on the project's own tasks, asked for explicitly (`suite.task_set=project`): the papers' data
    is not pulled in CI, and EvoGenUI-Bench's presets read it unless told otherwise."""
    return run_served([f"+experiment={preset}", "model=oracle", "suite.task_set=project", "suite.limit=1",
                       *overrides], tmp_path / "run", timeout_s=RUN_S, env=env)


def records_of(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.timeout(READY_TIMEOUT_S * 2 + RUN_S)
@pytest.mark.parametrize("vlm", TINY_VLMS)
def test_evogenui_table2_with_a_served_actor_and_evaluator(tmp_path: Path, vlm: str) -> None:
    model_dir = tiny_model_dir(vlm)  # type: ignore[arg-type]
    # A task's first three turns (§5.1's five are the preset's, checked in tests/test_presets.py): every guarantee
    # below holds per turn, and the served actor's steps make each turn the CPU's longest wait.
    run = run_preset(tmp_path, "evogenui-table2", "suite.turns=3", *tiny_role("actor.options.model", model_dir),
                     *tiny_role("judge.options.model", model_dir))
    assert run.returncode == 0, run.stderr[-4000:]
    assert len(run.records) == 3 and {r["turn"] for r in run.records} == {1, 2, 3}
    assert not [r for r in run.records if r["status"] in ("infra", "judge_error", "truncated")], run.statuses()
    assert run.refused_requests() == []
    # MiMo-V2.5 in both roles (§5.2): one server for both (the same weights and flags), which answered both.
    assert len(run.logs_of("mimo-v2.5")) == 1 and run.answered_requests("mimo-v2.5") > 0
    config = (run.run_dir / "config.yaml").read_text()
    assert "max_steps: 20" in config and "screenshot: full" in config  # the preset's keys, not the role's
    for record in run.records:
        trace = json.loads((run.run_dir / record["evidence_dir"] / "trace.json").read_text())
        assert trace["actor"] == "llm" and 0 < len(trace["steps"]) <= 20  # the model's actions, executed
        assert trace["summary"]["stop_reason"] != "the model returned no valid action", trace["summary"]
        assert not trace["summary"]["stop_reason"].startswith(("actor model failed", "the model's action was truncated"))
        assert all(step["action"]["kind"] not in ("invalid_action", "truncated") for step in trace["steps"])
        raw = record["verdict"]["raw"]
        assert raw["response"] and raw["evidence"]["trace_steps"] == len(trace["steps"]), raw
    # §6.1, App. D.2.2: failed turns labelled by a diagnostic call of its own, on the evaluator's model
    summary = json.loads((run.run_dir / "summary.json").read_text())
    assert (summary["failure_mechanisms_source"], summary["failure_mechanisms_model_role"]) == \
        ("diagnostic_judge", "judge")
    # What was measured: one of the project's own tasks, not the paper's 150 (runner/run/task_set.py)
    assert summary["task_set"] | {"revision": None} == {
        "name": "project", "suite": "evogenui", "source": "tasks/evogenui", "revision": None, "checksum": None,
        "paper_tasks": 150, "tasks_run": 1}


@pytest.mark.timeout(READY_TIMEOUT_S * 2 + RUN_S)
def test_evogenui_table8_three_served_runs_of_table2_with_their_mean_and_sd(tmp_path: Path) -> None:
    """App. D.2, Table 8: Table 2's setting run three times; each run complete on its own, one MiMo-V2.5 server
    for the three (loaded by the first run), and repeats.json giving every figure per run with mean and SD. On the
    Unigram tiny VLM (Table 2 runs on both, with the served actor). What this test adds is the repeats over one
    server, so the probe acts and each run takes a task's first three turns: a third of the CPU minutes."""
    model_dir = tiny_model_dir("vlm-unigram")
    run = run_preset(tmp_path, "evogenui-table8", "actor=probe", "suite.turns=3",
                     *tiny_role("judge.options.model", model_dir))
    assert run.returncode == 0, run.stderr[-4000:]
    for index in range(3):
        records = records_of(run.run_dir / f"repeat-{index}")
        assert sorted(r["turn"] for r in records) == [1, 2, 3], records
        assert not [r for r in records if r["status"] in ("infra", "judge_error", "truncated")]
        assert all(r["verdict"]["raw"]["response"] for r in records if r["verdict"])  # the served evaluator's
    report = json.loads((run.run_dir / "repeats.json").read_text())
    assert report["repeats"] == 3
    tp = report["figures"]["table2.rows.overall.turn_pass"]  # TP, Table 8's first column
    assert len(tp["values"]) == 3 and tp["n"] == 3 and tp["mean"] == pytest.approx(sum(tp["values"]) / 3)
    logs = [sorted((run.run_dir / f"repeat-{index}" / "servers").glob("*.log")) for index in range(3)]
    assert [len(found) for found in logs] == [1, 0, 0], logs


@pytest.mark.timeout(READY_TIMEOUT_S + RUN_S)
def test_iwebgen_table2_on_the_five_reference_apps_with_a_served_judge(tmp_path: Path) -> None:
    """The preset over all five reference apps (no `suite.limit`): `judge=qwen2.5-vl-7b` as shipped, whose server
    admits 4 images, while B.1's judge sees the page and the probe's before/after screenshots (up to 1 + 2 x 12):
    every request is fitted to the server (runner/models/fitting.py), every verdict is the served model's."""
    model_dir = tiny_model_dir("vlm")
    run = run_served(["+experiment=iwebgen-table2", "model=oracle", "judge=qwen2.5-vl-7b",
                      *tiny_role("judge.options.model", model_dir)], tmp_path / "run", timeout_s=RUN_S)
    assert_completed(run, requested=5, servers=["qwen2.5-vl-7b-instruct"], listed=("judge",))
    for record in run.records:
        assert record["extra"]["generation"]["strategy"] == "single_pass"  # §4.1
        assert record["status"] == "ok", record["error"]
        raw = record["verdict"]["raw"]
        assert raw["response"] and raw["attempts"] >= 1 and raw["evidence"], raw  # the served model's answer


@pytest.mark.timeout(READY_TIMEOUT_S * 3 + RUN_S)
def test_web2code_table3_macro_three_runs_with_a_served_judge(tmp_path: Path) -> None:
    """Kimi-K2.6's parsers name tokens this tiny model lacks, so they go, and with the reasoning parser the
    reasoning budget the server could no longer enforce (a thinking judge: tests/models/test_decoding_vllm.py)."""
    model_dir = tiny_model_dir("vlm")
    run = run_preset(tmp_path, "web2code-table3-macro",
                     f"suite.cache_dir={tmp_path / 'cache'}",
                     *tiny_role("judge.options.model", model_dir, drop=("tool_call_parser", "reasoning_parser")),
                     # a tiny stand-in's cap: 15 slots of judge calls stay within CPU minutes
                     "++judge.options.model.max_tokens=1024", "++judge.options.model.reasoning_budget_tokens=null")
    assert run.returncode == 0, run.stderr[-4000:]
    for index in range(3):  # Table 3: three independent runs, five turns each
        records = records_of(run.run_dir / f"repeat-{index}")
        assert sorted(r["turn"] for r in records) == [1, 2, 3, 4, 5]
        assert not [r for r in records if r["status"] in ("infra", "judge_error", "truncated")]
    report = json.loads((run.run_dir / "repeats.json").read_text())
    assert report["repeats"] == 3 and all(len(f["values"]) == 3 for f in report["figures"].values())
    # One judge server for the three runs (runner/models/server_keep.py): started by the first, whose servers/
    # folder holds its log, and answering every run's verdicts.
    logs = {index: sorted((run.run_dir / f"repeat-{index}" / "servers").glob("*.log")) for index in range(3)}
    assert [len(found) for found in logs.values()] == [1, 0, 0], logs
    assert logs[0][0].read_text(errors="replace").count('/v1/chat/completions HTTP/1.1" 200') >= 3 * 5


@pytest.mark.timeout(READY_TIMEOUT_S + RUN_S)
def test_floweval_table1_with_a_served_cua_and_uiclip_features(tmp_path: Path) -> None:
    """UI-TARS served on the tiny model; UIClip read from a local hub cache as after `hf download` (a tiny random
    CLIP under UIClip's repository names: tests/support/tiny_uiclip.py), so the paper's featurizer runs."""
    model_dir = tiny_model_dir("vlm")
    hub = write_tiny_uiclip_cache(tmp_path / "hub")
    run = run_preset(tmp_path, "floweval-table1", *tiny_role("actor.options.model", model_dir),
                     # a tiny stand-in's cap: its random answers end at the first unparsable action either way
                     "++actor.options.model.max_tokens=64",
                     # two of §3.1's five generations of the prompt (the preset's 5: tests/test_presets.py), each
                     # a slot of its own: a selection, like suite.limit, that halves the CUA runs on two cores
                     "suite.repeats=2",
                     env={"HF_HUB_CACHE": str(hub), "HF_HUB_OFFLINE": "1"})
    assert_completed(run, requested=2, servers=["ui-tars-1.5-7b"])
    config = (run.run_dir / "config.yaml").read_text()
    for setting in ("featurizer: uiclip", "runs: 3", "max_steps: 50", "temperature: 0.7"):  # the preset's keys
        assert setting in config, setting
    for record in run.records:
        flows = sorted((run.run_dir / record["evidence_dir"] / "flows").iterdir())
        assert flows and all(sorted(p.name for p in flow.glob("run_*")) == ["run_1", "run_2", "run_3"]
                             for flow in flows)  # §3.3: three CUA runs per site and flow
    assert set(json.loads((run.run_dir / "summary.json").read_text())["floweval"]) == {"dtw", "ebleu", "wmd"}
