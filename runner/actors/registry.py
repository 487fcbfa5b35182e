"""Actor registry: actor config -> Actor (or None for actor=none)."""

from __future__ import annotations

from runner.actors.base import Actor
from runner.errors import ConfigError, section_settings
from runner.config import ActorConfig
from runner.models.base import Model


def build_actor(config: ActorConfig, *, model: Model | None = None) -> Actor | None:
    """`model`: the LLM or UI-TARS actor's endpoint model when the run built it (served models known by role)."""
    if config.kind == "none":
        return None
    if config.kind == "probe":
        from runner.actors.probe import ProbeActor, ProbeSettings

        return ProbeActor(section_settings(ProbeSettings, config.probe, "actor.probe"))
    if config.kind == "scripted":
        from runner.actors.scripted import ScriptedActor

        return ScriptedActor()
    if config.kind == "llm":
        from runner.actors.llm import LLMActor, LLMActorSettings

        return LLMActor(LLMActorSettings.from_options(config.options, prefix="actor.options"), model=model)
    if config.kind == "uitars":
        from runner.actors.uitars import UITarsActor, UITarsSettings

        return UITarsActor(UITarsSettings.from_options(config.options, prefix="actor.options"), model=model)
    raise ConfigError(
        f"actor.kind = {config.kind!r}: not available in this version; choose probe, scripted, llm, uitars or none"
    )
