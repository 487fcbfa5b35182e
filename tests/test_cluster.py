"""The distributed launchers for real: a SLURM cluster and a Ray head brought up by the test, with jobs
logging to an `mlflow server` over HTTP (the shared-store setup of a multi-machine sweep)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from mlflow import MlflowClient

from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.support.cluster import mlflow_server, ray_head, slurm_cluster, slurm_missing
from tests.support.components import skip_missing

pytestmark = [pytest.mark.slow, pytest.mark.cluster, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]

# A tiny grid: one task, one turn, two models; the null model needs no build, the oracle one build.
GRID = ["model=oracle,null", "suite.task_ids=[smoke-counter]", "suite.turns=1", "concurrency.browsers=1"]


def _http_tracking(url: str, experiment: str) -> list[str]:
    return [f"tracking.uri={url}", "tracking.artifact_root=null", f"tracking.experiment={experiment}"]


def _check_sweep(url: str, experiment: str, sweep_dir: Path, jobs: int) -> None:
    client = MlflowClient(tracking_uri=url)
    found = client.get_experiment_by_name(experiment)
    assert found is not None, "the callback created the experiment"
    runs = client.search_runs([found.experiment_id])
    sweeps = [run for run in runs if run.data.tags.get("genui.kind") == "sweep"]
    assert len(sweeps) == 1, [run.data.tags for run in runs]
    parent = sweeps[0]
    assert parent.info.status == "FINISHED"
    assert parent.data.tags["genui.sweep_dir"] == str(sweep_dir)
    children = [run for run in runs if run.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(children) == jobs and all(run.data.tags.get("genui.kind") == "job" for run in children)
    assert all(run.info.status == "FINISHED" for run in children)
    assert sorted(run.data.metrics["turn_pass"] for run in children) == [0.0, 1.0]
    assert sorted(run.data.params["model.name"] for run in children) == ["null", "oracle"]
    oracle = next(run for run in children if run.data.params["model.name"] == "oracle")
    task = next(run for run in runs if run.data.tags.get("mlflow.parentRunId") == oracle.info.run_id)
    artifacts = [item.path for item in client.list_artifacts(task.info.run_id, "evidence/smoke-counter/1")]
    assert any(path.endswith("screenshot.png") for path in artifacts), "evidence uploaded through the server"
    for run in children:  # every job wrote its run dir on the shared disk
        assert (Path(run.data.tags["run_dir"]) / "summary.json").is_file()


def _run_grid(*overrides: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(runner_command("-m", *GRID, *overrides), cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> str:
    with mlflow_server(tmp_path_factory.mktemp("mlflow-server")) as url:
        yield url


def test_submitit_slurm_grid_on_a_real_cluster(tmp_path: Path, server: str) -> None:
    reason = slurm_missing()
    if reason:
        skip_missing("slurm", reason)
    sweep_dir = tmp_path / "sweep"
    with slurm_cluster(tmp_path / "slurm") as slurm_env:
        started = time.monotonic()
        result = _run_grid(
            "hydra/launcher=submitit_slurm", "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=null",
            "hydra.launcher.timeout_min=10", "hydra.launcher.partition=debug", f"hydra.sweep.dir={sweep_dir}",
            *_http_tracking(server, "slurm-grid"), env=dict(cli_env(), **slurm_env), timeout=420,
        )
        assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-4000:])
        print(f"SLURM grid: {time.monotonic() - started:.1f} s")
    assert list((sweep_dir / ".submitit").iterdir()), "the jobs went through sbatch"
    _check_sweep(server, "slurm-grid", sweep_dir, jobs=2)


def test_ray_grid_attached_to_a_running_head(tmp_path: Path, server: str) -> None:
    sweep_dir = tmp_path / "sweep"
    with ray_head(tmp_path / "ray") as address:
        started = time.monotonic()
        env = dict(cli_env(), RAY_USAGE_STATS_ENABLED="0")
        result = _run_grid(
            "hydra/launcher=ray", f"hydra.launcher.ray.init.address={address}", f"hydra.sweep.dir={sweep_dir}",
            *_http_tracking(server, "ray-grid"), env=env, timeout=420,
        )
        assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-4000:])
        print(f"Ray grid: {time.monotonic() - started:.1f} s")
    _check_sweep(server, "ray-grid", sweep_dir, jobs=2)
