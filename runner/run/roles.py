"""The run's model roles: which models a run calls, by role, from one source (the validated config).

Roles are `generator` (config `model`), `judge` and `actor` (their `options.model` when LLM-based) and the
roles a suite declares (`suite.required_roles`, composed into `roles.<name>` from the `conf/model` group, e.g.
`+model@roles.caption=gpt-4o`: MT-Web2Code's §5.1 caption model). `role_model_settings`
(runner/models/role.py) is what preflight, placement and capacity read; `RunRoles` builds each role's model once, with the response cache, wraps it for
call traces when it is built, and hands vLLM-served ones to `ServedRoles` (started lazily, stopped between
phases), so the run knows its served models by role.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from runner.tracking.call_traces import CallSink, ModelCall, TracedModel
from runner.errors import ConfigError
from runner.config import RunnerConfig
from runner.kinds import KINDS
from runner.models.base import Model
from runner.models.cache import ResponseCache
from runner.models.registry import build_model
from runner.models.role import ModelRole, role_key, role_model_settings
from runner.models import server_keep
from runner.models.serving import ROLES, ServedRoles
from runner.models.vllm_provider import VLLMModel, vllm_served
from runner.models.vllm_server import server_identity
from runner.run.placement import ServerClaim
from runner.suites.base import ActorFacts, ModelFacts, RunFacts, Suite
from runner.turns.tasks import Task

__all__ = [
    "RunRoles",
    "check_declared_roles",
    "roles_used",
    "run_facts",
    "server_claims",
]

log = logging.getLogger(__name__)



def model_facts(role: ModelRole) -> ModelFacts:
    """What a suite may know of a role's model: its section, its declared vision, whether it replays references."""
    provider = KINDS.find("model", str(role.config.get("provider")))
    return ModelFacts(name=str(role.config.get("name", role.config.get("model", "?"))), section=dict(role.config),
                      vision=role.capabilities.vision,
                      replays_reference=provider is not None and provider.replays_reference)


def run_facts(config: RunnerConfig) -> RunFacts:
    """What the run's suite may know of it (`Suite.configure_run`), from the validated config: never the config."""
    actor = KINDS.chosen("actor", config.actor)
    models = config.model_roles
    return RunFacts(generator=model_facts(models["generator"]),
                    actor=ActorFacts(kind=actor.name, acts=not actor.inert, deterministic=actor.deterministic),
                    roles={role: model_facts(models[role]) for role in config.roles},
                    judge_model=model_facts(models["judge"]) if "judge" in models else None,
                    turn_timeout_s=float(config.turn_timeout_s) if config.turn_timeout_s is not None else None)


def _traced_provider(settings: dict[str, Any]) -> bool:
    """Calls to this model cost tokens and are traced (endpoints, not replays)."""
    provider = KINDS.find("model", str(settings.get("provider")))
    return provider is not None and provider.traced


def check_declared_roles(config: RunnerConfig, suite: Suite) -> None:
    """Every role the suite declares is in the config, and `roles` names no run role (ConfigError naming the
    key)."""
    clashing = sorted(set(config.roles) & set(ROLES))
    if clashing:
        raise ConfigError(f"invalid configuration:\n  roles.{clashing[0]}: {clashing[0]!r} is a run role; set it "
                          f"with {role_key(clashing[0])}, and name suite roles otherwise")
    missing = [role for role in suite.required_roles if role not in config.roles]
    if missing:
        lines = [f"  roles.{role}: required by suite {config.suite.name!r} but missing; compose it from "
                 f"conf/model with +model@roles.{role}=<name> (or give it inline: +roles.{role}={{...}})"
                 for role in missing]
        raise ConfigError("invalid configuration:\n" + "\n".join(lines))


def roles_used(config: RunnerConfig, suite: Suite | None = None) -> list[str]:
    """The roles a run will call: the generator; the judge unless the suite scores without one (MT-Web2Code
    micro is pixel-based: `suite.uses_judge` is False); the actor unless actor=none; the suite's own roles."""
    if suite is None:
        from runner.suites.registry import build_run_suite

        suite = build_run_suite(config)
    roles = ["generator"]
    if suite.uses_judge:
        roles.append("judge")
    if not KINDS.chosen("actor", config.actor).inert:
        roles.append("actor")
    roles += [role for role in suite.required_roles if role not in roles]
    return roles


def server_claims(config: RunnerConfig, roles: list[str]) -> list[ServerClaim]:
    """What each vLLM-served model of the used roles claims of the GPUs."""
    claims: list[ServerClaim] = []
    for role, model in config.model_roles.items():
        if role not in roles or not model.capabilities.vllm_served:
            continue
        server = model.config.get("server") or {}
        gpu_ids = server.get("gpu_ids")
        claims.append(ServerClaim(
            role=role,
            server_key=server_identity(model.settings.server),  # roles of one key share one server
            name=str(model.config.get("name", role)),
            tensor_parallel_size=int(server.get("tensor_parallel_size") or 1),
            gpu_memory_utilization=server.get("gpu_memory_utilization"),
            gpu_ids=tuple(gpu_ids) if gpu_ids is not None else None,
            attached=server.get("mode") == "attach",
        ))
    return claims


class RunRoles:
    """Every role's model of one run, built once on first use and closed with the run.

    A model is built with the run's response cache (endpoint models whose `cache` is true use it) and, when
    the run traces its calls, wrapped in a TracedModel at once; calls before `trace_to` (a suite preparing its
    tasks before the tracker opens) are not traced. vLLM-served models join `served` under their role.
    """

    def __init__(self, config: RunnerConfig, *, cache: ResponseCache | None, log_dir: Path,
                 traced: bool = False) -> None:
        self.settings = role_model_settings(config)
        # Each role's provider settings as config validation parsed them (None: a replay, built from its section).
        self._parsed = {role: model_role.settings for role, model_role in config.model_roles.items()}
        self.served = ServedRoles.of(log_dir=log_dir)
        self._cache = cache
        self._traced = traced
        self._sink: CallSink | None = None
        self._models: dict[str, Model] = {}
        self._vllm_models: dict[str, VLLMModel] = {}  # the served models built so far, by role

    def has(self, role: str) -> bool:
        """The config gives this role a model."""
        return role in self.settings

    def model(self, role: str, *, tasks: Iterable[Task] | None = None) -> Model:
        """The role's model, built on first use (`tasks`: what the oracle generator replays)."""
        if role in self._models:
            return self._models[role]
        if role not in self.settings:
            raise ConfigError(f"invalid configuration:\n  {role_key(role)}: the run has no model for role {role!r}")
        settings = self.settings[role]
        parsed = self._parsed.get(role)
        model: Model = build_model(parsed if parsed is not None else settings, tasks=tasks, cache=self._cache)
        served = vllm_served(model)
        if served is not None:
            self._share_a_server(role, served)
        if self._traced and _traced_provider(settings):
            model = TracedModel(model, role=role, sink=self._record)
        if KINDS.chosen("model", settings).vllm_served:
            self.served.add(role, model)
        self._models[role] = model
        return model

    def _share_a_server(self, role: str, model: VLLMModel) -> None:
        """A role whose served model has the weights and flags of another role's gets that role's server: one
        server (one load, one copy in GPU memory) for, e.g., EvoGenUI-Bench Table 2's MiMo-V2.5 actor and
        evaluator; or the server an earlier run of the command kept up (runner/models/server_keep.py). Its log is
        under the first role's model name."""
        identity = model.server_identity()
        kept = server_keep.take(identity)
        sibling = next(((r, m) for r, m in self._vllm_models.items() if m.server_identity() == identity), None)
        if kept is not None:  # an earlier run of this command (`repeats`) left it up
            model.adopt_server(kept)
            log.info("%s (%s) takes up the vLLM server the previous run kept", role, model.name)
        elif sibling is not None:
            model.share_server_of(sibling[1])
            log.info("%s (%s) shares the vLLM server of %s (%s): the same weights and flags", role, model.name,
                     sibling[0], sibling[1].name)
        self._vllm_models[role] = model

    def models(self, roles: Iterable[str]) -> dict[str, Model]:
        """Role name -> model, for a suite's declared roles."""
        return {role: self.model(role) for role in roles}

    def trace_to(self, sink: CallSink) -> None:
        """From now on, every traced model's calls go to `sink` (the run's tracker)."""
        self._sink = sink

    def _record(self, call: ModelCall) -> None:
        if self._sink is not None:
            self._sink(call)

    async def ensure(self, *roles: str) -> None:
        """Start these roles' servers if they are not up yet (only roles built so far have one)."""
        await self.served.ensure(*roles)

    async def stop(self, *roles: str) -> None:
        """Stop these roles' servers between phases (the next call starts them again)."""
        await self.served.stop(*roles)

    async def aclose(self) -> None:
        """Close every built model (a model's own aclose also stops its server)."""
        models, self._models = list(self._models.values()), {}
        results = await asyncio.gather(*(model.aclose() for model in models), return_exceptions=True)
        errors = [result for result in results if isinstance(result, BaseException)]
        if errors:
            raise errors[0]
