"""`python -m runner.rejudge RUN_DIR judge=NAME`: score a finished run's frozen evidence packets with another
judge, into a new run dir with its own turns.jsonl, summary.json and MLflow run (tagged with the source run).

This is the judging phase of a normal run (runner/turns/judging_phase.py) on packets copied from the source run: nothing
is generated, built or browsed, and only the judge's server (if it has one) starts. A grid of judges is a
Hydra multirun: `python -m runner.rejudge RUN_DIR -m judge=rules,kimi`. Re-running into the same output dir
finishes the slots it has not recorded yet.

`judge.ablate=[source,screenshot,actor_trace,private_reference]` removes those evidence sources from the
copied packets before judging (EvoGenUI-Bench Table 3, D.2.1; runner/validity/ablation.py); rejudge.json,
summary.json and the MLflow run record which.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hydra
import yaml
from hydra.core.hydra_config import HydraConfig
from hydra.utils import get_original_cwd
from omegaconf import DictConfig, OmegaConf
from pydantic import ValidationError
from rich.console import Console

from runner.errors import ConfigError, UserError, format_validation_error
from runner.run.validation import validate_config
from runner.config import JudgeConfig, RunnerConfig
from runner.turns.records import RunDirectory

if TYPE_CHECKING:
    from runner.suites.base import Suite


__all__ = ["ABLATED_TAG", "REJUDGE_FILE", "SOURCE_DIR_TAG", "SOURCE_RUN_TAG", "rejudge_run"]

REJUDGE_FILE = "rejudge.json"  # in the new run dir: where its packets came from
SOURCE_RUN_TAG = "genui.source_run_id"  # MLflow tag linking a re-judged run to the run it re-judges
SOURCE_DIR_TAG = "genui.source_run_dir"
ABLATED_TAG = "genui.ablated"  # the evidence sources removed before judging ("none": full evidence)


def source_config(source: Path, *, judge: JudgeConfig, overrides: dict[str, Any], project_root: Path) -> RunnerConfig:
    """The source run's resolved config with the new judge (and tracking, timeouts, judge concurrency)."""
    path = source / RunDirectory.CONFIG
    if not path.is_file():
        raise ConfigError(f"source = {str(source)!r}: no {RunDirectory.CONFIG} there; pass the dir of a finished run")
    raw = yaml.safe_load(path.read_text()) or {}
    raw["judge"] = judge.model_dump(mode="json")  # without `ablate`: rejudge.json records it
    raw["tracking"] = overrides["tracking"]
    raw["turn_timeout_s"] = overrides["turn_timeout_s"]
    raw.setdefault("concurrency", {})["judge_calls"] = overrides["judge_calls"]
    raw["run"] = {"phases": "staged", "stage": "judge"}
    raw["project_root"] = str(project_root)
    return validate_config(raw)


def _slot_dirs(run_dir: Path, tasks: list[Any]) -> list[tuple[str, int, Path]]:
    directory = RunDirectory(run_dir)
    return [(task.id, turn.index, directory.evidence_dir(task.id, turn.index)) for task in tasks for turn in task.turns]


async def rejudge_run(source: Path, out: Path, *, judge: JudgeConfig, overrides: dict[str, Any],
                      project_root: Path, console: Console | None = None,
                      ablate: list[str] | None = None) -> dict[str, Any]:
    """Judge every packet of `source` with `judge` into `out` (without the `ablate` evidence sources);
    returns the new summary."""
    from runner.run.experiment import open_browsers
    from runner.run.roles import run_facts
    from runner.sandbox.registry import build_sandbox
    from runner.suites.base import SuiteContext
    from runner.suites.registry import build_run_suite

    console = console or Console(stderr=True)
    source, out = Path(source).resolve(), Path(out).resolve()
    if source == out:
        raise ConfigError(f"the re-judged run needs its own dir (hydra.run.dir), not the source {source}")
    config = source_config(source, judge=judge, overrides=overrides, project_root=project_root)
    suite = build_run_suite(config)
    suite.configure_run(run_facts(config))
    async with AsyncExitStack() as shared:
        # The suite's context: a packet frozen by an older version may need a render (lazy browsers).
        sandbox = build_sandbox(config)
        shared.push_async_callback(sandbox.aclose)
        browsers = await open_browsers(config, sandbox, start=False)
        shared.push_async_callback(browsers.aclose)
        suite.bind(SuiteContext(browsers=browsers, sandbox=sandbox))
        return await _rejudge_bound(config, suite, source, out, console=console, ablate=ablate or [])


async def _rejudge_bound(config: RunnerConfig, suite: Suite, source: Path, out: Path, *, console: Console,
                         ablate: list[str]) -> dict[str, Any]:
    from runner.tracking import tracker as tracking
    from runner.run.capacity import resolve_concurrency
    from runner.run.experiment import summarize_run
    from runner.run.lineage import load_lineage
    from runner.report.task_set import task_set_record, task_set_tags
    from runner.run.session import RunSession, rejudge_run_name
    from runner.judges.registry import build_judge
    from runner.turns.judging_phase import JudgingPhase
    from runner.models.cache import ResponseCache
    from runner.models.serving import SERVER_LOG_DIR
    from runner.turns.packets import copy_packet_folder, has_packet
    from runner.run.placement import plan_phases
    from runner.validity.ablation import ablate_folder
    from runner.run.roles import RunRoles, roles_used, server_claims

    tasks = await suite.load_tasks()
    slots = _slot_dirs(source, tasks)
    missing = [f"{task_id} turn {turn}" for task_id, turn, directory in slots if not has_packet(directory)]
    if missing:
        raise ConfigError(f"source = {str(source)!r}: {len(missing)} slot(s) have no frozen evidence packet (e.g. "
                          f"{missing[0]}); finish that run first (re-run it into the same dir)")

    run_dir = RunDirectory(out)
    config = config.model_copy(update={"concurrency": resolve_concurrency(config, episodes_available=len(tasks))})
    (run_dir.path / RunDirectory.CONFIG).write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))
    roles = [role for role in roles_used(config, suite) if role == "judge"]
    plan = plan_phases("staged", server_claims(config, roles), [], roles=roles)
    plan.reason = f"re-judging {source}: the judging phase only"
    plan.phases = [phase for phase in plan.phases if phase["name"] == "judging"]
    plan.concurrency = config.concurrency.model_dump()
    console.print(plan.describe())
    plan.write(run_dir.path)

    ablated = list(ablate)
    earlier = run_dir.path / REJUDGE_FILE
    if earlier.is_file() and json.loads(earlier.read_text()).get("ablated", []) != ablated:
        raise ConfigError(f"{earlier}: this dir was judged with judge.ablate="
                          f"{json.loads(earlier.read_text()).get('ablated', [])}, not {ablated}; use another dir")
    source_ref = tracking.load_run_ref(source) or {}
    run_dir.write_json(REJUDGE_FILE, {"source_run_dir": str(source), "source_run_id": source_ref.get("run_id"),
                                      "judge": config.judge.name, "ablated": ablated})
    pending: list[Path] = []  # the copied packets of slots this dir has not recorded yet (resume)
    recorded = {record.slot for record in run_dir.load_records()}
    for task_id, turn, directory in slots:
        if (task_id, turn) not in recorded:
            target = run_dir.evidence_dir(task_id, turn)
            copy_packet_folder(directory, target)
            if ablated:
                ablate_folder(target, ablated)
            pending.append(target)

    source_task_set = (load_lineage(source) or {}).get("task_set")  # what the source run measured
    tags = {SOURCE_RUN_TAG: source_ref.get("run_id") or "", SOURCE_DIR_TAG: str(source), "genui.stage": "rejudge",
            ABLATED_TAG: ",".join(ablated) or "none",
            **task_set_tags(task_set_record(source_task_set, len(tasks)))}
    async with RunSession.open(config, run_dir, name=rejudge_run_name(config, ablated), tags=tags, reattach=True,
                               console=console) as session:
        async with AsyncExitStack() as stack:
            model_roles = RunRoles(config, cache=ResponseCache(config.resolve_path(config.cache_dir) / "responses.sqlite", draw=config.repeat),
                                   log_dir=run_dir.path / SERVER_LOG_DIR)
            stack.push_async_callback(model_roles.aclose)
            # The suite's own roles that judge too (EvoGenUI-Bench's §6.1 diagnostic judge); a vLLM-served one
            # starts on its first call.
            for role, model in model_roles.models(suite.required_roles).items():
                suite.context.roles.setdefault(role, model)
            judge_obj = build_judge(config.judge, model=model_roles.model("judge") if model_roles.has("judge") else None)
            stack.push_async_callback(judge_obj.aclose)
            judging = JudgingPhase(
                suite=suite, judge=judge_obj, run_dir=run_dir, tracker=session.tracker,
                judge_calls=int(config.concurrency.judge_calls or 2), timeout_s=config.turn_timeout_s,
                ensure_judge=(lambda: model_roles.ensure("judge")) if roles else None,
            )
            await judging.judge_all(pending)
        records = run_dir.load_records()
        summary = summarize_run(config, suite, records, tasks, task_set=source_task_set)
        if ablated:  # full evidence: the summary stays the source run's, key for key
            summary["run"]["ablated"] = ablated
        await session.conclude(summary, tasks=tasks, records=records)
        return summary


def _overrides(raw: dict[str, Any]) -> tuple[JudgeConfig, dict[str, Any]]:
    from runner.tracking.tracker import TrackingSettings
    from runner.validity.ablation import validate_sources

    judge_raw = dict(raw["judge"])
    ablate = validate_sources(judge_raw.pop("ablate", None))  # a rejudge option, not part of the judge
    try:
        judge = JudgeConfig.model_validate(judge_raw)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, judge_raw, "judge")) from None
    try:
        tracking_settings = TrackingSettings.model_validate(raw.get("tracking") or {})
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, raw.get("tracking") or {}, "tracking")) from None
    extra = sorted(set(raw) - {"judge", "tracking", "source", "concurrency", "turn_timeout_s"})
    if extra:
        raise ConfigError(f"invalid configuration:\n  {extra[0]}: unknown key for runner.rejudge "
                          f"(it takes source, judge, tracking, concurrency.judge_calls, turn_timeout_s)")
    calls = (raw.get("concurrency") or {}).get("judge_calls")
    return judge, {"tracking": tracking_settings.model_dump(mode="json"), "judge_calls": calls,
                   "turn_timeout_s": float(raw.get("turn_timeout_s") or 600), "ablate": ablate}


@hydra.main(config_path="../../conf", config_name="rejudge", version_base="1.3")
def main(cfg: DictConfig) -> None:
    raw = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(raw, dict)
    project_root = Path(get_original_cwd())
    from runner.tracking.sweep import attach_to_sweep
    from runner.tracking.tracker import TrackingSettings

    try:
        judge, overrides = _overrides(raw)
        source = Path(str(raw["source"]))
        source = source if source.is_absolute() else project_root / source
        # A multirun job nests its MLflow run under the sweep's parent run (attach_to_sweep needs a config).
        holder = RunnerConfig.model_construct(tracking=TrackingSettings.model_validate(overrides["tracking"]),
                                              project_root=str(project_root))
        overrides["tracking"] = attach_to_sweep(holder).tracking.model_dump(mode="json")
        run_dir = Path(HydraConfig.get().runtime.output_dir)
        for noisy in ("alembic", "httpx", "mlflow"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
        asyncio.run(rejudge_run(source, run_dir, judge=judge, overrides=overrides, project_root=project_root,
                                ablate=overrides.pop("ablate")))
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    print(run_dir)


def source_argument(argv: list[str]) -> list[str]:
    """`RUN_DIR` (the first plain argument) becomes the override `source=RUN_DIR`, placed last (argparse reads
    Hydra's overrides as one run of positionals, so none may come before a flag such as `-m`)."""
    rewritten, source = [], []
    for argument in argv:
        if not source and "=" not in argument and not argument.startswith("-"):
            source.append(f"source={json.dumps(argument)}")  # quoted: paths may hold Hydra's special characters
        else:
            rewritten.append(argument)
    return rewritten + source


if __name__ == "__main__":
    from runner.compose import quote_null_choices
    from runner.tracking.sweep import quiet_schema_matching

    sys.argv = [sys.argv[0], *source_argument(quote_null_choices(sys.argv[1:]))]
    quiet_schema_matching()
    main()
