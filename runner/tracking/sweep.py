"""MLflow under Hydra sweeps: one parent run per sweep, each job's run nested under it.

`MlflowSweepCallback` (configured in conf/config.yaml under `hydra.callbacks`) runs in the launching
process: on multirun start it creates the store, the experiment and the sweep's parent run once, before
any job starts (so parallel jobs never race to create them), and on multirun end it terminates the parent
FINISHED, or FAILED when a job failed or never reported. Jobs may run in other processes or on other
machines (joblib, SLURM, Ray); each finds its parent with `attach_to_sweep`:

1. `<sweep dir>/mlflow_sweep.json`, written by the callback (any launcher with a shared file system), else
2. a search of the tracking store for the RUNNING sweep run tagged with this sweep dir (any machine that
   reaches the same `tracking.uri`, e.g. a shared `mlflow server`).

Jobs log through `MlflowClient` with explicit run ids (runner.tracking.tracker), never the fluent API.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import warnings
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

log = logging.getLogger(__name__)


def quiet_schema_matching() -> None:
    """Silence Hydra's notice that conf/hydra/launcher/*.yaml match the plugins' schemas of the same name.

    The project's launcher files list every field, so they keep working when Hydra drops schema matching;
    until then the notice would be printed once per job. Installed at import, so launcher worker processes
    (which unpickle this module with the callback) stay quiet too.
    """
    warnings.filterwarnings("ignore", message=r"(?s).*validated against ConfigStore schema", category=UserWarning)


quiet_schema_matching()

PARENT_FILE = "mlflow_sweep.json"
SWEEP_KIND = "sweep"
SWEEP_DIR_TAG = "genui.sweep_dir"
JOB_TAG_PREFIX = "genui.job."


def _tracking_settings(config: DictConfig) -> Any:
    from runner.tracking.tracker import TrackingSettings

    raw = OmegaConf.to_container(config.tracking, resolve=True) if "tracking" in config else {}
    return TrackingSettings.model_validate(raw or {})


def _project_root(config: DictConfig) -> Path:
    cwd = OmegaConf.select(config, "hydra.runtime.cwd", default=None)
    return Path(cwd) if cwd else Path.cwd()


def _sweep_dir(config: DictConfig) -> str:
    return str(OmegaConf.select(config, "hydra.sweep.dir"))


def _parent_file(project_root: Path, sweep_dir: str) -> Path:
    path = Path(sweep_dir)
    return (path if path.is_absolute() else project_root / path) / PARENT_FILE


def expected_jobs(config: DictConfig) -> int | None:
    """How many jobs the basic sweeper makes from the task overrides (None for other sweepers)."""
    target = str(OmegaConf.select(config, "hydra.sweeper._target_", default=""))
    if not target.endswith("BasicSweeper"):
        return None
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    overrides = OmegaConf.to_container(config.hydra.overrides.task, resolve=False)
    parsed = OverridesParser.create().parse_overrides(overrides=list(overrides or []))
    return sum(len(batch) for batch in BasicSweeper.split_arguments(parsed, None))


def find_parent_run(settings: Any, project_root: Path, sweep_dir: str) -> str | None:
    """The parent run id of the sweep in `sweep_dir`: from the sweep dir's file, else from the store."""
    from runner.tracking.tracker import resolve_tracking_uri

    uri = resolve_tracking_uri(settings.uri, project_root)
    path = _parent_file(project_root, sweep_dir)
    try:
        payload = json.loads(path.read_text())
        if payload.get("tracking_uri") == uri and payload.get("parent_run_id"):
            return str(payload["parent_run_id"])
    except (OSError, ValueError):
        pass
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(settings.experiment)
    if experiment is None:
        return None
    escaped = sweep_dir.replace("'", "\\'")
    runs = client.search_runs(
        [experiment.experiment_id],
        filter_string=f"tags.`genui.kind` = '{SWEEP_KIND}' and tags.`{SWEEP_DIR_TAG}` = '{escaped}' "
        "and attributes.status = 'RUNNING'",
        order_by=["attributes.start_time DESC"],
        max_results=1,
    )
    return runs[0].info.run_id if runs else None


def attach_to_sweep(config: Any) -> Any:
    """In a multirun job, return `config` with tracking.parent_run_id set to the sweep's parent run.

    Outside a multirun, with tracking off, or with an explicit tracking.parent_run_id, `config` is
    returned unchanged. A job that cannot find its parent logs a warning and runs as a top-level run.
    """
    if not config.tracking.enabled or config.tracking.parent_run_id or not HydraConfig.initialized():
        return config
    hydra_cfg = HydraConfig.get()
    if hydra_cfg.mode != RunMode.MULTIRUN:
        return config
    try:
        parent = find_parent_run(config.tracking, Path(config.project_root), str(hydra_cfg.sweep.dir))
    except Exception as error:  # tracking is a view; never fail a job for it
        log.warning("could not look up the sweep's parent run: %s", error)
        parent = None
    if parent is None:
        log.warning("no MLflow parent run found for sweep %s; this job's run will not be nested", hydra_cfg.sweep.dir)
        return config
    tracking = config.tracking.model_copy(update={"parent_run_id": parent})
    return config.model_copy(update={"tracking": tracking})


class MlflowSweepCallback(Callback):
    """Creates the sweep's parent run before jobs start and closes it after they end."""

    def __init__(self) -> None:
        # Only plain strings: launchers pickle the callbacks into every job.
        self.parent_run_id: str | None = None
        self.tracking_uri: str | None = None
        self._closed = False

    # ---- launching process

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            self._start(config)
        except Exception:  # a tracking hiccup must not stop the sweep; jobs still write their run dirs
            log.exception("could not create the sweep's MLflow parent run")

    def _start(self, config: DictConfig) -> None:
        from mlflow import MlflowClient

        from runner.tracking.tracker import (KIND_TAG, ensure_experiment, git_state, quiet_mlflow_logs,
                                     resolve_artifact_root, resolve_tracking_uri, safe_key)

        settings = _tracking_settings(config)
        if not settings.enabled or settings.parent_run_id:
            return  # off, or the user nests the whole sweep under a run of their own
        quiet_mlflow_logs()
        project_root = _project_root(config)
        sweep_dir = _sweep_dir(config)
        uri = resolve_tracking_uri(settings.uri, project_root)
        client = MlflowClient(tracking_uri=uri)
        experiment_id = ensure_experiment(
            client, settings.experiment, resolve_artifact_root(settings.artifact_root, project_root)
        )
        overrides = [str(o) for o in OmegaConf.to_container(config.hydra.overrides.task, resolve=False) or []]
        launcher = str(OmegaConf.select(config, "hydra.launcher._target_", default="")).rsplit(".", 1)[-1]
        commit, dirty = git_state(project_root)
        total = expected_jobs(config)
        run = client.create_run(
            experiment_id,
            run_name=f"sweep {Path(sweep_dir).name}",
            tags={
                KIND_TAG: SWEEP_KIND,
                SWEEP_DIR_TAG: sweep_dir,
                "genui.sweep_overrides": json.dumps(overrides)[:8000],
                "genui.launcher": launcher,
                "genui.git_commit": commit,
                "genui.git_dirty": dirty,
                "mlflow.source.git.commit": commit,
            },
        )
        self.parent_run_id = run.info.run_id
        self.tracking_uri = uri
        from mlflow.entities import Param

        params = [Param(safe_key(f"sweep.{o.split('=', 1)[0]}"), o.split("=", 1)[-1][:6000]) for o in overrides if "=" in o]
        if total is not None:
            params.append(Param("sweep.jobs", str(total)))
        if params:
            client.log_batch(self.parent_run_id, params=params[:100])
        path = _parent_file(project_root, sweep_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        from runner.turns.records import write_json_atomic

        write_json_atomic(path, {"parent_run_id": self.parent_run_id, "tracking_uri": uri,
                                 "experiment_id": experiment_id, "sweep_dir": sweep_dir})
        # If a job fails, Hydra raises before on_multirun_end: still close the parent, as FAILED.
        atexit.register(self._close_at_exit)
        log.info("MLflow sweep parent run %s in %s", self.parent_run_id, uri)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        if self.parent_run_id is None or self._closed:
            return
        try:
            self._finish(config)
        except Exception:
            log.exception("could not close the sweep's MLflow parent run")

    def _finish(self, config: DictConfig) -> None:
        from mlflow import MlflowClient
        from mlflow.entities import Metric

        from runner.tracking.tracker import KIND_TAG, PARENT_TAG

        client = MlflowClient(tracking_uri=self.tracking_uri)
        parent = client.get_run(self.parent_run_id)
        jobs = client.search_runs(
            [parent.info.experiment_id],
            filter_string=f"tags.`{PARENT_TAG}` = '{self.parent_run_id}' and tags.`{KIND_TAG}` = 'job'",
            max_results=10000,
        )
        reported = {k: v for k, v in parent.data.tags.items() if k.startswith(JOB_TAG_PREFIX)}
        finished = sum(1 for run in jobs if run.info.status == "FINISHED")
        total = expected_jobs(config)
        failed = (
            finished < len(jobs)
            or any(value != "COMPLETED" for value in reported.values())
            or (total is not None and finished < total)
        )
        stamp = parent.info.start_time or 0
        metrics = [Metric("jobs_runs", float(len(jobs)), stamp, 0), Metric("jobs_finished", float(finished), stamp, 0)]
        if total is not None:
            metrics.append(Metric("jobs_expected", float(total), stamp, 0))
        client.log_batch(self.parent_run_id, metrics=metrics)
        client.set_terminated(self.parent_run_id, status="FAILED" if failed else "FINISHED")
        self._closed = True

    def _close_at_exit(self) -> None:
        if self._closed or self.parent_run_id is None:
            return
        try:
            from mlflow import MlflowClient

            MlflowClient(tracking_uri=self.tracking_uri).set_terminated(self.parent_run_id, status="FAILED")
        except Exception:
            pass
        self._closed = True

    # ---- job process (may be another machine)

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        """Record this job's outcome on the parent (so a job that failed before its run existed still counts)."""
        if OmegaConf.select(config, "hydra.mode", default=None) != RunMode.MULTIRUN:
            return
        try:
            from mlflow import MlflowClient

            from runner.tracking.tracker import resolve_tracking_uri

            settings = _tracking_settings(config)
            if not settings.enabled:
                return
            project_root = _project_root(config)
            parent = settings.parent_run_id or find_parent_run(settings, project_root, _sweep_dir(config))
            if parent is None:
                return
            client = MlflowClient(tracking_uri=resolve_tracking_uri(settings.uri, project_root))
            number = OmegaConf.select(config, "hydra.job.num", default=os.getpid())
            status = getattr(getattr(job_return, "status", None), "name", "UNKNOWN")
            client.set_tag(parent, f"{JOB_TAG_PREFIX}{number}", status)
        except Exception as error:
            log.warning("could not report the job's status to the sweep's parent run: %s", error)


__all__ = ["MlflowSweepCallback", "PARENT_FILE", "attach_to_sweep", "expected_jobs", "find_parent_run"]
