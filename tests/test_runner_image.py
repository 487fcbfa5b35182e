"""The runner's own image (top-level Dockerfile), built and run for real: `docker run` of it runs the offline
default (sandbox=local, so bubblewrap inside the container) and prints a finished run dir.

Marker `docker` and `slow`: the first build takes minutes (PyPI through the machine's proxy), so it runs in the
background from the end of collection; later builds are cached layers. Needs the base and build images
(scripts/build-images.sh).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.support.components import skip_missing
from tests.support.runner_image import runner_image_build

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(2400)]  # a cold build runs past the default 600 s

# What bubblewrap needs inside a container (README, docs/docker.md): CAP_SYS_ADMIN for its namespaces and
# mounts, no seccomp/AppArmor profile that forbids them, an unmasked /proc, and a writable cgroup tree for limits.
RUN_FLAGS = ["--cap-add", "SYS_ADMIN", "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
             "--security-opt", "systempaths=unconfined", "-v", "/sys/fs/cgroup:/sys/fs/cgroup"]


def _docker(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)


@pytest.fixture(scope="module")
def runner_image() -> str:
    # Built in the background since collection (tests/support/runner_image.py, tests/conftest.py).
    build = runner_image_build()
    if build.no_engine:
        skip_missing("docker", build.problem)
    assert not build.problem, build.problem
    return build.tag


def test_docker_run_of_the_runner_image_finishes_the_offline_default(runner_image: str, tmp_path: Path) -> None:
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    result = _docker("run", "--rm", *RUN_FLAGS, "-v", f"{outputs}:/opt/genui/outputs", runner_image,
                     "hydra.run.dir=/opt/genui/outputs/run", "tracking=off", timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1].endswith("/opt/genui/outputs/run"), result.stdout[-1000:]
    summary = json.loads((outputs / "run" / "summary.json").read_text())
    assert summary["turn_pass"] == 1.0 and summary["run"]["sandbox"] == "local"
    records = (outputs / "run" / "turns.jsonl").read_text().splitlines()
    assert len(records) == 9 and all(json.loads(line)["status"] == "ok" for line in records)
    assert "memory is not limited" not in result.stderr, "the sandbox's cgroup limits apply inside the container"


def test_without_the_flags_bubblewrap_cannot_start_and_the_run_says_so(runner_image: str, tmp_path: Path) -> None:
    # The documented flags are needed, not decoration: Docker's default seccomp/capabilities stop bubblewrap.
    result = _docker("run", "--rm", "--entrypoint", "bwrap", runner_image, "--unshare-all", "--ro-bind", "/", "/",
                     "--proc", "/proc", "--dev", "/dev", "true", timeout=120)
    assert result.returncode != 0 and "bwrap" in result.stderr, result.stderr
    allowed = _docker("run", "--rm", *RUN_FLAGS, "--entrypoint", "bwrap", runner_image, "--unshare-all", "--ro-bind",
                      "/", "/", "--proc", "/proc", "--dev", "/dev", "true", timeout=120)
    assert allowed.returncode == 0, allowed.stderr
