"""Cheap checks before expensive work: everything a run needs that can be checked in seconds.

A run prepares for minutes before its first slot (template install, MT-Web2Code trajectories in a browser,
image builds, loading a checkpoint into a vLLM server). Whatever would make that preparation futile is checked
first, all of it, and reported together: one line per missing thing, each naming the fix. Nothing here starts
a server, a browser or a build, and the static checks touch the network no further than a TCP connect to a
loopback endpoint.

One function per thing, so a caller that prepares only part of a run (one model role at a time) can check
exactly that part:

- `model_roles`: which model roles the run will call (generator, judge, actor, roles a suite adds);
- `check_model`: the provider's own check (runner/models/preflight.py, registered with the provider): weights in
  the hub cache, vLLM importable, Docker for a containerised server, an attached server reachable, an API key
  variable set;
- `check_sandbox`, `check_kinds`, `check_browser`: the sandbox kind's own check (runner/sandbox/preflight.py:
  bubblewrap and node, or the Docker engine and images), the judge's, actor's and agent's where they have one;
  Chromium;
- `check_paper_data`: with `suite.task_set=paper`, the paper's data pulled as pinned (runner/suites/paper_data.py);
- `check_tasks`: the task files (and tool backends) load;
- `check_suite_resources`: what a suite loads itself (FlowEval's UIClip weights).

Once all of that passes, `run_preflight` sends one live request per hosted model role (runner/run/live_check.py,
`run.live_check`), the one check here that reaches the network. `check_run` (the command line's) then notes the
concurrency the run will choose, why, and what the run will cost (`limits_notes`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from runner.browser.launcher import HEADLESS_SHELL_PACKAGE
from runner.config import RunnerConfig
from runner.errors import UserError
from runner.models.role import ModelRole
from runner.problems import Problem
from runner.suites.base import Suite

__all__ = [
    "PreflightError",
    "check_browser",
    "check_kinds",
    "check_model",
    "check_paper_data",
    "check_run",
    "check_sandbox",
    "check_suite_resources",
    "check_tasks",
    "limits_notes",
    "model_roles",
    "pull_command",
    "run_preflight",
]

class PreflightError(RuntimeError, UserError):
    """The run cannot start; every problem found is listed (the message is for the user, as it is)."""

    def __init__(self, problems: list[Problem], *, notes: list[str] | None = None) -> None:
        self.problems = problems
        self.notes = notes or []
        lines = [f"the run cannot start: {len(problems)} problem(s) found before any work began:"]
        lines += [problem.line() for problem in problems]
        lines += [f"  note: {note}" for note in self.notes]
        super().__init__("\n".join(lines))


@dataclass
class RunContext:
    """What the command line said, for fixes that repeat it: the group choices and the overrides."""

    choices: dict[str, str] = field(default_factory=dict)  # group -> option, e.g. {"model": "qwen3-coder"}
    overrides: list[str] = field(default_factory=list)  # the command's own overrides, verbatim

    def pull_overrides(self, group: str, fallback: str) -> tuple[str, ...]:
        own = [o for o in self.overrides if o.lstrip("+~").startswith(f"{group}.")]
        return (f"{group}={self.choices.get(group, fallback)}", *own)


# --------------------------------------------------------------------------- which models the run calls


def model_roles(config: RunnerConfig, suite: Suite, context: RunContext | None = None) -> tuple[list[ModelRole], list[str]]:
    """The model roles this run will call, and a note for each configured one it will not.

    One source, runner/run/roles.py: the generator is always called; a judge's model unless the judge is
    rule-based or the suite says it never calls it (MT-Web2Code micro scores by pixels alone); an actor's
    model whenever the actor has one; each role the suite declares (`roles.<name>`, e.g. MT-Web2Code's caption).
    """
    from dataclasses import replace

    from runner.run.roles import roles_used

    context = context or RunContext()
    used = roles_used(config, suite)
    pulls = {"generator": context.pull_overrides("model", config.model.name),
             "judge": context.pull_overrides("judge", config.judge.name),
             "actor": context.pull_overrides("actor", config.actor.name)}
    roles: list[ModelRole] = []
    notes: list[str] = []
    for role, model in config.model_roles.items():
        if role in used:
            roles.append(replace(model, pull_overrides=pulls.get(role, ())))
        elif role == "judge":
            notes.append(f"judge {config.judge.name!r} ({model.name}) is not checked: suite "
                         f"{config.suite.name!r} never calls the judge's model")
    return roles, notes


# --------------------------------------------------------------------------- models


def check_model(role: ModelRole) -> list[Problem]:
    """Everything one model role needs before its first call: its provider's preflight check (runner/kinds.py);
    replays (oracle, null, identity) need nothing."""
    from runner.kinds import KINDS

    provider = KINDS.find("model", str(role.config.get("provider")))
    check = provider.preflight if provider is not None else None
    return list(check(role)) if check is not None else []


# --------------------------------------------------------------------------- sandbox, browser, tasks


def check_sandbox(config: RunnerConfig, suite: Suite) -> list[Problem]:
    """What the sandbox kind needs on this host: its preflight check (runner/kinds.py), if it has one."""
    return _kind_problems("sandbox", config, suite)


def check_kinds(config: RunnerConfig, suite: Suite) -> list[Problem]:
    """The judge's, the actor's and the agent's own preflight checks, for kinds that declare one."""
    return (_kind_problems("judge", config, suite) + _kind_problems("actor", config, suite)
            + _kind_problems("agent", config, suite))


def _kind_problems(family: str, config: RunnerConfig, suite: Suite) -> list[Problem]:
    from runner.kinds import KINDS

    kind = KINDS.find(family, str(getattr(config, family).kind))
    check = kind.preflight if kind is not None else None
    return list(check(config, suite)) if check is not None else []


def check_browser(config: RunnerConfig, suite: Suite) -> list[Problem]:
    """The host's Chromium, where the host's browser is used (not when the docker sandbox runs its own)."""
    path = config.browser_settings.executable_path
    from runner.kinds import KINDS

    hook = KINDS.chosen("sandbox", config.sandbox).browser_in_sandbox
    in_container = hook is not None and hook(config)
    if in_container and suite.artifact_kind == "static":
        return [Problem("sandbox.options.browser_in_container", f"suite {config.suite.name!r} renders its pages "
                        "in the run's browsers from this host, which a browser container cannot reach",
                        "set sandbox.options.browser_in_container=false (or use sandbox=local)")]
    if path is None or in_container:
        return []
    if not (Path(path).is_file() and os.access(path, os.X_OK)):
        return [Problem("browser.executable_path", f"{path} is not an executable browser",
                        f"`apt-get install -y {HEADLESS_SHELL_PACKAGE}` (bash scripts/setup.sh does it), or set "
                        "browser.executable_path (null: Playwright's own browser after `playwright install chromium`)")]
    return []


async def check_tasks(config: RunnerConfig, suite: Suite) -> list[Problem]:
    """The task set loads: a suite whose loading is expensive offers `check_task_sources()` instead."""
    cheap = suite.check_task_sources()
    if cheap is not None:
        return [Problem("suite", message, "fix the suite's paths or task ids") for message in cheap]
    try:
        tasks = await suite.load_tasks()
    except (ValueError, OSError) as error:  # a suite's task-format errors are ValueErrors naming file and field
        return [Problem("suite", str(error), "fix the task file (or suite.tasks_path / suite.task_ids)")]
    if not tasks:
        return [Problem("suite", f"suite {config.suite.name!r} selected no tasks",
                        "check suite.task_ids, suite.limit and suite.shard")]
    return []


def check_suite_resources(suite: Suite) -> list[Problem]:
    """What the suite loads itself besides the model roles (FlowEval's UIClip featurizer): present here."""
    return [Problem(key, message, fix) for key, message, fix in suite.check_resources()]


# Overrides that change how a run runs, never what it reads: left out of the pull command.
_NOT_PULLED = ("run.", "tracking", "concurrency.", "resume")


def pull_command(context: RunContext | None, suite_name: str) -> str:
    """The command that fetches what this run needs: `python -m runner.pull` with the run's own overrides."""
    import shlex

    given = [o for o in (context.overrides if context is not None else [])
             if not o.lstrip("+~").startswith(_NOT_PULLED)]
    return "python -m runner.pull " + shlex.join(given or [f"suite={suite_name}"])


def check_paper_data(config: RunnerConfig, context: RunContext | None = None) -> list[Problem]:
    """With `suite.task_set=paper`, every source of the paper's data is pulled as pinned and unchanged since
    (runner/suites/paper_data.py); nothing else of the run can be built without it."""
    from runner.suites.paper_data import find_pulled
    from runner.suites.registry import validate_suite_options

    settings = validate_suite_options(config.suite)
    if settings.task_set != "paper":
        return []
    data_dir = config.resolve_path(config.data_dir)
    problems = []
    for name, data in settings.paper_data.items():
        problem = find_pulled(data_dir, name, data).problem()
        if problem is not None:
            problems.append(Problem(f"suite.paper_data.{name}", problem,
                                    f"fetch it: `{pull_command(context, settings.name)}`; or run the project's own "
                                    "tasks instead, which are not the paper's set: suite.task_set=project"))
    return problems


async def check_run(config: RunnerConfig, context: RunContext | None = None) -> list[str]:
    """Preflight of a whole run from its validated config (builds the suite object; loads nothing heavy). The
    paper's data comes first: without it the suite cannot even be built."""
    from runner.run.roles import run_facts
    from runner.suites.registry import build_run_suite

    missing = check_paper_data(config, context)
    if missing:
        raise PreflightError(missing)
    suite = build_run_suite(config)
    suite.configure_run(run_facts(config))
    notes = await run_preflight(config, suite, context)
    return notes + await limits_notes(config, suite)


async def limits_notes(config: RunnerConfig, suite: Suite) -> list[str]:
    """The concurrency the run will choose and why (runner/run/capacity.py), and what the run will cost
    (runner/run/estimate.py). The episodes are bounded by the task count where loading the tasks is the suite's
    own check (cheap); otherwise by the servers and the machine alone until the run loads them."""
    from runner.run.capacity import choose_limits
    from runner.run.estimate import estimate_for_config

    tasks = await suite.load_tasks() if suite.check_task_sources() is None else []
    if not tasks:
        limits = choose_limits(config, episodes_available=None)
        return [f"concurrency: {line}" for line in limits.lines()]
    estimate, limits = estimate_for_config(config, suite, tasks, staged=config.run.phases == "staged")
    return [f"concurrency: {line}" for line in limits.lines()] + estimate.lines()


async def run_preflight(config: RunnerConfig, suite: Suite, context: RunContext | None = None) -> list[str]:
    """Run every check; raise PreflightError listing all problems. Returns the notes (roles not checked)."""
    from runner.run.roles import check_declared_roles

    check_declared_roles(config, suite)  # a role the suite declares but the config lacks: nothing to check
    roles, notes = model_roles(config, suite, context)
    problems: list[Problem] = []
    for role in roles:
        problems += check_model(role)
    problems += check_sandbox(config, suite)
    problems += check_kinds(config, suite)
    problems += check_browser(config, suite)
    problems += await check_tasks(config, suite)
    problems += check_suite_resources(suite)
    if problems:
        raise PreflightError(problems, notes=notes)
    if config.run.live_check:  # only once everything static is in place: a request each hosted role would send
        from runner.run.live_check import check_live

        live = [Problem(key, message, fix) for key, message, fix in await check_live(config, suite)]
        if live:
            raise PreflightError(live, notes=[*notes, "the live check sends one request per hosted model role; "
                                              "run.live_check=false skips it"])
    return notes
