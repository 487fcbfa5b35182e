"""Hand-made run dirs: records and frozen packets written directly (no generation, build or browser)."""

from __future__ import annotations

import base64
from pathlib import Path

from runner.turns.evidence import Evidence, Trace, TraceStep
from runner.turns.packets import EvidencePacket, write_packet
from runner.turns.records import DimensionScore, FailureBucket, RunDirectory, TurnRecord, Verdict
from runner.sandbox.base import BuildResult
from runner.turns.tasks import Requirement, Task, TurnSpec

# A 1x1 PNG: a real image file for the page to show.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def record(task_id: str, passed: bool | None, *, suite: str = "demo", model: str = "model-a", judge: str = "judge-x",
           actor: str = "probe", mechanism: str | None = None,
           dimensions: dict[str, float | None] | None = None, scores: dict[str, float] | None = None) -> TurnRecord:
    verdict = Verdict(judge=judge, passed=passed, mechanism=mechanism,
                      dimensions={k: DimensionScore(score=v) for k, v in (dimensions or {}).items()})
    return TurnRecord(task_id=task_id, suite=suite, turn=1, status=FailureBucket.OK, passed=passed, verdict=verdict,
                      model=model, judge=judge, actor=actor, scores=scores or {}, model_responded=True)


def write_run(path: Path, records: list[TurnRecord], *, packets: bool = False) -> Path:
    directory = RunDirectory(path)
    for item in records:
        directory.append(item)
        if packets:
            write_slot(directory.evidence_dir(item.task_id, item.turn), item)
    return path


def write_slot(folder: Path, item: TurnRecord) -> EvidencePacket:
    """A frozen packet with every source the ablation knows: code, screenshots, an actor trace, a contract."""
    task = Task(id=item.task_id, suite=item.suite, title=f"Title of {item.task_id}", context="A public context.",
                turns=[TurnSpec(index=1, prompt=f"Build the page of {item.task_id}.",
                                requirements=[Requirement(id="req-1", description="The heading says hello.")],
                                reference_files={"src/App.jsx": "export default () => null"},
                                reference_text="reference", extra={"golden": "private"})],
                extra={"private": True})
    for name in ("screenshot.png", "screenshot_full.png", "final_screenshot.png", "step_00_before.png",
                 "step_00_after.png"):
        (folder / name).write_bytes(PNG)
    (folder / "src").mkdir(exist_ok=True)
    (folder / "src" / "App.jsx").write_text("export default function App() { return <h1>hello</h1> }")
    (folder / "raw_response.txt").write_text("Here it is.\n```jsx\n...\n```")
    (folder / "request.json").write_text('{"messages": [{"role": "user", "content": "Build it."}]}')
    trace = Trace(actor="probe", steps=[TraceStep(index=0, action={"kind": "click", "target": "button"},
                                                  observation="text added: 1", screenshot_before="step_00_before.png",
                                                  screenshot_after="step_00_after.png")])
    trace.save(folder / "trace.json")
    pre_verdict = item.model_copy(update={"verdict": None, "passed": False})
    packet = EvidencePacket(
        task=task, turn_index=1, record=pre_verdict, judged=True, assistant_text="Here is your page.",
        files={"src/App.jsx": "export default function App() { return <h1>hello</h1> }"},
        build=BuildResult(status="ok", log="built"),
        evidence=Evidence(url="http://127.0.0.1:1/", screenshot_full="screenshot_full.png",
                          screenshot_viewport="screenshot.png", final_screenshot_viewport="final_screenshot.png",
                          dom_path="dom.html"),
        trace=trace, checks={"req-1": {"status": "passed"}})
    write_packet(folder, packet)
    return packet
