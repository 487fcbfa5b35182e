"""Lineage: what a run's results depend on, recorded so results of different origins never mix.

Each run writes lineage.json beside config.yaml and tags its MLflow job run with the same items:
git commit (+ dirty flag), a hash of the comparable config, a hash of the selected task set and where it came from
(runner/run/task_set.py: the paper's pinned data or the project's own tasks), sandbox
image tags and digests (with the versions the images record), the browser versions, model revisions, prompt
versions, and what each model role's requests carry with every deviation from its config (the provider dialect's
`request_parameters` and `provider_deviations`). `resume` compares the stored lineage with the current
one (runner.run.experiment.prepare_run_dir) and `runner.merge` checks that shards share one lineage.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runner.config import RunnerConfig
from runner.errors import ConfigError
from runner.kinds import KINDS
from runner.suites.base import Suite
from runner.run.task_set import task_set_identity
from runner.turns.records import write_json_atomic
from runner.turns.tasks import Task

log = logging.getLogger(__name__)

LINEAGE_FILE = "lineage.json"
LINEAGE_VERSION = 1

# Config keys that never change results (same list as runner.run.experiment's resume rules) plus the shard,
# which is recorded on its own so the shards of one experiment share a config hash.
CONFIG_NEUTRAL = {"resume", "tracking", "concurrency", "project_root", "turn_timeout_s", "model_timeout_s", "run",
                  "data_dir"}

# Modules whose PROMPT_VERSION shapes what models or judges are asked beyond the suite's own prompt
# (Suite.prompt_version) and the rubrics (Rubric.version); a module listed here must declare one.
PROMPT_VERSION_MODULES: list[str] = []

# Items compared on resume, in the order a refusal names them, with their human-readable names.
COMPARED: dict[str, str] = {
    "git_commit": "git commit",
    "git_dirty": "git dirty state",
    "config_hash": "config hash",
    "shard": "shard",
    "task_set_hash": "task set",
    "task_set": "task set source",
    "image_digests": "image digests",
    "browser": "browser",
    "model_revisions": "model revisions",
    "prompt_versions": "prompt versions",
}
# Recorded and tagged but not compared: the browser that does not render the run may update freely; what each
# model role's requests carry and how that differs from its config follow from the config (its hash is compared).
TAGGED_ONLY = ("browser_versions", "request_parameters", "provider_deviations", "agent_deviation")
# Keys in model/judge/actor config that pin which weights answer (anything else is covered by the config hash).
REVISION_KEYS = ("name", "provider", "model", "revision", "model_revision", "tokenizer_revision", "checkpoint",
                 "quantization", "dtype", "served_model_name")


def digest(payload: Any) -> str:
    """sha256 of canonical JSON (sorted keys, no whitespace)."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def comparable_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config without result-neutral keys and without suite.shard."""
    kept = {key: value for key, value in config.items() if key not in CONFIG_NEUTRAL}
    if isinstance(kept.get("suite"), Mapping):
        kept["suite"] = {key: value for key, value in kept["suite"].items() if key != "shard"}
    return kept


def task_digest(task: Task) -> str:
    """Content hash of one task; `source_path` is left out because it differs between checkouts."""
    return digest(task.model_dump(mode="json", exclude={"source_path"}))


def task_set_hash(digests: Mapping[str, str]) -> str:
    return digest(sorted(digests.items()))


def model_revisions(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The revision-pinning keys of every model in the config: the generator, and the judge's/actor's own."""
    found: dict[str, dict[str, Any]] = {}
    model = config.get("model") or {}
    found["model"] = {key: model[key] for key in REVISION_KEYS if key in model}
    for section in ("judge", "actor"):
        options = (config.get(section) or {}).get("options") or {}
        picked = {key: options[key] for key in REVISION_KEYS if key in options}
        if isinstance(options.get("model"), Mapping):  # a nested model block
            picked = {key: options["model"][key] for key in REVISION_KEYS if key in options["model"]}
        if picked:
            found[section] = picked
    return found


class LineageError(ConfigError):
    """A prompt or rubric a run depends on declares no version: the result could not be traced to it."""


def _declared(owner: Any, attribute: str, what: str) -> str:
    value = getattr(owner, attribute, None)
    if value is None or not str(value).strip():
        raise LineageError(f"{what} declares no {attribute}; lineage.json must record it (set {attribute} on it)")
    return str(value)


def rubric_versions(config: RunnerConfig | None = None, suite: Suite | None = None) -> dict[str, str]:
    """`rubric:<name>` -> version for the judge's rubrics (those its kind names, e.g. an LLM judge's) and every
    rubric the suite owns."""
    versions: dict[str, str] = {}
    judge = config.judge if config is not None else None
    kind = KINDS.get("judge", judge.kind, key="judge.kind") if judge is not None else None
    for name in (kind.rubrics(judge) if kind is not None and kind.rubrics is not None else []):
        from runner.judges.rubrics import RUBRICS, rubric_class

        if name not in RUBRICS:
            raise LineageError(f"judge.options.rubric = {name!r}: unknown rubric, no version to record")
        versions[f"rubric:{name}"] = _declared(rubric_class(name), "version", f"rubric {name!r}")
    for name, version in (suite.rubric_versions() if suite is not None else {}).items():
        if version is None or not str(version).strip():
            raise LineageError(f"suite {suite.name!r}: rubric {name!r} declares no version")
        versions[f"rubric:{name}"] = str(version)
    return versions


def prompt_versions(suite: Suite | None = None, config: RunnerConfig | None = None) -> dict[str, str]:
    """Every prompt and rubric version a run depends on: the modules in PROMPT_VERSION_MODULES, the suite's
    `prompt_version` and the rubrics (rubric_versions). A missing one raises LineageError, never skipped."""
    versions: dict[str, str] = {}
    for name in PROMPT_VERSION_MODULES:
        versions[name] = _declared(importlib.import_module(name), "PROMPT_VERSION", f"module {name}")
    if suite is not None:
        if not str(suite.prompt_version or "").strip():
            raise LineageError(f"suite {suite.name!r} declares no prompt_version; lineage.json must record it")
        versions[f"suite:{suite.name}"] = str(suite.prompt_version)
    versions.update(rubric_versions(config, suite))
    agent = config.agent if config is not None else None
    if agent is not None and not KINDS.chosen("agent", agent).inert:  # what an agent is told besides the suite's payload
        from runner.agents.prompt import AGENT_PROMPT_VERSION

        versions[f"agent:{agent.name}"] = AGENT_PROMPT_VERSION
    return versions


def sandbox_images(config: RunnerConfig) -> dict[str, dict[str, Any]]:
    """The sandbox's images (tag, digest, recorded versions), from its kind's `images` hook ({} if none), and
    an agent's (an official CLI's image), from the agent kind's."""
    found: dict[str, dict[str, Any]] = {}
    for family in ("sandbox", "agent"):
        kind = KINDS.get(family, getattr(config, family).kind, key=f"{family}.kind")
        hook = kind.images if kind is not None else None
        if hook is None:
            continue
        try:
            found.update(hook(config))
        except Exception as error:  # an unreachable engine must not stop the run; record that it was unknown
            log.warning("could not read the %s images: %s", family, error)
            found["error" if family == "sandbox" else f"{family}-error"] = {
                "tag": "unavailable", "digest": "unavailable", "versions": {}}
    return found


def image_digests(images: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """{image tag: image Id} of the sandbox's images."""
    return {str(info["tag"]): str(info["digest"]) for info in images.values()}


def browser_versions(config: RunnerConfig, images: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Which Chromium renders the run ("used": host | image) and the version of each one there is.

    The host's is always recorded (it differs from the image's after a security update on one side)."""
    from runner.browser.version import executable_version
    from runner.sandbox.images import IMAGE_CHROMIUM_PACKAGE, debian_upstream_version

    executable = config.browser_settings.executable_path
    found = {"host": executable_version(executable) or ("playwright" if executable is None else "unknown")}
    image_chromium = ((images.get("browser") or {}).get("versions") or {}).get(IMAGE_CHROMIUM_PACKAGE)
    if image_chromium:
        found["image"] = debian_upstream_version(image_chromium)
    found["used"] = "image" if "browser" in images else "host"
    return found


def compute_lineage(config: RunnerConfig, tasks: list[Task], *, suite: Suite | None = None) -> dict[str, Any]:
    """The lineage of a run of `config` (a RunnerConfig) over `tasks` (the selected tasks)."""
    from runner.tracking.tracker import git_state

    dumped = config.model_dump(mode="json")
    commit, dirty = git_state(Path(config.project_root))
    digests = {task.id: task_digest(task) for task in tasks}
    images = sandbox_images(config)
    requests, deviations = request_record(config, suite)
    return {
        "version": LINEAGE_VERSION,
        "git_commit": commit,
        "git_dirty": dirty,
        "config_hash": digest(comparable_config(dumped)),
        "shard": (dumped.get("suite") or {}).get("shard"),
        "task_set_hash": task_set_hash(digests),
        "task_digests": digests,
        "image_digests": image_digests(images),
        "image_versions": {name: info.get("versions", {}) for name, info in images.items()},
        "browser_versions": (browsers := browser_versions(config, images)),
        "browser": f"{browsers['used']} {browsers.get(browsers['used'], 'unknown')}",
        "model_revisions": model_revisions(dumped),
        "prompt_versions": prompt_versions(suite, config),
        "request_parameters": requests,
        "provider_deviations": deviations,
        **({"agent_deviation": agent_deviation} if (agent_deviation := _agent_deviation(config)) else {}),
        **({"task_set": task_set_identity(config, suite, project_commit=commit)} if suite is not None else {}),
    }


def _agent_deviation(config: RunnerConfig) -> str | None:
    """Where the run's agent is not the one the paper used for its model (runner/agents/settings.py)."""
    from runner.agents.settings import paper_agent_deviation

    return paper_agent_deviation(config)


def request_record(config: RunnerConfig, suite: Suite | None) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """What each endpoint role's requests carry (its dialect's parameter names, the temperature sent, the
    structured output sent for the one requested) and every deviation from its config, e.g. a model that takes
    only its provider's default temperature where the config (a paper) says 0 (runner/models/dialects.py)."""
    if suite is None:
        return {}, []
    from runner.run.role_requests import request_parameters

    return request_parameters(config, suite)


def diff_lineage(old: Mapping[str, Any], new: Mapping[str, Any], *, ignore: tuple[str, ...] = ()) -> list[str]:
    """Human-readable descriptions of the compared items that differ, e.g. "git commit (abc123 -> def456)"."""
    changes = []
    for key, label in COMPARED.items():
        if key in ignore or key not in old:  # an item an older lineage did not record cannot be compared
            continue
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if key == "task_set_hash":
            changes.append(f"{label} ({_task_changes(old.get('task_digests') or {}, new.get('task_digests') or {})})")
        elif isinstance(before, Mapping) and isinstance(after, Mapping):
            keys = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            changes.append(f"{label} ({', '.join(keys)})")
        else:
            changes.append(f"{label} ({_short(before)} -> {_short(after)})")
    return changes


def _task_changes(before: Mapping[str, str], after: Mapping[str, str]) -> str:
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    edited = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    parts = [f"{name}: {', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}"
             for name, ids in (("edited", edited), ("added", added), ("removed", removed)) if ids]
    return "; ".join(parts) or "content changed"


def _short(value: Any) -> str:
    text = str(value)
    return text[:12] if len(text) == 64 or len(text) == 40 else text  # hashes and commits, shortened


def lineage_tags(lineage: Mapping[str, Any]) -> dict[str, str]:
    """MLflow tags (genui.lineage.*) for a job run; per-task digests stay in lineage.json only."""
    tags = {}
    for key in (*COMPARED, *(k for k in TAGGED_ONLY if k in lineage)):
        value = lineage.get(key)
        tags[f"genui.lineage.{key}"] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return tags


def write_lineage(run_dir: Path, lineage: Mapping[str, Any]) -> Path:
    return write_json_atomic(Path(run_dir) / LINEAGE_FILE, dict(lineage))


def load_lineage(run_dir: Path) -> dict[str, Any] | None:
    path = Path(run_dir) / LINEAGE_FILE
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


__all__ = [
    "COMPARED",
    "LINEAGE_FILE",
    "LineageError",
    "PROMPT_VERSION_MODULES",
    "compute_lineage",
    "comparable_config",
    "diff_lineage",
    "digest",
    "lineage_tags",
    "load_lineage",
    "task_digest",
    "task_set_hash",
    "write_lineage",
]
