"""Multi-turn chains: an episode's state on the wire, and episodes the service holds by id.

A chain's next turn starts from what the previous one left (MT-Web2Code §3.1: the model's own page; the
contracts' runtime state): the same `EpisodeState` a run carries from turn to turn (runner/suites/base.py).
The caller either passes it back with the next answer (`state`, returned with every reward) or lets the
service hold it under an episode id.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runner.suites.base import CompactTurn, EpisodeState

__all__ = ["EpisodeNotFound", "EpisodeStore", "EpisodeTurnError", "HeldEpisode", "StatePayload"]


class HistoryItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turn: int
    request: str
    assistant_text: str = ""
    ui_text: str = ""


class StatePayload(BaseModel):
    """An episode after its last scored turn: what the next turn's payload and its artifact continue from."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    next_turn: int = Field(ge=1)
    files: dict[str, str] = Field(default_factory=dict)
    history: list[HistoryItem] = Field(default_factory=list)
    has_artifact: bool = False
    runtime_state: Any = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, task_id: str, next_turn: int, episode: EpisodeState) -> "StatePayload":
        return cls(task_id=task_id, next_turn=next_turn, files=dict(episode.files),
                   history=[HistoryItem(**vars(item)) for item in episode.history], has_artifact=episode.has_artifact,
                   runtime_state=episode.runtime_state, extra=dict(episode.extra))

    def episode(self) -> EpisodeState:
        return EpisodeState(files=dict(self.files), history=[CompactTurn(**item.model_dump()) for item in self.history],
                            has_artifact=self.has_artifact, runtime_state=self.runtime_state, extra=dict(self.extra))


class EpisodeNotFound(KeyError):
    """No held episode has this id (never opened, closed, or evicted as the oldest)."""


class EpisodeTurnError(ValueError):
    """A turn scored out of its episode's order."""


@dataclass
class HeldEpisode:
    id: str
    task_id: str
    next_turn: int = 1
    state: EpisodeState = field(default_factory=EpisodeState)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # the turns of one episode run in order


class EpisodeStore:
    """At most `capacity` episodes, the least recently used evicted first (a trainer that forgets to close
    its episodes cannot grow the service without bound)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._held: OrderedDict[str, HeldEpisode] = OrderedDict()

    def open(self, task_id: str) -> HeldEpisode:
        episode = HeldEpisode(id=uuid.uuid4().hex, task_id=task_id)
        self._held[episode.id] = episode
        while len(self._held) > self.capacity:
            self._held.popitem(last=False)
        return episode

    def get(self, episode_id: str) -> HeldEpisode:
        episode = self._held.get(episode_id)
        if episode is None:
            raise EpisodeNotFound(f"episode_id {episode_id!r}: no such episode (never opened, closed, or evicted: "
                                  f"the service holds the {self.capacity} most recently used)")
        self._held.move_to_end(episode_id)
        return episode

    def close(self, episode_id: str) -> None:
        if self._held.pop(episode_id, None) is None:
            raise EpisodeNotFound(f"episode_id {episode_id!r}: no such episode")

    def __len__(self) -> int:
        return len(self._held)
