"""runner/tracking/tracker.py against a real MLflow sqlite store (one store per module: migrations take seconds)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException
from PIL import Image

from runner.turns.records import (
    DimensionScore,
    FailureBucket,
    RequirementResult,
    RequirementStatus,
    RunDirectory,
    TurnRecord,
    Verdict,
)
from runner.tracking.tracker import (
    NullTracker,
    Tracker,
    TrackingSettings,
    flatten_params,
    git_state,
    load_run_ref,
    numeric_leaves,
    resolve_tracking_uri,
    save_run_ref,
    turn_metrics,
)

CONFIG: dict[str, Any] = {
    "model": {"name": "oracle", "generation": {"temperature": 0.0, "max_tokens": 4096}},
    "suite": {"name": "smoke", "tasks": ["a", "b"]},
    "judge": {"name": "rules", "notes": None},
    "long": "x" * 7000,  # over MLflow's 6000-char param limit
    "many": {f"k{i:03d}": i for i in range(150)},  # more than one 100-param batch
}
# MLflow 3.17's sqlalchemy store triggers a SQLAlchemy deprecation warning on first use; not ours.
pytestmark = pytest.mark.filterwarnings("ignore:.*noload.*:DeprecationWarning")

EVIDENCE_FILES = {"verdict.json", "trace.json", "dom.html", "console.json", "tool_log.json"}


def make_turn(run_dir: RunDirectory, task_id: str, turn: int) -> TurnRecord:
    """A record with real evidence files, as the engine would leave them."""
    evidence = run_dir.evidence_dir(task_id, turn)
    Image.new("RGB", (32, 20), (turn * 20, 40, 90)).save(evidence / "screenshot.png")
    Image.new("RGB", (8, 8), (0, 0, 0)).save(evidence / "step_1.png")
    passed: bool | None = None if turn == 3 else turn % 2 == 1
    verdict = Verdict(
        judge="rules",
        passed=passed,
        dimensions={"layout": DimensionScore(score=0.5 + turn / 100), "style": DimensionScore(score=None)},
        requirements=[
            RequirementResult(id="r1", status=RequirementStatus.PASSED),
            RequirementResult(id="r2", status=RequirementStatus.UNASSESSED if passed is None else RequirementStatus.FAILED),
        ],
    )
    (evidence / "verdict.json").write_text(verdict.model_dump_json())
    for name in EVIDENCE_FILES - {"verdict.json"}:
        (evidence / name).write_text("{}" if name.endswith(".json") else "<html></html>")
    (evidence / "src").mkdir(exist_ok=True)
    (evidence / "src" / "App.jsx").write_text("export default () => null;\n")
    return TurnRecord(
        task_id=task_id,
        suite="smoke",
        turn=turn,
        status=FailureBucket.OK,
        passed=passed,
        model_responded=True,
        verdict=verdict,
        scores={"ssim": 0.25 * turn, "not_a_number": float("nan")},
        timings={"generate": 0.1 * turn, "build": 1.5},
        usage={"prompt_tokens": 100 + turn},
        evidence_dir=str(evidence.relative_to(run_dir.path)),
    )


def child_runs(client: MlflowClient, experiment_id: str, parent: str) -> list[Any]:
    return list(client.search_runs([experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{parent}'"))


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One whole job: open, 10 turns (two tasks, two worker threads), summary, finish."""
    root = tmp_path_factory.mktemp("project")
    run_dir = RunDirectory(root / "outputs" / "run1")
    run_dir.write_json(RunDirectory.SUMMARY, {"turn_pass": 0.5})
    (run_dir.path / RunDirectory.CONFIG).write_text("model:\n  name: oracle\n")
    records = [make_turn(run_dir, task, turn) for task in ("a/1", "b") for turn in range(1, 6)]
    settings = TrackingSettings(run_name="job-1")

    start = time.perf_counter()
    tracker = Tracker.open(settings, project_root=root, run_params=CONFIG, tags={"genui.image.build": "sha256:abc"})
    opened = time.perf_counter()
    assert isinstance(tracker, Tracker)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda r: tracker.log_turn(r, run_dir.path), records))
    logged = time.perf_counter()
    tracker.log_summary({"turn_pass": 0.5, "per_turn": {"1": 1.0, "2": 0.0}, "name": "smoke"}, run_dir=run_dir.path)
    tracker.finish()
    done = time.perf_counter()
    save_run_ref(run_dir.path, tracker)
    timing = {"open": opened - start, "log_10_turns": logged - opened, "summary_finish": done - logged, "total": done - start}
    print(f"\ntracking timing (s): {json.dumps({k: round(v, 3) for k, v in timing.items()})}")
    return {
        "root": root,
        "run_dir": run_dir,
        "settings": settings,
        "tracker": tracker,
        "client": MlflowClient(tracking_uri=tracker.tracking_uri),
        "timing": timing,
    }


def test_store_lives_under_the_project_root(job: dict[str, Any]) -> None:
    root = job["root"]
    assert (root / "mlruns" / "mlflow.db").is_file()
    assert job["tracker"].tracking_uri == f"sqlite:///{root.resolve()}/mlruns/mlflow.db"
    experiment = job["client"].get_experiment_by_name("genui-runner")
    assert experiment.artifact_location == (root / "mlruns" / "artifacts" / "genui-runner").resolve().as_uri()


def test_job_run_finished_with_params_and_tags(job: dict[str, Any]) -> None:
    run = job["client"].get_run(job["tracker"].run_id)
    assert run.info.status == "FINISHED"
    assert run.info.run_name == "job-1"
    params = run.data.params
    assert params["model.generation.temperature"] == "0.0"
    assert params["suite.tasks"] == '["a", "b"]'
    assert params["judge.notes"] == "None"
    assert len(params["long"]) == 6000
    assert params["many.k149"] == "149"
    tags = run.data.tags
    assert tags["genui.git_commit"] == "unknown"  # tmp dir is not a git checkout
    assert tags["genui.image.build"] == "sha256:abc"
    assert tags["genui.kind"] == "job"


def test_nested_task_runs_and_turn_metrics(job: dict[str, Any]) -> None:
    client, tracker = job["client"], job["tracker"]
    children = child_runs(client, tracker.experiment_id, tracker.run_id)
    assert sorted(r.data.tags["genui.task_id"] for r in children) == ["a/1", "b"]
    assert all(r.info.status == "FINISHED" for r in children)
    run_a = next(r for r in children if r.data.tags["genui.task_id"] == "a/1")
    passed = {m.step: m.value for m in client.get_metric_history(run_a.info.run_id, "passed")}
    assert passed == {1: 1.0, 2: 0.0, 3: 0.0, 4: 0.0, 5: 1.0}
    unassessed = {m.step: m.value for m in client.get_metric_history(run_a.info.run_id, "unassessed")}
    assert unassessed[3] == 1.0 and unassessed[1] == 0.0
    ssim = {m.step: m.value for m in client.get_metric_history(run_a.info.run_id, "ssim")}
    assert ssim == {t: 0.25 * t for t in range(1, 6)}
    metrics = run_a.data.metrics
    assert metrics["dim_layout"] == pytest.approx(0.55)
    assert metrics["time_build"] == 1.5
    assert metrics["usage_prompt_tokens"] == 105
    assert "dim_style" not in metrics and "not_a_number" not in metrics


def test_evidence_artifacts(job: dict[str, Any]) -> None:
    client, tracker = job["client"], job["tracker"]
    run_a = tracker.task_run("a/1")
    names = {Path(f.path).name for f in client.list_artifacts(run_a, "evidence/a_1/2")}
    assert {"screenshot.png", "step_1.png", "src"} | EVIDENCE_FILES <= names
    assert [f.path for f in client.list_artifacts(run_a, "evidence/a_1/2/src")] == ["evidence/a_1/2/src/App.jsx"]
    local = Path(client.download_artifacts(run_a, "evidence/a_1/2/screenshot.png", str(job["root"] / "dl")))
    assert Image.open(local).size == (32, 20)


def test_summary_metrics_and_files(job: dict[str, Any]) -> None:
    client, tracker = job["client"], job["tracker"]
    metrics = client.get_run(tracker.run_id).data.metrics
    assert metrics == {"turn_pass": 0.5, "per_turn.1": 1.0, "per_turn.2": 0.0}
    assert {f.path for f in client.list_artifacts(tracker.run_id)} == {"summary.json", "config.yaml"}


def test_resume_reattaches_without_duplicate_task_runs(job: dict[str, Any]) -> None:
    run_dir, client = job["run_dir"], job["client"]
    ref = load_run_ref(run_dir.path)
    assert ref is not None and ref["run_id"] == job["tracker"].run_id
    changed = {**CONFIG, "model": {"name": "other"}}
    resumed = Tracker.open(job["settings"], project_root=job["root"], run_params=changed, resume_run_id=ref["run_id"])
    assert isinstance(resumed, Tracker) and resumed.run_id == ref["run_id"]
    assert client.get_run(resumed.run_id).info.status == "RUNNING"
    resumed.log_turn(make_turn(run_dir, "a/1", 6), run_dir.path)
    resumed.log_turn(make_turn(run_dir, "c", 1), run_dir.path)
    resumed.finish("FAILED")
    resumed.finish("FINISHED")  # idempotent: the first status stands

    children = child_runs(client, resumed.experiment_id, resumed.run_id)
    assert sorted(r.data.tags["genui.task_id"] for r in children) == ["a/1", "b", "c"]
    by_task = {r.data.tags["genui.task_id"]: r for r in children}
    history = client.get_metric_history(by_task["a/1"].info.run_id, "passed")
    assert sorted(m.step for m in history) == [1, 2, 3, 4, 5, 6]
    assert by_task["a/1"].info.status == "FAILED" and by_task["c"].info.status == "FAILED"
    assert by_task["b"].info.status == "FINISHED"  # untouched in the resumed session
    run = client.get_run(resumed.run_id)
    assert run.info.status == "FAILED"
    assert run.data.params["model.name"] == "oracle"  # first value kept
    assert run.data.tags["genui.resume_changed_params"] == "model.name"


def test_task_run_is_unique_under_concurrency(job: dict[str, Any]) -> None:
    tracker = Tracker.open(job["settings"], project_root=job["root"], run_params={"x": 1})
    assert isinstance(tracker, Tracker)
    barrier = threading.Barrier(6)

    def grab() -> str:
        barrier.wait(timeout=10)
        return tracker.task_run("same")

    with ThreadPoolExecutor(max_workers=6) as pool:
        ids = set(pool.map(lambda _: grab(), range(6)))
    tracker.finish()
    assert len(ids) == 1
    assert len(child_runs(job["client"], tracker.experiment_id, tracker.run_id)) == 1


def test_missing_resume_run_starts_a_new_one(job: dict[str, Any]) -> None:
    tracker = Tracker.open(job["settings"], project_root=job["root"], resume_run_id="0" * 32)
    assert isinstance(tracker, Tracker) and tracker.run_id != "0" * 32
    tracker.finish("KILLED")
    assert job["client"].get_run(tracker.run_id).info.status == "KILLED"


def test_disabled_creates_nothing(tmp_path: Path) -> None:
    tracker = Tracker.open(TrackingSettings(enabled=False), project_root=tmp_path, run_params=CONFIG)
    assert isinstance(tracker, NullTracker) and tracker.run_id is None
    run_dir = RunDirectory(tmp_path / "run")
    tracker.log_turn(make_turn(run_dir, "a", 1), run_dir.path)
    tracker.log_summary({"x": 1}, run_dir=run_dir.path)
    tracker.finish()
    assert save_run_ref(run_dir.path, tracker) is None
    assert load_run_ref(run_dir.path) is None
    assert not (tmp_path / "mlruns").exists()


def test_fresh_store_is_quiet(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    settings = TrackingSettings(uri="sqlite:///db/quiet.db", artifact_root="art")
    Tracker.open(settings, project_root=tmp_path).finish()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_git_state_of_a_real_checkout(tmp_path: Path) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True, timeout=20)
    (tmp_path / "f.txt").write_text("1")
    subprocess.run([*git, "add", "f.txt"], check=True, timeout=20)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True, timeout=20)
    commit, dirty = git_state(tmp_path)
    assert len(commit) == 40 and dirty == "false"
    (tmp_path / "f.txt").write_text("2")
    assert git_state(tmp_path) == (commit, "true")


def test_pure_helpers(tmp_path: Path) -> None:
    assert flatten_params({"a": {"b": {"c": 1}}, "e": {}, "bad key!": 2}) == {"a.b.c": "1", "e": "{}", "bad key_": "2"}
    assert dict(numeric_leaves({"a": [1, {"b": 2.5}], "s": "x", "t": True})) == {"a.0": 1.0, "a.1.b": 2.5, "t": 1.0}
    assert resolve_tracking_uri("sqlite:///m/x.db?timeout=5", tmp_path) == f"sqlite:///{tmp_path.resolve()}/m/x.db?timeout=5"
    assert resolve_tracking_uri("sqlite:////abs/x.db", tmp_path) == "sqlite:////abs/x.db"
    assert resolve_tracking_uri("http://127.0.0.1:5000", tmp_path) == "http://127.0.0.1:5000"
    record = TurnRecord(task_id="t", suite="s", turn=1, status=FailureBucket.BUILD_FAILED, passed=False)
    assert turn_metrics(record) == {"passed": 0.0, "unassessed": 0.0, "model_responded": 0.0, "status_build_failed": 1.0}


class _RacedClient:
    """A real client whose first experiment-tag write loses a race: another job of the grid writes the same tags
    just before, and the store refuses the second insert (as the SQL store's unique key does)."""

    def __init__(self, client: MlflowClient) -> None:
        self.client = client
        self.raced = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def set_experiment_tag(self, experiment_id: str, key: str, value: str) -> None:
        if not self.raced:
            self.raced = True
            self.client.set_experiment_tag(experiment_id, key, value)
            self.client.set_experiment_tag(experiment_id, "genui.experiment_kind_source", "runner")
            raise MlflowException("(sqlite3.IntegrityError) UNIQUE constraint failed: experiment_tags.key")
        self.client.set_experiment_tag(experiment_id, key, value)


def test_concurrent_jobs_tagging_the_experiment_kind_do_not_fail(tmp_path: Path) -> None:
    from runner.tracking import tracker as tracking

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment_id = client.create_experiment("raced")
    raced = _RacedClient(client)
    tracking._set_experiment_kind(raced, experiment_id, None)  # type: ignore[arg-type]
    assert raced.raced
    assert client.get_experiment(experiment_id).tags["mlflow.experimentKind"] == "custom_model_development"
