"""One experiment: compose the services, run the engine, summarize, track. The CLI stays thin."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from runner.kinds import KINDS
from runner.run import preflight

from runner import progress
from runner.actors.registry import build_actor
from runner.agents.registry import build_agent
from runner.agents.settings import paper_agent_deviation
from runner.browser.launch import BrowserPool, BrowserPools
from runner.errors import ConfigError, section_settings
from runner.config import RunnerConfig
from runner.turns.engine import Engine, Services
from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.registry import build_judge
from runner.run import lineage as lineage_mod
from runner.models import server_keep
from runner.models.cache import ResponseCache
from runner.models.serving import SERVER_LOG_DIR
from runner.run.roles import RunRoles, check_declared_roles, roles_used, run_facts, server_claims
from runner.run.capacity import choose_limits, resolve_concurrency
from runner.run.placement import PhasePlan, detect_gpus, phase_roles, plan_phases
from runner.turns.records import RunDirectory, TurnRecord
from runner.models.base import Model
from runner.sandbox.base import Sandbox
from runner.sandbox.registry import build_sandbox, sandbox_tracking_tags
from runner.sandbox.scratch import sweep_stale_scratch
from runner.suites.base import Suite, SuiteContext
from runner.suites.registry import build_run_suite
from runner.run.session import RunSession, run_name
from runner.report.task_set import describe_task_set, task_set_record, task_set_tags
from runner.tracking.protocol import RunTracker

log = logging.getLogger(__name__)

# Keys that may change between a run and its resumption without mixing results.
_RESUME_NEUTRAL = {"resume", "tracking", "concurrency", "project_root", "turn_timeout_s", "model_timeout_s", "run",
                   "data_dir"}


def _comparable(config: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in config.items() if key not in _RESUME_NEUTRAL}


def _changed_keys(old: Any, new: Any, prefix: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(set(old) | set(new))
        return [k for key in keys for k in _changed_keys(old.get(key), new.get(key), f"{prefix}{key}.")]
    return [] if old == new else [prefix.rstrip(".")]


def prepare_run_dir(config: RunnerConfig, run_dir: RunDirectory, lineage: dict[str, Any] | None = None) -> bool:
    """Check resume rules and write config.yaml (and lineage.json when given). True when earlier records are reused.

    Resuming also compares the stored lineage (git commit, config/task-set hashes, image digests, model
    revisions, prompt versions) with the current one and refuses, naming each changed item.
    """
    current = config.model_dump(mode="json")
    has_records = run_dir.records_path.exists() and run_dir.records_path.stat().st_size > 0
    has_records = has_records or any((run_dir.path / "evidence").glob(f"*/*/{EvidenceFolder.PACKET}"))  # executed, not judged
    config_path = run_dir.path / RunDirectory.CONFIG
    if has_records:
        if config.resume is False:
            raise ConfigError(f"{run_dir.path} already holds results; pass resume=true to finish it, or choose a new hydra.run.dir")
        if config_path.exists():
            previous = yaml.safe_load(config_path.read_text()) or {}
            changed = _changed_keys(_comparable(previous), _comparable(current))
            if changed:
                raise ConfigError(f"cannot resume {run_dir.path}: the configuration changed ({', '.join(changed)}); results would mix")
        previous_lineage = lineage_mod.load_lineage(run_dir.path) if lineage is not None else None
        if previous_lineage is not None:
            assert lineage is not None
            changed = lineage_mod.diff_lineage(previous_lineage, lineage)
            if changed:
                raise ConfigError(f"cannot resume {run_dir.path}: the lineage changed ({'; '.join(changed)}); results would mix")
    elif config.resume is True:
        raise ConfigError(f"resume=true but {run_dir.path} holds no earlier results; pass hydra.run.dir=<the earlier run dir>")
    config_path.write_text(yaml.safe_dump(current, sort_keys=False))
    if lineage is not None:
        lineage_mod.write_lineage(run_dir.path, lineage)
    return has_records


async def open_browsers(config: RunnerConfig, sandbox: Sandbox, *, start: bool = True) -> BrowserPools:
    """The run's `concurrency.browsers` browsers (docker: each its own browser container), shared by its
    `concurrency.visits` visits (runner/run/capacity.py: neither depends on the task count, unknown here).
    `start=False`: each launches on its first use only (a re-judging run rarely needs one)."""
    browser = config.browser_settings
    limits = resolve_concurrency(config, episodes_available=None)
    settings = [await sandbox.browser_settings(browser) for _ in range(limits.browsers or 1)]
    return await BrowserPools.start(settings, visits=limits.visits, witness=sandbox) if start else \
        BrowserPools([BrowserPool(item, witness=sandbox) for item in settings], visits=limits.visits)


def summarize_run(config: RunnerConfig, suite: Any, records: list[TurnRecord], tasks: list[Any], *,
                  task_set: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """summary.json: the suite's metrics over the records in slot order, what ran, and on which task set
    (`task_set`: lineage.json's, runner/run/task_set.py)."""
    records = sorted(records, key=lambda record: (record.task_id, record.turn))
    summary = suite.summarize(records, tasks)
    summary["run"] = {"suite": config.suite.name, "model": config.model.name, "judge": config.judge.name,
                      "actor": config.actor.name, "sandbox": config.sandbox.name, "tasks": len(tasks)}
    if not KINDS.chosen("agent", config.agent).inert:  # who generated, in the workspace (runner/agents/): part of what was measured
        summary["run"]["agent"] = config.agent.name
    deviation = paper_agent_deviation(config)
    if deviation is not None:
        summary["run"]["agent_deviation"] = deviation
    # What the providers were sent where it differs from the config (a temperature only the provider's default can
    # take, a JSON schema an endpoint honours only as JSON mode): a number says what it measured.
    summary["run"]["provider_deviations"] = lineage_mod.request_record(config, suite)[1]
    record = task_set_record(task_set, len(tasks))
    if record is not None:
        summary["task_set"] = record
    return summary


def plan_run(config: RunnerConfig, suite: Any, *, tasks: int) -> tuple[PhasePlan, RunnerConfig, list[str]]:
    """The roles the run uses, where their servers go (phase plan) and the concurrency it runs at."""
    roles = roles_used(config, suite)
    claims = server_claims(config, roles)
    gpus = detect_gpus() if any(not claim.attached for claim in claims) else []
    plan = plan_phases(config.run.phases, claims, gpus, roles=roles)
    limits = choose_limits(config, episodes_available=tasks)
    resolved = config.model_copy(update={"concurrency": limits.concurrency})
    plan.concurrency = resolved.concurrency.model_dump()
    plan.concurrency_reasons = dict(limits.reasons)
    return plan, resolved, roles


async def run_experiment(config: RunnerConfig, run_dir_path: Path, *, console: Console | None = None,
                         run_context: preflight.RunContext | None = None, preflight_done: bool = False) -> dict[str, Any]:
    """`preflight_done`: the caller already ran runner.run.preflight on this config (the command line does, before
    its heavy imports)."""
    console = console or Console(stderr=True)
    with progress.reporting(console):
        return await _run_experiment(config, run_dir_path, console=console, run_context=run_context,
                                     preflight_done=preflight_done)


async def _run_experiment(config: RunnerConfig, run_dir_path: Path, *, console: Console,
                          run_context: preflight.RunContext | None, preflight_done: bool) -> dict[str, Any]:
    project_root = Path(config.project_root)
    run_dir = RunDirectory(run_dir_path)
    suite = build_run_suite(config)
    suite.configure_run(run_facts(config))
    check_declared_roles(config, suite)  # also when the caller ran the preflight
    # Seconds of checks before minutes of preparation: every missing thing at once, each with its fix.
    if not preflight_done:
        for note in await preflight.run_preflight(config, suite, run_context) + \
                await preflight.limits_notes(config, suite):
            log.info("preflight: %s", note)
    sandbox_tags = await sandbox_tracking_tags(config)  # builds missing images first: lineage records them
    async with AsyncExitStack() as shared:
        roles, context = await bind_suite(config, suite, shared, log_dir=run_dir.path / SERVER_LOG_DIR)
        return await _run_bound(config, suite, run_dir, roles, context, sandbox_tags, console=console)


async def bind_suite(config: RunnerConfig, suite: Suite, shared: AsyncExitStack, *,
                     log_dir: Path) -> tuple[RunRoles, SuiteContext]:
    """The run's roles, sandbox and browsers (closed with `shared`), bound into the suite's context before its
    tasks load. A run and the reward service (runner/reward) compose their services here alike."""
    # Every role's model, built once with the response cache (runner/run/roles.py).
    cache = ResponseCache(config.resolve_path(config.cache_dir) / "responses.sqlite", draw=config.repeat)
    roles = RunRoles(config, cache=cache, log_dir=log_dir, traced=config.tracking.enabled)
    shared.push_async_callback(roles.aclose)
    # What runs killed on this machine left in the temporary folder goes before this run adds its own.
    await asyncio.to_thread(sweep_stale_scratch)
    # The sandbox and the browsers exist before the tasks load: a suite renders with the run's browsers.
    sandbox = build_sandbox(config)
    shared.push_async_callback(sandbox.aclose)
    browsers = await open_browsers(config, sandbox)
    shared.push_async_callback(browsers.aclose)
    # A suite's own roles are in its context before its tasks load (MT-Web2Code's captions are part of its
    # tasks); the generator, judge and actor join once they are built, before the first turn.
    by_role: dict[str, Model] = dict(roles.models(suite.required_roles))
    context = SuiteContext(browsers=browsers, sandbox=sandbox, roles=by_role)
    suite.bind(context)
    await roles.ensure(*suite.required_roles)  # outside every per-call timeout, like the generator's
    return roles, context


def build_services(config: RunnerConfig, roles: RunRoles, context: SuiteContext, phase: AsyncExitStack, *,
                   tasks: list[Any], tracker: RunTracker) -> Services:
    """The generator, actor and judge (closed with `phase`), joined to the suite's context, as the engine's
    Services. A run and the reward service (runner/reward) build them here alike."""
    model = roles.model("generator", tasks=tasks)
    actor_model = roles.model("actor") if roles.has("actor") else None
    actor = build_actor(config.actor, model=actor_model)
    if actor is not None:
        phase.push_async_callback(actor.aclose)
    judge_model = roles.model("judge") if roles.has("judge") else None
    judge = build_judge(config.judge, model=judge_model)
    phase.push_async_callback(judge.aclose)
    context.roles.update({role: built for role, built in
                          (("generator", model), ("judge", judge_model), ("actor", actor_model))
                          if built is not None})
    context.actor = actor
    return Services(model=model, sandbox=context.sandbox, actor=actor, judge=judge, browsers=context.browsers,
                    tracker=tracker)


async def _run_bound(config: RunnerConfig, suite: Suite, run_dir: RunDirectory, roles: RunRoles,
                     context: SuiteContext, sandbox_tags: dict[str, str], *, console: Console) -> dict[str, Any]:
    tasks = await suite.load_tasks()
    if not tasks:
        raise ConfigError(f"suite {config.suite.name!r} selected no tasks")
    lineage = lineage_mod.compute_lineage(config, tasks, suite=suite)
    resumed = prepare_run_dir(config, run_dir, lineage)
    plan, config, used = plan_run(config, suite, tasks=len(tasks))
    server_keep.allow(not plan.staged)  # `repeats`: a staged run's servers are down between its phases
    console.print(plan.describe())  # before any work starts
    plan.write(run_dir.path)
    task_set = task_set_record(lineage.get("task_set"), len(tasks))
    console.print(describe_task_set(task_set), markup=False, highlight=False, soft_wrap=True)  # what is measured
    deviation = paper_agent_deviation(config)
    if deviation is not None:
        console.print(f"agent: {deviation}", markup=False, highlight=False, soft_wrap=True)
    tags = {**lineage_mod.lineage_tags(lineage), **task_set_tags(task_set), **sandbox_tags}
    async with RunSession.open(config, run_dir, name=run_name(config), tags=tags, reattach=resumed,
                               console=console) as session:
        async with AsyncExitStack() as phase:
            phase.push_async_callback(roles.aclose)  # servers stop before their logs are uploaded
            services = build_services(config, roles, context, phase, tasks=tasks, tracker=session.tracker)
            if session.tracker.run_id is not None:  # every model call becomes an MLflow trace of its task's run
                roles.trace_to(session.tracker.log_model_call)
            # Served models (vLLM) start lazily, on the first call of their role; logs go to the run dir.
            generation_roles, _ = phase_roles(used)  # the suite's own roles too (runner/run/placement.py)

            requested = sum(len(task.turns) for task in tasks)
            already = len(run_dir.load_records())
            bar = progress.current().slots(f"{config.suite.name} x {config.model.name}", total=requested, already=already)

            def advance(record: TurnRecord) -> None:
                bar.record(status=record.status.value, passed=record.passed)

            agent = build_agent(config)  # None: the suite's own generation strategy
            if agent is not None:
                phase.push_async_callback(agent.aclose)
            engine = Engine(
                config, suite, services, run_dir, on_record=advance,
                ensure_generation=lambda: roles.ensure(*generation_roles),
                ensure_judge=(lambda: roles.ensure("judge")) if "judge" in used else None,
                generation=agent,
            )
            # Staged: the generation phase's servers (generator, actor, the suite's roles) stop before the
            # judge's may start.
            records = await engine.run(
                tasks, staged=plan.staged, stage=config.run.stage,
                between_phases=(lambda: roles.stop(*generation_roles)) if plan.staged else None,
            )
        if config.run.stage == "generate":
            console.print(f"generation stage done: {len(tasks)} task(s) executed and frozen; judge them with "
                          f"run.stage=judge hydra.run.dir={run_dir.path}")
            return {}
        summary = summarize_run(config, suite, records, tasks, task_set=lineage.get("task_set"))
        await session.conclude(summary, tasks=tasks, records=records)
        return summary
