"""MLflow logging: one run per Hydra job, one nested run per task, per-turn metrics with step=turn.

The run directory (turns.jsonl, summary.json) stays the source of truth; MLflow is a view onto it
for comparing runs. Only `MlflowClient` with explicit run ids is used, because MLflow's fluent API
keeps the active run in global state and is not safe from the engine's worker threads.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

# Must be set before mlflow is imported: its import starts a telemetry client that phones home.
# The flag is also read at every logging call, so setting it here helps even if mlflow came first.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # tqdm bars on stderr

from mlflow import MlflowClient  # noqa: E402
from mlflow.entities import Metric, Param, RunTag  # noqa: E402
from mlflow.exceptions import MlflowException  # noqa: E402

from runner.tracking.call_traces import ModelCall  # noqa: E402
from runner.tracking.protocol import FinishStatus, RunTracker  # noqa: E402
from runner.turns.records import RunDirectory, TurnRecord, write_json_atomic  # noqa: E402
from runner.tracking.settings import TrackingSettings  # noqa: E402
from runner.tracking import viewer_link  # noqa: E402

log = logging.getLogger(__name__)

# MLflow's own limits (mlflow.utils.validation), restated so truncation happens before a request fails.
MAX_PARAM_VALUE = 6000
MAX_TAG_VALUE = 8000
MAX_KEY = 250
PARAMS_PER_BATCH = 100
METRICS_PER_BATCH = 1000

PARENT_TAG = "mlflow.parentRunId"
TASK_TAG = "genui.task_id"
KIND_TAG = "genui.kind"
RUN_REF_FILE = "tracking.json"


# --------------------------------------------------------------------------- helpers


def quiet_mlflow_logs() -> None:
    """Creating a sqlite store runs alembic migrations that log a screenful at INFO."""
    for name in ("alembic", "mlflow.store.db.utils", "mlflow.store.db.db_types"):
        logging.getLogger(name).setLevel(logging.WARNING)


def resolve_tracking_uri(uri: str, project_root: Path) -> str:
    """Make a relative sqlite path absolute against the project root (and create its folder)."""
    prefix = "sqlite:///"
    if not uri.startswith(prefix):
        return uri  # http(s)://, databricks, postgresql://..., used as given
    path_part, sep, query = uri[len(prefix) :].partition("?")
    if path_part in ("", ":memory:"):
        return uri
    path = Path(path_part)
    if not path.is_absolute():
        path = (Path(project_root) / path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}{sep}{query}"  # str(path) starts with "/", giving sqlite:////abs


def resolve_artifact_root(root: str | None, project_root: Path) -> str | None:
    """A plain path becomes an absolute file: URI; a URI (s3://, file:, mlflow-artifacts:) is kept."""
    if root is None or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", root):
        return root
    path = Path(root)
    if not path.is_absolute():
        path = (Path(project_root) / path).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path.as_uri()


def safe_key(key: str) -> str:
    """A param/metric/tag key MLflow accepts: allowed characters, no path tricks, bounded length."""
    key = re.sub(r"[^\w.\- :]", "_", key)
    if key in ("", ".") or key.startswith(".."):
        key = "_" + key
    return key[:MAX_KEY]


def safe_path_part(text: str) -> str:
    """Same rule as RunDirectory.evidence_dir, so artifact paths mirror the run dir."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text) or "_"


def flatten_params(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested config -> {"model.generation.temperature": "0.0"}; lists stay one value."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten_params(value, f"{name}."))
        else:
            text = json.dumps(value, default=str) if isinstance(value, (list, tuple)) else str(value)
            flat[safe_key(name)] = text[:MAX_PARAM_VALUE]
    return flat


def numeric_leaves(tree: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    """Every finite number in a nested dict/list, named by its dotted path (list items by index)."""
    if isinstance(tree, Mapping):
        items: Iterable[tuple[Any, Any]] = tree.items()
    elif isinstance(tree, (list, tuple)):
        items = enumerate(tree)
    else:
        if isinstance(tree, (int, float)) and math.isfinite(float(tree)):
            yield safe_key(prefix or "value"), float(tree)
        return
    for key, value in items:
        yield from numeric_leaves(value, f"{prefix}.{key}" if prefix else str(key))


def turn_metrics(record: TurnRecord) -> dict[str, float]:
    """The per-turn values of one record, named as they appear in MLflow."""
    unassessed = record.passed is None
    # Suite scores first, so a score that happens to be called "passed" cannot mask the verdict.
    values: dict[str, float] = dict(numeric_leaves(record.scores))
    values |= {
        "passed": 1.0 if record.passed is True else 0.0,  # undecided never counts as a pass
        "unassessed": 1.0 if unassessed else 0.0,
        "model_responded": 1.0 if record.model_responded else 0.0,
        f"status_{record.status.value}": 1.0,
    }
    for stage, seconds in record.timings.items():
        values[f"time_{stage}"] = seconds
    for name, count in record.usage.items():
        values[f"usage_{name}"] = count
    if record.verdict is not None:
        for name, dimension in record.verdict.dimensions.items():
            if dimension.score is not None:
                values[f"dim_{name}"] = dimension.score
        for status in ("passed", "failed", "unassessed"):
            values[f"requirements_{status}"] = sum(
                1 for r in record.verdict.requirements if r.status.value == status
            )
    return {
        safe_key(k): float(v)
        for k, v in values.items()
        if isinstance(v, (int, float)) and math.isfinite(float(v))
    }


def git_state(project_root: Path) -> tuple[str, str]:
    """(commit, dirty) of the checkout; ("unknown", "unknown") outside a git repo or without git."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args],
                cwd=project_root,
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return "unknown", "unknown"
    # Untracked files (run dirs, caches) do not change the code that ran.
    # --no-optional-locks: do not refresh (write) the index of a checkout someone may be using.
    status = git("--no-optional-locks", "status", "--porcelain", "--untracked-files=no")
    dirty = "unknown" if status is None else ("true" if status else "false")
    return commit, dirty


def save_run_ref(run_dir: Path, tracker: RunTracker) -> Path | None:
    """Remember the job run in the run dir, so `resume=true` reattaches to it."""
    if tracker.run_id is None:
        return None
    payload = {
        "run_id": tracker.run_id,
        "experiment_id": tracker.experiment_id,
        "tracking_uri": tracker.tracking_uri,
    }
    return write_json_atomic(Path(run_dir) / RUN_REF_FILE, payload)


def load_run_ref(run_dir: Path) -> dict[str, str] | None:
    """The saved job run reference, or None if the run dir has none (or an unreadable one)."""
    path = Path(run_dir) / RUN_REF_FILE
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(payload, dict) or not payload.get("run_id"):
        return None
    return {str(k): str(v) for k, v in payload.items()}


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _tag_value(value: Any) -> str:
    return str(value)[:MAX_TAG_VALUE]


# --------------------------------------------------------------------------- trackers


class NullTracker:
    """What `Tracker.open` returns when tracking is disabled: same methods, no effects."""

    run_id: str | None = None
    experiment_id: str | None = None
    tracking_uri: str | None = None

    def task_run(self, task_id: str, *, tags: Mapping[str, Any] | None = None) -> str | None:
        return None

    def log_turn(self, record: TurnRecord, run_dir: Path) -> None:
        return None

    def log_summary(self, summary: Mapping[str, Any], *, run_dir: Path | None = None) -> None:
        return None

    def log_model_call(self, call: ModelCall) -> None:
        return None

    def log_artifact(self, path: Path, *, artifact_path: str | None = None) -> None:
        return None

    def finish(self, status: FinishStatus = "FINISHED") -> None:
        return None

    def __enter__(self) -> NullTracker:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class Tracker:
    """Logs one job's results into MLflow. All methods are safe to call from several threads."""

    def __init__(
        self,
        client: MlflowClient,
        settings: TrackingSettings,
        *,
        run_id: str,
        experiment_id: str,
        tracking_uri: str,
        task_runs: dict[str, str] | None = None,
    ) -> None:
        self.client = client
        self.settings = settings
        self.run_id = run_id
        self.experiment_id = experiment_id
        self.tracking_uri = tracking_uri
        self._task_runs: dict[str, str] = dict(task_runs or {})
        self._reopened: set[str] = set()  # task runs made RUNNING again in this session
        self._finished = False
        self._tracing: Any = None  # mlflow TracingClient, made on the first model call
        self._traced = False
        # One lock for every store write: sqlite allows a single writer, and this keeps
        # lazily created task runs unique per task id.
        self._lock = threading.RLock()

    # ---- construction

    @classmethod
    def open(
        cls,
        settings: TrackingSettings,
        *,
        project_root: Path,
        run_params: Mapping[str, Any] | None = None,
        tags: Mapping[str, Any] | None = None,
        resume_run_id: str | None = None,
    ) -> Tracker | NullTracker:
        """Start (or, with `resume_run_id`, reattach to) the job run of one Hydra job."""
        if not settings.enabled:
            return NullTracker()
        quiet_mlflow_logs()
        project_root = Path(project_root)
        uri = resolve_tracking_uri(settings.uri, project_root)
        client = MlflowClient(tracking_uri=uri)
        experiment_id = ensure_experiment(
            client, settings.experiment, resolve_artifact_root(settings.artifact_root, project_root)
        )
        _set_experiment_kind(client, experiment_id, None)  # runs only, until a model call is traced
        _describe_experiment(client, experiment_id)
        commit, dirty = git_state(project_root)
        run_tags = {
            "mlflow.source.git.commit": commit,
            "genui.git_commit": commit,
            "genui.git_dirty": dirty,
            KIND_TAG: "job",
            **{str(k): v for k, v in (tags or {}).items()},
        }
        if settings.parent_run_id:
            run_tags[PARENT_TAG] = settings.parent_run_id
        if run_tags.get("run_dir"):  # the job run's description: how to open it in the local viewer
            run_tags[viewer_link.NOTE_TAG] = viewer_link.run_note(str(run_tags["run_dir"]), run_params or {})
        params = flatten_params(run_params or {})

        if resume_run_id:
            tracker = cls._reattach(client, settings, resume_run_id, uri, params, run_tags)
            if tracker is not None:
                return tracker
            log.warning("MLflow run %s not found in %s; starting a new job run", resume_run_id, uri)

        run = client.create_run(
            experiment_id,
            tags={safe_key(k): _tag_value(v) for k, v in run_tags.items()},
            run_name=settings.run_name,
        )
        tracker = cls(
            client, settings, run_id=run.info.run_id, experiment_id=experiment_id, tracking_uri=uri
        )
        tracker._log_params(params)
        return tracker

    @classmethod
    def _reattach(
        cls,
        client: MlflowClient,
        settings: TrackingSettings,
        run_id: str,
        uri: str,
        params: dict[str, str],
        run_tags: dict[str, Any],
    ) -> Tracker | None:
        try:
            run = client.get_run(run_id)
        except MlflowException:
            return None
        experiment_id = run.info.experiment_id
        tracker = cls(
            client,
            settings,
            run_id=run_id,
            experiment_id=experiment_id,
            tracking_uri=uri,
            task_runs=_find_task_runs(client, experiment_id, run_id),
        )
        client.update_run(run_id, status="RUNNING")
        # A param cannot change once logged; keep the first value and note which keys differ.
        logged = run.data.params
        changed = sorted(k for k, v in params.items() if k in logged and logged[k] != v)
        tracker._log_params({k: v for k, v in params.items() if k not in logged})
        new_tags = {k: v for k, v in run_tags.items() if safe_key(k) not in run.data.tags}
        new_tags["genui.resumed"] = "true"
        if changed:
            new_tags["genui.resume_changed_params"] = ",".join(changed)
        client.log_batch(
            run_id, tags=[RunTag(safe_key(k), _tag_value(v)) for k, v in new_tags.items()]
        )
        return tracker

    # ---- nested task runs

    def task_run(self, task_id: str, *, tags: Mapping[str, Any] | None = None) -> str:
        """The nested run of one task, created on first use (idempotent per task id)."""
        with self._lock:
            run_id = self._task_runs.get(task_id)
            if run_id is None:
                run_tags = {
                    PARENT_TAG: self.run_id,
                    TASK_TAG: task_id,
                    KIND_TAG: "task",
                    **{str(k): v for k, v in (tags or {}).items()},
                }
                run = self.client.create_run(
                    self.experiment_id,
                    tags={safe_key(k): _tag_value(v) for k, v in run_tags.items()},
                    run_name=task_id,
                )
                run_id = run.info.run_id
                self._task_runs[task_id] = run_id
                self._reopened.add(task_id)
            elif task_id not in self._reopened:
                # Reused from an earlier session of a resumed job: it was terminated then.
                self.client.update_run(run_id, status="RUNNING")
                self._reopened.add(task_id)
            return run_id

    # ---- logging

    def log_turn(self, record: TurnRecord, run_dir: Path) -> None:
        """Per-turn metrics (step=turn) and the turn's evidence files on the task's nested run."""
        with self._lock:
            run_id = self.task_run(
                record.task_id, tags={"genui.suite": record.suite, "genui.sub_suite": record.sub_suite}
            )
            stamp = _now_ms()
            metrics = [
                Metric(key, value, stamp, record.turn) for key, value in turn_metrics(record).items()
            ]
            for batch in _chunks(metrics, METRICS_PER_BATCH):
                self.client.log_batch(run_id, metrics=batch)
            if self.settings.log_evidence and record.evidence_dir:
                self._log_evidence(run_id, record, Path(run_dir))

    def log_summary(self, summary: Mapping[str, Any], *, run_dir: Path | None = None) -> None:
        """The summary's numbers as job-run metrics, plus summary.json and config.yaml as artifacts."""
        with self._lock:
            stamp = _now_ms()
            metrics = [Metric(k, v, stamp, 0) for k, v in numeric_leaves(summary)]
            for batch in _chunks(metrics, METRICS_PER_BATCH):
                self.client.log_batch(self.run_id, metrics=batch)
            if run_dir is not None:
                for name in (RunDirectory.SUMMARY, RunDirectory.CONFIG):
                    path = Path(run_dir) / name
                    if path.is_file():
                        self.client.log_artifact(self.run_id, str(path))

    def log_model_call(self, call: ModelCall) -> None:
        """One model call as an MLflow trace, linked to its task's nested run (the job run without a task).

        The first trace of a job also tags the experiment for the UI's traces view (tracking_traces.py)."""
        from mlflow.tracing.client import TracingClient

        from runner.tracking import traces as tracking_traces

        with self._lock:
            source = self.task_run(call.task_id) if call.task_id else self.run_id
            if self._tracing is None:
                self._tracing = TracingClient(self.tracking_uri)
            tracking_traces.write_call_trace(self._tracing, experiment_id=self.experiment_id, source_run_id=source,
                                             job_run_id=self.run_id, call=call)
            if not self._traced:
                self._traced = True
                _set_experiment_kind(self.client, self.experiment_id, tracking_traces.KIND_GENAI)

    def log_artifact(self, path: Path, *, artifact_path: str | None = None) -> None:
        """One file of the run dir (the viewer, a server log) as an artifact of the job run."""
        self.client.log_artifact(self.run_id, str(path), artifact_path=artifact_path)

    def finish(self, status: FinishStatus = "FINISHED") -> None:
        """Terminate every task run opened in this session, then the job run. Idempotent."""
        if status not in ("FINISHED", "FAILED", "KILLED"):
            raise ValueError(f"finish status must be FINISHED, FAILED or KILLED, got {status!r}")
        with self._lock:
            if self._finished:
                return
            end = _now_ms()
            for task_id in sorted(self._reopened):
                self.client.set_terminated(self._task_runs[task_id], status=status, end_time=end)
            self.client.set_terminated(self.run_id, status=status, end_time=end)
            self._finished = True

    def __enter__(self) -> Tracker:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        if exc_type is None:
            self.finish("FINISHED")
        elif issubclass(exc_type, (KeyboardInterrupt, SystemExit)):
            self.finish("KILLED")
        else:
            self.finish("FAILED")

    # ---- internals

    def _log_params(self, params: dict[str, str]) -> None:
        items = [Param(k, v) for k, v in sorted(params.items())]
        for batch in _chunks(items, PARAMS_PER_BATCH):
            self.client.log_batch(self.run_id, params=batch)

    def _log_evidence(self, run_id: str, record: TurnRecord, run_dir: Path) -> None:
        source = (run_dir / record.evidence_dir).resolve()
        if not source.is_dir():
            return
        base = f"evidence/{safe_path_part(record.task_id)}/{record.turn}"
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(source)
            # Built dependencies are not evidence, links could point anywhere, huge files stay local.
            if "node_modules" in relative.parts or path.is_symlink() or not path.is_file():
                continue
            if path.stat().st_size > self.settings.max_artifact_bytes:
                log.info("not uploading %s: larger than max_artifact_bytes", path)
                continue
            folder = relative.parent.as_posix()
            target = base if folder == "." else f"{base}/{folder}"
            self.client.log_artifact(run_id, str(path), artifact_path=target)


def ensure_experiment(client: MlflowClient, name: str, artifact_location: str | None) -> str:
    """The experiment's id, created on first use. Two jobs may race to create it: the loser reads it."""
    for _ in range(3):
        experiment = client.get_experiment_by_name(name)
        if experiment is not None:
            if experiment.lifecycle_stage == "deleted":
                client.restore_experiment(experiment.experiment_id)
            return experiment.experiment_id
        location = None
        if artifact_location is not None:
            location = f"{artifact_location.rstrip('/')}/{safe_path_part(name)}"
        try:
            return client.create_experiment(name, artifact_location=location)
        except MlflowException:
            time.sleep(0.2)
    raise RuntimeError(f"could not create or find MLflow experiment {name!r}")


def _set_experiment_kind(client: MlflowClient, experiment_id: str, kind: str | None) -> None:
    """Tag the experiment's kind (the MLflow UI's landing view); None: the runs table unless already set.

    A kind the runner did not set (chosen in the UI) is left alone; traces upgrade the runner's own choice."""
    from runner.tracking import traces as kinds

    tags = client.get_experiment(experiment_id).tags
    current = tags.get(kinds.EXPERIMENT_KIND_TAG)
    if current is not None and tags.get(kinds.KIND_SOURCE_TAG) != "runner":
        return
    wanted = kind or current or kinds.KIND_RUNS
    if wanted == current:
        return
    for attempt in range(3):
        try:
            client.set_experiment_tag(experiment_id, kinds.EXPERIMENT_KIND_TAG, wanted)
            client.set_experiment_tag(experiment_id, kinds.KIND_SOURCE_TAG, "runner")
            return
        except MlflowException:
            # A grid's jobs start together: another one inserted the same new tag first (the SQL store's unique
            # key refuses the second insert). Its value is as good as ours when it is the one we want.
            time.sleep(0.2 * (attempt + 1))
            tags = client.get_experiment(experiment_id).tags
            if tags.get(kinds.EXPERIMENT_KIND_TAG) == wanted and tags.get(kinds.KIND_SOURCE_TAG) == "runner":
                return
    raise RuntimeError(f"could not tag MLflow experiment {experiment_id} with its kind {wanted!r}")


def _describe_experiment(client: MlflowClient, experiment_id: str) -> None:
    """Give the experiment the runner's description (a link to its runs table, with the shared view it names),
    unless a user wrote a description of their own."""
    tags = client.get_experiment(experiment_id).tags
    current = tags.get(viewer_link.NOTE_TAG)
    wanted = {viewer_link.VIEW_TAG: viewer_link.runs_view(),
              viewer_link.NOTE_TAG: viewer_link.experiment_note(experiment_id)}
    if current and not current.startswith(viewer_link.EXPERIMENT_NOTE_MARK):
        wanted.pop(viewer_link.NOTE_TAG)
    for key, value in wanted.items():
        if tags.get(key) == value:
            continue
        try:
            client.set_experiment_tag(experiment_id, key, value)
        except MlflowException:  # a grid's job wrote the same tag first: the SQL store refuses the second insert
            log.debug("the experiment's tag %s was set meanwhile", key, exc_info=True)


def _find_task_runs(client: MlflowClient, experiment_id: str, parent_run_id: str) -> dict[str, str]:
    """task id -> run id of the nested task runs under one job run (first one wins if doubled)."""
    found: dict[str, str] = {}
    token: str | None = None
    for _ in range(1000):  # pages of 1000 runs; bounded
        page = client.search_runs(
            [experiment_id],
            filter_string=f"tags.`{PARENT_TAG}` = '{parent_run_id}'",
            max_results=1000,
            order_by=["attributes.start_time ASC"],
            page_token=token,
        )
        for run in page:
            task_id = run.data.tags.get(TASK_TAG)
            if task_id is not None:
                found.setdefault(task_id, run.info.run_id)
        token = page.token
        if not token:
            break
    return found


__all__ = [
    "FinishStatus",
    "NullTracker",
    "RunTracker",
    "Tracker",
    "TrackingSettings",
    "flatten_params",
    "git_state",
    "load_run_ref",
    "numeric_leaves",
    "resolve_artifact_root",
    "resolve_tracking_uri",
    "save_run_ref",
    "turn_metrics",
]
