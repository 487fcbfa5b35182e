"""The UI-TARS actor on a real Chromium page.

The model is the project's scripted OpenAI-compatible server (tests/support/fault_server.py) answering with
recorded UI-TARS-1.5 answers in its native format: no UI-TARS weights are needed, and the request goes through
the real OpenAI provider. What is exercised is ours: the prompt and history layout, parsing and coordinate
mapping with the ui-tars package, executing each action as real input in the page, and the trace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from runner.actors.base import ActorContext
from runner.actors.registry import build_actor
from runner.config import ActorConfig
from runner.turns.evidence import Evidence, Trace
from runner.turns.tasks import Task, TurnSpec
from runner.turns.evidence_folder import EvidenceFolder
from tests.support.fault_server import FaultServer, completion

pytestmark = pytest.mark.browser

# Fixed boxes on a 1920x1080 viewport; every event is logged with its client coordinates (Chromium reports
# whole pixels, truncated).
PAGE = """<!doctype html><html><head><style>
  body { margin: 0; height: 3000px; font: 16px sans-serif; }
  .box { position: absolute; box-sizing: border-box; border: 1px solid #333; }
</style></head><body>
<form id="form" class="box" style="left:100px; top:100px; width:400px; height:40px; border:0">
  <input id="name" aria-label="Name" style="width:400px; height:40px; box-sizing:border-box"></form>
<button id="go" class="box" style="left:600px; top:100px; width:200px; height:40px">Go</button>
<div id="dbl" class="box" style="left:100px; top:300px; width:200px; height:100px">Double</div>
<div id="ctx" class="box" style="left:400px; top:300px; width:200px; height:100px">Menu</div>
<div id="track" class="box" style="left:800px; top:300px; width:600px; height:100px">Drag</div>
<ol id="log" class="box" style="left:100px; top:500px; width:800px"></ol>
<script>
  const log = (text) => { const li = document.createElement('li'); li.textContent = text;
                          document.getElementById('log').appendChild(li); };
  const at = (e) => e.clientX + ',' + e.clientY;
  document.getElementById('form').addEventListener('submit', (e) => {
    e.preventDefault(); log('submitted ' + document.getElementById('name').value); });
  document.getElementById('go').addEventListener('click', (e) => log('go at ' + at(e)));
  document.getElementById('dbl').addEventListener('dblclick', (e) => log('double at ' + at(e)));
  document.getElementById('ctx').addEventListener('contextmenu', (e) => { e.preventDefault(); log('menu at ' + at(e)); });
  let from = null;
  document.getElementById('track').addEventListener('mousedown', (e) => { from = at(e); });
  document.addEventListener('mouseup', (e) => { if (from) log('drag ' + from + ' to ' + at(e)); from = null; });
  document.addEventListener('keydown', (e) => { if (e.ctrlKey && e.key === 'a') { e.preventDefault(); log('select all'); } });
  let scrolled = false;
  window.addEventListener('scroll', () => { if (!scrolled) { scrolled = true; setTimeout(() => log('scrolled ' + window.scrollY), 50); } });
</script></body></html>"""


def model_point(x: float, y: float) -> str:
    """Where UI-TARS would point at page pixel (x, y): on its 1932x1092 resize of the 1920x1080 screenshot."""
    return f"({round(x * 1932 / 1920)},{round(y * 1092 / 1080)})"


def landed(x: float, y: float) -> str:
    """Where that answer lands on the page: the model's point times 1920/1932 and 1080/1092, in the whole
    client pixels the page's events report."""
    return f"{int(round(x * 1932 / 1920) * 1920 / 1932)},{int(round(y * 1092 / 1080) * 1080 / 1092)}"


ANSWERS = [
    f"Thought: Click the name field first.\nAction: click(start_box='<|box_start|>{model_point(300, 120)}<|box_end|>')",
    "Thought: Enter the name and submit it.\nAction: type(content='Ada\\n')",
    "I should now press the Go button.",  # malformed: no Action line, retried
    f"Thought: Press Go.\nAction: click(start_box='{model_point(700, 120)}')",
    f"Thought: Open the double-click box.\nAction: left_double(start_box='{model_point(200, 350)}')",
    f"Thought: Open its menu.\nAction: right_single(start_box='{model_point(500, 350)}')",
    f"Thought: Drag along the track.\nAction: drag(start_box='{model_point(850, 350)}', end_box='{model_point(1250, 350)}')",
    "Thought: Select everything.\nAction: hotkey(key='ctrl a')",
    f"Thought: Look further down.\nAction: scroll(start_box='{model_point(960, 540)}', direction='down')",
    "Thought: Let the page settle.\nAction: wait()",
    "Thought: Everything worked.\nAction: finished(content='all done')",
]


class Recorded:
    def __init__(self, answers: list[str]) -> None:
        self.answers, self.count = answers, 0

    def __call__(self, messages: list[dict[str, Any]]) -> tuple[int, str]:
        answer = self.answers[min(self.count, len(self.answers) - 1)]
        self.count += 1
        return 200, completion(answer)


def context_for(out_dir: Path, url: str) -> ActorContext:
    turn = TurnSpec(index=1, prompt="A form page.", requirements=[])
    task = Task(id="form", suite="floweval", title="Form", turns=[turn])
    return ActorContext(task=task, turn=turn, evidence=Evidence(url=url), out_dir=out_dir,
                        instructions="Submit the name Ada, then try every control.")


def actor_for(server: FaultServer, limits: dict[str, Any] | None = None, **options: Any) -> Any:
    model = {"provider": "openai", "model": "ui-tars", "base_url": server.base_url, "vision": True,
             "temperature": 0.7, "max_retries": 0, "cache": False, "timeout_s": 10, "limits": limits or {}}
    return build_actor(ActorConfig(name="ui-tars", kind="uitars",
                                   options={"model": model, "settle_ms": 100, "wait_s": 0.1, "history_images": 3,
                                            **options}))


def images(request: dict[str, Any]) -> list[str]:
    return [part["image_url"]["url"] for message in request["messages"] if isinstance(message["content"], list)
            for part in message["content"] if part.get("type") == "image_url"]


def test_recorded_answers_drive_the_page_and_the_trace(site, browse, tmp_path: Path) -> None:
    url = site.page("form.html", PAGE)
    runs: dict[str, Any] = {}

    async def body(session) -> None:
        for name, answers in (("full", ANSWERS), ("garbled", ["no action here", "Action: fly()", "still nothing"])):
            with FaultServer(Recorded(answers)) as server:
                # The full run's server takes 2 images per prompt: fewer than history_images (3).
                actor = actor_for(server, {"images_per_prompt": 2} if name == "full" else None)
                try:
                    trace = await actor.act(session, context_for(tmp_path / name, url))
                finally:
                    await actor.aclose()
                runs[name] = (trace, list(server.requests))
        runs["viewport_after"] = session.page.viewport_size

    browse(url, body)
    trace, requests = runs["full"]
    out = tmp_path / "full"
    assert isinstance(trace, Trace) and trace.actor == "ui-tars"
    kinds = [step.action["kind"] for step in trace.steps]
    assert kinds == ["click", "type", "click", "left_double", "right_single", "drag", "hotkey", "scroll", "wait",
                     "finished"]
    assert all(step.ok for step in trace.steps), [step.error for step in trace.steps]
    assert trace.finished and trace.claim == "all done" and trace.summary["stop_reason"] == "finished by the actor"

    # Every action reached the page where it was aimed (the page logs rounded client coordinates).
    log = trace.summary["final_text"]
    expected = ["submitted Ada", f"go at {landed(700, 120)}", f"double at {landed(200, 350)}",
                f"menu at {landed(500, 350)}", f"drag {landed(850, 350)} to {landed(1250, 350)}", "select all",
                "scrolled 500"]
    assert expected[1] == "go at 699,119"  # 704*1920/1932 = 699.6, 121*1080/1092 = 119.7
    positions = [log.find(line) for line in expected]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), log

    # The trace convention: the screenshot the model saw, the visible text at that moment, the parsed action.
    for step in trace.steps:
        with Image.open(out / step.screenshot_before) as shot:
            assert shot.size == (1920, 1080)  # the full-screen viewport
        assert step.screenshot_after and (out / step.screenshot_after).exists()
        assert step.action["raw"].startswith("Thought:")
    assert "go at" not in trace.steps[2].observation and "submitted Ada" in trace.steps[2].observation
    assert expected[1] in trace.steps[3].observation
    assert trace.steps[0].action["point"] == pytest.approx([302 * 1920 / 1932, 121 * 1080 / 1092], abs=1e-3)
    assert trace.steps[1].action["content"] == "Ada\n" and trace.steps[1].dom_changed is True
    assert trace.steps[2].action["rejected"][0]["error"] == "no 'Action:' line"
    assert trace.summary["final_screenshot"] and (out / trace.summary["final_screenshot"]).exists()
    assert trace.summary["model_image_size"] == [1932, 1092]
    assert json.loads((out / "trace.json").read_text())["summary"]["final_text"] == log

    # Requests: the native layout, at most min(history_images, the server's images per prompt) screenshots, the
    # current one last; the correction turn of the retry is not carried into later steps.
    assert len(requests) == len(ANSWERS)
    retry, after = requests[3], requests[4]
    assert max(len(images(request)) for request in requests) == 2
    records = EvidenceFolder(out).read_request_records(judging=False)
    assert [record["step"] for record in records] == list(range(len(trace.steps)))
    assert records[-1]["history_images"] == {"configured": 3, "sent_at_most": 2, "why": "the server's images per prompt"}
    assert records[-1]["images_sent"] == 2 and records[-1]["role"] == "actor"
    for request in requests:
        assert request["temperature"] == 0.7
        assert 1 <= len(images(request)) <= 2
        if request is not retry:
            assert request["messages"][-1]["content"][0]["type"] == "image_url"
        assert "## User Instruction\nSubmit the name Ada" in request["messages"][1]["content"]
    assert "could not be executed: no 'Action:' line" in retry["messages"][-1]["content"]
    assert all("I should now press" not in str(message["content"]) for message in after["messages"])
    assert [m["content"] for m in after["messages"] if m["role"] == "assistant"] == [ANSWERS[0], ANSWERS[1], ANSWERS[3]]

    # All attempts malformed: recorded, the trace stops unfinished, the slot goes on.
    garbled, garbled_requests = runs["garbled"]
    assert len(garbled_requests) == 3 and not garbled.finished
    (step,) = garbled.steps
    assert step.action["kind"] == "invalid_action" and not step.ok
    assert [r["error"] for r in step.action["rejected"]][1].startswith("fly() is not in the action space")
    assert garbled.summary["stop_reason"] == "the model returned no valid action"
    assert runs["viewport_after"] == {"width": 1280, "height": 800}  # the pool's viewport is restored
