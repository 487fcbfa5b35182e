"""The actors' step loop on a real Chromium page, its model a real OpenAI provider against the scripted server.

The hooks here are the smallest actor: each answer is JSON {"add": text} (append a line to the page) or
{"wait": s} (sleep that long, away from the page) or {"finish": claim}; what the loop owns is checked: limits,
stop conditions, what a failed model call leaves, the time budget, the settle and the mutation count.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from runner.actors.step_loop import InvalidAnswer, PageUnresponsive, StepHooks, StepLimits, StepLoop
from runner.models.base import GenerationRequest, Model
from runner.models.fitting import FitResult, RequestRefused
from runner.models.registry import build_model
from runner.turns.evidence import Trace, TraceStep
from runner.turns.evidence_folder import EvidenceFolder
from tests.support.fault_server import FaultServer, completion

pytestmark = pytest.mark.browser

PAGE = "<!doctype html><html><body><ol id='log'></ol></body></html>"
ADD_JS = "(text) => { const li = document.createElement('li'); li.textContent = text; " \
         "document.getElementById('log').appendChild(li); }"


class Hooks(StepHooks[dict]):
    screenshot_prefix = "test"

    def __init__(self, model: Model, *, refuse_fit_at: int | None = None, unresponsive_at: int | None = None,
                 invalid_at: int | None = None) -> None:
        self.model = model
        self.refuse_fit_at, self.unresponsive_at, self.invalid_at = refuse_fit_at, unresponsive_at, invalid_at
        self.observed: list[tuple[int, str]] = []
        self.remembered: list[int] = []
        self.settled_steps: list[int] = []

    async def observe(self, session, step_index: int, shot: str) -> None:
        if step_index == self.unresponsive_at:
            raise PageUnresponsive("page unresponsive: test")
        self.observed.append((step_index, shot))

    def request_notes(self) -> dict[str, Any]:
        return {"note": "n"}

    def fit(self, step_index: int, shot: str) -> FitResult:
        if step_index == self.refuse_fit_at:
            raise RequestRefused("too large to fit")
        return FitResult(messages=[{"role": "user", "content": f"step {step_index}"}], record={"fitted": step_index})

    async def ask(self, messages: list[dict[str, Any]], step_index: int, usage: dict[str, int]) -> dict:
        response = await self.model.generate(GenerationRequest(task_id="t", turn=1, messages=messages))
        for key, value in response.usage.items():
            usage[key] = usage.get(key, 0) + int(value or 0)
        if step_index == self.invalid_at:
            raise InvalidAnswer(action={"kind": "invalid_action"}, error="x" * 700, stop_reason="no valid action",
                                failed_call={"role": "actor", "step": step_index}, observation="seen")
        return json.loads(response.text)

    def begin_step(self, answer: dict, step_index: int, shot: str) -> TraceStep:
        return TraceStep(index=step_index, action={"kind": next(iter(answer)), **answer}, screenshot_before=shot)

    async def execute(self, session, answer: dict, step: TraceStep) -> bool:
        if "add" in answer:
            await session.page.evaluate(ADD_JS, answer["add"])
            return True
        if "wait" in answer:
            await asyncio.sleep(answer["wait"])
        return False

    async def after_settle(self, session, answer: dict, step: TraceStep) -> None:
        self.settled_steps.append(step.index)

    def remember(self, answer: dict, step: TraceStep) -> None:
        self.remembered.append(step.index)

    def claim(self, answer: dict) -> str | None:
        return answer.get("finish")

    async def summary(self, session, trace: Trace, final_shot: str) -> dict[str, Any]:
        return {"own": len(trace.steps), "final": final_shot}


class Script:
    def __init__(self, *answers: Any) -> None:
        self.answers, self.count = list(answers), 0

    def __call__(self, messages: list[dict[str, Any]]) -> tuple[int, str | None]:
        answer = self.answers[min(self.count, len(self.answers) - 1)]
        self.count += 1
        if isinstance(answer, tuple):  # (status, message): an HTTP error
            return answer[0], json.dumps({"error": {"message": answer[1], "type": "invalid_request_error"}})
        return (200, None) if answer is None else (200, completion(json.dumps(answer)))


def run_loop(browse, site, tmp_path: Path, script: Script, *, hang_s: float = 30.0, max_steps: int = 5,
             max_total_s: float = 60.0, settle_ms: int = 50, **hook_options: Any) -> tuple[Trace, Hooks, FaultServer]:
    url = site.page("steps.html", PAGE)
    with FaultServer(script, hang_s=hang_s) as server:
        model = build_model({"provider": "openai", "name": "loop-model", "model": "m", "base_url": server.base_url,
                             "max_retries": 0, "cache": False, "timeout_s": 30})
        hooks = Hooks(model, **hook_options)
        loop: StepLoop[dict] = StepLoop(actor="tester-actor", role="actor", model=model,
                                        limits=StepLimits(max_steps=max_steps, max_total_s=max_total_s,
                                                          step_timeout_s=5, settle_ms=settle_ms))

        async def body(session) -> Trace:
            original = session.settle

            async def settle(ms: int | None = None) -> None:
                hooks.settled_steps.append(-1 if ms is None else -ms)  # a marker: which settle, with what window
                await original(ms)

            session.settle = settle
            try:
                return await loop.run(session, hooks, tmp_path)
            finally:
                await model.aclose()

        trace = browse(url, body)
    return trace, hooks, server


def records(tmp_path: Path) -> list[dict[str, Any]]:
    return EvidenceFolder(tmp_path).read_request_records(judging=False)


def test_the_step_budget_ends_the_trace_unfinished(site, browse, tmp_path: Path) -> None:
    trace, hooks, server = run_loop(browse, site, tmp_path, Script({"add": "a"}, {"wait": 0}, {"add": "b"}),
                                    max_steps=3)
    assert server.calls == 3 and len(trace.steps) == 3 and not trace.finished and trace.claim == ""
    assert trace.summary == {"steps": 3, "failed_steps": 0, "stop_reason": "step budget of 3 exhausted", "own": 3,
                             "final": "test_final.png", "model": "loop-model",
                             "usage": {"prompt_tokens": 30, "completion_tokens": 60}}
    # Each step starts from its own screenshot, which is the step before's screenshot after; the last one's is
    # the final shot.
    assert [(s.screenshot_before, s.screenshot_after) for s in trace.steps] == [
        ("test_00.png", "test_01.png"), ("test_01.png", "test_02.png"), ("test_02.png", "test_final.png")]
    assert all((tmp_path / name).exists() for name in ("test_00.png", "test_01.png", "test_02.png", "test_final.png"))
    assert hooks.observed == [(0, "test_00.png"), (1, "test_01.png"), (2, "test_02.png")]
    assert hooks.remembered == [0, 1, 2]
    # The page is settled (with the configured window) only after an action that acted on it, then counted.
    assert hooks.settled_steps == [-50, 0, -50, 2]
    assert [(s.dom_changed, s.mutations) for s in trace.steps] == [(True, 1), (False, 0), (True, 1)]
    assert [r["step"] for r in records(tmp_path)] == [0, 1, 2]
    assert records(tmp_path)[0] == {"role": "actor", "actor": "tester-actor", "step": 0, "model": "loop-model",
                                    "note": "n", "fitted": 0}
    assert json.loads((tmp_path / "trace.json").read_text())["summary"]["stop_reason"] == "step budget of 3 exhausted"


def test_a_claim_finishes_the_trace(site, browse, tmp_path: Path) -> None:
    trace, hooks, server = run_loop(browse, site, tmp_path, Script({"add": "a"}, {"finish": "done"}, {"add": "b"}))
    assert server.calls == 2 and trace.finished and trace.claim == "done"
    assert trace.summary["stop_reason"] == "finished by the actor" and len(trace.steps) == 2
    assert trace.steps[-1].screenshot_after == "test_final.png"


def test_a_model_error_mid_run_keeps_the_steps_before_it(site, browse, tmp_path: Path) -> None:
    trace, hooks, server = run_loop(browse, site, tmp_path, Script({"add": "a"}, (500, "boom"), {"add": "b"}))
    assert server.calls == 2 and len(trace.steps) == 1 and not trace.finished
    assert trace.summary["stop_reason"].startswith("actor model failed: loop-model: HTTP 500")
    assert trace.steps[0].screenshot_after == "test_01.png"  # the shot the failed step started from
    assert [r["step"] for r in records(tmp_path)] == [0, 1] and "refused" not in records(tmp_path)[1]
    assert trace.summary["usage"] == {"prompt_tokens": 10, "completion_tokens": 20}  # the answered call's only


def test_a_refusal_is_recorded_with_the_servers_message(site, browse, tmp_path: Path) -> None:
    trace, _, _ = run_loop(browse, site, tmp_path, Script({"add": "a"}, (400, "prompt too long")))
    assert trace.summary["stop_reason"].startswith("actor model failed:") and len(trace.steps) == 1
    assert [(r["step"], r.get("refused")) for r in records(tmp_path)] == [(0, None), (1, None), (1, "prompt too long")]


def test_a_request_that_cannot_be_fitted_is_recorded_and_never_sent(site, browse, tmp_path: Path) -> None:
    trace, _, server = run_loop(browse, site, tmp_path, Script({"add": "a"}), refuse_fit_at=1)
    assert server.calls == 1 and len(trace.steps) == 1
    assert trace.summary["stop_reason"] == "actor model failed: too large to fit"
    assert records(tmp_path)[-1] == {"role": "actor", "actor": "tester-actor", "step": 1, "model": "loop-model",
                                     "note": "n", "refused": "too large to fit"}


def test_an_invalid_answer_records_a_failed_step_and_its_call(site, browse, tmp_path: Path) -> None:
    trace, hooks, _ = run_loop(browse, site, tmp_path, Script({"add": "a"}), invalid_at=1)
    assert not trace.finished and trace.summary["stop_reason"] == "no valid action"
    failed = trace.steps[-1]
    assert (failed.index, failed.ok, failed.action, failed.observation) == (1, False, {"kind": "invalid_action"}, "seen")
    assert failed.error.startswith("x" * 500) and "truncated: 100 more" in failed.error  # clipped
    assert failed.screenshot_before == "test_01.png"
    assert failed.screenshot_after == "test_final.png"
    assert trace.summary["failed_steps"] == 1 and hooks.remembered == [0]
    assert EvidenceFolder(tmp_path).read_failed_calls(judging=False) == [{"role": "actor", "step": 1}]


def test_an_unresponsive_page_stops_the_trace(site, browse, tmp_path: Path) -> None:
    trace, _, server = run_loop(browse, site, tmp_path, Script({"add": "a"}), unresponsive_at=1)
    assert server.calls == 1 and len(trace.steps) == 1
    assert trace.summary["stop_reason"] == "page unresponsive: test"


def test_a_hung_model_call_ends_at_the_time_budget(site, browse, tmp_path: Path) -> None:
    started = time.monotonic()
    trace, _, server = run_loop(browse, site, tmp_path, Script({"add": "a"}, None), hang_s=20, max_total_s=3)
    assert time.monotonic() - started < 15  # not the server's 20 s hang, nor the provider's 30 s timeout
    assert server.calls == 2 and len(trace.steps) == 1 and not trace.finished
    assert trace.summary["stop_reason"] == "time budget of 3 s exhausted"


def test_a_budget_spent_by_a_step_starts_no_other(site, browse, tmp_path: Path) -> None:
    trace, _, server = run_loop(browse, site, tmp_path, Script({"wait": 2.5}, {"add": "late"}), max_total_s=2)
    assert server.calls == 1 and len(trace.steps) == 1
    assert trace.summary["stop_reason"] == "time budget of 2 s exhausted"
    assert trace.steps[0].screenshot_after == "test_final.png"
