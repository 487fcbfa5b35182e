"""Frozen evidence packets: everything a judge reads about one slot, written when execution ends.

The generation-and-execution phase freezes one packet per executed slot into its evidence folder
(`packet.json`, beside the files it names: request.json, raw_response.txt, src/, build.log, screenshots,
dom.html, console.json, network.json, trace.json, tool_log.jsonl, state*.json). The packet holds the request,
the assistant text and source files, the build result, the load-time evidence, the actor trace, the page
errors raised after load, the outcomes of the contract's executable checks (when the run's judge asked for
them on the live page), the runtime state, the compact previous turns, the task with its private contract,
what the suite froze for its own scoring (`prepare_judging`: MT-Web2Code's renders), and the pre-verdict record. The judging phase (runner/turns/judging_phase.py) and `python -m runner.rejudge` read only
this; nothing is generated, built or browsed again.

`packet.json` is written last and atomically: its presence marks a slot's execution as finished (resume).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from runner.turns.evidence import Evidence, NetworkRequest, Trace, TraceStep
from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.base import JudgeInput
from runner.turns.records import TurnRecord
from runner.sandbox.base import BuildResult
from runner.turns.tasks import Task

__all__ = ["PACKET_VERSION", "EvidencePacket", "copy_packet_folder", "has_packet", "read_packet",
           "write_packet"]

PACKET_VERSION = 1


@dataclass
class EvidencePacket:
    task: Task
    turn_index: int
    record: TurnRecord  # the pre-verdict record: status and error of execution, usage, timings
    judged: bool  # False: the slot ended before there was anything to judge (blocked, provider_error, ...)
    assistant_text: str = ""
    files: dict[str, str] = field(default_factory=dict)
    build: BuildResult | None = None
    evidence: Evidence | None = None
    trace: Trace | None = None
    page_errors: list[str] = field(default_factory=list)  # raised after load: while the actor (and checks) ran
    checks: dict[str, dict[str, Any]] | None = None  # requirement id -> outcome of its live check
    runtime_state: Any = None
    previous_turns: list[dict[str, Any]] = field(default_factory=list)
    suite_context: dict[str, Any] = field(default_factory=dict)  # the suite's frozen judging material

    @property
    def turn(self):
        return self.task.turn(self.turn_index)

    def judge_input(self, out_dir: Path) -> JudgeInput:
        """What the judge gets: no live page; later page errors and check outcomes from the packet; the tool
        log (the artifact's calls, also those of the live checks) and the runtime state from the evidence."""
        folder = EvidenceFolder(out_dir)
        runtime_state = self.runtime_state if self.runtime_state is not None else folder.read_runtime_state()
        return JudgeInput(
            task=self.task, turn=self.turn, build=self.build or BuildResult(status="infra", log="no build recorded"),
            evidence=self.evidence, trace=self.trace, files=dict(self.files), assistant_text=self.assistant_text,
            out_dir=Path(out_dir), session=None, tool_log=folder.read_tool_log(), runtime_state=runtime_state,
            previous_turns=[dict(p) for p in self.previous_turns], page_errors=list(self.page_errors),
            check_outcomes=dict(self.checks) if self.checks is not None else None,
            suite_context=dict(self.suite_context),
        )

    def to_json(self) -> dict[str, Any]:
        build = None
        if self.build is not None:
            build = asdict(self.build)
            build["dist_dir"] = str(self.build.dist_dir) if self.build.dist_dir else None
        return {
            "version": PACKET_VERSION,
            "task": self.task.model_dump(mode="json"),
            "turn": self.turn_index,
            "record": self.record.model_dump(mode="json"),
            "judged": self.judged,
            "assistant_text": self.assistant_text,
            "files": self.files,
            "build": build,
            "evidence": self.evidence.to_json() if self.evidence is not None else None,
            "trace": self.trace.to_json() if self.trace is not None else None,
            "page_errors": self.page_errors,
            "checks": self.checks,
            "runtime_state": self.runtime_state,
            "previous_turns": self.previous_turns,
            "suite_context": self.suite_context,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], *, where: Path) -> "EvidencePacket":
        if data.get("version") != PACKET_VERSION:
            raise ValueError(f"{where}: packet version {data.get('version')!r}, this runner reads {PACKET_VERSION}")
        build = data.get("build")
        evidence = data.get("evidence")
        trace = data.get("trace")
        return cls(
            task=Task.model_validate(data["task"]),
            turn_index=int(data["turn"]),
            record=TurnRecord.model_validate(data["record"]),
            judged=bool(data["judged"]),
            assistant_text=data.get("assistant_text", ""),
            files=dict(data.get("files") or {}),
            build=_build(build) if build is not None else None,
            evidence=_evidence(evidence) if evidence is not None else None,
            trace=_trace(trace) if trace is not None else None,
            page_errors=list(data.get("page_errors") or []),
            checks=data.get("checks"),
            runtime_state=data.get("runtime_state"),
            previous_turns=list(data.get("previous_turns") or []),
            suite_context=dict(data.get("suite_context") or {}),
        )


def _build(data: dict[str, Any]) -> BuildResult:
    dist = data.get("dist_dir")
    return BuildResult(status=data["status"], log=data.get("log", ""), dist_dir=Path(dist) if dist else None,
                       duration_s=float(data.get("duration_s", 0.0)), rejected=list(data.get("rejected") or []))


def _evidence(data: dict[str, Any]) -> Evidence:
    fields = dict(data)
    fields["network"] = [NetworkRequest(**request) for request in fields.get("network", [])]
    return Evidence(**fields)


def _trace(data: dict[str, Any]) -> Trace:
    fields = dict(data)
    fields["steps"] = [TraceStep(**step) for step in fields.get("steps", [])]
    return Trace(**fields)


def write_packet(directory: Path, packet: EvidencePacket) -> Path:
    return EvidenceFolder(directory).write_packet(packet.to_json())


def has_packet(directory: Path) -> bool:
    return EvidenceFolder(directory).has_packet()


def read_packet(directory: Path) -> EvidencePacket:
    folder = EvidenceFolder(directory)
    return EvidencePacket.from_json(folder.read_packet_json(), where=folder.packet)


def copy_packet_folder(source: Path, target: Path) -> None:
    """The evidence a packet names, into another run's evidence folder (hard links where possible), without
    what the source run's judge wrote and without the build's scratch folder."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(Path(source).iterdir()):
        if entry.name in EvidenceFolder.JUDGE_OUTPUTS or entry.name in EvidenceFolder.NOT_EVIDENCE:
            continue
        destination = target / entry.name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, destination, copy_function=_link_or_copy, dirs_exist_ok=True, symlinks=True)
        elif entry.is_file():
            _link_or_copy(str(entry), str(destination))


def _link_or_copy(source: str, destination: str) -> None:
    if os.path.lexists(destination):
        os.unlink(destination)
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)
