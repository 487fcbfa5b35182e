"""`run.plan=true`: what a run would do and need, printed before anything starts, and nothing started.

For the composed config it prints the task set and its slots, the model calls of each role as an upper bound
(the suite's own count, `Suite.call_bounds`, from what one use of the judge and the actor may cost: their kinds'
`calls_per_use`), the output tokens those calls may write (calls x the role's `max_tokens`), the input tokens
where the role's context is known (calls x (context - max_tokens)), a cost bound for roles whose model config
carries a `price`, the GPU phases (runner/run/placement.py) and whether the data, the weights and the keys the
run needs are here. It starts no server, browser or build and writes nothing into the run dir; the only work
is reading the task files (a suite whose tasks need a browser to load counts stand-ins) and the local caches.

Bounds count answered requests: a transport retry (runner/models/openai_provider.py) repeats one request and is
not counted; a malformed answer asked again is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.config import RunnerConfig
from runner.kinds import KINDS
from runner.models.preflight import check_weights
from runner.run import preflight
from runner.run.placement import detect_gpus, plan_phases
from runner.models.role import role_model_settings
from runner.run.roles import check_declared_roles, roles_used, run_facts, server_claims
from runner.report.task_set import describe_task_set, task_set_record
from runner.run.task_set import task_set_identity

__all__ = ["RolePlan", "RunPlan", "build_plan", "format_plan", "per_use_calls", "plan_text"]

DEFAULT_MAX_TOKENS = 4096  # runner/models/openai_provider.py GenerationSettings.max_tokens


@dataclass
class RolePlan:
    role: str
    model: str
    provider: str
    calls: int | None  # None: not bounded; 0: a replay, no model is called
    max_tokens: int | None
    context_tokens: int | None
    price: dict[str, float] | None
    vllm_served: bool = False  # its provider's server is ours: it costs machine time, never a price

    @property
    def output_tokens(self) -> int | None:
        return None if self.calls is None or self.max_tokens is None else self.calls * self.max_tokens

    @property
    def input_tokens(self) -> int | None:
        if self.calls is None or self.context_tokens is None:
            return None
        return self.calls * max(0, self.context_tokens - (self.max_tokens or 0))

    @property
    def output_cost(self) -> float | None:
        """The bound in US dollars of the output tokens; None without a price or a bound."""
        if self.price is None or self.output_tokens is None:
            return None
        return self.output_tokens * self.price["output_per_mtok"] / 1_000_000

    @property
    def cost(self) -> float | None:
        """The bound in US dollars of input and output; None without a price, or without a bound on either."""
        if self.output_cost is None or self.input_tokens is None or self.price is None:
            return None
        return self.output_cost + self.input_tokens * self.price["input_per_mtok"] / 1_000_000


@dataclass
class RunPlan:
    task_set: dict[str, Any] | None
    tasks: int | None
    slots: int | None
    repeats: int
    roles: list[RolePlan]
    phases: str
    needs: list[str] = field(default_factory=list)  # what the run reads, each present or missing with its fix
    notes: list[str] = field(default_factory=list)
    # the concurrency the run will choose, each with why (runner/run/capacity.py), and what the run will take:
    # hours, the bound, peak memory from stated model latencies (runner/run/estimate.py); empty until tasks are known
    limits: list[str] = field(default_factory=list)
    estimate: list[str] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return not any(line.startswith("missing") for line in self.needs)


def per_use_calls(config: RunnerConfig, roles: list[str]) -> dict[str, int]:
    """The most model calls one use of the judge (a verdict) and of the actor (a trace) makes, for those of the
    used roles whose kind declares it (runner/kinds.py `calls_per_use`)."""
    found: dict[str, int] = {}
    for family in ("judge", "actor"):
        section = getattr(config, family)
        kind = KINDS.get(family, section.kind, key=f"{family}.kind")
        hook = kind.calls_per_use
        if family in roles and kind.calls_model and hook is not None:
            found[family] = int(hook(section.settings))
    return found


def agent_settings(config: RunnerConfig) -> Any:
    """The run's agent's settings (each holds its `budget`: runner/agents/settings.py); None: no agent."""
    return config.agent.settings


def _role_plan(role: str, settings: dict[str, Any], calls: int | None) -> RolePlan:
    provider = str(settings.get("provider"))
    kind = KINDS.find("model", provider)
    traced = kind is not None and kind.traced
    limits = settings.get("limits") or {}
    context = limits.get("context_tokens") or (settings.get("server") or {}).get("max_model_len")
    max_tokens = settings.get("max_tokens", DEFAULT_MAX_TOKENS)
    return RolePlan(role=role, model=str(settings.get("name", role)), provider=provider,
                    calls=calls if traced else 0, max_tokens=int(max_tokens) if max_tokens is not None else None,
                    context_tokens=int(context) if context else None, price=settings.get("price"),
                    vllm_served=kind is not None and kind.vllm_served)


async def build_plan(config: RunnerConfig, context: preflight.RunContext | None = None) -> RunPlan:
    """The plan of a run of `config`; raises a UserError only for what no run of it could get past."""
    from runner.suites.registry import build_run_suite, validate_suite_options

    missing_data = preflight.check_paper_data(config, context)
    if missing_data:  # the suite's own settings still say which roles it calls; its tasks cannot be counted
        settings = validate_suite_options(config.suite).model_copy(update={"task_set": "project"})
        suite = KINDS.get("suite", settings.name).factory(settings, project_root=Path(config.project_root))
    else:
        suite = build_run_suite(config)
    suite.configure_run(run_facts(config))
    check_declared_roles(config, suite)
    used = roles_used(config, suite)
    needs = [f"missing {problem.key}: {problem.message}\n      fix: {problem.fix}" for problem in missing_data]
    notes: list[str] = []
    tasks: list[Any] | None = None
    if not missing_data:
        try:
            tasks = await suite.planned_tasks()
        except (ValueError, OSError) as error:  # a task file's own error names the file and the field
            needs.append(f"missing suite tasks: {error}")
    bounds = suite.call_bounds(tasks, per_use_calls(config, used)) if tasks is not None else {}
    agent_kind = KINDS.get("agent", config.agent.kind, key="agent.kind")
    agent = agent_settings(config)
    if agent is not None and agent_kind.calls_per_use is not None and tasks is not None:
        # an agent: each slot's calls are bounded by its budget (the kind's calls_per_use: its steps)
        bounds["generator"] = sum(len(task.turns) for task in tasks) * int(agent_kind.calls_per_use(agent))
        notes.append(f"the generator works as agent {config.agent.name}: per slot at most {agent.budget.steps} "
                     f"model calls and {agent.budget.tokens:,} tokens (prompt and output), "
                     f"{agent.budget.wall_clock_s:g} s (its budget)")
    models = role_model_settings(config)
    role_plans = []
    for role in used:
        if role not in models:
            continue  # a judge or actor that calls no model
        calls = bounds.get(role)
        role_plans.append(_role_plan(role, models[role], None if calls is None else calls * config.repeats))
    identity = None if missing_data else task_set_identity(config, suite, project_commit=_project_commit(config))
    task_set = task_set_record(identity, len(tasks)) if tasks is not None else None
    needs += _model_needs(config, suite, context) + _resource_needs(suite)
    if not missing_data:
        needs += [f"present {line}" for line in _present_data(config, suite)]
    claims = server_claims(config, used)
    gpus = detect_gpus() if any(not claim.attached for claim in claims) else []
    phase_plan = plan_phases(config.run.phases, claims, gpus, roles=used)
    phases = phase_plan.describe()
    slots = sum(len(task.turns) for task in tasks) if tasks is not None else None
    if tasks is None and missing_data and suite.paper_tasks:
        notes.append(f"the paper's set has {suite.paper_tasks} task(s); slots and calls are counted once it is "
                     "pulled")
    limits, estimate = _limits_and_estimate(config, suite, tasks, staged=phase_plan.mode == "staged")
    return RunPlan(task_set=task_set, tasks=len(tasks) if tasks is not None else None, slots=slots,
                   repeats=config.repeats, roles=role_plans, phases=phases, needs=needs, notes=notes,
                   limits=limits, estimate=estimate)


def _limits_and_estimate(config: RunnerConfig, suite: Any, tasks: list[Any] | None, *,
                         staged: bool) -> tuple[list[str], list[str]]:
    """The limits the run will choose and its time estimate, as preflight notes them (`limits_notes`); before the
    tasks are known, the limits the servers and the machine allow alone."""
    from runner.run.capacity import choose_limits
    from runner.run.estimate import estimate_for_config

    if not tasks:
        return choose_limits(config, episodes_available=None).lines(), []
    estimate, limits = estimate_for_config(config, suite, tasks, staged=staged)
    return limits.lines(), estimate.lines()


def _project_commit(config: RunnerConfig) -> str | None:
    from runner.tracking.tracker import git_state

    commit, _ = git_state(Path(config.project_root))
    return commit


def _model_needs(config: RunnerConfig, suite: Any, context: preflight.RunContext | None) -> list[str]:
    """Each model role's weights (present or missing), then what else it lacks (a server program, a key, an
    endpoint), each with its fix."""
    roles, _ = preflight.model_roles(config, suite, context)
    lines = []
    for role in roles:
        problems = preflight.check_model(role)
        what = f"{role.key} ({role.name})"
        if KINDS.chosen("model", role.config).vllm_served:
            server = role.settings.server
            weights = check_weights(role, server) if server.mode != "attach" else None
            if weights is None:
                source = server.model_path or f"{server.hf_repo}@{str(server.revision)[:12]}"
                lines.append(f"present {what}: " + (f"attached to {server.base_url}" if server.mode == "attach"
                                                    else f"weights {source}"))
            problems = [weights, *(p for p in problems if p != weights)] if weights is not None else problems
        elif not problems and KINDS.get("model", str(role.config.get("provider"))).traced:
            key = role.config.get("api_key_env")
            lines.append(f"present {what}: endpoint {role.config.get('base_url')}" + (f", key in {key}" if key else ""))
        lines += [f"missing {problem.key}: {problem.message}\n      fix: {problem.fix}" for problem in problems]
    return lines


def _resource_needs(suite: Any) -> list[str]:
    return [f"missing {key}: {message}\n      fix: {fix}" for key, message, fix in suite.check_resources()]


def _present_data(config: RunnerConfig, suite: Any) -> list[str]:
    from runner.suites.paper_data import find_pulled

    settings = suite.settings
    if settings.task_set != "paper":
        return []
    data_dir = config.resolve_path(config.data_dir)
    return [f"suite.paper_data.{name}: {data.describe()} in {find_pulled(data_dir, name, data).folder}"
            for name, data in settings.paper_data.items()]


def _count(value: int | None, unit: str) -> str:
    return f"<= {value:,} {unit}" if value is not None else f"{unit}: no bound known"


def format_plan(plan: RunPlan) -> str:
    lines = ["plan (run.plan=true; nothing was started):"]
    lines.append(f"  {describe_task_set(plan.task_set)}" if plan.task_set else "  task set: not counted (below)")
    if plan.slots is not None:
        lines.append(f"  slots: {plan.slots:,} ({plan.tasks} task(s)) x {plan.repeats} repeat(s) = "
                     f"{plan.slots * plan.repeats:,}")
    lines += [f"  note: {note}" for note in plan.notes]
    lines.append("  model calls by role (upper bounds; a malformed answer asked again counts, a transport retry "
                 "does not):")
    total, unpriced, partial = 0.0, [], []
    for role in plan.roles:
        head = f"    {role.role}: {role.model} ({role.provider})"
        if role.calls == 0:
            lines.append(f"{head}: a replay, no model is called")
            continue
        inputs = _count(role.input_tokens, "input tokens") if role.context_tokens else \
            "input tokens: no context limit known"
        lines.append(f"{head}: {_count(role.calls, 'calls')}; {_count(role.output_tokens, 'output tokens')}"
                     + (f" ({role.max_tokens:,} per call)" if role.max_tokens else "") + f"; {inputs}")
        if role.price is None:
            if not role.vllm_served:
                unpriced.append(role.role)
            continue
        rates = f"${role.price['input_per_mtok']:g} in, ${role.price['output_per_mtok']:g} out per million tokens"
        if role.cost is not None:
            total += role.cost
            lines.append(f"      cost: <= ${role.cost:,.2f} ({rates})")
        elif role.output_cost is not None:
            partial.append(role.role)
            lines.append(f"      cost: output tokens <= ${role.output_cost:,.2f} ({rates}); input not bounded "
                         "(the config gives no limits.context_tokens)")
        else:
            unpriced.append(role.role)
    if any(role.cost is not None for role in plan.roles):
        left = [f"no price: {', '.join(unpriced)}"] if unpriced else []
        left += [f"input not bounded: {', '.join(partial)}"] if partial else []
        lines.append(f"  cost bound of the priced roles: <= ${total:,.2f}" + (f" ({'; '.join(left)})" if left else ""))
    lines.append("  GPU phases:")
    lines += ["    " + line for line in plan.phases.splitlines()]
    if plan.limits:
        lines.append("  concurrency (explicit concurrency.* settings win):")
        lines += [f"    {line}" for line in plan.limits]
    lines += [f"  {line}" for line in plan.estimate]
    lines.append("  data, weights and endpoints:")
    lines += [f"    {line}" for line in plan.needs] or ["    nothing to fetch"]
    lines.append("  ready: " + ("yes" if plan.ready else "no: fetch what is missing above (preflight stops the run)"))
    return "\n".join(lines)


async def plan_text(config: RunnerConfig, context: preflight.RunContext | None = None) -> str:
    """The plan of a run of `config`, as the entry point prints it."""
    return format_plan(await build_plan(config, context))
