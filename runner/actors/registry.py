"""Actor registry: actor config -> Actor (or None for actor=none), by the kind registered under its name
(runner/kinds.py)."""

from __future__ import annotations

from runner.actors.base import Actor
from runner.config import ActorConfig
from runner.kinds import KINDS
from runner.models.base import Model


def build_actor(config: ActorConfig, *, model: Model | None = None) -> Actor | None:
    """`model`: the LLM or UI-TARS actor's endpoint model when the run built it (served models known by role)."""
    kind = KINDS.get("actor", config.kind, key="actor.kind")
    return kind.factory(KINDS.resolve("actor", config).settings, model=model)
