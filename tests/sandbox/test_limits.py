"""Resource limits: the cgroup fallback, the cpu-time rlimit, the command wrapper."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
from pathlib import Path

import pytest

from runner.sandbox import limits
from runner.sandbox.limits import ResourceLimits, create_cgroups, limited_command
from runner.sandbox.local import LocalSandbox, LocalSandboxSettings
from tests.support.components import missing

FILES = {"src/App.jsx": "export default function App() { return null; }"}


def test_defaults_match_spec():
    assert ResourceLimits().model_dump() == {
        "cpu_seconds": 60,
        "memory_mb": 2048,
        "max_processes": 256,
        "max_output_mb": 64,
        "wall_clock_s": 120,
        "nofile": 1024,
        "cpus": None,
    }


def test_wrapped_command_gets_rlimits_and_cgroups():
    cgroups = create_cgroups(ResourceLimits(nofile=77, max_processes=40), "unit")
    try:
        argv = limited_command(["sh", "-c", "ulimit -n; ulimit -t; cat /proc/self/cgroup"], ResourceLimits(nofile=77), cgroups)
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.splitlines()
        assert out[0] == "77" and out[1] == "60"
        if cgroups.pids is not None:
            assert any(line.endswith(f"/genui-runner/{cgroups.name}") and ":pids:" in line for line in out)
            assert (cgroups.pids / "pids.max").read_text().strip() == "40"
    finally:
        cgroups.cleanup()
    assert cgroups.pids is None or not cgroups.pids.exists()


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason=missing("bubblewrap", "bubblewrap is not installed"))
def test_unwritable_cgroups_fall_back_with_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "CGROUP_ROOT", tmp_path / "no-cgroups" / "here")
    settings = LocalSandboxSettings(build_command=["node", "-e", "console.log('still runs')"])
    result = asyncio.run(LocalSandbox(settings).build(FILES, tmp_path / "ws"))
    assert result.status == "ok", result.log
    assert "still runs" in result.log
    assert "memory is not limited" in result.log and "process count is not limited" in result.log


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason=missing("bubblewrap", "bubblewrap is not installed"))
def test_cpu_time_limit_kills_busy_loop(tmp_path: Path):
    settings = LocalSandboxSettings(
        build_command=["node", "-e", "while (true) {}"], limits=ResourceLimits(cpu_seconds=1, wall_clock_s=20)
    )
    result = asyncio.run(LocalSandbox(settings).build(FILES, tmp_path / "ws"))
    assert result.status == "build_failed", result.log
    assert "SIGXCPU" in result.log or "SIGKILL" in result.log, result.log
    assert result.duration_s < 10


@pytest.mark.skipif(not (limits.CGROUP_ROOT / "memory").is_dir(), reason="no cgroup v1 memory controller here")
def test_sweep_removes_only_old_empty_cgroups() -> None:
    import os
    import time

    old = create_cgroups(ResourceLimits(), "stale-test")
    fresh = create_cgroups(ResourceLimits(), "fresh-test")
    try:
        assert old.memory is not None, old.warnings
        past = time.time() - 3600
        for directory in (old.memory, old.pids):
            if directory is not None:
                os.utime(directory, (past, past))
        removed = limits.sweep_stale_cgroups(min_age_s=600)
        assert removed >= 1
        assert not old.memory.exists(), "an hour-old empty cgroup is swept"
        assert fresh.memory.exists(), "a fresh one may belong to a build that is starting: kept"
    finally:
        old.cleanup()
        fresh.cleanup()


@pytest.mark.skipif(not (limits.CGROUP_ROOT / "cpu").is_dir(), reason="no cgroup v1 cpu controller here")
def test_sweep_removes_a_dead_browsers_cpu_cgroup_with_its_empty_renderer_groups() -> None:
    """A killed run leaves its browser's cpu cgroup with the renderer groups in it (runner/browser/renderer_groups.py)."""
    import os
    import time

    old = create_cgroups(ResourceLimits(cpus=1.0), "browser-stale-test")
    try:
        assert old.cpu is not None, old.warnings
        (old.cpu / "renderer-4242").mkdir()
        past = time.time() - 3600
        os.utime(old.cpu, (past, past))
        limits.sweep_stale_cgroups(min_age_s=600)
        assert not old.cpu.exists()
    finally:
        with contextlib.suppress(OSError):
            (old.cpu / "renderer-4242").rmdir()
        old.cleanup()


@pytest.mark.skipif(not (limits.CGROUP_ROOT / "cpu").is_dir(), reason="no cgroup v1 cpu controller here")
def test_a_cpu_share_throttles_a_busy_process_in_its_cgroup() -> None:
    cgroups = create_cgroups(ResourceLimits(cpus=0.02), "cpu-test")
    try:
        assert cgroups.cpu is not None, cgroups.warnings
        period = int((cgroups.cpu / "cpu.cfs_period_us").read_text())
        assert int((cgroups.cpu / "cpu.cfs_quota_us").read_text()) == int(period * 0.02)
        argv = limited_command(["timeout", "1", "sh", "-c", "while :; do :; done"], ResourceLimits(), cgroups)
        subprocess.run(argv, check=False, timeout=30)
        stat = dict(line.split() for line in (cgroups.cpu / "cpu.stat").read_text().splitlines())
        assert int(stat["nr_throttled"]) > 0 and int(stat["throttled_time"]) > 0, stat
    finally:
        cgroups.cleanup()
    assert not cgroups.cpu.exists()


def test_no_cpu_share_makes_no_cpu_cgroup() -> None:
    cgroups = create_cgroups(ResourceLimits(), "no-cpu-test")
    try:
        assert cgroups.cpu is None
    finally:
        cgroups.cleanup()
