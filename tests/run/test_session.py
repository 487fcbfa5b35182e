"""runner/run/session.py against a real MLflow sqlite store: a run's and a re-judge's job run, opened, recorded in
the run dir, concluded and finished the same way."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from mlflow import MlflowClient
from rich.console import Console

from runner.config import RunnerConfig
from runner.models.serving import SERVER_LOG_DIR
from runner.run.experiment import prepare_run_dir
from runner.run.session import RunSession, rejudge_run_name, run_name
from runner.run.validation import compose_config as validated
from runner.run.validation import validate_config
from runner.tracking.tracker import NullTracker, load_run_ref
from runner.turns.records import RunDirectory
from tests.conftest import REPO_ROOT

# MLflow's sqlalchemy store warns on first use; not ours.
pytestmark = pytest.mark.filterwarnings("ignore:.*noload.*:DeprecationWarning")


def compose_config(*overrides: str) -> RunnerConfig:
    return validated(overrides, project_root=REPO_ROOT)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mlflow")  # one store per module: its migrations take seconds


@pytest.fixture(scope="module")
def config(store: Path) -> RunnerConfig:
    return compose_config(f"tracking.uri=sqlite:///{store}/mlflow.db", f"tracking.artifact_root={store}/artifacts")


def _client(store: Path) -> MlflowClient:
    return MlflowClient(tracking_uri=f"sqlite:///{store}/mlflow.db")


def _open(config: RunnerConfig, run_dir: RunDirectory, *, reattach: bool = False, name: str = "job"):
    return RunSession.open(config, run_dir, name=name, tags={"genui.extra": "yes"}, reattach=reattach,
                           console=Console(stderr=True, quiet=True))


def test_a_concluded_session_leaves_its_files_and_a_finished_tagged_run(config: RunnerConfig, store: Path,
                                                                         tmp_path: Path) -> None:
    run_dir = RunDirectory(tmp_path / "run")
    prepare_run_dir(config, run_dir)  # config.yaml, as a run writes it before its session opens
    (run_dir.path / SERVER_LOG_DIR).mkdir()
    (run_dir.path / SERVER_LOG_DIR / "judge.log").write_text("Application startup complete\n")
    summary = {"pass_rate": 0.5, "run": {"suite": "smoke"}}

    async def body() -> str | None:
        async with _open(config, run_dir) as session:
            await session.conclude(summary, tasks=[], records=[])
            return session.tracker.run_id

    run_id = asyncio.run(body())
    assert run_id is not None and load_run_ref(run_dir.path)["run_id"] == run_id
    assert json.loads((run_dir.path / RunDirectory.SUMMARY).read_text()) == summary
    assert (run_dir.path / "report.html").is_file()
    run = _client(store).get_run(run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "job"
    assert run.data.metrics["pass_rate"] == 0.5
    tags = run.data.tags
    assert (tags["suite"], tags["model"], tags["judge"]) == (config.suite.name, config.model.name, config.judge.name)
    assert tags["run_dir"] == str(run_dir.path) and tags["genui.extra"] == "yes"
    artifacts = {item.path for item in _client(store).list_artifacts(run_id)}
    assert {RunDirectory.SUMMARY, RunDirectory.CONFIG, "report.html", SERVER_LOG_DIR} <= artifacts
    assert [item.path for item in _client(store).list_artifacts(run_id, SERVER_LOG_DIR)] == [f"{SERVER_LOG_DIR}/judge.log"]


@pytest.mark.parametrize(("raised", "status"), [(RuntimeError("broken"), "FAILED"),
                                                 (asyncio.CancelledError(), "KILLED")])
def test_a_session_that_raises_finishes_its_run_as_failed_or_killed(config: RunnerConfig, store: Path,
                                                                    tmp_path: Path, raised: BaseException,
                                                                    status: str) -> None:
    run_dir = RunDirectory(tmp_path / "run")

    async def body() -> None:
        async with _open(config, run_dir):
            raise raised

    with pytest.raises(type(raised)):
        asyncio.run(body())
    reference = load_run_ref(run_dir.path)
    assert reference is not None
    assert _client(store).get_run(reference["run_id"]).info.status == status


def test_reattach_continues_the_recorded_run_and_a_fresh_session_does_not(config: RunnerConfig,
                                                                          tmp_path: Path) -> None:
    run_dir = RunDirectory(tmp_path / "run")

    async def run_id(reattach: bool) -> str | None:
        async with _open(config, run_dir, reattach=reattach) as session:
            return session.tracker.run_id

    first = asyncio.run(run_id(False))
    assert asyncio.run(run_id(True)) == first
    assert asyncio.run(run_id(False)) != first


def test_tracking_off_opens_the_null_tracker_and_writes_no_run_ref(tmp_path: Path) -> None:
    config = compose_config("tracking=off")
    run_dir = RunDirectory(tmp_path / "run")
    prepare_run_dir(config, run_dir)

    async def body() -> None:
        async with _open(config, run_dir) as session:
            assert isinstance(session.tracker, NullTracker)
            await session.conclude({"run": {}}, tasks=[], records=[])

    asyncio.run(body())
    assert load_run_ref(run_dir.path) is None and (run_dir.path / RunDirectory.SUMMARY).is_file()


def test_job_run_names_say_what_ran() -> None:
    config = compose_config("tracking=off", "suite.shard=1/2", "repeat=3")
    compared = f"{config.suite.name}/{config.model.name}/{config.judge.name}/{config.actor.name}"
    assert run_name(config) == f"{compared}#1/2#r3"
    assert rejudge_run_name(config, []) == f"rejudge {compared}"
    assert rejudge_run_name(config, ["source", "screenshot"]) == f"rejudge {compared} without source,screenshot"


def test_a_configured_run_name_wins(store: Path, tmp_path: Path) -> None:
    config = compose_config(f"tracking.uri=sqlite:///{store}/mlflow.db", f"tracking.artifact_root={store}/artifacts",
                            "+tracking.run_name=mine")
    run_dir = RunDirectory(tmp_path / "run")

    async def body() -> str | None:
        async with _open(config, run_dir, name="ignored") as session:
            return session.tracker.run_id

    run_id = asyncio.run(body())
    assert run_id is not None and _client(store).get_run(run_id).info.run_name == "mine"
