"""The runner's own image (top-level Dockerfile), built once per test session, in the background.

Its cold build is mostly downloads (PyPI, the Debian mirror), so it starts as soon as collection selects a
test that needs it and runs beside the other tests; the test's fixture then waits for it.
"""

from __future__ import annotations

import fcntl
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TAG = "genui-runner:test"

_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="runner-image")
_build: Future["ImageBuild"] | None = None


@dataclass
class ImageBuild:
    tag: str
    problem: str = ""  # why there is no image (an assertion message), "" when built
    no_engine: bool = False  # no Docker engine reachable: the test skips (fails under CI=true)


def _docker(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)


def _build_image() -> ImageBuild:
    try:
        if _docker("info", timeout=30).returncode != 0:
            return ImageBuild(TAG, "no Docker engine reachable; start one with scripts/start-dockerd.sh", no_engine=True)
        build_tag = subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "python"), "-m", "runner.sandbox.images",
                                    "--tag", "build"], capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
        if build_tag.returncode != 0:
            return ImageBuild(TAG, build_tag.stderr[-2000:])
        # scripts/build-images.sh points genui-build:current at the resolved build image; the README's command
        # (`docker build -t genui-runner .`) builds on it.
        current = _docker("image", "inspect", "--format", "{{.Id}}", "genui-build:current", timeout=60)
        resolved = _docker("image", "inspect", "--format", "{{.Id}}", build_tag.stdout.strip(), timeout=60)
        if current.returncode != 0 or current.stdout != resolved.stdout:
            return ImageBuild(TAG, "genui-build:current is not the resolved build image: run scripts/build-images.sh")
        built = _docker("build", "-t", TAG, ".", timeout=1800)
        if built.returncode != 0:
            return ImageBuild(TAG, built.stdout[-3000:] + built.stderr[-3000:])
        return ImageBuild(TAG)
    except (OSError, subprocess.SubprocessError) as error:
        return ImageBuild(TAG, f"building {TAG} failed: {error}", no_engine=isinstance(error, FileNotFoundError))


@contextmanager
def engine_builds_paused() -> Iterator[None]:
    """While held, no test process of this machine builds the runner image (a test restarting the engine
    holds it); and the builds of several xdist workers run one at a time, the later ones finding it cached."""
    lock_path = REPO_ROOT / ".cache" / "runner-image-build.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _build_image_once_per_machine() -> ImageBuild:
    with engine_builds_paused():
        return _build_image()


def start_runner_image_build() -> None:
    """Start the build (once per session); later calls do nothing."""
    global _build
    if _build is None:
        _build = _pool.submit(_build_image_once_per_machine)


def runner_image_build(timeout: float = 2400) -> ImageBuild:
    """The session's build, started now if collection did not start it."""
    start_runner_image_build()
    assert _build is not None
    return _build.result(timeout=timeout)
