"""Scratch folders named for their owner, and the sweep of those whose owner ended (runner/sandbox/scratch.py), with
real processes: a child that made its folder and exited, one still running, one killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.sandbox import scratch
from runner.sandbox.scratch import owner_tag, scratch_dir, sweep_stale_scratch
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(owner_tag() is None, reason="no /proc to name a folder's owner")

_MAKE = ("import sys, time; from runner.sandbox.scratch import scratch_dir; "
         "print(scratch_dir('spare-build'), flush=True); time.sleep(float(sys.argv[1]))")


def _child_folder(tmp: Path, lives_s: float) -> tuple[subprocess.Popen, Path]:
    """A child process that makes its scratch folder in `tmp`, says where, and lives `lives_s` more seconds."""
    child = subprocess.Popen([sys.executable, "-c", _MAKE, str(lives_s)], stdout=subprocess.PIPE, text=True,
                             cwd=REPO_ROOT, env={**os.environ, "TMPDIR": str(tmp)})
    assert child.stdout is not None
    folder = Path(child.stdout.readline().strip())
    assert folder.parent == tmp and folder.is_dir(), folder
    (folder / "left.txt").write_text("what a killed run leaves")
    return child, folder


def test_a_folder_is_named_for_its_kind_and_owner_and_only_its_owner_may_enter(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(scratch.tempfile, "tempdir", str(tmp_path))
    folder = scratch_dir("spare-build")
    namespace, pid, start = owner_tag().split(".")
    assert folder.parent == tmp_path and folder.name.startswith(f"genui-spare-build-{namespace}.{pid}.{start}-")
    assert int(pid) == os.getpid() and folder.stat().st_mode & 0o777 == 0o700
    with pytest.raises(ValueError, match="'Spare build'"):
        scratch_dir("Spare build")


def test_the_sweep_removes_the_folders_of_ended_owners_only(tmp_path) -> None:
    ended, ended_folder = _child_folder(tmp_path, 0)
    ended.wait(10)
    killed, killed_folder = _child_folder(tmp_path, 60)
    running, running_folder = _child_folder(tmp_path, 60)
    try:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(10)
        namespace, pid, start = owner_tag().split(".")
        reused = tmp_path / f"genui-serve-{namespace}.{pid}.{int(start) + 1}-abc"  # this pid, another start: reused
        other_namespace = tmp_path / f"genui-serve-{int(namespace) + 1}.{ended.pid}.1-abc"
        untagged = tmp_path / "genui-serve-abc123"  # made before folders carried their owner
        for folder in (reused, other_namespace, untagged):
            folder.mkdir()
        not_a_folder = tmp_path / f"genui-serve-{namespace}.{ended.pid}.1-file"
        not_a_folder.write_text("")
        mine = tmp_path / f"genui-browser-{owner_tag()}-abc"
        mine.mkdir()

        assert sweep_stale_scratch(tmp_path) == 3
        assert not ended_folder.exists() and not killed_folder.exists() and not reused.exists()
        assert running_folder.is_dir() and mine.is_dir() and other_namespace.is_dir() and untagged.is_dir()
        assert not_a_folder.is_file()
        assert sweep_stale_scratch(tmp_path) == 0
    finally:
        running.kill()
        running.wait(10)
    deadline = time.monotonic() + 10
    while sweep_stale_scratch(tmp_path) == 0 and time.monotonic() < deadline:  # its owner is gone now
        time.sleep(0.05)
    assert not running_folder.exists() and mine.is_dir()
