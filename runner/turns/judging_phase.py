"""The judging phase: verdicts from frozen evidence packets, one TurnRecord per slot.

The same code judges a normal run (as packets are frozen, or after the generation phase when the run is
staged) and re-judges a finished run with another judge (`python -m runner.rejudge`). It reads only the
packet and the files beside it, never a live page: nothing is generated, built or browsed.

A slot's final record is its pre-verdict record (execution's status, error, usage, timings) merged with the
verdict: a turn whose page failed at runtime never passes; a judge that cannot decide makes `judge_error`,
one whose answer was cut at its output cap `truncated`;
a failed build keeps its bucket and carries the judge's verdict when there is one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any, Callable

from runner.judges.base import Judge, JudgeError, JudgeTruncated
from runner.models.vllm_server import ServerStartError
from runner.tracking.protocol import RunTracker
from runner.turns.packets import EvidencePacket, read_packet
from runner.turns.evidence_folder import EvidenceFolder
from runner.turns.records import FailureBucket, RunDirectory, TurnRecord, Verdict

log = logging.getLogger(__name__)

__all__ = ["JudgingPhase", "merge_verdict"]


def merge_verdict(packet: EvidencePacket, judged: Verdict | JudgeError, *, judge_name: str) -> TurnRecord:
    """The slot's final record from its pre-verdict record and the judge's answer."""
    record = packet.record.model_copy(deep=True)
    record.judge = judge_name
    build_ok = packet.build is not None and packet.build.ok
    if not build_ok:
        record.verdict = judged if isinstance(judged, Verdict) else None
        record.passed = False
        return record
    scores = dict(judged.scores) if isinstance(judged, Verdict) else {}
    scores.update(packet.record.scores)  # execution's own numbers (the actor's interaction rate) come last
    record.scores = scores
    if isinstance(judged, JudgeError):
        record.status = FailureBucket.TRUNCATED if isinstance(judged, JudgeTruncated) else FailureBucket.JUDGE_ERROR
        if isinstance(judged, JudgeTruncated):
            record.extra["truncated"] = judged.cut  # role, where (reasoning or answer), tokens and the cap
        record.error = str(judged)
        record.passed = None  # undecided, neither a pass nor a model failure: reported as unassessed
        record.verdict = None
        return record
    record.verdict = judged
    record.passed = False if record.status is FailureBucket.RUNTIME_ERROR else judged.passed
    return record


class JudgingPhase:
    """Judges packets with one judge and commits their records (turns.jsonl, tracker, progress)."""

    def __init__(
        self,
        *,
        suite: Any,
        judge: Judge,
        run_dir: RunDirectory,
        tracker: RunTracker,
        judge_calls: int,
        timeout_s: float,
        ensure_judge: Callable[[], Any] | None = None,  # starts the judge's server (lazy); awaited before a call
        on_record: Callable[[TurnRecord], None] | None = None,
    ) -> None:
        self.suite = suite
        self.judge = judge
        self.run_dir = run_dir
        self.tracker = tracker
        self.timeout_s = timeout_s
        self.ensure_judge = ensure_judge
        self.on_record = on_record
        self._limit = asyncio.Semaphore(judge_calls)

    async def judge_packet(self, packet: EvidencePacket, out_dir: Path) -> TurnRecord:
        """The final record of one slot (its verdict.json written into `out_dir`)."""
        if not packet.judged:
            record = packet.record.model_copy(deep=True)
            record.judge = self.judge.name
            return record
        started = time.perf_counter()
        async with self._limit:
            judged = await self._verdict(packet, out_dir)
        record = merge_verdict(packet, judged, judge_name=self.judge.name)
        record.timings["judge"] = time.perf_counter() - started
        record.timings["total"] = record.timings.get("total", 0.0) + record.timings["judge"]
        return record

    async def _verdict(self, packet: EvidencePacket, out_dir: Path) -> Verdict | JudgeError:
        judge_input = packet.judge_input(out_dir)
        try:
            if self.ensure_judge is not None:  # outside the timeout: a checkpoint load is not a slow verdict
                await self.ensure_judge()
            verdict = await asyncio.wait_for(self.suite.judge_turn(self.judge, judge_input), timeout=self.timeout_s)
        except JudgeError as error:
            return error
        except ServerStartError:  # the judge's server cannot start: stop the run with its log (resume re-judges)
            raise
        except TimeoutError:
            return JudgeError(f"{self.judge.name}: no verdict within {self.timeout_s:g} s (turn_timeout_s)")
        except Exception as error:  # the judge's server did not start, a bug: the judge failed, not the model
            log.exception("judging %s turn %s failed", packet.task.id, packet.turn_index)
            return JudgeError(f"{self.judge.name}: {type(error).__name__}: {error}")
        EvidenceFolder(out_dir).write_verdict(verdict.model_dump(mode="json"))  # the final one
        return verdict

    async def commit(self, record: TurnRecord) -> None:
        """Append the record (atomic line), advance the progress display, log it to the tracker."""
        self.run_dir.append(record)
        if self.on_record is not None:
            self.on_record(record)
        try:
            await asyncio.to_thread(self.tracker.log_turn, record, self.run_dir.path)
        except Exception:  # tracking must never lose a slot
            log.exception("tracking failed for %s turn %s", record.task_id, record.turn)

    async def judge_and_commit(self, packet_dir: Path) -> TurnRecord:
        """Judge the packet in `packet_dir` (its verdict written beside it) and commit the record."""
        packet = read_packet(packet_dir)
        record = await self.judge_packet(packet, packet_dir)
        await self.commit(record)
        return record

    async def judge_all(self, packet_dirs: list[Path]) -> None:
        await asyncio.gather(*(self.judge_and_commit(directory) for directory in packet_dirs))
