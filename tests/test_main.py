"""The command line end to end: real Vite builds, bubblewrap, Chromium and an MLflow sqlite store."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import REPO_ROOT, cli_env, runner_command

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]


def _run(*overrides: str, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(runner_command(*overrides), cwd=REPO_ROOT, env=env or cli_env(), capture_output=True,
                          text=True, timeout=timeout)


def _tracking(tmp: Path) -> list[str]:
    return [f"tracking.uri=sqlite:///{tmp}/mlflow.db", f"tracking.artifact_root={tmp}/artifacts"]


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]


def _deterministic(summary: dict) -> dict:
    return {key: value for key, value in summary.items() if key != "run"}


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    tmp = tmp_path_factory.mktemp("oracle")
    run_dir = tmp / "run"
    result = _run(f"hydra.run.dir={run_dir}", *_tracking(tmp))
    return tmp, run_dir, result


def test_default_experiment_passes_every_smoke_turn(oracle_run) -> None:
    tmp, run_dir, result = oracle_run
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == str(run_dir), "the last printed line is the run dir"
    assert f"python -m runner.view {run_dir}" in result.stderr  # where to look at the evidence next
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["turn_pass"] == 1.0
    assert summary["requested_slots"] == summary["recorded_slots"] == len(_records(run_dir))
    # The project's own set, and it says so wherever the numbers are read (runner/run/task_set.py)
    task_set = summary["task_set"]
    assert task_set | {"revision": None} == {"name": "project", "suite": "smoke", "source": "tasks/smoke",
                                             "revision": None, "checksum": None, "paper_tasks": None, "tasks_run": 3}
    assert re.fullmatch(r"[0-9a-f]{40}|unknown", task_set["revision"])  # the project's commit
    assert "task set: project (tasks/smoke" in result.stderr and "3 task(s); no paper set" in result.stderr
    assert "task set: project (tasks/smoke" in (run_dir / "report.html").read_text()
    assert json.loads((run_dir / "lineage.json").read_text())["task_set"]["name"] == "project"
    assert (run_dir / "config.yaml").exists()
    first = run_dir / "evidence" / "smoke-counter" / "1"
    for name in ("screenshot.png", "screenshot_full.png", "dom.html", "console.json", "trace.json", "verdict.json"):
        assert (first / name).exists(), name
    assert (first / "src" / "src" / "App.jsx").exists() or (first / "src" / "App.jsx").exists()


def test_default_experiment_is_tracked_in_mlflow(oracle_run) -> None:
    tmp, run_dir, result = oracle_run
    assert result.returncode == 0
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp}/mlflow.db")
    experiment = client.get_experiment_by_name("genui-runner")
    runs = client.search_runs([experiment.experiment_id])
    jobs = [run for run in runs if "mlflow.parentRunId" not in run.data.tags]
    assert len(jobs) == 1
    job = jobs[0]
    assert job.info.status == "FINISHED"
    assert job.data.metrics["turn_pass"] == 1.0
    assert job.data.params["model.name"] == "oracle"
    assert job.info.run_name == "smoke/oracle/rules/probe"
    assert {key: job.data.tags.get(f"genui.task_set.{key}") for key in ("name", "source", "tasks_run")} == \
        {"name": "project", "source": "tasks/smoke", "tasks_run": "3"}
    children = [run for run in runs if run.data.tags.get("mlflow.parentRunId") == job.info.run_id]
    assert len(children) == 3, "one nested run per task"
    child = next(run for run in children if run.data.tags.get("genui.task_id") == "smoke-counter")
    history = client.get_metric_history(child.info.run_id, "passed")
    assert sorted(point.step for point in history) == [1, 2, 3]
    artifacts = [item.path for item in client.list_artifacts(child.info.run_id, "evidence/smoke-counter/1")]
    assert any(path.endswith("screenshot.png") for path in artifacts), artifacts


def test_null_model_is_invalid_then_blocked(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = _run("model=null", f"hydra.run.dir={run_dir}", "tracking=off")
    assert result.returncode == 0, result.stderr[-3000:]
    records = _records(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["turn_pass"] == 0.0
    assert len(records) == summary["requested_slots"] == 9
    for record in records:
        expected = "invalid_output" if record["turn"] == 1 else "blocked"
        assert record["status"] == expected, record


@pytest.mark.parametrize("seed", [0, 1])
def test_sigkill_then_resume_gives_the_uninterrupted_summary(tmp_path: Path, oracle_run, seed: int) -> None:
    """SIGKILL at a seeded point (after k recorded slots, plus a seeded delay that lands in a build, a browser
    session, a verdict or an append), then a plain rerun: the summary equals the uninterrupted run's, and the
    scratch folders the killed run left in the temporary folder are gone."""
    _, reference_dir, reference = oracle_run
    assert reference.returncode == 0
    draw = random.Random(seed)
    after_records, delay_s = draw.randrange(0, 6), draw.uniform(0.0, 2.0)
    run_dir = tmp_path / "run"
    overrides = [f"hydra.run.dir={run_dir}", "tracking=off", "concurrency.episodes=1"]
    temporary = tmp_path / "tmp"  # the runs' temporary folder, where the test sees what each left
    temporary.mkdir()
    env = {**cli_env(), "TMPDIR": str(temporary)}
    process = subprocess.Popen(runner_command(*overrides), cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    records, started = run_dir / "turns.jsonl", run_dir / "evidence"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        count = len(records.read_text().splitlines()) if records.exists() else 0
        if started.exists() and count >= after_records:
            break
        time.sleep(0.05)
    time.sleep(delay_s)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    partial = len(records.read_text().splitlines()) if records.exists() else 0
    assert after_records <= partial < 9, f"seed {seed}: killed too late to test resume ({partial} records)"
    assert not (run_dir / "summary.json").exists()
    left = [p.name for p in temporary.glob(f"genui-*.{process.pid}.*")]
    assert left, f"the killed run made no scratch folder of its own in {temporary}"

    resumed = _run(*overrides, env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert not [p.name for p in temporary.glob(f"genui-*.{process.pid}.*")], f"left by the killed run: {left}"
    lines = _records(run_dir)
    assert len(lines) == 9 and len({(r["task_id"], r["turn"]) for r in lines}) == 9, "nothing lost, nothing twice"
    expected = json.loads((reference_dir / "summary.json").read_text())
    actual = json.loads((run_dir / "summary.json").read_text())
    assert _deterministic(actual) == _deterministic(expected)


def test_resume_refuses_a_changed_configuration(tmp_path: Path, oracle_run) -> None:
    _, reference_dir, _ = oracle_run
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name in ("turns.jsonl", "config.yaml"):
        (run_dir / name).write_text((reference_dir / name).read_text())
    result = _run(f"hydra.run.dir={run_dir}", "tracking=off", "actor=scripted")
    assert result.returncode == 2
    assert "configuration changed" in result.stderr and "actor" in result.stderr


def test_unknown_group_option_lists_the_choices() -> None:
    result = _run("model=nope", "hydra.run.dir=/tmp/genui-never-created")
    assert result.returncode != 0
    assert "nope" in result.stderr and "oracle" in result.stderr


def test_mistyped_key_is_named() -> None:
    result = _run("+model.temprature=1", "tracking=off", "hydra.run.dir=/tmp/genui-never-created")
    assert result.returncode == 2
    assert "model.temprature" in result.stderr


def test_bad_value_names_key_and_value() -> None:
    result = _run("concurrency.builds=zero", "tracking=off", "hydra.run.dir=/tmp/genui-never-created")
    assert result.returncode == 2
    assert "concurrency.builds" in result.stderr and "'zero'" in result.stderr


def test_malformed_task_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: broken\nturns:\n  - index: 1\n")
    result = _run(f"suite.tasks_path={bad}", "tracking=off", f"hydra.run.dir={tmp_path / 'run'}")
    assert result.returncode == 2
    assert str(bad) in result.stderr and "turns[0].prompt" in result.stderr


def test_progress_lines_off_a_terminal_are_in_order(oracle_run) -> None:
    """Captured output is no terminal: progress comes as parseable lines, the slot count rising by one."""
    _, run_dir, result = oracle_run
    assert result.returncode == 0
    slots = [line for line in result.stdout.splitlines() if "[progress] slots " in line]
    parsed = [re.search(r"done=(\d+) total=(\d+) passed=(\d+) failed=(\S+) elapsed=\S+s eta=\S+", line) for line in slots]
    assert all(parsed), slots
    assert [int(m.group(1)) for m in parsed] == list(range(10))  # 0 of 9 at the start, then one line per slot
    assert {int(m.group(2)) for m in parsed} == {9}
    assert int(parsed[-1].group(3)) == 9 and parsed[-1].group(4) == "none"
    assert result.stdout.strip().splitlines()[-1] == str(run_dir)


def test_a_run_without_model_calls_lands_on_the_runs_table(oracle_run) -> None:
    tmp, _, result = oracle_run
    assert result.returncode == 0
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp}/mlflow.db")
    experiment = client.get_experiment_by_name("genui-runner")
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    assert client.search_traces(locations=[experiment.experiment_id]) == []  # the oracle is no model
