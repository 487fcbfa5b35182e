"""The built-in actor kinds. Each factory imports its actor when a run builds it, so validating a config
imports only the settings of the actor it names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runner.kinds import register_kind

if TYPE_CHECKING:
    from runner.actors.base import Actor
    from runner.actors.llm import LLMActorSettings
    from runner.actors.probe import ProbeSettings
    from runner.actors.scripted import ScriptedActorSettings
    from runner.actors.uitars import UITarsSettings
    from runner.models.base import Model


# Like scripted: a preset's actor options stay, unread, when `actor=none` replaces its actor.
@register_kind("actor", "none", inert=True)
def no_actor(settings: None, *, model: Model | None = None) -> Actor | None:
    return None


@register_kind("actor", "probe", settings="runner.actors.probe:ProbeSettings", section="probe")
def probe_actor(settings: ProbeSettings, *, model: Model | None = None) -> Actor:
    from runner.actors.probe import ProbeActor

    return ProbeActor(settings)


# Its settings are a section of its own (`actor.scripted`): a preset's actor options (FlowEval's UI-TARS) stay,
# unread, when `actor=scripted` replaces its actor.
@register_kind("actor", "scripted", settings="runner.actors.scripted:ScriptedActorSettings", section="scripted",
               deterministic=True)
def scripted_actor(settings: ScriptedActorSettings, *, model: Model | None = None) -> Actor:
    from runner.actors.scripted import ScriptedActor

    return ScriptedActor(settings)


def stepping_actor_calls(settings: LLMActorSettings | UITarsSettings) -> int:
    """One trace: every step's answer and the retries of a malformed one."""
    return settings.max_steps * settings.max_attempts


@register_kind("actor", "llm", settings="runner.actors.llm:LLMActorSettings", calls_model=True,
               calls_per_use=stepping_actor_calls)
def llm_actor(settings: LLMActorSettings, *, model: Model | None = None) -> Actor:
    from runner.actors.llm import LLMActor

    return LLMActor(settings, model=model)


@register_kind("actor", "uitars", settings="runner.actors.uitars:UITarsSettings", calls_model=True,
               calls_per_use=stepping_actor_calls)
def uitars_actor(settings: UITarsSettings, *, model: Model | None = None) -> Actor:
    from runner.actors.uitars import UITarsActor

    return UITarsActor(settings, model=model)
