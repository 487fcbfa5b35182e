"""An actor that waits on the page and does nothing else."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runner.kinds import register_kind
from runner.models.base import Model


class IdleActorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    wait_ms: int = Field(default=100, ge=0)


class IdleActor:
    def __init__(self, settings: IdleActorSettings) -> None:
        self.settings = settings

    async def act(self, session: Any, context: Any) -> Any:
        raise NotImplementedError("an idle actor is only built, never run, in these tests")

    async def aclose(self) -> None:
        return None


@register_kind("actor", "idle", settings=IdleActorSettings)
def idle_actor(settings: IdleActorSettings, *, model: Model | None = None) -> IdleActor:
    return IdleActor(settings)
