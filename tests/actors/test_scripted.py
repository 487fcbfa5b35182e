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
