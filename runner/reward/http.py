"""The reward service over HTTP (FastAPI): JSON in, the same Reward as the Python API out.

Admission is bounded: at most `concurrency.episodes` answers are scored at once (the run's limits) and at most
`queue_size` more wait; past that a request is refused at once with 429 and a Retry-After from the recent
latencies (back-pressure a trainer can pace itself by). `/healthz` answers while the process lives;
`/readyz` only once the tasks are loaded and the browsers up, and while there is room. The OpenAPI description
is at /openapi.json (docs at /docs). docs/reward.md.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any

from fastapi import FastAPI, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from runner.reward.episodes import EpisodeNotFound, EpisodeTurnError, StatePayload
from runner.reward.result import Reward
from runner.reward.service import RewardService, ScoreRequest, UnknownTask, UnknownTurn

__all__ = ["Admission", "ServiceHolder", "create_app"]

API_VERSION = "1"


class QueueFull(Exception):
    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"the service's queue is full; retry after {retry_after_s} s")
        self.retry_after_s = retry_after_s


class Admission:
    """Scoring slots in flight (`parallel`) plus waiting ones (`queue_size`); refuses what does not fit."""

    def __init__(self, *, parallel: int, queue_size: int) -> None:
        self.parallel = parallel
        self.capacity = parallel + queue_size
        self.admitted = 0
        self._latencies: deque[float] = deque(maxlen=64)

    @property
    def full(self) -> bool:
        return self.admitted >= self.capacity

    def retry_after_s(self) -> int:
        """The time the queue ahead needs to drain, from the median of the recent calls (1 s at least)."""
        median = statistics.median(self._latencies) if self._latencies else 1.0
        return max(1, math.ceil(median * max(1, self.admitted) / self.parallel))

    @contextmanager
    def enter(self, count: int = 1) -> Iterator[None]:
        if self.admitted + count > self.capacity:
            raise QueueFull(self.retry_after_s())
        self.admitted += count
        started = time.perf_counter()
        try:
            yield
        finally:
            self.admitted -= count
            self._latencies.append((time.perf_counter() - started) / count)


class ServiceHolder:
    """Opens the service in the background (tasks load for seconds to minutes) and holds it until shutdown,
    in one task; `error` says why it could not open."""

    def __init__(self, open_service: Callable[[], AbstractAsyncContextManager[RewardService]]) -> None:
        self._open = open_service
        self.service: RewardService | None = None
        self.error: str | None = None
        self.opened = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.on_failure: Callable[[str], None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._hold())

    async def _hold(self) -> None:
        try:
            async with self._open() as service:
                self.service = service
                self.opened.set()
                await self._stop.wait()
        except Exception as error:  # preflight, a missing browser, a bad task set: the service cannot serve
            self.error = f"{type(error).__name__}: {error}"
            if self.on_failure is not None:
                self.on_failure(self.error)
        finally:
            self.service = None
            self.opened.set()

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task


# -- wire models ------------------------------------------------------------------------------------------


class ScoreBody(BaseModel):
    """One answer to score. `answer`: the model's raw output (the output contract: a JSON object with
    `assistant_text` and `files`, or fenced file sections), exactly what a run parses."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1)
    answer: str
    turn: int | None = Field(None, ge=1, description="1-based; default 1, or the held episode's next turn")
    state: StatePayload | None = Field(None, description="the `state` of the previous turn's reward (a chain)")
    episode_id: str | None = Field(None, description="an episode the service holds (POST /v1/episodes)")
    keep_evidence: bool = Field(False, description="keep the slot's evidence folder and return its path")


class ScoreManyBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[ScoreBody] = Field(min_length=1)


class ScoreManyResult(BaseModel):
    rewards: list[Reward]


class PromptBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1)
    turn: int = Field(1, ge=1)
    state: StatePayload | None = None
    episode_id: str | None = None


class PromptResult(BaseModel):
    task_id: str
    turn: int
    messages: list[dict[str, Any]]


class TaskInfo(BaseModel):
    id: str
    suite: str
    sub_suite: str
    title: str
    turns: int


class EpisodeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1)


class EpisodeInfo(BaseModel):
    episode_id: str
    task_id: str
    next_turn: int
    state: StatePayload


class Problem(BaseModel):
    detail: str


def _problem(status: int, detail: str, **headers: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"detail": detail}, headers=headers or None)


_ERRORS: dict[int | str, dict[str, Any]] = {status: {"model": Problem} for status in (404, 409, 422, 429, 503)}


def create_app(holder: ServiceHolder, *, queue_size: int, parallel: int) -> FastAPI:
    admission = Admission(parallel=parallel, queue_size=queue_size)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        holder.start()
        try:
            yield
        finally:
            await holder.stop()

    app = FastAPI(title="genui-runner reward service", version=API_VERSION, lifespan=lifespan,
                  description="Scores a model's answer to one task turn with the run's own sandboxed build, "
                              "browsers and judge (docs/reward.md).")

    def service() -> RewardService:
        if holder.service is None:
            raise _NotReady(holder.error or "the service is still loading its tasks and browsers")
        return holder.service

    @app.exception_handler(_NotReady)
    async def not_ready(_request: Any, error: _NotReady) -> JSONResponse:
        return _problem(503, str(error), **{"Retry-After": "5"})

    @app.exception_handler(QueueFull)
    async def queue_full(_request: Any, error: QueueFull) -> JSONResponse:
        return _problem(429, str(error), **{"Retry-After": str(error.retry_after_s)})

    @app.exception_handler(UnknownTask)
    @app.exception_handler(UnknownTurn)
    @app.exception_handler(EpisodeNotFound)
    async def not_found(_request: Any, error: LookupError) -> JSONResponse:
        return _problem(404, error.args[0] if error.args else str(error))

    @app.exception_handler(EpisodeTurnError)
    async def conflict(_request: Any, error: EpisodeTurnError) -> JSONResponse:
        return _problem(409, str(error))

    @app.get("/healthz", summary="Liveness: the process answers")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", summary="Readiness: tasks loaded, browsers up, room in the queue",
             responses={503: {"model": Problem}})
    async def readyz(response: Response) -> dict[str, Any]:
        ready = holder.service is not None and not admission.full
        if not ready:
            response.status_code = 503
            response.headers["Retry-After"] = str(admission.retry_after_s() if holder.service else 5)
        return {"ready": ready, "loaded": holder.service is not None, "error": holder.error,
                "admitted": admission.admitted, "capacity": admission.capacity}

    @app.get("/v1/tasks", summary="The suite's tasks", response_model=list[TaskInfo], responses=_ERRORS)
    async def tasks() -> list[TaskInfo]:
        return [TaskInfo(id=task.id, suite=task.suite, sub_suite=task.sub_suite, title=task.title,
                         turns=len(task.turns)) for task in service().tasks.values()]

    @app.post("/v1/prompt", summary="A turn's payload (chat messages), as a run sends it to the model",
              response_model=PromptResult, responses=_ERRORS)
    async def prompt(body: PromptBody) -> PromptResult:
        messages = await service().prompt(body.task_id, body.turn, state=body.state, episode_id=body.episode_id)
        return PromptResult(task_id=body.task_id, turn=body.turn, messages=messages)

    @app.post("/v1/score", summary="The reward of one answer", response_model=Reward, responses=_ERRORS)
    async def score(body: ScoreBody) -> Reward:
        scorer = service()
        with admission.enter():
            return await scorer.score(body.task_id, body.turn, body.answer, state=body.state,
                                      episode_id=body.episode_id, keep_evidence=body.keep_evidence)

    @app.post("/v1/score_many", summary="The rewards of a batch, scored concurrently within the run's limits",
              response_model=ScoreManyResult, responses=_ERRORS)
    async def score_many(body: ScoreManyBody) -> ScoreManyResult:
        scorer = service()
        with admission.enter(len(body.items)):
            rewards = await scorer.score_many([ScoreRequest(**item.model_dump(exclude={"state"}), state=item.state)
                                               for item in body.items])
        return ScoreManyResult(rewards=rewards)

    @app.post("/v1/episodes", summary="Hold an episode (a chain) by id", response_model=EpisodeInfo,
              status_code=201, responses=_ERRORS)
    async def open_episode(body: EpisodeBody) -> EpisodeInfo:
        held = service().open_episode(body.task_id)
        return EpisodeInfo(episode_id=held.id, task_id=held.task_id, next_turn=held.next_turn,
                           state=StatePayload.of(held.task_id, held.next_turn, held.state))

    @app.get("/v1/episodes/{episode_id}", summary="A held episode and its state", response_model=EpisodeInfo,
             responses=_ERRORS)
    async def get_episode(episode_id: str) -> EpisodeInfo:
        held = service().episodes.get(episode_id)
        return EpisodeInfo(episode_id=held.id, task_id=held.task_id, next_turn=held.next_turn,
                           state=StatePayload.of(held.task_id, held.next_turn, held.state))

    @app.delete("/v1/episodes/{episode_id}", summary="Forget a held episode", status_code=204, responses=_ERRORS)
    async def close_episode(episode_id: str) -> Response:
        service().close_episode(episode_id)
        return Response(status_code=204)

    return app


class _NotReady(Exception):
    """The service is not open (still loading, or it failed to open)."""
