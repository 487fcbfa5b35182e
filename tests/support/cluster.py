"""Real scale-out infrastructure for tests: an HTTP `mlflow server`, a single-node SLURM cluster, a Ray head.

Everything listens on 127.0.0.1 (free ports), keeps its state in a temporary folder and is stopped by the
process ids it wrote (pid files or our own child process groups), never by name.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(predicate, timeout: float, what: str, log: Path | None = None) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    tail = log.read_text()[-3000:] if log is not None and log.exists() else ""
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s\n{tail}")


def _stop_group(process: subprocess.Popen, timeout: float = 20) -> None:
    """SIGTERM then SIGKILL the process group of a child we started with start_new_session=True."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # leftovers of the group (e.g. server workers)
    except ProcessLookupError:
        pass
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


# --------------------------------------------------------------------------- mlflow server


@contextmanager
def mlflow_server(root: Path, *, timeout: float = 300) -> Iterator[str]:
    """`mlflow server` over a sqlite store, serving artifacts itself (clients need no shared disk)."""
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = root / "mlflow-server.log"
    env = dict(os.environ, MLFLOW_DISABLE_TELEMETRY="true")
    command = [
        str(VENV_BIN / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
        "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
        "--artifacts-destination", str(root / "artifacts"), "--serve-artifacts",
    ]
    with log.open("wb") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"mlflow server exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            return httpx.get(f"{url}/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        _wait(healthy, timeout, "mlflow server", log)
        yield url
    finally:
        _stop_group(process, timeout=5)  # nothing to flush: every write was committed by its request


# --------------------------------------------------------------------------- SLURM


SLURM_BINARIES = ("slurmctld", "slurmd", "sbatch", "sinfo", "munged", "munge")


def slurm_missing() -> str | None:
    """Why a SLURM cluster cannot be started here (None when it can)."""
    missing = [name for name in SLURM_BINARIES if shutil.which(name) is None]
    if missing:
        return (f"SLURM/munge not installed ({', '.join(missing)} missing): "
                "apt-get install -y slurm-wlm munge")
    if os.geteuid() != 0:
        return "a test SLURM cluster needs root (slurmd runs jobs as their user)"
    return None


def _munge_ok() -> bool:
    try:
        encoded = subprocess.run(["munge", "-n"], capture_output=True, timeout=10, check=False)
        if encoded.returncode != 0:
            return False
        decoded = subprocess.run(["unmunge"], input=encoded.stdout, capture_output=True, timeout=10, check=False)
        return decoded.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@contextmanager
def _munge() -> Iterator[None]:
    """Use a running munged, or start one (with a key if there is none) and stop it afterwards."""
    if _munge_ok():
        yield
        return
    key = Path("/etc/munge/munge.key")
    if not key.exists():
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(os.urandom(1024))
        shutil.chown(key, "munge", "munge")
        key.chmod(0o400)
    run_dir = Path("/run/munge")
    run_dir.mkdir(parents=True, exist_ok=True)
    shutil.chown(run_dir, "munge", "munge")
    pid_file = run_dir / "munged.pid"
    subprocess.run(["munged", "--force"], check=True, timeout=30)
    _wait(_munge_ok, 30, "munged")
    try:
        yield
    finally:
        _kill_pid_file(pid_file)


def _kill_pid_file(pid_file: Path, timeout: float = 15) -> None:
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _node_line() -> str:
    """This machine's NodeName line as slurmd itself reports it (CPUs, sockets, memory)."""
    done = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30, check=True)
    return next(line for line in done.stdout.splitlines() if line.startswith("NodeName="))


@contextmanager
def slurm_cluster(root: Path, *, timeout: float = 60) -> Iterator[dict[str, str]]:
    """A one-node SLURM cluster with its own slurm.conf and ports; yields the env clients need (SLURM_CONF)."""
    root.mkdir(parents=True, exist_ok=True)
    for folder in ("state", "spool"):
        (root / folder).mkdir(exist_ok=True)
    host = socket.gethostname().split(".")[0]
    node = _node_line()
    conf = root / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=genui-test",
        f"SlurmctldHost={host}",
        f"SlurmctldPort={free_port()}",
        f"SlurmdPort={free_port()}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        "SlurmUser=root",
        "SlurmdUser=root",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "MpiDefault=none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SchedulerType=sched/backfill",
        "ReturnToService=2",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "SlurmctldTimeout=30",
        "SlurmdTimeout=30",
        "InactiveLimit=0",
        "KillWait=5",
        f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={root / 'spool'}",
        f"SlurmctldPidFile={root / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'slurmd.pid'}",
        f"SlurmctldLogFile={root / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'slurmd.log'}",
        f"{node} State=UNKNOWN",
        f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP",
        "",
    ]))
    env = dict(os.environ, SLURM_CONF=str(conf))
    with _munge():
        started: list[Path] = []
        try:
            subprocess.run(["slurmctld", "-f", str(conf)], env=env, check=True, timeout=30)
            started.append(root / "slurmctld.pid")
            subprocess.run(["slurmd", "-f", str(conf)], env=env, check=True, timeout=30)
            started.append(root / "slurmd.pid")

            def idle() -> bool:
                done = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True,
                                      timeout=10, check=False)
                return done.returncode == 0 and "idle" in done.stdout

            _wait(idle, timeout, "SLURM node", root / "slurmctld.log")
            yield {"SLURM_CONF": str(conf)}
        finally:
            for pid_file in reversed(started):
                _kill_pid_file(pid_file)


# --------------------------------------------------------------------------- Ray


@contextmanager
def ray_head(root: Path, *, num_cpus: int = 2, timeout: float = 120) -> Iterator[str]:
    """`ray start --head --block` in its own process group; yields the address HOST:PORT to attach to."""
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = root / "ray-head.log"
    # Ray's unix sockets live under --temp-dir; the path must stay short (108 bytes).
    temp_dir = Path(f"/tmp/ray_t{port}")
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_DISABLE_DOCKER_CPU_WARNING="1")
    command = [
        str(VENV_BIN / "ray"), "start", "--head", "--block", f"--num-cpus={num_cpus}", "--num-gpus=0",
        f"--port={port}", "--node-ip-address=127.0.0.1", "--include-dashboard=false",
        "--disable-usage-stats", f"--temp-dir={temp_dir}",
        f"--ray-client-server-port={free_port()}", f"--node-manager-port={free_port()}",
        f"--object-manager-port={free_port()}",
    ]
    with log.open("wb") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    address = f"127.0.0.1:{port}"

    def ready() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"ray start exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        return "Ray runtime started" in log.read_text(errors="replace")

    try:
        _wait(ready, timeout, "Ray head", log)
        yield address
    finally:
        _stop_group(process, timeout=30)
        shutil.rmtree(temp_dir, ignore_errors=True)
