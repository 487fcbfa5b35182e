"""What each sandbox kind needs on this host, checked in seconds without starting anything: its preflight hook
(runner/sandbox/kinds.py). Local: bubblewrap and the Node that builds; docker: the engine and the build (and
browser) images or what builds them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.host_probes import docker_client, image_present
from runner.problems import Problem

if TYPE_CHECKING:
    from runner.config import RunnerConfig
    from runner.sandbox.docker import DockerSandboxSettings

__all__ = ["check_build_node", "check_docker_image", "check_docker_sandbox", "check_local_sandbox"]


def check_build_node(node: str | None, cache_root: str | None) -> list[Problem]:
    """The Node that runs builds: a named one must exist; the pinned one must be installed, or npm be there to
    install it on the first build."""
    if node:
        if shutil.which(node) is None:
            return [Problem("sandbox.local.node", f"{node} is not an executable Node; artifacts are built with vite",
                            "name a Node 20+ executable, or remove the key to use the pinned build Node")]
        return []
    from runner.sandbox.build_node import BUILD_NODE_DIR, build_node_installed

    if not build_node_installed(Path(cache_root) if cache_root else None) and shutil.which("npm") is None:
        return [Problem("sandbox.local.node", f"the pinned build Node ({BUILD_NODE_DIR / 'package.json'}) is not "
                        "installed and npm is missing to install it", "bash scripts/setup.sh (python -m runner.prepare)")]
    return []


def check_local_sandbox(config: RunnerConfig, suite: Any) -> list[Problem]:
    """bubblewrap, and the Node that builds a suite's artifacts (not for static pages)."""
    problems = []
    if shutil.which("bwrap") is None:
        problems.append(Problem("sandbox", "bubblewrap (bwrap) is not installed; sandbox=local runs builds and "
                                "servers under it", "`apt-get install -y bubblewrap` (bash scripts/setup.sh does it)"))
    if suite.artifact_kind != "static":
        local = config.sandbox.section("local")
        problems += check_build_node(local.get("node"), local.get("cache_root"))
    return problems


def check_docker_sandbox(config: RunnerConfig, suite: Any) -> list[Problem]:
    """The Docker engine, and the build (and browser) images or what builds them."""
    from runner.sandbox.images import IMAGE_LABEL

    settings: DockerSandboxSettings = config.sandbox.settings
    client, why = docker_client()
    if client is None:
        return [Problem("sandbox", f"sandbox=docker, but no Docker engine is reachable ({why})",
                        "start it (`dockerd &`, docs/docker.md), or use sandbox=local")]
    problems = []
    names = ["build", "browser"] if settings.browser_in_container else ["build"]
    base_present = image_present(client, settings.base_image)
    for name in names:
        explicit = settings.images.get(name)
        if explicit:
            if not image_present(client, explicit):
                problems.append(Problem(f"sandbox.options.images.{name}", f"image {explicit} is not present",
                                        "build or load it, or drop the override to use the content-tagged image"))
            continue
        try:
            built_before = bool(client.images.list(filters={"label": f"{IMAGE_LABEL}={name}"}))
        except Exception:
            built_before = False
        if not built_before and not (settings.build_missing_images and base_present):
            problems.append(Problem("sandbox", f"no {name} image, and its base image {settings.base_image} is not "
                                    "present to build one", "run `bash scripts/build-images.sh`"))
    return problems


def check_docker_image(config: RunnerConfig, name: str, *, who: str) -> list[Problem]:
    """One more image of the docker sandbox's (`who` needs it: an agent's CLI image), present or buildable; an
    engine that does not answer is the sandbox's own check's to report."""
    from runner.sandbox.images import IMAGE_LABEL

    settings: DockerSandboxSettings = config.sandbox.settings
    explicit = settings.images.get(name)
    try:
        import docker

        client = docker.from_env(timeout=int(settings.docker_timeout_s))
        try:
            if explicit:
                present = any(explicit in image.tags for image in client.images.list(name=explicit.split(":")[0]))
            else:
                present = bool(client.images.list(filters={"label": f"{IMAGE_LABEL}={name}"}))
        finally:
            client.close()
    except Exception:  # the sandbox's own check reports an unreachable engine
        return []
    if explicit and not present:
        return [Problem(f"sandbox.options.images.{name}", f"image {explicit} is not present",
                        "build or load it, or drop the override to use the content-tagged image")]
    if not present and not settings.build_missing_images:
        return [Problem("sandbox", f"{who}: no {name} image, and the sandbox may not build one "
                        "(sandbox.options.build_missing_images=false)", "run `bash scripts/build-images.sh`")]
    return []
