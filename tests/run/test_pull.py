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
