"""The episode/turn loop: concurrency, requested-slot accounting, phases and resume.

Turns of one episode run in order; episodes run concurrently. Separate semaphores bound model calls,
builds, browsers and judge calls. Executing a slot (generate, parse, build, serve, evidence, actor, the
contract's live checks when the judge wants them) ends by freezing its evidence packet (runner/turns/packets.py);
the verdict comes from the packet in the judging phase (runner/turns/judging_phase.py): as soon as the packet is frozen
(`together`) or after every slot was executed and the generation servers stopped (`staged`). The next turn
never waits for a verdict: its payload uses evidence only. Every requested slot ends as exactly one
TurnRecord, appended to turns.jsonl once judged; a slot already recorded (resume) is never run or counted
again, and one whose packet is frozen is only judged.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import traceback
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

from runner.actors.base import Actor, ActorContext
from runner.browser.capture import (capture_evidence, capture_final_state, evidence_summary,
                                    note_visit_failure, write_visit_logs)
from runner.browser.launch import BrowserLost, BrowserPool, BrowserPools
from runner.errors import ConfigError
from runner.config import RunnerConfig
from runner.turns.evidence import Evidence, Trace
from runner.turns.evidence_folder import EvidenceFolder, refused_files
from runner.turns.generation import BuildCheck, Generation, GenerationStrategy, PagePreview
from runner.turns.preview import preview_build
from runner.judges.base import Judge, JudgeInput
from runner.turns.judging_phase import JudgingPhase
from runner.models.fitting import fit_for_model
from runner.models.base import ChatAnswer, GenerationRequest, Model, ModelResponse, ProviderError
from runner.models.parse import InvalidOutput, ParsedOutput, parse_model_output
from runner.turns.packets import EvidencePacket, has_packet, read_packet, write_packet
from runner.turns.records import (FailureBucket, ModelCall, RunDirectory, StorageFullError, TurnRecord, is_storage_full,
                            storage_full)
from runner.sandbox.base import BuildResult, ConfinedCommand, Sandbox
from runner.sandbox.isolation import RunOutcome
from runner.tracking.protocol import RunTracker
from runner.suites.base import CompactTurn, EpisodeState, Suite
from runner.turns.tasks import Task, TurnSpec

log = logging.getLogger(__name__)

STAGES = ("all", "generate", "judge")


class StageError(ConfigError):
    """`run.stage=judge` on a run dir whose execution is not finished (names what is missing)."""


@dataclass
class Services:
    """The shared services a run composes; suites never rebuild these themselves."""

    model: Model
    sandbox: Sandbox
    actor: Actor | None
    judge: Judge
    browsers: BrowserPools  # the suite's context holds the same set
    tracker: RunTracker  # MLflow's, or the null tracker when tracking is off


@dataclass
class SlotLimits:
    """The run's bounds on concurrent episodes, model calls, builds and judge calls (config `concurrency`);
    every slot executed against one set shares them (a run's episodes, the reward service's calls)."""

    episodes: asyncio.Semaphore
    model: asyncio.Semaphore
    builds: asyncio.Semaphore
    judge: asyncio.Semaphore

    @classmethod
    def of(cls, concurrency: Any) -> "SlotLimits":
        return cls(
            episodes=asyncio.Semaphore(concurrency.episodes),
            model=asyncio.Semaphore(concurrency.model_calls),
            builds=asyncio.Semaphore(concurrency.builds),
            judge=asyncio.Semaphore(concurrency.judge_calls),
        )


@dataclass
class _TurnOutcome:
    record: TurnRecord
    files: dict[str, str] = field(default_factory=dict)
    assistant_text: str = ""
    ui_text: str = ""
    has_artifact: bool = False
    runtime_state: Any = None
    packet: EvidencePacket | None = None  # None: nothing to judge (blocked, provider_error, invalid_output, ...)


@dataclass
class _Visit:
    """What one slot's browser visit left for scoring."""

    evidence: Evidence
    trace: Trace | None
    carried_state: Any
    checks: dict[str, dict[str, Any]] | None
    page_errors: list[Any]


@dataclass
class _ModelProgress:
    """How far the generation call of a slot got, kept outside the turn coroutine so a whole-turn
    timeout or a harness failure after the model answered still records the answer (EvoGenUI-Bench
    §4.3: e = 0 only for provider failures)."""

    call: ModelCall = ModelCall.NOT_CALLED
    assistant_text: str = ""


def _save_episode_state(folder: EvidenceFolder, outcome: _TurnOutcome, episode: EpisodeState) -> None:
    """Persist what the next turn needs, so a resumed run continues the episode exactly: the turn's own
    outcome, and the whole episode state after it (history, suite bookkeeping in `extra`, e.g. which
    turn produced the payload's source files), from which a resume restarts."""
    folder.write_episode_state(
        {
            "files": outcome.files,
            "assistant_text": outcome.assistant_text,
            "ui_text": outcome.ui_text,
            "has_artifact": outcome.has_artifact,
            "runtime_state": outcome.runtime_state,
            "episode": {
                "files": episode.files,
                "history": [vars(item) for item in episode.history],
                "has_artifact": episode.has_artifact,
                "runtime_state": episode.runtime_state,
                "extra": episode.extra,
            },
        },
    )


def _restore_episode(saved: dict[str, Any], episode: EpisodeState) -> None:
    """Replace `episode` with the state saved after a recorded turn."""
    episode.files = dict(saved["files"])
    episode.history = [CompactTurn(**item) for item in saved["history"]]
    episode.has_artifact = bool(saved["has_artifact"])
    episode.runtime_state = saved["runtime_state"]
    episode.extra = dict(saved["extra"])


class Engine:
    def __init__(
        self,
        config: RunnerConfig,
        suite: Suite,
        services: Services,
        run_dir: RunDirectory,
        *,
        on_record: Callable[[TurnRecord], None] | None = None,
        ensure_generation: Callable[[], Any] | None = None,  # starts the generator's and actor's servers (lazy)
        ensure_judge: Callable[[], Any] | None = None,  # starts the judge's server (lazy)
        generation: GenerationStrategy | None = None,  # None: the suite's own (suite.generation)
        page_files: bool = True,  # False: no load-time screenshots or DOM file unless an actor runs (lean evidence)
    ) -> None:
        self.config = config
        self.page_files = page_files
        self.suite = suite
        self.services = services
        self.run_dir = run_dir
        self.on_record = on_record
        self.ensure_generation = ensure_generation
        self.judging = JudgingPhase(
            suite=suite, judge=services.judge, run_dir=run_dir, tracker=services.tracker,
            judge_calls=config.concurrency.judge_calls, timeout_s=config.turn_timeout_s,
            ensure_judge=ensure_judge, on_record=on_record,
        )
        self._on_packet: Callable[[Path], None] | None = None
        self.generation: GenerationStrategy = generation or suite.generation_strategy()

    def _frozen_unjudged(self, tasks: list[Task]) -> list[Path]:
        """Evidence folders whose packet is frozen but whose slot has no record yet, in slot order."""
        recorded = {record.slot for record in self.run_dir.load_records()}
        return [
            self.run_dir.evidence_dir(task.id, turn.index)
            for task in tasks for turn in task.turns
            if (task.id, turn.index) not in recorded and has_packet(self.run_dir.evidence_dir(task.id, turn.index))
        ]

    async def run(self, tasks: list[Task], *, staged: bool = False, stage: str = "all",
                  between_phases: Callable[[], Any] | None = None) -> list[TurnRecord]:
        """Execute and judge every slot. `staged`: judge only after all slots are executed and
        `between_phases` (stop the generation servers) has run. `stage`: `generate` executes only,
        `judge` judges only (every slot must be executed already)."""
        if stage not in STAGES:
            raise ValueError(f"run.stage = {stage!r}: choose one of {', '.join(STAGES)}")
        if stage == "judge":
            missing = [f"{task.id} turn {turn.index}" for task in tasks for turn in task.turns
                       if not has_packet(self.run_dir.evidence_dir(task.id, turn.index))]
            if missing:
                raise StageError(
                    f"run.stage=judge: {len(missing)} slot(s) of {self.run_dir.path} have no frozen evidence packet "
                    f"(e.g. {missing[0]}); run run.stage=generate (or run.stage=all) on this run dir first"
                )
        else:
            pending: list[asyncio.Task[TurnRecord]] = []
            if stage == "all" and not staged:
                # Together: a slot is judged as soon as its packet is frozen; episodes never wait for it.
                for directory in self._frozen_unjudged(tasks):  # frozen by an earlier, killed run
                    pending.append(asyncio.create_task(self.judging.judge_and_commit(directory)))
                self._on_packet = lambda directory: pending.append(
                    asyncio.create_task(self.judging.judge_and_commit(directory)))
            try:
                await self._execute(tasks)
            finally:
                self._on_packet = None
            if pending:
                await asyncio.gather(*pending)
            if stage == "generate":
                return self.run_dir.load_records()
        if between_phases is not None:
            await between_phases()
        await self.judging.judge_all(self._frozen_unjudged(tasks))
        return self.run_dir.load_records()

    async def _execute(self, tasks: list[Task]) -> None:
        """The generation-and-execution phase: every slot without a record or a packet is executed."""
        done = {record.slot: record for record in self.run_dir.load_records()}
        limits = SlotLimits.of(self.config.concurrency)
        await asyncio.gather(*(self._run_episode(task, done, limits) for task in tasks))

    # -- episode -----------------------------------------------------------------------------------

    async def _run_episode(self, task: Task, done: dict[tuple[str, int], TurnRecord], limits: SlotLimits) -> None:
        async with limits.episodes:
            episode = EpisodeState()
            for turn in task.turns:
                evidence_dir = self.run_dir.evidence_dir(task.id, turn.index)
                folder = EvidenceFolder(evidence_dir)
                previous = done.get((task.id, turn.index))
                if previous is None and folder.has_packet():  # executed earlier, not judged yet
                    previous = read_packet(evidence_dir).record
                if previous is not None:
                    self._restore_turn(task, turn, previous, episode)
                    continue
                await self.execute_slot(task, turn, episode, limits)
                if self._on_packet is not None:
                    self._on_packet(evidence_dir)

    async def execute_slot(self, task: Task, turn: TurnSpec, episode: EpisodeState, limits: SlotLimits) -> Path:
        """Execute one slot into its evidence folder (emptied of a killed attempt's files first), advance
        `episode` past it and freeze its packet, the slot's last file. Returns the evidence folder."""
        evidence_dir = self.run_dir.evidence_dir(task.id, turn.index)
        folder = EvidenceFolder(evidence_dir)
        folder.clear_unfinished()  # a killed attempt's files: this execution writes its own
        outcome = await self._run_slot(task, turn, episode, limits)
        self._advance(turn, outcome, episode)
        _save_episode_state(folder, outcome, episode)
        packet = outcome.packet or EvidencePacket(
            task=task, turn_index=turn.index, record=outcome.record, judged=False,
            assistant_text=outcome.assistant_text, files=outcome.files,
        )
        write_packet(evidence_dir, packet)  # last: its presence marks the slot as executed
        folder.prune_workspace()  # the build's scratch sources: src/ holds the one copy
        return evidence_dir

    def _restore_turn(self, task: Task, turn: TurnSpec, record: TurnRecord, episode: EpisodeState) -> None:
        saved = EvidenceFolder(self.run_dir.evidence_dir(task.id, turn.index)).read_episode_state()
        if isinstance(saved.get("episode"), dict):
            _restore_episode(saved["episode"], episode)
            return
        outcome = _TurnOutcome(
            record=record,
            files=saved.get("files", {}),
            assistant_text=saved.get("assistant_text", ""),
            ui_text=saved.get("ui_text", ""),
            has_artifact=saved.get("has_artifact", False),
            runtime_state=saved.get("runtime_state"),
        )
        self._advance(turn, outcome, episode)

    @staticmethod
    def _advance(turn: TurnSpec, outcome: _TurnOutcome, episode: EpisodeState) -> None:
        if outcome.record.status is FailureBucket.BLOCKED:
            episode.has_artifact = False
            return
        if outcome.files:
            episode.files = outcome.files
        episode.has_artifact = outcome.has_artifact
        if outcome.runtime_state is not None:
            episode.runtime_state = outcome.runtime_state
        if outcome.record.model_responded:
            episode.history.append(
                CompactTurn(turn=turn.index, request=turn.prompt, assistant_text=outcome.assistant_text, ui_text=outcome.ui_text)
            )

    # -- slot --------------------------------------------------------------------------------------

    def _new_record(self, task: Task, turn: TurnSpec, status: FailureBucket, **fields: Any) -> TurnRecord:
        return TurnRecord(
            task_id=task.id,
            suite=task.suite,
            sub_suite=task.sub_suite,
            turn=turn.index,
            status=status,
            evidence_dir=str(self.run_dir.evidence_dir(task.id, turn.index).relative_to(self.run_dir.path)),
            model=self.services.model.name,
            judge=self.services.judge.name,
            actor=self.services.actor.name if self.services.actor else "none",
            **fields,
        )

    async def _run_slot(self, task: Task, turn: TurnSpec, episode: EpisodeState, limits: SlotLimits) -> _TurnOutcome:
        if turn.index > 1 and turn.requires_previous_artifact and not episode.has_artifact:
            record = self._new_record(task, turn, FailureBucket.BLOCKED, error="the previous turn left no artifact",
                                      model_call=ModelCall.NOT_CALLED)
            return _TurnOutcome(record=record, files=episode.files)
        if self.ensure_generation is not None:  # before the turn's clock: a checkpoint load is not a slow turn
            await self.ensure_generation()
        started = time.perf_counter()
        progress = _ModelProgress()
        try:
            return await asyncio.wait_for(self._run_turn(task, turn, episode, limits, progress),
                                          timeout=self.config.turn_timeout_s)
        except TimeoutError:
            if progress.call is ModelCall.NOT_CALLED:  # the turn limit cut the generation call itself
                progress.call = ModelCall.NO_RESPONSE
            record = self._new_record(task, turn, FailureBucket.TIMEOUT, error=f"turn exceeded {self.config.turn_timeout_s}s",
                                      model_call=progress.call, model_responded=progress.call is ModelCall.ANSWERED)
        except Exception as error:  # the harness failed, not the model: infra, reported separately
            if isinstance(error, StorageFullError):
                raise
            if isinstance(error, OSError) and is_storage_full(error):  # every later slot would fail alike: stop
                raise storage_full(Path(error.filename or self.run_dir.path), error) from error
            log.exception("infra failure in %s turn %s", task.id, turn.index)
            record = self._new_record(
                task, turn, FailureBucket.INFRA, error=f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=5)}",
                model_call=progress.call, model_responded=progress.call is ModelCall.ANSWERED,
            )
        record.timings["total"] = time.perf_counter() - started
        return _TurnOutcome(record=record, files=episode.files, assistant_text=progress.assistant_text)

    async def _run_turn(self, task: Task, turn: TurnSpec, episode: EpisodeState, limits: SlotLimits,
                        progress: _ModelProgress) -> _TurnOutcome:
        timings: dict[str, float] = {}
        evidence_dir = self.run_dir.evidence_dir(task.id, turn.index)
        folder = EvidenceFolder(evidence_dir)
        total_start = time.perf_counter()

        def record(status: FailureBucket, **fields: Any) -> TurnRecord:
            timings["total"] = time.perf_counter() - total_start
            return self._new_record(task, turn, status, timings=timings, **fields)

        # 1. Generate (public payload only), by the suite's generation strategy (one or more rounds).
        messages = await self.suite.messages(task, turn, episode)
        folder.write_request(messages)

        call = self._model_call(task, turn, folder, limits, progress)
        tools = _SlotTools(self, task, turn, folder, limits, episode, progress)
        start = time.perf_counter()
        try:
            generation = await self.generation.generate(messages, call, tools)
        except (ProviderError, TimeoutError) as error:
            timings["model"] = time.perf_counter() - start
            progress.call = ModelCall.NO_RESPONSE
            extra = dict(error.extra) if isinstance(error, ProviderError) else {}
            return _TurnOutcome(record=record(FailureBucket.PROVIDER_ERROR, error=str(error) or "model timed out",
                                              model_call=ModelCall.NO_RESPONSE, extra=extra), files=episode.files)
        timings["model"] = time.perf_counter() - start
        progress.call = ModelCall.ANSWERED
        response = generation.final
        usage = generation.usage
        _write_generation(folder, generation, payload=messages)
        # The strategy's last build is the answer's when it checked this very answer: never built twice.
        checked = tools.last if tools.last is not None and tools.last.text == (response.text or "") else None
        if generation.answer is not None:  # an agent's files: its last build reused where it built exactly these
            checked = tools.last if tools.last is not None and tools.last.build is not None \
                and tools.last.files == generation.answer.files else None
        builds = generation.builds
        generation_extra = {"strategy": generation.strategy, "rounds": len(generation.rounds), "builds": builds}
        cut = response.cut_record()
        if cut is not None:  # the answer ended by its output cap: named, whatever the build makes of it
            generation_extra["truncated"] = {"role": "generator", **cut}
        record_extra = {"generation": generation_extra, **generation.extra}

        # 2. Parse the output contract (an agent's answer is its workspace's files).
        try:
            if generation.answer is not None:
                if not generation.answer.files:
                    raise InvalidOutput("the agent left no answer in its workspace (no source files)")
                parsed = generation.answer
            else:
                parsed = checked.parsed if checked is not None and checked.parsed is not None \
                    else parse_model_output(response.text)
        except InvalidOutput as error:
            if checked is None:
                builds.append(False)  # the answer never reached a build
            return _TurnOutcome(
                # An empty or unparsable answer is still a response: countable, p = 0 (EvoGenUI-Bench §4.3).
                record=record(FailureBucket.INVALID_OUTPUT, usage=usage, model_responded=True,
                              error=(f"the answer was cut at its output cap ({cut['completion_tokens']} of "
                                     f"{cut['max_tokens']} tokens): {error.reason}" if cut else error.reason),
                              model_call=ModelCall.ANSWERED, extra=record_extra),
                files=episode.files,
            )
        outcome = _TurnOutcome(
            record=record(FailureBucket.OK), files=parsed.files, assistant_text=parsed.assistant_text
        )
        progress.assistant_text = parsed.assistant_text

        # 3. Build in the sandbox (unless the strategy's last check built this answer already).
        if checked is not None and checked.build is not None:
            build = checked.build
            timings["build"] = build.duration_s
        else:
            start = time.perf_counter()
            build = await self._build(task, turn, parsed.files, folder, limits)
            timings["build"] = time.perf_counter() - start
            builds.append(build.ok)
        folder.write_build_log(build.log)
        if build.status == "rejected":  # vetted and refused: kept only as the (capped) raw response
            outcome.files = episode.files
        else:
            folder.write_sources(parsed.files)
        common: dict[str, Any] = {"usage": usage, "model_responded": True, "model_call": ModelCall.ANSWERED,
                                  "extra": {"build_status": build.status, **record_extra}}
        if not build.ok:
            bucket = {
                "timeout": FailureBucket.TIMEOUT,
                "infra": FailureBucket.INFRA,
            }.get(build.status, FailureBucket.BUILD_FAILED)
            reason = "; ".join(build.rejected) or build.log[-2000:]
            outcome.record = record(bucket, error=reason, **common)
            outcome.packet = self._packet(task, turn, outcome, parsed, build, episode)
            return outcome

        # 4. Serve, observe, act, judge: all inside one browser context on the served artifact.
        visit = await self._visit(task, turn, episode, build, parsed, folder, limits, timings)
        evidence, trace, carried_state = visit.evidence, visit.trace, visit.carried_state

        outcome.has_artifact = True
        outcome.ui_text = evidence.visible_text
        outcome.runtime_state = carried_state
        scores: dict[str, float] = {}
        if trace is not None and trace.summary.get("interaction_rate") is not None:
            scores["interaction_rate"] = float(trace.summary["interaction_rate"])
            if "probe_mode" in trace.summary:  # which probe produced the IR (I-WebGenBench App. B.1 or benchmark)
                common["extra"]["probe_mode"] = trace.summary["probe_mode"]
        runtime_failed = bool(evidence.load_error) or evidence.blank
        status = FailureBucket.RUNTIME_ERROR if runtime_failed else FailureBucket.OK
        error = evidence.load_error or ("blank page" if evidence.blank else "")
        outcome.record = record(status, scores=scores, error=error, **common)
        # The suite's scoring material, frozen now: judging never browses.
        suite_context = await self.suite.prepare_judging(task, turn, parsed.files, evidence_dir)
        outcome.packet = self._packet(task, turn, outcome, parsed, build, episode, evidence=evidence, trace=trace,
                                      page_errors=visit.page_errors, checks=visit.checks,
                                      runtime_state=carried_state, suite_context=suite_context)
        return outcome

    def _model_call(self, task: Task, turn: TurnSpec, folder: EvidenceFolder, limits: SlotLimits,
                    progress: _ModelProgress) -> Callable[[list[dict[str, Any]]], Awaitable[ModelResponse]]:
        """One generation round's call to the generator, as the generation strategy makes it."""
        rounds = iter(range(1_000_000))

        async def call(round_messages: list[dict[str, Any]]) -> ModelResponse:
            # The payload is checked against the generator's server, never cut (the model must see all of its
            # source): images beyond its limit are fitted, an estimate over its context is recorded and logged.
            fitted = await asyncio.to_thread(fit_for_model, self.services.model, round_messages, overflow="record")
            folder.append_request_record({"role": "generator", "round": next(rounds), "sample": turn.sample,
                                          **fitted.record}, judging=False)
            if fitted.record.get("fits") is False:
                log.warning("%s turn %s: the payload needs about %s prompt tokens (estimated), over the generator's "
                            "budget of %s", task.id, turn.index, fitted.record["estimated_prompt_tokens"],
                            fitted.record["prompt_budget_tokens"])
            async with limits.model:
                answer = await asyncio.wait_for(
                    self.services.model.generate(GenerationRequest(task_id=task.id, turn=turn.index,
                                                                   messages=fitted.messages, sample=turn.sample)),
                    timeout=self.config.model_timeout_s,
                )
            progress.call = ModelCall.ANSWERED  # a turn cut later (a repair round, its build) still had an answer
            return answer

        return call

    async def _visit(self, task: Task, turn: TurnSpec, episode: EpisodeState, build: BuildResult,
                     parsed: ParsedOutput, folder: EvidenceFolder, limits: SlotLimits,
                     timings: dict[str, float]) -> _Visit:
        """The built artifact served, loaded, captured, acted on and checked live, in one browser session."""
        evidence_dir = folder.path
        bridge = self.suite.tool_bridge(task, turn, episode, evidence_dir)
        async with self.services.browsers.checkout() as pool:
            async with _browser_loss_is_infra(pool), AsyncExitStack() as stack:
                start = time.perf_counter()
                served = await stack.enter_async_context(self.services.sandbox.serve(
                    build.dist_dir, tool_bridge=bridge, network=pool.network_namespace))
                # The trace (browser.record_trace) spans load, actor and live checks: all happen in this session.
                session = await stack.enter_async_context(pool.session(
                    served.url, trace_path=folder.browser_trace, trace_title=f"{task.id} turn {turn.index}"))
                timings["serve"] = time.perf_counter() - start
                start = time.perf_counter()
                acts = self.services.actor is not None and self.suite.actor_on_slot_page  # actors look at the shots
                evidence = await capture_evidence(session, evidence_dir, page_files=self.page_files or acts)
                timings["evidence"] = time.perf_counter() - start
                trace: Trace | None = None
                try:  # the visit's logs are evidence also when the actor fails
                    if self.services.actor is not None and self.suite.actor_on_slot_page and not evidence.load_error:
                        start = time.perf_counter()
                        context = ActorContext(task=task, turn=turn, evidence=evidence, out_dir=evidence_dir,
                                               tool_names=sorted(task.extra.get("tools", {})),
                                               instructions=self.suite.actor_instructions, page_as_loaded=True)
                        trace = await self.services.actor.act(session, context)  # the actor writes trace.json
                        timings["actor"] = time.perf_counter() - start
                        # The judge sees the page the actor left (EvoGenUI-Bench §4.2 "final DOM and screenshot").
                        await capture_final_state(session, evidence_dir, evidence)
                finally:
                    await session.watch_first_load()  # a page leaving or hanging early is seen wherever it runs
                    await write_visit_logs(session, evidence_dir, evidence)
                # The state the user's interactions left is what carries over; the judge's own check
                # calls happen after this snapshot and never leak into the next turn.
                carried_state = self._read_runtime_state(bridge)
                if carried_state is not None:
                    folder.write_state_carried(carried_state)
                # Whether the page left its artifact or stopped answering is read over the whole visit: after the
                # actor (a failure then spares the checks) and after the checks' reloads.
                failed = note_visit_failure(session, evidence)
                checks = await self._live_checks(task, turn, build, evidence, trace, parsed, folder, session,
                                                 limits, timings, runtime_state=carried_state)
                failed = note_visit_failure(session, evidence) or failed
                if failed and (evidence_dir / EvidenceFolder.EVIDENCE).is_file():
                    folder.write_json(EvidenceFolder.EVIDENCE, evidence_summary(evidence), replace=True)
                page_errors = list(session.page_errors)
        return _Visit(evidence=evidence, trace=trace, carried_state=carried_state, checks=checks,
                      page_errors=page_errors)

    async def _build(self, task: Task, turn: TurnSpec, files: dict[str, str], folder: EvidenceFolder,
                     limits: SlotLimits) -> BuildResult:
        """The slot's files built in its workspace (each build replaces the last one there)."""
        # A suite that names its own web template (EvoGenUI-Bench's scaffold) builds in it.
        async with limits.builds:
            return await self.services.sandbox.build(
                files, folder.workspace, kind=self.suite.artifact_kind,
                assets_dir=self.suite.artifact_assets(task, turn), template=self.suite.web_template,
            )

    def _packet(self, task: Task, turn: TurnSpec, outcome: _TurnOutcome, parsed, build: BuildResult,
                episode: EpisodeState, **observed: Any) -> EvidencePacket:
        """Freeze what the judge will read; `previous_turns` is the history as this turn saw it."""
        # A refused answer is kept once, capped (raw_response.txt): the packet names its files, nothing more.
        files = refused_files(parsed.files) if build.status == "rejected" else dict(parsed.files)
        return EvidencePacket(
            task=task, turn_index=turn.index, record=outcome.record, judged=True,
            assistant_text=parsed.assistant_text, files=files, build=build,
            previous_turns=[vars(previous) for previous in episode.history], **observed,
        )

    async def _live_checks(self, task: Task, turn: TurnSpec, build: BuildResult, evidence: Evidence,
                           trace: Trace | None, parsed, folder: EvidenceFolder, session, limits: SlotLimits,
                           timings: dict[str, float], *, runtime_state: Any) -> dict[str, dict[str, Any]] | None:
        """The contract's executable checks on the live page, for a judge that decides from them (rules)."""
        judge = self.services.judge
        if not judge.wants_live_checks or not any(r.check for r in turn.requirements):
            return None
        start = time.perf_counter()
        judge_input = JudgeInput(
            task=task, turn=turn, build=build, evidence=evidence, trace=trace, files=parsed.files,
            assistant_text=parsed.assistant_text, out_dir=folder.path, session=session,
            tool_log=folder.read_tool_log(), runtime_state=runtime_state,
            page_as_loaded=trace is None,  # no actor ran: only the evidence capture read the page since its load
        )
        try:
            async with limits.judge:
                return await judge.run_live_checks(judge_input)
        finally:
            timings["checks"] = time.perf_counter() - start

    @staticmethod
    def _read_runtime_state(bridge) -> Any:
        if bridge is None or not Path(bridge.state_out).exists():
            return None
        try:
            return json.loads(Path(bridge.state_out).read_text())
        except ValueError:
            return None


@asynccontextmanager
async def _browser_loss_is_infra(pool: BrowserPool) -> AsyncIterator[None]:
    """A browser that died or disconnected during the block (killed, crashed) failed the harness, not the
    artifact: whatever the capture recorded (a failed navigation, a crashed check) the slot is infra."""
    try:
        yield
    except Exception as error:
        if await pool.lost_after_round_trip():
            raise BrowserLost(f"the browser died or disconnected during the turn: {type(error).__name__}: {error}") \
                from error
        raise
    if await pool.lost_after_round_trip():
        raise BrowserLost("the browser died or disconnected during the turn")


class _SlotTools:
    """The GenerationTools of one slot: the engine's own parse and build, in the slot's workspace, and what an agent
    borrows besides (the model's raw chat, a look at a built page, a confined command, the evidence folder)."""

    def __init__(self, engine: Engine, task: Task, turn: TurnSpec, folder: EvidenceFolder, limits: SlotLimits,
                 episode: EpisodeState, progress: _ModelProgress) -> None:
        self.task_id = task.id
        self.turn = turn.index
        self.evidence = folder
        self.previous_files = dict(episode.files)
        self.web_template = engine.suite.web_template
        self.static = engine.suite.artifact_kind == "static"
        self.last: BuildCheck | None = None
        self._engine = engine
        self._limits = limits
        self._progress = progress
        self._build = lambda files: engine._build(task, turn, files, folder, limits)

    async def build(self, text: str) -> BuildCheck:
        try:
            parsed = parse_model_output(text)
        except InvalidOutput as error:
            check = BuildCheck(text=text, ok=False, log=f"the answer holds no parsable files: {error.reason}", files={})
            self.last = check
            return check
        return await self._build_parsed(text, parsed)

    async def build_files(self, files: dict[str, str]) -> BuildCheck:
        return await self._build_parsed("", ParsedOutput(assistant_text="", files=dict(files)))

    async def _build_parsed(self, text: str, parsed: ParsedOutput) -> BuildCheck:
        build = await self._build(parsed.files)
        log = "\n".join([*build.rejected, build.log]) if build.rejected else build.log  # why files were refused
        check = BuildCheck(text=text, ok=build.ok, log=log, files=dict(parsed.files), parsed=parsed, build=build)
        self.last = check
        return check

    async def chat(self, body: dict[str, Any]) -> ChatAnswer:
        engine = self._engine
        async with self._limits.model:
            answer = await asyncio.wait_for(
                engine.services.model.chat(body, task_id=self.task_id, turn=self.turn),
                timeout=engine.config.model_timeout_s)
        self._progress.call = ModelCall.ANSWERED
        return answer

    async def preview(self, build: BuildResult) -> PagePreview:
        services = self._engine.services
        return await preview_build(services.sandbox, services.browsers, build)

    async def run_confined(self, command: ConfinedCommand) -> RunOutcome:
        return await self._engine.services.sandbox.run_confined(command)


def _write_generation(folder: EvidenceFolder, generation: Generation, *, payload: list[dict[str, Any]]) -> None:
    """The slot's model calls: the final answer as raw_response.txt, earlier rounds beside it with their
    build logs, each round's request that was not the payload, and generation.json listing every round
    (strategy, purpose, seconds, usage, files, whether its answer built). The final answer's build log is
    build.log, written with the build."""
    rounds = []
    for item in generation.rounds:
        final = item is generation.rounds[-1]
        index = None if final else item.index
        path = folder.write_raw_response(item.response.text or "", round_index=index)
        request = folder.request if item.messages == payload else folder.write_request(item.messages,
                                                                                     round_index=item.index)
        entry: dict[str, Any] = {"round": item.index, "purpose": item.purpose, "seconds": item.seconds,
                                 "usage": {k: int(v) for k, v in item.response.usage.items()},
                                 "cached": item.response.cached, "request": request.name, "raw_response": path.name}
        if item.check is not None:
            # The final answer's build is build.log (written with the build); an unparsable one has none.
            reused = final and item.check.build is not None
            log = folder.build_log if reused else folder.write_build_log(item.check.log, round_index=item.index)
            entry.update(built=item.check.ok, build_log=log.name)
        rounds.append(entry)
    folder.write_generation({"strategy": generation.strategy, "rounds": rounds})
