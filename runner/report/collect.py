"""Load finished runs for reporting: from run dirs (config.yaml, summary.json, turns.jsonl, tasks.json)
or from an MLflow experiment (its job runs' summary.json and config.yaml artifacts, plus the per-turn
metrics of their nested task runs).

A run dir stays the source of truth: an MLflow job run whose `run_dir` tag points at a readable run dir
on this machine is loaded from there; otherwise its records are rebuilt from the task runs' metrics
(status, pass, scores per turn; no evidence).
"""

from __future__ import annotations

import json
import logging
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from runner.turns.records import FailureBucket, RunDirectory, TurnRecord

log = logging.getLogger(__name__)

TASKS_FILE = "tasks.json"  # the run's task library (public fields only), written at the end of a run


@dataclass
class RunData:
    """One run as the report sees it."""

    label: str
    config: dict[str, Any]
    summary: dict[str, Any]
    records: list[TurnRecord]
    path: Path | None = None  # the run dir, when the run has one on this machine
    run_id: str | None = None  # MLflow job run id, when known
    parent_run_id: str | None = None  # the sweep's parent run, when known
    experiment_id: str | None = None
    tracking_uri: str | None = None
    library: list[dict[str, Any]] = field(default_factory=list)  # task library (library.task_library shape)

    def _name(self, group: str) -> str:
        run = self.summary.get("run") or {}
        return str(run.get(group) or (self.config.get(group) or {}).get("name") or "")

    @property
    def suite(self) -> str:
        return self._name("suite") or (self.records[0].suite if self.records else "")

    @property
    def model(self) -> str:
        return self._name("model")

    @property
    def judge(self) -> str:
        return self._name("judge")

    @property
    def actor(self) -> str:
        return self._name("actor")

    @property
    def agent(self) -> str:
        """Who generated in the workspace (runner/agents/); "none" for one model call per turn."""
        return self._name("agent") or "none"

    @property
    def domains(self) -> dict[str, str]:
        """task id -> domain, from the task library."""
        return {task["id"]: task.get("domain", "") for task in self.library}


def is_run_dir(path: Path) -> bool:
    return (path / RunDirectory.CONFIG).is_file() and (path / RunDirectory.RECORDS).is_file()


def expand_run_dirs(paths: list[Path]) -> list[Path]:
    """Run dirs as given; a folder that is not a run dir (e.g. a multirun sweep dir) contributes the run
    dirs directly below it, so `python -m runner.report multirun/<stamp>` reports the whole grid."""
    found: list[Path] = []
    for path in paths:
        path = Path(path)
        if is_run_dir(path):
            found.append(path)
            continue
        children = sorted(child for child in path.iterdir() if child.is_dir() and is_run_dir(child)) if path.is_dir() else []
        if not children:
            raise FileNotFoundError(f"{path}: not a run dir (needs {RunDirectory.CONFIG} and {RunDirectory.RECORDS}) and holds none")
        found.extend(children)
    return found


def _read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return default


def load_run_dir(path: Path) -> RunData:
    path = Path(path)
    config = yaml.safe_load((path / RunDirectory.CONFIG).read_text()) or {}
    records = sorted(RunDirectory(path).load_records(), key=lambda r: (r.task_id, r.turn))
    summary = _read_json(path / RunDirectory.SUMMARY, {})
    reference = _read_json(path / "tracking.json", {})
    library = _read_json(path / TASKS_FILE, [])
    if not library:
        library = library_from_records(records)
    return RunData(label=path.name, config=config, summary=summary, records=records, path=path,
                   run_id=reference.get("run_id"), experiment_id=reference.get("experiment_id"),
                   tracking_uri=reference.get("tracking_uri"), library=library)


def library_from_records(records: list[TurnRecord]) -> list[dict[str, Any]]:
    """A minimal task library when the run wrote none: ids, sub-suites and turn counts only."""
    tasks: dict[str, dict[str, Any]] = {}
    for record in records:
        entry = tasks.setdefault(record.task_id, {"id": record.task_id, "suite": record.suite,
                                                  "sub_suite": record.sub_suite, "title": "", "domain": "",
                                                  "tools": [], "turns": []})
        entry["turns"].append({"index": record.turn, "prompt": ""})
    for entry in tasks.values():
        entry["turns"].sort(key=lambda t: t["index"])
    return [tasks[key] for key in sorted(tasks)]


def load_runs(paths: list[Path], *, merge_dir: Path | None = None) -> list[RunData]:
    """Load run dirs; shards of one experiment (`suite.shard=I/N`) are merged first (runner.merge), so the
    report shows the result of the whole experiment, identical to an unsharded run."""
    from runner.run.merge import merge_runs, shard_groups

    runs: list[RunData] = []
    for position, group in enumerate(shard_groups(expand_run_dirs(paths))):
        if len(group) == 1:
            runs.append(load_run_dir(group[0]))
            continue
        target = (merge_dir or Path(tempfile.mkdtemp(prefix="genui-merge-"))) / f"merged-{position}"
        merged = load_run_dir(merge_runs(group, target))
        merged.label = f"{group[0].name}+{len(group) - 1} shards"
        runs.append(merged)
    unique_labels(runs)
    return runs


def unique_labels(runs: list[RunData]) -> None:
    """Label each run model / judge / actor; the run dir name is added only where that repeats."""
    base = [" / ".join(part for part in (run.model, run.judge, run.actor) if part) or run.label for run in runs]
    for run, label in zip(runs, base):
        where = run.path.name if run.path is not None else (run.run_id or "")[:8]
        run.label = label if base.count(label) == 1 else f"{label} ({where})"


# --------------------------------------------------------------------------- MLflow


def load_mlflow_experiment(experiment: str, tracking_uri: str, *, download_dir: Path) -> list[RunData]:
    """Every job run (tag genui.kind=job) of an MLflow experiment, newest first."""
    from mlflow import MlflowClient

    from runner.tracking.tracker import KIND_TAG, PARENT_TAG, TASK_TAG, quiet_mlflow_logs

    quiet_mlflow_logs()
    client = MlflowClient(tracking_uri=tracking_uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        raise LookupError(f"MLflow experiment {experiment!r} not found in {tracking_uri}")
    jobs = _search_all(client, found.experiment_id, f"tags.`{KIND_TAG}` = 'job'")
    runs: list[RunData] = []
    for job in jobs:
        run_id = job.info.run_id
        local = Path(job.data.tags.get("run_dir", "")) if job.data.tags.get("run_dir") else None
        if local is not None and is_run_dir(local) and (local / RunDirectory.SUMMARY).is_file():
            run = load_run_dir(local)
        else:
            target = download_dir / run_id
            target.mkdir(parents=True, exist_ok=True)
            summary = _download_json(client, run_id, RunDirectory.SUMMARY, target) or {}
            config = _download_yaml(client, run_id, RunDirectory.CONFIG, target) or {}
            tasks = _search_all(client, found.experiment_id, f"tags.`{PARENT_TAG}` = '{run_id}'")
            records = [record for task in tasks if task.data.tags.get(TASK_TAG)
                       for record in _records_from_metrics(client, task, summary, job.data.tags)]
            run = RunData(label=job.info.run_name or run_id[:8], config=config, summary=summary,
                          records=sorted(records, key=lambda r: (r.task_id, r.turn)),
                          library=library_from_records(records))
        run.run_id = run_id
        run.parent_run_id = job.data.tags.get(PARENT_TAG)
        run.experiment_id = found.experiment_id
        run.tracking_uri = tracking_uri
        runs.append(run)
    unique_labels(runs)
    return runs


def _search_all(client: Any, experiment_id: str, filter_string: str) -> list[Any]:
    found: list[Any] = []
    token = None
    for _ in range(100):  # pages of 1000; bounded
        page = client.search_runs([experiment_id], filter_string=filter_string, max_results=1000,
                                  order_by=["attributes.start_time DESC"], page_token=token)
        found.extend(page)
        token = page.token
        if not token:
            break
    return found


def _download_json(client: Any, run_id: str, name: str, target: Path) -> Any:
    try:
        return json.loads(Path(client.download_artifacts(run_id, name, str(target))).read_text())
    except Exception:  # a missing artifact only means less to show
        log.info("run %s has no %s artifact", run_id, name)
        return None


def _download_yaml(client: Any, run_id: str, name: str, target: Path) -> Any:
    try:
        return yaml.safe_load(Path(client.download_artifacts(run_id, name, str(target))).read_text())
    except Exception:
        log.info("run %s has no %s artifact", run_id, name)
        return None


def _records_from_metrics(client: Any, task_run: Any, summary: dict[str, Any], job_tags: dict[str, str]) -> list[TurnRecord]:
    """Rebuild the TurnRecords of one task run from its per-turn metrics (runner.tracking.tracker.turn_metrics)."""
    from runner.tracking.tracker import TASK_TAG

    task_id = task_run.data.tags[TASK_TAG]
    steps: dict[int, dict[str, float]] = {}
    for key in task_run.data.metrics:
        for metric in client.get_metric_history(task_run.info.run_id, key):
            steps.setdefault(int(metric.step), {})[key] = metric.value
    run = summary.get("run") or {}
    records = []
    for turn, values in sorted(steps.items()):
        status = next((bucket for bucket in FailureBucket if values.get(f"status_{bucket.value}") == 1.0), FailureBucket.INFRA)
        passed: bool | None = None if values.get("unassessed") == 1.0 else values.get("passed") == 1.0
        reserved = ("passed", "unassessed", "model_responded")
        scores = {key: value for key, value in values.items() if not key.startswith(("status_", "time_", "usage_", "dim_", "requirements_")) and key not in reserved}
        records.append(TurnRecord(
            task_id=task_id, suite=task_run.data.tags.get("genui.suite", run.get("suite", "")),
            sub_suite=task_run.data.tags.get("genui.sub_suite", ""), turn=turn, status=status, passed=passed,
            model_responded=values.get("model_responded") == 1.0, scores=scores,
            timings={key[5:]: value for key, value in values.items() if key.startswith("time_")},
            model=run.get("model", job_tags.get("model", "")), judge=run.get("judge", job_tags.get("judge", "")),
            actor=run.get("actor", ""), extra={"source": "mlflow metrics"},
        ))
    return records


__all__ = ["RunData", "TASKS_FILE", "expand_run_dirs", "is_run_dir", "library_from_records", "load_mlflow_experiment",
           "load_run_dir", "load_runs", "unique_labels"]
