"""The `tracking` config group, apart from runner.tracking.tracker so that validating a config never imports MLflow
(a multi-second import that the preflight's answer must not wait for)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class TrackingSettings(BaseModel):
    """The `tracking` config group."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    uri: str = "sqlite:///mlruns/mlflow.db"
    artifact_root: str | None = "mlruns/artifacts"  # None: let the tracking server choose
    experiment: str = "genui-runner"
    run_name: str | None = None
    log_evidence: bool = True
    parent_run_id: str | None = None  # a sweep's umbrella run, if any
    max_artifact_bytes: int = 50 * 1024 * 1024  # larger evidence files stay in the run dir only
