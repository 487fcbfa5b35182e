"""VLLMServer's lifecycle without vLLM: a stand-in server (tests/support/fake_vllm.py) with injected faults.

The real vLLM server is exercised in test_vllm_server.py; here the launcher's own duties are checked fast:
the command line and environment it builds, readiness polling, the ready timeout, an early exit, stopping the
whole process group (also when SIGTERM is ignored, when the runner is killed, or gets SIGTERM).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from runner.models.vllm_server import (
    ServerStartError,
    VLLMServer,
    VLLMServerSettings,
    _group_alive,
    checkpoint_progress,
    docker_run_kwargs,
    process_argv,
    resolve_snapshot,
)

FAKE = Path(__file__).resolve().parents[1] / "support" / "fake_vllm.py"


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "weights"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    return folder


def fake_settings(model_dir: Path, tmp_path: Path, **overrides: object) -> VLLMServerSettings:
    values: dict[str, object] = {
        "model_path": str(model_dir),
        "command": [sys.executable, str(FAKE)],
        "ready_timeout_s": 20,
        "poll_interval_s": 0.1,
        "stop_timeout_s": 5,
        "log_dir": str(tmp_path / "logs"),
    }
    values.update(overrides)
    return VLLMServerSettings.model_validate(values)


def _children_of(pgid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                pids.append(int(entry.name))
    return pids


def test_process_start_ready_and_stop_whole_group(model_dir: Path, tmp_path: Path) -> None:
    argv_out = tmp_path / "argv.json"
    settings = fake_settings(
        model_dir, tmp_path, gpu_ids=[1, 3], max_model_len=256, dtype="float32",
        limit_mm_per_prompt={"image": 2}, enable_auto_tool_choice=True, tool_call_parser="hermes",
        extra_args=["--seed", "7"], env={"FAKE_VLLM_ARGV_OUT": str(argv_out), "FAKE_VLLM_DELAY_S": "0.5"},
    )
    server = VLLMServer(settings, name="fake gen", served_model_name="fake-gen")

    async def scenario() -> tuple[int, list[int]]:
        url = await server.start()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert server.ready_s is not None and server.ready_s >= 0.5
        pgid = server.pgid
        assert pgid is not None
        members = _children_of(pgid)
        await server.aclose()
        return pgid, members

    pgid, members = asyncio.run(scenario())
    assert len(members) >= 2  # the server and its "engine core"
    assert not _group_alive(pgid)
    recorded = json.loads(argv_out.read_text())
    argv = recorded["argv"]
    assert argv[0] == str(model_dir)  # `vllm serve MODEL` form: the model first, positional
    assert argv[argv.index("--served-model-name") + 1] == "fake-gen"
    assert argv[argv.index("--max-model-len") + 1] == "256"
    assert json.loads(argv[argv.index("--limit-mm-per-prompt") + 1]) == {"image": 2}
    assert "--enable-auto-tool-choice" in argv and argv[-2:] == ["--seed", "7"]
    assert json.loads(argv[argv.index("--structured-outputs-config") + 1])["disable_any_whitespace"] is True
    assert recorded["env"]["HF_HUB_OFFLINE"] == "1" and recorded["env"]["CUDA_VISIBLE_DEVICES"] == "1,3"
    assert server.log_path is not None and "serving fake-gen" in server.log_path.read_text()


def test_never_ready_times_out_with_clear_error_and_is_killed(model_dir: Path, tmp_path: Path) -> None:
    settings = fake_settings(model_dir, tmp_path, ready_timeout_s=1.5, env={"FAKE_VLLM_DELAY_S": "60"})
    server = VLLMServer(settings, name="slow")
    seen: dict[str, int] = {}

    async def scenario() -> None:
        task = asyncio.create_task(server.start())
        for _ in range(100):
            if server.pgid is not None:
                seen["pgid"] = server.pgid
                break
            await asyncio.sleep(0.02)
        await task

    started = time.monotonic()
    with pytest.raises(ServerStartError) as info:
        asyncio.run(scenario())
    assert time.monotonic() - started < 15
    message = str(info.value)
    assert "did not answer GET" in message and "ready_timeout_s" in message and str(server.log_path) in message
    assert not _group_alive(seen["pgid"])


def test_early_exit_reports_exit_code_and_log_tail(model_dir: Path, tmp_path: Path) -> None:
    server = VLLMServer(fake_settings(model_dir, tmp_path, env={"FAKE_VLLM_EXIT": "3"}), name="broken")
    with pytest.raises(ServerStartError, match=r"exited \(exit code 3\)[\s\S]*CUDA out of memory"):
        asyncio.run(server.start())


def test_sigterm_ignored_escalates_to_sigkill(model_dir: Path, tmp_path: Path) -> None:
    settings = fake_settings(model_dir, tmp_path, stop_timeout_s=1, env={"FAKE_VLLM_IGNORE_TERM": "1"})
    server = VLLMServer(settings, name="stubborn")

    async def scenario() -> int:
        await server.start()
        pgid = server.pgid
        assert pgid is not None
        await server.aclose()
        return pgid

    assert not _group_alive(asyncio.run(scenario()))


def test_missing_executable_is_a_clear_error(model_dir: Path, tmp_path: Path) -> None:
    server = VLLMServer(fake_settings(model_dir, tmp_path, command=["/nonexistent/vllm", "serve"]), name="x")
    with pytest.raises(ServerStartError, match="cannot run '/nonexistent/vllm'"):
        asyncio.run(server.start())


_ORPHAN_SCRIPT = textwrap.dedent(
    """
    import asyncio, os, signal, sys, time
    sys.path.insert(0, {root!r})
    from runner.models.vllm_server import VLLMServer, VLLMServerSettings
    settings = VLLMServerSettings.model_validate({settings!r})
    server = VLLMServer(settings, name="orphan")
    async def main():
        await server.start()
        print(server.pgid, flush=True)
        await asyncio.sleep(60)
    asyncio.run(main())
    """
)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_runner_killed_leaves_no_server(model_dir: Path, tmp_path: Path, how: signal.Signals) -> None:
    """SIGTERM: the runner's hook stops the group. SIGKILL: the server dies with its parent (PDEATHSIG)."""
    settings = fake_settings(model_dir, tmp_path).model_dump()
    script = _ORPHAN_SCRIPT.format(root=str(Path(__file__).resolve().parents[2]), settings=settings)
    runner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert runner.stdout is not None
        pgid = int(runner.stdout.readline().strip())
        assert _group_alive(pgid)
        runner.send_signal(how)
        runner.wait(timeout=20)
        for _ in range(100):
            if not _group_alive(pgid):
                break
            time.sleep(0.1)
        if how == signal.SIGKILL:
            # PDEATHSIG stops the server itself; its own child goes with the server's shutdown or stays
            # orphaned in the group. Clean up whatever is left so the test leaves nothing behind.
            leftover = _children_of(pgid)
            for pid in leftover:
                os.kill(pid, signal.SIGKILL)
            assert pgid not in leftover
        else:
            assert not _group_alive(pgid)
    finally:
        if runner.poll() is None:
            runner.kill()


def test_snapshot_resolution_offline_and_missing(tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    revision = "a" * 40
    snapshot = cache / "models--org--tiny" / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    found = resolve_snapshot(VLLMServerSettings(hf_repo="org/tiny", revision=revision, hf_cache=str(cache)))
    assert found == snapshot
    with pytest.raises(ServerStartError, match=r"not in the local hub cache[\s\S]*runner.pull"):
        resolve_snapshot(VLLMServerSettings(hf_repo="org/other", revision=revision, hf_cache=str(cache)))


def test_python_entry_point_form(model_dir: Path) -> None:
    settings = VLLMServerSettings(model_path=str(model_dir), python="/venv/bin/python")
    argv = process_argv(settings, model_dir, served_model_name="m", port=1234)
    assert argv[:5] == ["/venv/bin/python", "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir)]


def test_docker_run_arguments(tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    snapshot = cache / "models--Qwen--X" / "snapshots" / ("b" * 40)
    snapshot.mkdir(parents=True)
    settings = VLLMServerSettings(
        hf_repo="Qwen/X", revision="b" * 40, hf_cache=str(cache), mode="docker", gpu_ids=[0],
        tensor_parallel_size=2, gpu_memory_utilization=0.4,
    )
    kwargs = docker_run_kwargs(settings, snapshot, served_model_name="x", port=18000, name="genui-vllm-x")
    assert kwargs["image"].startswith("vllm/vllm-openai:v")
    assert kwargs["command"][0] == f"/hf-cache/models--Qwen--X/snapshots/{'b' * 40}"
    assert kwargs["volumes"] == {str(cache.resolve()): {"bind": "/hf-cache", "mode": "ro"}}
    assert kwargs["ports"] == {"8000/tcp": ("127.0.0.1", 18000)}
    assert kwargs["device_requests"][0]["DeviceIDs"] == ["0"]
    assert kwargs["environment"]["HF_HUB_OFFLINE"] == "1"
    assert "genui-runner.vllm" in kwargs["labels"]
    command = kwargs["command"]
    assert command[command.index("--host") + 1] == "0.0.0.0"  # inside the container; published on 127.0.0.1
    assert command[command.index("--gpu-memory-utilization") + 1] == "0.4"


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"mode": "attach"}, "needs base_url"),
        ({"hf_repo": "a/b"}, "needs revision"),
        ({}, "needs hf_repo"),
        ({"model_path": "/x", "enable_auto_tool_choice": True}, "needs tool_call_parser"),
    ],
)
def test_settings_validation(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VLLMServerSettings.model_validate(settings)


def test_checkpoint_progress_from_the_log_tail() -> None:
    tail = ("INFO loading weights\nLoading safetensors checkpoint shards:   0% Completed | 0/13 [00:00<?, ?it/s]\r"
            "Loading safetensors checkpoint shards:  46% Completed | 6/13 [00:41<00:48,  6.9s/it]\n")
    assert checkpoint_progress(tail)[:2] == (6, 13)
    assert checkpoint_progress("INFO starting engine core\n") == (0, None, "INFO starting engine core")


def test_start_shows_its_load_progress(model_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A server whose log reports shards: the start step's plain progress lines carry them, then finish."""
    shards = "echo 'Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01]'"
    settings = fake_settings(model_dir, tmp_path, command=["sh", "-c", f'{shards}; exec "$0" "$@"', sys.executable, str(FAKE)],
                             env={"FAKE_VLLM_DELAY_S": "1.0"})
    server = VLLMServer(settings, name="shards", served_model_name="shards")
    caplog.set_level("INFO", logger="runner.progress")

    async def scenario() -> None:
        await server.start()
        await server.aclose()

    asyncio.run(scenario())
    lines = [r.getMessage() for r in caplog.records if r.name == "runner.progress" and "step=vllm-shards" in r.getMessage()]
    assert "state=started" in lines[0] and "state=finished" in lines[-1]
    assert any("done=1 total=2" in line and 'detail="checkpoint shards 1/2"' in line for line in lines), lines
