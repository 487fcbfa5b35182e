"""RewardService: a suite's tasks loaded once, each answer scored by the run's own slot path.

One call is one slot of a one-slot run in its own folder: the engine executes it (`Engine.execute_slot`: parse,
vetting, sandboxed build, confined artifact server, the run's browsers, the actor, the live checks, the suite's
scoring material, the frozen packet) and the judging phase judges the packet (`JudgingPhase.judge_packet`:
the suite's judge_turn or the judge), so a reward is the score a full run records for the same answer. The
answer sits in the generator's seat (answer.py) and is generated in one pass: it is the answer, never repaired.
Every call shares the run's limits (config `concurrency`: episodes bound the calls in flight, then builds,
browsers and judge calls as in a run); the browsers, the web templates' installs and Node's compile cache stay
warm from call to call.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from runner.run import preflight
from runner.run.capacity import resolve_concurrency
from runner.config import RunnerConfig
from runner.turns.engine import Engine, Services, SlotLimits
from runner.run.experiment import bind_suite, build_services
from runner.turns.generation import SinglePass
from runner.turns.judging_phase import JudgingPhase
from runner.models.serving import SERVER_LOG_DIR
from runner.turns.packets import read_packet
from runner.run.placement import phase_roles
from runner.turns.records import RunDirectory
from runner.reward.answer import GivenAnswer
from runner.reward.episodes import EpisodeStore, EpisodeTurnError, HeldEpisode, StatePayload
from runner.reward.result import Reward
from runner.run.roles import RunRoles, roles_used, run_facts
from runner.suites.base import EpisodeState, Suite
from runner.suites.registry import build_run_suite
from runner.turns.tasks import Task, TurnSpec
from runner.tracking.tracker import NullTracker

log = logging.getLogger(__name__)

__all__ = ["RewardService", "ScoreRequest", "UnknownTask", "UnknownTurn"]


class UnknownTask(LookupError):
    """A task id the service's suite did not load."""


class UnknownTurn(LookupError):
    """A turn the task does not have."""


@dataclass
class ScoreRequest:
    """One answer to score (score_many); the fields of RewardService.score."""

    task_id: str
    answer: str
    turn: int | None = None  # None: 1, or the held episode's next turn
    state: StatePayload | dict[str, Any] | None = None
    episode_id: str | None = None
    keep_evidence: bool = False


def page_files_read(suite: Suite, services: Services) -> bool:
    """Whether the judge or the suite may read a slot's load-time screenshots or DOM file (unless they say not)."""
    return services.judge.reads_page_files or suite.reads_page_files


def with_spare_builds(config: RunnerConfig) -> RunnerConfig:
    """`config` with `sandbox.local.spare_build` on for a local sandbox, unless it says otherwise: one call at a
    time leaves the runner idle while a page settles, time in which the next build's sandbox and Vite start."""
    if config.sandbox.kind != "local" or "spare_build" in config.sandbox.local:
        return config
    sandbox = config.sandbox.model_copy(update={"local": {**config.sandbox.local, "spare_build": True}})
    sandbox = sandbox.with_settings(config.sandbox.settings.model_copy(update={"spare_build": True}))
    return config.model_copy(update={"sandbox": sandbox})


class RewardService:
    """Use `async with RewardService.open(config) as service:`; then `await service.score(task_id, turn, answer)`."""

    def __init__(self, config: RunnerConfig, suite: Suite, tasks: list[Task], services: Services, roles: RunRoles,
                 work_dir: Path, *, episode_capacity: int, lean_evidence: bool = True) -> None:
        self.config = config
        self.suite = suite
        self.tasks = {task.id: task for task in tasks}
        self.services = services
        self.work_dir = work_dir
        self.limits = SlotLimits.of(config.concurrency)
        used = roles_used(config, suite)
        # The roles a slot calls besides the generator (an LLM actor, a suite's own), started lazily as in a run.
        slot_roles = [role for role in phase_roles(used)[0] if role != "generator"]
        self._ensure_slot_roles = (lambda: roles.ensure(*slot_roles)) if slot_roles else None
        self.judging = JudgingPhase(
            suite=suite, judge=services.judge, run_dir=RunDirectory(work_dir), tracker=services.tracker,
            judge_calls=config.concurrency.judge_calls, timeout_s=config.turn_timeout_s,
            ensure_judge=(lambda: roles.ensure("judge")) if "judge" in used else None,
        )
        self.episodes = EpisodeStore(episode_capacity)
        # A suite may keep per-slot material between a slot's payload and its scoring (MT-Web2Code: the render
        # the turn started from); a run executes each slot once at a time, and so does the service.
        self._slot_locks: dict[tuple[str, int], asyncio.Lock] = {}
        self._generation = SinglePass()
        # Lean evidence: a call that keeps no evidence leaves out the load-time screenshots and DOM file where
        # nothing of the slot reads them (the judge and the suite say so; a slot with an actor keeps them).
        self.lean_evidence = lean_evidence and not page_files_read(suite, services)

    @classmethod
    @asynccontextmanager
    async def open(cls, config: RunnerConfig, *, work_dir: Path | None = None, episode_capacity: int = 1024,
                   lean_evidence: bool = True) -> AsyncIterator["RewardService"]:
        """Preflight, then the run's sandbox, browsers, roles, judge and actor, and the suite's tasks, loaded
        once. `work_dir`: where each call's slot folder goes (default: a temporary folder, removed on close).
        A local sandbox keeps the next build's sandbox started ahead (`sandbox.local.spare_build`, on unless the
        config sets it). `lean_evidence`: a call without keep_evidence captures no screenshot or DOM file where
        neither the judge, the suite nor an actor reads them (the reward is the same); False: always."""
        config = with_spare_builds(config)
        suite = build_run_suite(config)
        suite.configure_run(run_facts(config))
        for note in await preflight.run_preflight(config, suite):
            log.info("preflight: %s", note)
        owned = work_dir is None
        root = Path(tempfile.mkdtemp(prefix="genui-reward-")) if work_dir is None else Path(work_dir)
        root.mkdir(parents=True, exist_ok=True)
        try:
            async with AsyncExitStack() as stack:
                roles, context = await bind_suite(config, suite, stack, log_dir=root / SERVER_LOG_DIR)
                tasks = await suite.load_tasks()
                if not tasks:
                    raise ValueError(f"suite {config.suite.name!r} selected no tasks")
                config = config.model_copy(update={
                    "concurrency": resolve_concurrency(config, episodes_available=len(tasks))})
                services = build_services(config, roles, context, stack, tasks=tasks, tracker=NullTracker())
                yield cls(config, suite, tasks, services, roles, root, episode_capacity=episode_capacity,
                          lean_evidence=lean_evidence)
        finally:
            if owned:
                shutil.rmtree(root, ignore_errors=True)

    # -- tasks ------------------------------------------------------------------------------------------

    def task(self, task_id: str) -> Task:
        task = self.tasks.get(task_id)
        if task is None:
            known = sorted(self.tasks)
            shown = ", ".join(known[:20]) + (f" (+{len(known) - 20} more)" if len(known) > 20 else "")
            raise UnknownTask(f"task_id {task_id!r}: not a task of suite {self.config.suite.name!r}; known: {shown}")
        return task

    def turn(self, task: Task, turn: int) -> TurnSpec:
        if not 1 <= turn <= len(task.turns):
            raise UnknownTurn(f"turn {turn}: task {task.id!r} has turns 1..{len(task.turns)}")
        return task.turn(turn)

    def _slot_lock(self, task_id: str, turn: int) -> asyncio.Lock:
        return self._slot_locks.setdefault((task_id, turn), asyncio.Lock())

    async def prompt(self, task_id: str, turn: int = 1, *, state: StatePayload | dict[str, Any] | None = None,
                     episode_id: str | None = None) -> list[dict[str, Any]]:
        """The turn's payload (OpenAI chat messages), as a run sends it to the model under test."""
        task = self.task(task_id)
        if episode_id is not None:
            held = self._held(episode_id, task)
            turn, episode = held.next_turn, held.state
        else:
            episode = self._episode(task, turn, state)
        spec = self.turn(task, turn)
        async with self._slot_lock(task.id, turn):
            return await self.suite.messages(task, spec, episode)

    # -- episodes ---------------------------------------------------------------------------------------

    def open_episode(self, task_id: str) -> HeldEpisode:
        return self.episodes.open(self.task(task_id).id)

    def close_episode(self, episode_id: str) -> None:
        self.episodes.close(episode_id)

    def _held(self, episode_id: str, task: Task) -> HeldEpisode:
        held = self.episodes.get(episode_id)
        if held.task_id != task.id:
            raise EpisodeTurnError(f"episode_id {episode_id!r} belongs to task {held.task_id!r}, not {task.id!r}")
        if held.next_turn > len(task.turns):
            raise EpisodeTurnError(f"episode_id {episode_id!r}: every turn of task {task.id!r} is scored already")
        return held

    @staticmethod
    def _episode(task: Task, turn: int, state: StatePayload | dict[str, Any] | None) -> EpisodeState:
        if state is None:
            return EpisodeState()
        if not isinstance(state, StatePayload):  # its JSON form, as the reward returned it
            state = StatePayload.model_validate(state)
        if state.task_id != task.id:
            raise EpisodeTurnError(f"state.task_id {state.task_id!r}: the state is of another task than {task.id!r}")
        if state.next_turn != turn:
            raise EpisodeTurnError(f"state.next_turn {state.next_turn}: the state continues at turn "
                                   f"{state.next_turn}, not turn {turn}")
        return state.episode()

    # -- scoring ----------------------------------------------------------------------------------------

    async def score(self, task_id: str, turn: int | None, answer: str, *,
                    state: StatePayload | dict[str, Any] | None = None,
                    episode_id: str | None = None, keep_evidence: bool = False) -> Reward:
        """The reward of `answer` (the model's raw output, parsed by the run's output contract) for one turn.

        A chain continues from `state` (the `state` of the previous turn's reward) or from the episode the
        service holds under `episode_id` (its next turn; `turn`, when given, must be that one). Without either,
        the turn starts fresh, as a run's first turn (a chained later turn is then `blocked`). `turn` None: 1, or
        the held episode's next turn."""
        if not isinstance(answer, str):
            raise TypeError(f"answer: expected the model's output as a string, got {type(answer).__name__}")
        task = self.task(task_id)
        if episode_id is not None:
            if state is not None:
                raise EpisodeTurnError("state and episode_id: pass one (a held episode keeps its own state)")
            held = self._held(episode_id, task)
            async with held.lock:
                turn = held.next_turn if turn is None else turn
                if turn != held.next_turn:
                    raise EpisodeTurnError(f"turn {turn}: episode_id {episode_id!r} is at turn {held.next_turn}")
                held_state = held.state  # copied: the slot advances its own, held once it is scored
                episode = EpisodeState(files=dict(held_state.files), history=list(held_state.history),
                                       has_artifact=held_state.has_artifact, runtime_state=held_state.runtime_state,
                                       extra=dict(held_state.extra))
                result = await self._score_slot(task, self.turn(task, turn), answer, episode, keep_evidence)
                held.state, held.next_turn = episode, turn + 1
                return result.model_copy(update={"episode_id": episode_id})
        turn = 1 if turn is None else turn
        spec = self.turn(task, turn)
        return await self._score_slot(task, spec, answer, self._episode(task, turn, state), keep_evidence)

    async def score_many(self, requests: Sequence[ScoreRequest]) -> list[Reward]:
        """Each request scored concurrently within the run's limits; in request order. Every task id and turn
        is checked before any answer is built."""
        for request in requests:
            task = self.task(request.task_id)
            if request.turn is not None:
                self.turn(task, request.turn)
        return list(await asyncio.gather(*(
            self.score(request.task_id, request.turn, request.answer, state=request.state,
                       episode_id=request.episode_id, keep_evidence=request.keep_evidence)
            for request in requests)))

    async def _score_slot(self, task: Task, turn: TurnSpec, answer: str, episode: EpisodeState,
                          keep_evidence: bool) -> Reward:
        call_dir = self.work_dir / "calls" / uuid.uuid4().hex
        engine = Engine(self.config, self.suite, replace(self.services, model=GivenAnswer(answer)),
                        RunDirectory(call_dir), ensure_generation=self._ensure_slot_roles,
                        generation=self._generation, page_files=keep_evidence or not self.lean_evidence)
        try:
            async with self._slot_lock(task.id, turn.index), self.limits.episodes:
                evidence_dir = await engine.execute_slot(task, turn, episode, self.limits)
                record = await self.judging.judge_packet(read_packet(evidence_dir), evidence_dir)
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, call_dir, True)
            raise
        reward = self.suite.turn_reward(record)
        state = StatePayload.of(task.id, turn.index + 1, episode)
        if keep_evidence:
            return Reward.of(record, reward, evidence_dir=str(evidence_dir), state=state)
        await asyncio.to_thread(shutil.rmtree, call_dir, True)
        return Reward.of(record, reward, state=state)
