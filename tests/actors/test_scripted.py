"""ScriptedActor on real Chromium: replays check steps, one fresh load per requirement, a screenshot per step."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from runner.actors.base import ActorContext
from runner.actors.scripted import ScriptedActor, ScriptedActorSettings
from runner.turns.evidence import Evidence
from runner.judges.checks import Check
from runner.turns.tasks import Requirement, Task, TurnSpec

ADD = Requirement(
    id="add",
    description="Adding a task shows it",
    check=Check.model_validate(
        {
            "steps": [
                {"action": "fill", "target": {"label": "Task"}, "value": "Water plants"},
                {"action": "click", "target": {"role": "button", "name": "Add"}},
            ],
            # Assertions are never evaluated by the actor: this one would fail.
            "assert": [{"type": "text_visible", "text": "something else entirely"}],
        }
    ),
)
ADD_AGAIN = Requirement(
    id="add_again",
    description="Each requirement starts from a fresh page",
    check=Check.model_validate(
        {
            "steps": [
                {"action": "fill", "target": {"label": "Task"}, "value": "Feed cat"},
                {"action": "click", "target": {"role": "button", "name": "Add"}},
            ],
            "assert": [{"type": "count", "target": {"css": "li.todo"}, "equals": 1}],
        }
    ),
)
DELETE = Requirement(
    id="delete",
    description="There is a delete button",
    check=Check.model_validate(
        {
            "steps": [
                {"action": "click", "target": {"role": "button", "name": "Delete"}},
                {"action": "click", "target": {"role": "button", "name": "Add"}},  # never reached
            ],
            "assert": [{"type": "count", "target": {"css": "li"}, "equals": 0}],
        }
    ),
)
NICE = Requirement(id="nice", description="Looks nice")


def context_for(out_dir, url, requirements) -> ActorContext:
    turn = TurnSpec(index=1, prompt="Build a todo list", requirements=requirements)
    return ActorContext(
        task=Task(id="todo", suite="test", turns=[turn]), turn=turn, evidence=Evidence(url=url), out_dir=out_dir
    )


@pytest.mark.browser
def test_replays_steps_with_screenshots(site, browse, pages, tmp_path) -> None:
    url = site.page("todo.html", pages.todo())
    out_dir = tmp_path / "evidence"
    actor = ScriptedActor(ScriptedActorSettings(step_timeout_s=1.0))
    context = context_for(out_dir, url, [ADD, NICE, ADD_AGAIN, DELETE])

    async def body(session):
        trace = await actor.act(session, context)
        items = await session.page.locator("li.todo").all_inner_texts()
        return trace, items

    trace, items = browse(url, body, load=False)
    assert trace.actor == "scripted" and trace.finished and trace.claim == ""
    assert [s.action["requirement"] for s in trace.steps] == ["add", "add", "add_again", "add_again", "delete"]
    assert [s.action["kind"] for s in trace.steps] == ["fill", "click", "fill", "click", "click"]
    assert trace.steps[0].action["target"] == {"label": "Task", "exact": False, "nth": 0}
    assert [s.ok for s in trace.steps] == [True, True, True, True, False]
    assert "role=button name='Delete'" in trace.steps[4].error
    assert trace.steps[1].dom_changed is True and trace.steps[1].mutations > 0  # the click added an <li>
    assert trace.steps[4].dom_changed is False
    assert items == []  # the last requirement started from a fresh load (no "Feed cat" left over)

    for index, step in enumerate(trace.steps):
        assert step.screenshot_after == f"step_{index:02d}.png"
        with Image.open(out_dir / step.screenshot_after) as image:
            assert image.size == (1280, 800)

    assert trace.summary["skipped"] == ["nice"] and "nice" in trace.summary["note"]
    assert trace.summary["requirements_run"] == ["add", "add_again", "delete"]
    assert trace.summary["requirements_with_failed_steps"] == ["delete"]
    saved = json.loads((out_dir / "trace.json").read_text())
    assert saved["actor"] == "scripted" and len(saved["steps"]) == 5


@pytest.mark.browser
def test_max_steps_bounds_the_trace(site, browse, pages, tmp_path) -> None:
    url = site.page("todo.html", pages.todo())
    actor = ScriptedActor(ScriptedActorSettings(max_steps=3, screenshots=False))
    context = context_for(tmp_path, url, [ADD, ADD_AGAIN, DELETE])
    trace = browse(url, lambda session: actor.act(session, context), load=False)
    assert len(trace.steps) == 3 and trace.summary["truncated"] is True and trace.finished is False
    assert all(s.screenshot_after == "" for s in trace.steps)


# --- flows (FlowEval's scripted reference flows): every step kind, conditions instead of clocks -------------------

import hashlib  # noqa: E402
import multiprocessing  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

from runner.actors.flow_text import EXCLUDED_TEXT_KEY, without_regions  # noqa: E402
from runner.actors.scripted import FLOW_STEPS_KEY  # noqa: E402
from tests.actors.flow_pages import EXPECTED_STATUS, FLOW_STEPS, flow_page  # noqa: E402


def flow_context(out_dir, url, steps, **extra) -> ActorContext:
    turn = TurnSpec(index=1, prompt="Use the page", extra={FLOW_STEPS_KEY: steps})
    return ActorContext(task=Task(id="flows", suite="test", turns=[turn]), turn=turn, evidence=Evidence(url=url),
                        out_dir=out_dir, extra=extra)


def _status_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return next(line for line in lines if line in EXPECTED_STATUS)


def _flow_trace(site, out_dir, *, busy_ms: int = 0, late_ms: int = 600,
                settings: ScriptedActorSettings | None = None, steps=None, **extra):
    url = site.page(f"flow_{busy_ms}_{late_ms}.html", flow_page(busy_ms, late_ms))
    actor = ScriptedActor(settings or ScriptedActorSettings())
    context = flow_context(out_dir, url, steps if steps is not None else FLOW_STEPS, **extra)
    from tests.judges.conftest import on_page

    return on_page(url, lambda session: actor.act(session, context))


@pytest.mark.browser
def test_a_flow_takes_every_step_kind_and_waits_for_the_page(site, browse, tmp_path) -> None:
    trace = _flow_trace(site, tmp_path)
    assert [step.action["kind"] for step in trace.steps] == [step["action"] for step in FLOW_STEPS]
    assert all(step.ok for step in trace.steps), [(s.index, s.error) for s in trace.steps if not s.ok]
    # Each observation is the page before its step: the status the previous step left.
    seen = [_status_line(step.observation) for step in trace.steps] + [_status_line(trace.summary["final_text"])]
    assert seen == EXPECTED_STATUS
    assert "far down" in trace.steps[-1].observation  # the page scroll was seen before the last step
    assert trace.summary["completed"] is True and trace.finished is True
    assert trace.summary["flow_steps"] == len(FLOW_STEPS) == trace.summary["completed_steps"]
    assert trace.summary["stopped_at"] is None and trace.summary["unsettled_steps"] == []


@pytest.mark.browser
def test_a_flow_that_cannot_go_on_says_where_it_stopped(site, browse, tmp_path) -> None:
    steps = [FLOW_STEPS[0], {"action": "dblclick", "target": {"text": "Not on this page"}}, FLOW_STEPS[1]]
    trace = _flow_trace(site, tmp_path, settings=ScriptedActorSettings(step_timeout_s=0.5), steps=steps)
    assert [step.ok for step in trace.steps] == [True, False]
    summary = trace.summary
    assert summary["completed"] is False and trace.finished is False
    assert (summary["flow_steps"], summary["completed_steps"]) == (3, 1)
    assert summary["stopped_at"]["index"] == 1 and summary["stopped_at"]["action"]["kind"] == "dblclick"
    assert "Not on this page" in summary["stopped_at"]["error"]


@pytest.mark.browser
def test_a_control_enabled_too_late_fails_on_its_condition(site, browse, tmp_path) -> None:
    steps = [{"action": "click", "target": {"css": "#status"}},
             {"action": "click", "target": {"role": "button", "name": "Confirm"}}]
    # Enabled 30 s after the lookup: far past the step's 0.3 s however slowly a loaded machine runs the first step.
    trace = _flow_trace(site, tmp_path, late_ms=30000, settings=ScriptedActorSettings(step_timeout_s=0.3), steps=steps)
    assert [step.ok for step in trace.steps] == [True, False]
    assert "stayed disabled" in trace.steps[1].error


@pytest.mark.browser
def test_regions_left_out_of_the_state_text_are_recorded_beside_it(site, browse, tmp_path) -> None:
    trace = _flow_trace(site, tmp_path, steps=FLOW_STEPS[:2], exclude_regions=["#status", "h1"])
    excluded = trace.summary[EXCLUDED_TEXT_KEY]
    assert excluded == [["ready", "Flows"], ["editing", "Flows"], ["editing", "Flows"]]  # two steps, then final
    assert "Flows" in trace.steps[0].observation  # the observation stays the whole visible text
    reduced = without_regions(trace.steps[0].observation, excluded[0])
    assert "Flows" not in reduced and "ready" not in reduced and "Buy milk" in reduced


def _burn(until: float) -> None:
    while time.monotonic() < until:
        pass


def _shots(out_dir) -> list[str]:
    return [hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(out_dir.glob("*.png"))]


@pytest.mark.browser
@pytest.mark.slow
def test_a_flow_gives_the_same_trace_idle_and_under_cpu_load(site, browse, tmp_path) -> None:
    """The same flow on a slow page (each handler burns 150 ms) under twice as many busy processes as cores
    (bounded: they stop after 90 s) gives the trace an idle run of the fast page gives: same steps, outcomes,
    observations and screenshots."""
    idle = _flow_trace(site, tmp_path / "idle")
    workers = [multiprocessing.Process(target=_burn, args=(time.monotonic() + 90,), daemon=True)
               for _ in range(2 * (os.cpu_count() or 2))]
    for worker in workers:
        worker.start()
    try:
        loaded = _flow_trace(site, tmp_path / "loaded", busy_ms=150)
    finally:
        for worker in workers:
            worker.terminate()
            worker.join()
    assert all(step.ok for step in loaded.steps), [(s.index, s.error) for s in loaded.steps if not s.ok]
    assert [(s.action, s.ok, s.observation) for s in loaded.steps] == [(s.action, s.ok, s.observation)
                                                                      for s in idle.steps]
    assert loaded.summary["final_text"] == idle.summary["final_text"]
    assert _shots(tmp_path / "loaded") == _shots(tmp_path / "idle")


def test_the_scripted_actor_takes_its_limits_from_config() -> None:
    from runner.actors.registry import build_actor
    from runner.errors import ConfigError
    from runner.compose import compose as compose_config
    from runner.run.validation import validate_config
    from tests.conftest import REPO_ROOT

    def config(*overrides: str):
        raw = compose_config(["+experiment=floweval-table1", "model=oracle", "actor=scripted", *overrides])
        raw["project_root"] = str(REPO_ROOT)
        return validate_config(raw)

    # The preset's UI-TARS options (actor.options) stay unread; the scripted actor's own section is read.
    actor = build_actor(config("actor.scripted.step_timeout_s=10", "actor.scripted.settle_quiet_ms=300").actor)
    assert isinstance(actor, ScriptedActor)
    assert (actor.settings.step_timeout_s, actor.settings.settle_quiet_ms) == (10.0, 300)
    with pytest.raises(ConfigError, match="actor.scripted.settle_timeout_s"):
        config("actor.scripted.settle_timeout_s=0")


@pytest.mark.browser
def test_a_step_that_navigates_waits_for_the_new_page(site, browse, tmp_path) -> None:
    site.page("next.html", "<!doctype html><html><body><h1>Second page</h1></body></html>")
    url = site.page("first.html", '<!doctype html><html><body><a href="next.html">Next</a></body></html>')
    steps = [{"action": "click", "target": {"role": "link", "name": "Next"}},
             {"action": "wait_for_text", "text": "Second page"}]
    actor = ScriptedActor(ScriptedActorSettings(step_timeout_s=2))
    trace = browse(url, lambda session: actor.act(session, flow_context(tmp_path, url, steps)))
    assert [step.ok for step in trace.steps] == [True, True], [s.error for s in trace.steps]
    assert "Second page" in trace.steps[1].observation and trace.summary["completed"] is True
