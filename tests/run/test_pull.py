"""`python -m runner.pull`: config -> snapshot_download mapping, offline and unreachable-hub faults, a cached hit.

The hub cannot be reached from here, so the download itself is replaced by a recorder that only asserts the
arguments (fault-injection style); the offline and unreachable cases run the real huggingface_hub in a
subprocess (its offline switch is read at import time).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner.run import pull

QWEN_REV = "b2cff646eb4bb1d68355c01b18ae02e7cf42d120"


def test_config_to_snapshot_download_arguments(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[dict] = []

    def recorder(**kwargs: object) -> str:
        calls.append(kwargs)
        return str(tmp_path / "snap" / str(kwargs["repo_id"]))

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", recorder)
    code = pull.main([
        "model=qwen3-coder", f"model.server.hf_cache={tmp_path}/hub", "judge=qwen2.5-vl-7b", "actor=ui-tars",
    ])
    assert code == 0
    assert calls[0] == {
        "repo_id": "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        "revision": QWEN_REV,
        "cache_dir": str((tmp_path / "hub").resolve()),
        "ignore_patterns": None,
    }
    assert [c["repo_id"] for c in calls[1:]] == ["Qwen/Qwen2.5-VL-7B-Instruct", "ByteDance-Seed/UI-TARS-1.5-7B"]
    assert all(len(str(c["revision"])) == 40 for c in calls)  # every named config pins a commit


def test_nothing_to_pull_and_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert pull.main(["model=oracle"]) == 0
    assert "nothing to pull" in capsys.readouterr().err
    assert pull.main(["model=no-such-model"]) == 2
    assert "no-such-model" in capsys.readouterr().err


def _run_pull(*overrides: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-m", "runner.pull", *overrides], capture_output=True, text=True, env=full_env,
        timeout=120, cwd=Path(__file__).resolve().parents[2],
    )


def test_unreachable_hub_is_a_clear_error(tmp_path: Path) -> None:
    env = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_ETAG_TIMEOUT": "2", "HF_HUB_DOWNLOAD_TIMEOUT": "2",
           "HF_HUB_OFFLINE": "0"}
    result = _run_pull("model=qwen2.5-coder-7b", f"model.server.hf_cache={tmp_path}", env=env)
    assert result.returncode == 2
    assert "error: model: Qwen/Qwen2.5-Coder-7B-Instruct" in result.stderr


def test_offline_cached_snapshot_resolves_and_missing_one_is_a_clear_error(tmp_path: Path) -> None:
    """One subprocess for both offline cases: the generator is cached, the actor's weights are not."""
    revision = "c03e6d358207e414f1eca0bb1891e29f1db0e242"
    snapshot = tmp_path / "models--Qwen--Qwen2.5-Coder-7B-Instruct" / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    result = _run_pull(
        "model=qwen2.5-coder-7b", f"model.server.hf_cache={tmp_path}",
        "actor=ui-tars", f"actor.options.model.server.hf_cache={tmp_path}",
        env={"HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 2
    assert result.stdout.strip() == f"model: Qwen/Qwen2.5-Coder-7B-Instruct@{revision} -> {snapshot}"
    assert "error: actor.options.model: ByteDance-Seed/UI-TARS-1.5-7B@683d002d" in result.stderr
    assert "hub cannot be reached" in result.stderr


# --------------------------------------------------------------------------- the papers' data


@pytest.mark.slow
@pytest.mark.browser
def test_pull_then_run_the_papers_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The pull-then-run flow on a local repository of the stand-in EvoGenUI-Bench checkout: `runner.pull` fetches
    the pinned commit into the data dir and records its checksum; the run reads that copy (suite.task_set=paper)
    and its summary and MLflow job run say so: the pin, the checksum, 2 tasks run of the paper's 150."""
    import json
    from mlflow.tracking import MlflowClient

    from runner.suites.paper_data import MANIFEST
    from tests.conftest import cli_env, runner_command
    from tests.support.data_sources import checkout_repo

    repo = tmp_path / "EvoGenUI-Bench"
    revision = checkout_repo(repo)
    pin = [f"data_dir={tmp_path / 'data'}", f"suite.paper_data.evogenui-bench.git.url={repo}",
           f"suite.paper_data.evogenui-bench.git.revision={revision}"]
    assert pull.main(["suite=evogenui", *pin]) == 0
    folder = tmp_path / "data" / "evogenui-bench" / f"git-{revision}"
    manifest = json.loads((folder / MANIFEST).read_text())
    assert capsys.readouterr().out.startswith(f"suite.paper_data.evogenui-bench: {repo}@{revision[:12]} -> {folder} "
                                              f"({manifest['files']} files, sha256 {manifest['sha256']}; pulled)")
    assert not (folder / "bench" / "later.txt").exists()  # the pinned commit, not the repository's tip

    run_dir = tmp_path / "run"
    result = subprocess.run(
        runner_command("suite=evogenui", "suite.task_set=paper", *pin, "model=null", "judge=rules", "actor=probe",
                       f"hydra.run.dir={run_dir}", f"tracking.uri=sqlite:///{tmp_path}/mlflow.db",
                       f"tracking.artifact_root={tmp_path}/artifacts"),
        cwd=Path(__file__).resolve().parents[2], env=cli_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["task_set"] == {"name": "paper", "suite": "evogenui", "source": str(repo), "revision": revision,
                                   "checksum": manifest["sha256"], "paper_tasks": 150, "tasks_run": 2}
    assert summary["requested_slots"] == 10  # the checkout's two tasks, five turns each
    assert f"task set: paper ({repo}@{revision[:12]}): 2 of the paper's 150 task(s)" in result.stderr
    job = MlflowClient(tracking_uri=f"sqlite:///{tmp_path}/mlflow.db").search_runs(
        [MlflowClient(tracking_uri=f"sqlite:///{tmp_path}/mlflow.db").get_experiment_by_name("genui-runner")
         .experiment_id], filter_string="tags.`genui.task_set.name` = 'paper'")
    assert len(job) == 1 and job[0].data.tags["genui.task_set.checksum"] == manifest["sha256"]
    assert job[0].data.tags["genui.task_set.revision"] == revision
