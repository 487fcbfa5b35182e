"""The suite's scoring of one slot (judge_turn) and its task selection, without a browser."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from runner.turns.evidence import Evidence, Trace, TraceStep
from runner.judges.base import JudgeInput
from runner.judges.llm import LLMJudge
from runner.judges.llm_settings import LLMJudgeSettings
from runner.judges.rules import RulesJudge
from runner.sandbox.base import BuildResult
from runner.suites.base import ActorFacts, ModelFacts, RunFacts
from runner.suites.iwebgen.loader import load_tasks
from runner.suites.iwebgen.suite import IWebGenSuite, IWebGenSuiteSettings
from runner.models.untrusted import RULE
from tests.conftest import REPO_ROOT
from tests.support.fences import outside_blocks
from tests.support.scripted_model import ScriptedModel

TASK = next(task for task in load_tasks(REPO_ROOT / "tasks" / "iwebgen") if task.id == "econ-cobweb")
ANSWER = {"topic": {"score": 14, "reason": "all modules"}, "visual": {"score": 22, "reason": "clean"},
          "interaction": {"score": 33, "reason": "curves follow the sliders"},
          "clarity": {"score": 7, "reason": "labelled"}, "summary": "good"}


def _ScriptedModel(answers: list[str]) -> ScriptedModel:
    return ScriptedModel(answers, name="fake-vlm")


def _suite() -> IWebGenSuite:
    return IWebGenSuite(IWebGenSuiteSettings(name="iwebgen", judge_max_steps=1), project_root=REPO_ROOT)


def _input(tmp_path: Path, *, build: str = "ok", page_errors: list[str] | None = None) -> JudgeInput:
    for name in ("screenshot.png", "step_00_before.png", "step_00_after.png", "step_01_before.png", "step_01_after.png"):
        (tmp_path / name).write_bytes(b"\x89PNG fake")
    steps = [TraceStep(index=i, action={"kind": "set_range", "element": {"label": f"slider {i}"}}, dom_changed=True,
                       screenshot_before=f"step_0{i}_before.png", screenshot_after=f"step_0{i}_after.png") for i in (0, 1)]
    trace = Trace(actor="probe", steps=steps, summary={"elements_exercised": 2, "elements_responsive": 2,
                                                       "interaction_rate": 1.0})
    return JudgeInput(task=TASK, turn=TASK.turns[0], build=BuildResult(status=build), files={"src/App.jsx": "x"},
                      evidence=Evidence(url="http://x/", screenshot_viewport="screenshot.png"), trace=trace,
                      assistant_text="", out_dir=tmp_path, page_errors=page_errors or [])


def test_rules_judge_leaves_the_judged_points_unassessed(tmp_path: Path) -> None:
    verdict = asyncio.run(_suite().judge_turn(RulesJudge(), _input(tmp_path, page_errors=["TypeError: x"])))
    assert verdict.passed is None
    assert {name: d.score for name, d in verdict.dimensions.items()} == {
        "rule": 4.0, "topic": None, "visual": None, "interaction": None, "clarity": None}
    assert verdict.scores == {"score_r": 4.0, "ir_actions": 2.0, "ir_responsive": 2.0}  # no total: unassessed


def test_llm_judge_sees_spec_and_before_after_screenshots_and_scores_100_points(tmp_path: Path) -> None:
    model = _ScriptedModel(["no json here", json.dumps(ANSWER)])  # the first answer is malformed: retried
    settings = LLMJudgeSettings.from_options({"model": {"provider": "openai", "model": "fake-vlm",
                                                        "base_url": "http://127.0.0.1:9/v1", "vision": True}, "rubric": "iwebgen"})
    verdict = asyncio.run(_suite().judge_turn(LLMJudge(settings, name="vlm", model=model), _input(tmp_path)))
    assert verdict.scores["score"] == 14 + 22 + 33 + 7 + 5
    assert (verdict.scores["score_v"], verdict.scores["score_i"], verdict.scores["score_t"],
            verdict.scores["score_c"], verdict.scores["score_r"]) == (22, 33, 14, 7, 5)
    content = model.requests[0].messages[0]["content"]
    assert sum(part["type"] == "image_url" for part in content) == 3  # load view + one before/after pair (max 1)
    texts = " ".join(part.get("text", "") for part in content)
    assert "The Cobweb Theorem" in texts and "slider 0" in texts and "slider 1" not in texts
    # The element's label is the page's text: quoted, after the paper's instructions and the untrusted-data rule.
    assert content[1] == {"type": "text", "text": RULE}
    assert not any("slider 0" in line for line in outside_blocks(texts.replace(" Before:", "\nBefore:")))
    assert verdict.raw["evidence"] == ["screenshot.png", "step_00_before.png", "step_00_after.png"]


def test_a_failed_build_scores_zero_everywhere_without_a_model_call(tmp_path: Path) -> None:
    model = _ScriptedModel([])
    settings = LLMJudgeSettings.from_options({"model": {"provider": "openai", "model": "fake-vlm",
                                                        "base_url": "http://127.0.0.1:9/v1"}})
    verdict = asyncio.run(_suite().judge_turn(LLMJudge(settings, model=model), _input(tmp_path, build="build_failed")))
    assert {d.score for d in verdict.dimensions.values()} == {0.0} and len(verdict.dimensions) == 5
    assert verdict.scores["score"] == 0.0 and not model.requests


def test_oracle_runs_only_specifications_with_a_reference() -> None:
    suite = _suite()
    suite.configure_run(RunFacts(generator=ModelFacts("oracle", {}, replays_reference=True), actor=ActorFacts("none")))
    chosen = asyncio.run(suite.load_tasks())
    assert chosen and all(task.turns[0].reference_files for task in chosen)
    suite.configure_run(RunFacts(generator=ModelFacts("gpt-4o", {}), actor=ActorFacts("none")))
    assert len(asyncio.run(suite.load_tasks())) == 15
    only = IWebGenSuite(IWebGenSuiteSettings(name="iwebgen", domains=["HCI"]), project_root=REPO_ROOT)
    assert {task.domain for task in asyncio.run(only.load_tasks())} == {"HCI"}


def test_a_judge_without_vision_leaves_the_judged_points_unassessed(tmp_path: Path) -> None:
    model = _ScriptedModel([])
    settings = LLMJudgeSettings.from_options({"model": {"provider": "openai", "model": "text-only",
                                                        "base_url": "http://127.0.0.1:9/v1", "vision": False}})
    verdict = asyncio.run(_suite().judge_turn(LLMJudge(settings, name="text", model=model), _input(tmp_path)))
    assert verdict.dimensions["interaction"].score is None and "no vision" in verdict.dimensions["visual"].reason
    assert verdict.dimensions["rule"].score == 5.0 and "score" not in verdict.scores and not model.requests


def test_twelve_probe_steps_reach_a_four_image_judge_as_contact_sheets(tmp_path: Path) -> None:
    """B.1's 25 screenshots (load view + 12 before/after pairs) to a server started with
    --limit-mm-per-prompt '{"image": 4}': at most 4 images go, every pair on a contact sheet, and the slot's
    evidence says which went where."""
    from PIL import Image

    from runner.turns.evidence_folder import EvidenceFolder
    from tests.support.fault_server import FaultServer, completion

    Image.new("RGB", (640, 400), (240, 240, 240)).save(tmp_path / "screenshot.png")
    steps = []
    for i in range(12):
        Image.new("RGB", (640, 400), (10 * i, 0, 0)).save(tmp_path / f"step_{i:02d}_before.png")
        Image.new("RGB", (640, 400), (0, 10 * i, 0)).save(tmp_path / f"step_{i:02d}_after.png")
        steps.append(TraceStep(index=i, action={"kind": "click", "element": {"label": f"control {i}"}},
                               dom_changed=True, screenshot_before=f"step_{i:02d}_before.png",
                               screenshot_after=f"step_{i:02d}_after.png"))
    judge_input = JudgeInput(task=TASK, turn=TASK.turns[0], build=BuildResult(status="ok"), files={"src/App.jsx": "x"},
                             evidence=Evidence(url="http://x/", screenshot_viewport="screenshot.png"),
                             trace=Trace(actor="probe", steps=steps), assistant_text="", out_dir=tmp_path)
    suite = IWebGenSuite(IWebGenSuiteSettings(name="iwebgen", judge_max_steps=12), project_root=REPO_ROOT)
    with FaultServer(lambda messages: (200, completion(json.dumps(ANSWER)))) as server:
        model = {"provider": "openai", "model": "vlm", "base_url": server.base_url, "vision": True, "max_retries": 0,
                 "cache": False, "max_tokens": 2048, "limits": {"images_per_prompt": 4, "context_tokens": 32768}}

        async def main():
            judge = LLMJudge(LLMJudgeSettings.from_options({"model": model, "rubric": "iwebgen"}), name="vlm")
            try:
                return await suite.judge_turn(judge, judge_input)
            finally:
                await judge.aclose()

        verdict = asyncio.run(main())
        (request,) = server.requests
    images = [part for message in request["messages"] if isinstance(message["content"], list)
              for part in message["content"] if part["type"] == "image_url"]
    assert len(images) == 4
    assert verdict.scores["score"] == 14 + 22 + 33 + 7 + 5
    fitted = verdict.raw["request"]
    assert fitted["images_given"] == 25 and fitted["images_sent"] == 4
    sheets = [entry for entry in fitted["images_fitted"] if entry["fitted"] == "contact sheet"]
    assert len(sheets) == 3 and sum(len(entry["images"]) for entry in sheets) == 24
    texts = " ".join(part.get("text", "") for part in request["messages"][0]["content"])
    assert "Contact sheet 1 of 3" in texts and "control 11" in texts
    (recorded,) = EvidenceFolder(tmp_path).read_request_records(judging=True)
    assert recorded["role"] == "judge" and recorded["images_fitted"] == fitted["images_fitted"]
