"""Cheap checks before expensive work: everything a run needs that can be checked in seconds.

A run prepares for minutes before its first slot (template install, MT-Web2Code trajectories in a browser,
image builds, loading a checkpoint into a vLLM server). Whatever would make that preparation futile is checked
first, all of it, and reported together: one line per missing thing, each naming the fix. Nothing here starts
a server, a browser or a build, and the static checks touch the network no further than a TCP connect to a
loopback endpoint.

One function per thing, so a caller that prepares only part of a run (one model role at a time) can check
exactly that part:

- `model_roles`: which model roles the run will call (generator, judge, actor, roles a suite adds);
- `check_model`: the provider's own check (registered with it, runner/kinds.py): weights in the hub cache,
  vLLM importable, Docker for a containerised server, an attached server reachable, an API key variable set;
- `check_sandbox`, `check_kinds`, `check_browser`: the sandbox kind's own check (bubblewrap and node, or the
  Docker engine and images), the judge's, actor's and agent's where they have one; Chromium;
- `check_paper_data`: with `suite.task_set=paper`, the paper's data pulled as pinned (runner/suites/paper_data.py);
- `check_tasks`: the task files (and tool backends) load;
- `check_suite_resources`: what a suite loads itself (FlowEval's UIClip weights).

Once all of that passes, `run_preflight` sends one live request per hosted model role (runner/run/live_check.py,
`run.live_check`), the one check here that reaches the network. `check_run` (the command line's) then notes the
concurrency the run will choose, why, and what the run will cost (`limits_notes`).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pydantic import ValidationError

from runner.errors import UserError

__all__ = [
    "ModelRole",
    "PreflightError",
    "Problem",
    "check_browser",
    "check_docker_sandbox",
    "check_kinds",
    "check_local_sandbox",
    "check_model",
    "check_openai_model",
    "check_paper_data",
    "check_run",
    "check_sandbox",
    "check_suite_resources",
    "check_tasks",
    "check_vllm_model",
    "limits_notes",
    "model_roles",
    "pull_command",
    "run_preflight",
]

_LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
_FIND_VLLM = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('vllm') else 1)"


@dataclass(frozen=True)
class Problem:
    """One missing thing: where it is configured, what is wrong, and what to do about it."""

    key: str  # the config key (or file) it comes from, e.g. `model` or `judge.options.model`
    message: str
    fix: str

    def line(self) -> str:
        return f"  - {self.key}: {self.message}\n      fix: {self.fix}"


class PreflightError(RuntimeError, UserError):
    """The run cannot start; every problem found is listed (the message is for the user, as it is)."""

    def __init__(self, problems: list[Problem], *, notes: list[str] | None = None) -> None:
        self.problems = problems
        self.notes = notes or []
        lines = [f"the run cannot start: {len(problems)} problem(s) found before any work began:"]
        lines += [problem.line() for problem in problems]
        lines += [f"  note: {note}" for note in self.notes]
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class ModelRole:
    """A model the run will call, with where it is configured and how `runner.pull` selects it."""

    role: str  # generator, judge, actor, or a role a suite adds (caption)
    key: str  # dotted config key of the model section
    config: dict[str, Any]
    pull_overrides: tuple[str, ...] = ()  # Hydra overrides that make `python -m runner.pull` fetch exactly it

    @property
    def name(self) -> str:
        return str(self.config.get("name", "?"))


@dataclass
class RunContext:
    """What the command line said, for fixes that repeat it: the group choices and the overrides."""

    choices: dict[str, str] = field(default_factory=dict)  # group -> option, e.g. {"model": "qwen3-coder"}
    overrides: list[str] = field(default_factory=list)  # the command's own overrides, verbatim

    def pull_overrides(self, group: str, fallback: str) -> tuple[str, ...]:
        own = [o for o in self.overrides if o.lstrip("+~").startswith(f"{group}.")]
        return (f"{group}={self.choices.get(group, fallback)}", *own)


# --------------------------------------------------------------------------- which models the run calls


def model_roles(config: Any, suite: Any, context: RunContext | None = None) -> tuple[list[ModelRole], list[str]]:
    """The model roles this run will call, and a note for each configured one it will not.

    One source, runner/run/roles.py: the generator is always called; a judge's model unless the judge is
    rule-based or the suite says it never calls it (MT-Web2Code micro scores by pixels alone); an actor's
    model whenever the actor has one; each role the suite declares (`roles.<name>`, e.g. MT-Web2Code's caption).
    """
    from runner.run.roles import role_key, role_model_settings, roles_used

    context = context or RunContext()
    settings = role_model_settings(config)
    used = roles_used(config, suite)
    pulls = {"generator": context.pull_overrides("model", config.model.name),
             "judge": context.pull_overrides("judge", config.judge.name),
             "actor": context.pull_overrides("actor", config.actor.name)}
    roles: list[ModelRole] = []
    notes: list[str] = []
    for role, model in settings.items():
        if role in used:
            roles.append(ModelRole(role, role_key(role), model, pulls.get(role, ())))
        elif role == "judge":
            notes.append(f"judge {config.judge.name!r} ({model.get('name')}) is not checked: suite "
                         f"{config.suite.name!r} never calls the judge's model")
    return roles, notes


# --------------------------------------------------------------------------- models


def _pull_fix(role: ModelRole) -> str:
    if role.pull_overrides:
        return f"download it with `python -m runner.pull {' '.join(role.pull_overrides)}` (on a machine with hub access)"
    return f"download it into the hub cache (e.g. `hf download REPO --revision REV`), or set {role.key}.server.model_path"


def check_weights(role: ModelRole, server: Any) -> Problem | None:
    """The pinned snapshot is complete enough to serve (config.json present), without the network."""
    from runner.models.vllm_server import hub_cache_dir

    if server.model_path:
        path = Path(server.model_path).expanduser()
        if not (path / "config.json").is_file():
            return Problem(f"{role.key}.server.model_path", f"{path} holds no config.json (not a model folder)",
                           "point it at a folder with the model's weights")
        return None
    from huggingface_hub import snapshot_download

    cache = hub_cache_dir(server)
    what = f"{role.role} {role.name!r}: {server.hf_repo}@{server.revision}"
    try:
        found = Path(snapshot_download(repo_id=server.hf_repo, revision=server.revision, cache_dir=str(cache),
                                       local_files_only=True))
    except Exception:  # huggingface_hub raises several kinds for "not there"; all mean the same here
        return Problem(role.key, f"{what} is not in the local hub cache {cache}", _pull_fix(role))
    if not (found / "config.json").is_file():
        return Problem(role.key, f"{what} is incomplete in {cache} (no config.json)", _pull_fix(role))
    return None


def check_vllm_installed(role: ModelRole, server: Any) -> Problem | None:
    """The server's program exists: `server.python` has the vllm package, or the `vllm` command is on PATH."""
    fix = (f"install vLLM (docs/vllm.md), or set {role.key}.server.python to a Python that has it, "
           f"or {role.key}.server.mode=attach with base_url of a server you run")
    if server.python is not None:
        python = shutil.which(server.python) or server.python
        if not Path(python).is_file():
            return Problem(f"{role.key}.server.python", f"{server.python} does not exist", fix)
        try:
            found = subprocess.run([python, "-c", _FIND_VLLM], capture_output=True, timeout=20).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            found = False
        return None if found else Problem(f"{role.key}.server.python", f"vllm is not importable by {python}", fix)
    if not server.command or shutil.which(server.command[0]) is None:
        shown = " ".join(server.command) or "(empty)"
        return Problem(f"{role.key}.server.command", f"`{shown}`: {server.command[0] if server.command else 'command'} "
                       "is not on PATH (vLLM is not installed here)", fix)
    return None


def _docker_client() -> tuple[Any, str | None]:
    try:
        import docker

        client = docker.from_env(timeout=5)
        client.ping()
        return client, None
    except Exception as error:  # no socket, permission denied, engine down: one answer for the user
        return None, f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"


def _image_present(client: Any, reference: str) -> bool:
    try:
        client.images.get(reference)
        return True
    except Exception:
        return False


def _tcp_reachable(url: str, timeout_s: float = 1.0) -> bool:
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", port), timeout=timeout_s):
            return True
    except OSError:
        return False


def check_model(role: ModelRole) -> list[Problem]:
    """Everything one model role needs before its first call: its provider's preflight check (runner/kinds.py);
    replays (oracle, null, identity) need nothing."""
    from runner.kinds import KINDS

    provider = KINDS.find("model", str(role.config.get("provider")))
    check = provider.preflight if provider is not None else None
    return list(check(role)) if check is not None else []


def check_vllm_model(role: ModelRole) -> list[Problem]:
    """A vLLM-served role: weights in the hub cache and vLLM (or Docker and its image) to serve them, or an
    attached server that answers."""
    from runner.errors import format_validation_error
    from runner.models.vllm_provider import VLLMModelSettings

    try:
        settings = VLLMModelSettings.model_validate(role.config)
    except ValidationError as error:
        return [Problem(role.key, format_validation_error(error, role.config, role.key).split("\n", 1)[-1].strip(),
                        "fix the model's config")]
    server = settings.server
    if server.mode == "attach":
        assert server.base_url is not None
        if not _tcp_reachable(server.base_url):
            return [Problem(f"{role.key}.server.base_url", f"nothing answers at {server.base_url}",
                            "start that server first, or use server.mode=process to let the runner start one")]
        return []
    problems = [p for p in (check_weights(role, server),) if p is not None]
    if server.mode == "process":
        problems += [p for p in (check_vllm_installed(role, server),) if p is not None]
    else:
        client, why = _docker_client()
        if client is None:
            problems.append(Problem(f"{role.key}.server.mode", f"docker mode, but no Docker engine is reachable ({why})",
                                    "start the engine (`dockerd &`, docs/docker.md) or use server.mode=process"))
        elif not _image_present(client, server.image):
            problems.append(Problem(f"{role.key}.server.image", f"image {server.image} is not present locally",
                                    f"`docker pull {server.image}` on a machine with registry access, then "
                                    "`docker save`/`docker load` it here"))
    return problems


def check_openai_model(role: ModelRole) -> list[Problem]:
    """An OpenAI-compatible role: its API key variable set, a loopback endpoint answering."""
    problems = []
    key_env = role.config.get("api_key_env")
    if key_env and not os.environ.get(key_env):
        problems.append(Problem(f"{role.key}.api_key_env", f"environment variable {key_env} is not set",
                                f"export {key_env}=... (the key itself never goes into a config file)"))
    base_url = str(role.config.get("base_url") or "")
    if urlparse(base_url).hostname in _LOOPBACK and not _tcp_reachable(base_url):
        problems.append(Problem(f"{role.key}.base_url", f"nothing answers at {base_url}",
                                "start the local server first, or point base_url at a running one"))
    return problems


# --------------------------------------------------------------------------- sandbox, browser, tasks


def _check_build_node(node: str | None, cache_root: str | None) -> list[Problem]:
    """The Node that runs builds: a named one must exist; the pinned one must be installed, or npm be there to
    install it on the first build."""
    if node:
        if shutil.which(node) is None:
            return [Problem("sandbox.local.node", f"{node} is not an executable Node; artifacts are built with vite",
                            "name a Node 20+ executable, or remove the key to use the pinned build Node")]
        return []
    from runner.sandbox.build_node import BUILD_NODE_DIR, build_node_installed

    if not build_node_installed(Path(cache_root) if cache_root else None) and shutil.which("npm") is None:
        return [Problem("sandbox.local.node", f"the pinned build Node ({BUILD_NODE_DIR / 'package.json'}) is not "
                        "installed and npm is missing to install it", "bash scripts/setup.sh (python -m runner.prepare)")]
    return []


def check_sandbox(config: Any, suite: Any) -> list[Problem]:
    """What the sandbox kind needs on this host: its preflight check (runner/kinds.py), if it has one."""
    return _kind_problems("sandbox", config, suite)


def check_kinds(config: Any, suite: Any) -> list[Problem]:
    """The judge's, the actor's and the agent's own preflight checks, for kinds that declare one."""
    return (_kind_problems("judge", config, suite) + _kind_problems("actor", config, suite)
            + _kind_problems("agent", config, suite))


def _kind_problems(family: str, config: Any, suite: Any) -> list[Problem]:
    from runner.kinds import KINDS

    kind = KINDS.find(family, str(getattr(config, family).kind))
    check = kind.preflight if kind is not None else None
    return list(check(config, suite)) if check is not None else []


def check_local_sandbox(config: Any, suite: Any) -> list[Problem]:
    """bubblewrap, and the Node that builds a suite's artifacts (not for static pages)."""
    problems = []
    if shutil.which("bwrap") is None:
        problems.append(Problem("sandbox", "bubblewrap (bwrap) is not installed; sandbox=local runs builds and "
                                "servers under it", "`apt-get install -y bubblewrap` (bash scripts/setup.sh does it)"))
    if suite.artifact_kind != "static":
        local = config.sandbox.section("local")
        problems += _check_build_node(local.get("node"), local.get("cache_root"))
    return problems


def check_docker_sandbox(config: Any, suite: Any) -> list[Problem]:
    """The Docker engine, and the build (and browser) images or what builds them."""
    from runner.sandbox.docker import DockerSandboxSettings
    from runner.sandbox.images import IMAGE_LABEL

    try:
        settings = DockerSandboxSettings.model_validate(config.sandbox.options)
    except ValidationError:
        return []  # the sandbox's own validation reports it, naming each key
    client, why = _docker_client()
    if client is None:
        return [Problem("sandbox", f"sandbox=docker, but no Docker engine is reachable ({why})",
                        "start it (`dockerd &`, docs/docker.md), or use sandbox=local")]
    problems = []
    names = ["build", "browser"] if settings.browser_in_container else ["build"]
    base_present = _image_present(client, settings.base_image)
    for name in names:
        explicit = settings.images.get(name)
        if explicit:
            if not _image_present(client, explicit):
                problems.append(Problem(f"sandbox.options.images.{name}", f"image {explicit} is not present",
                                        "build or load it, or drop the override to use the content-tagged image"))
            continue
        try:
            built_before = bool(client.images.list(filters={"label": f"{IMAGE_LABEL}={name}"}))
        except Exception:
            built_before = False
        if not built_before and not (settings.build_missing_images and base_present):
            problems.append(Problem("sandbox", f"no {name} image, and its base image {settings.base_image} is not "
                                    "present to build one", "run `bash scripts/build-images.sh`"))
    return problems


def check_browser(config: Any, suite: Any) -> list[Problem]:
    """The host's Chromium, where the host's browser is used (not when the docker sandbox runs its own)."""
    from runner.browser.launch import BrowserSettings
    from runner.errors import section_settings

    path = section_settings(BrowserSettings, config.browser, "browser").executable_path
    in_container = config.sandbox.kind == "docker" and config.sandbox.options.get("browser_in_container", True)
    if in_container and suite.artifact_kind == "static":
        return [Problem("sandbox.options.browser_in_container", f"suite {config.suite.name!r} renders its pages "
                        "in the run's browsers from this host, which a browser container cannot reach",
                        "set sandbox.options.browser_in_container=false (or use sandbox=local)")]
    if path is None or in_container:
        return []
    if not (Path(path).is_file() and os.access(path, os.X_OK)):
        return [Problem("browser.executable_path", f"{path} is not an executable browser",
                        "`apt-get install -y chromium` (bash scripts/setup.sh does it), or set "
                        "browser.executable_path (null: Playwright's own browser after `playwright install chromium`)")]
    return []


async def check_tasks(config: Any, suite: Any) -> list[Problem]:
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


def check_suite_resources(suite: Any) -> list[Problem]:
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


def check_paper_data(config: Any, context: RunContext | None = None) -> list[Problem]:
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


async def check_run(config: Any, context: RunContext | None = None) -> list[str]:
    """Preflight of a whole run from its validated config (builds the suite object; loads nothing heavy). The
    paper's data comes first: without it the suite cannot even be built."""
    from runner.suites.registry import build_run_suite

    missing = check_paper_data(config, context)
    if missing:
        raise PreflightError(missing)
    suite = build_run_suite(config)
    suite.configure_run(config)
    notes = await run_preflight(config, suite, context)
    return notes + await limits_notes(config, suite)


async def limits_notes(config: Any, suite: Any) -> list[str]:
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


async def run_preflight(config: Any, suite: Any, context: RunContext | None = None) -> list[str]:
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
