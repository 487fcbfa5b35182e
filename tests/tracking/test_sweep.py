"""Sweeps: a 2 x 2 grid with the joblib launcher is one MLflow parent run with four nested job runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mlflow import MlflowClient
from omegaconf import OmegaConf

from runner.tracking.sweep import PARENT_FILE, expected_jobs
from tests.conftest import REPO_ROOT, cli_env, runner_command

QUICK = ["suite.task_ids=[smoke-counter]", "suite.turns=1", "concurrency.browsers=1"]


def _tracking(tmp: Path) -> list[str]:
    return [f"tracking.uri=sqlite:///{tmp}/mlflow.db", f"tracking.artifact_root={tmp}/artifacts"]


def _runs(tmp: Path) -> list:
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp}/mlflow.db")
    experiment = client.get_experiment_by_name("genui-runner")
    return client.search_runs([experiment.experiment_id])


def test_expected_jobs_counts_the_grid() -> None:
    config = OmegaConf.create({"hydra": {
        "sweeper": {"_target_": "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"},
        "overrides": {"task": ["model=oracle,'null'", "actor=probe,none", "suite.turns=1"]},
    }})
    assert expected_jobs(config) == 4


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.build
@pytest.mark.sandbox
def test_joblib_grid_is_one_parent_with_four_job_runs(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    result = subprocess.run(
        runner_command("-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "model=oracle,null",
                       "actor=probe,none", *QUICK, f"hydra.sweep.dir={sweep_dir}", *_tracking(tmp_path)),
        cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=420,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "validated against ConfigStore schema" not in result.stderr, "launcher schema notice is silenced"
    runs = _runs(tmp_path)
    sweeps = [run for run in runs if run.data.tags.get("genui.kind") == "sweep"]
    assert len(sweeps) == 1
    parent = sweeps[0]
    assert parent.info.status == "FINISHED"
    assert parent.data.params["sweep.model"] == "oracle,'null'" and parent.data.params["sweep.jobs"] == "4"
    assert json.loads((sweep_dir / PARENT_FILE).read_text())["parent_run_id"] == parent.info.run_id
    jobs = [run for run in runs if run.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(jobs) == 4 and all(run.data.tags["genui.kind"] == "job" for run in jobs)
    assert all(run.info.status == "FINISHED" for run in jobs)
    grid = sorted((run.data.params["model.name"], run.data.params["actor.name"]) for run in jobs)
    assert grid == [("null", "none"), ("null", "probe"), ("oracle", "none"), ("oracle", "probe")]
    for run in jobs:
        expected = 1.0 if run.data.params["model.name"] == "oracle" else 0.0
        assert run.data.metrics["turn_pass"] == expected
        assert run.data.tags["genui.lineage.task_set_hash"], "lineage is tagged on every job run"
        tasks = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == run.info.run_id]
        assert [r.data.tags["genui.task_id"] for r in tasks] == ["smoke-counter"]
    assert parent.data.metrics["jobs_finished"] == 4.0
    assert sorted(v for k, v in parent.data.tags.items() if k.startswith("genui.job.")) == ["COMPLETED"] * 4


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.sandbox
def test_a_failing_job_marks_the_parent_failed(tmp_path: Path) -> None:
    result = subprocess.run(
        runner_command("-m", "model=null", "suite.task_ids=[smoke-counter],[no-such-task]", "suite.turns=1",
                       f"hydra.sweep.dir={tmp_path / 'sweep'}", *_tracking(tmp_path)),
        cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=300,
    )
    assert result.returncode != 0
    assert "no-such-task" in result.stderr
    runs = _runs(tmp_path)
    parent = next(run for run in runs if run.data.tags.get("genui.kind") == "sweep")
    assert parent.info.status == "FAILED"
    assert parent.data.tags["genui.job.0"] == "COMPLETED" and parent.data.tags["genui.job.1"] == "FAILED"
