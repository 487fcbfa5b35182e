"""The built-in sandbox kinds. Each factory imports its sandbox when a run builds it, so validating a config
imports only the settings of the sandbox it names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runner.kinds import register_kind

if TYPE_CHECKING:
    from runner.config import RunnerConfig
    from runner.sandbox.base import Sandbox
    from runner.sandbox.docker import DockerSandboxSettings
    from runner.sandbox.images import ImageInfo
    from runner.sandbox.local import LocalSandboxSettings


@register_kind("sandbox", "local", settings="runner.sandbox.local:LocalSandboxSettings", section="local",
               preflight="runner.sandbox.preflight:check_local_sandbox")
def local_sandbox(settings: LocalSandboxSettings, *, config: RunnerConfig) -> Sandbox:
    from runner.sandbox.local import LocalSandbox

    if not settings.cache_root:
        settings = settings.model_copy(update={"cache_root": str(config.resolve_path(config.cache_dir))})
    # A run's builds and artifact servers start ahead (runner/sandbox/spare_build.py, spare_server.py: the same
    # artifact, byte for byte, served sooner) unless the config says otherwise; set here, not in conf/, so the config
    # and its lineage hash stay those of runs made before.
    ahead = {key: True for key in ("spare_build", "spare_server") if key not in config.sandbox.local}
    if ahead:
        settings = settings.model_copy(update=ahead)
    return LocalSandbox(settings)


def docker_images(config: RunnerConfig) -> dict[str, dict[str, Any]]:
    """The docker sandbox's images as lineage records them (none is built)."""
    from runner.sandbox.docker import present_images

    infos = present_images(config.sandbox.settings, cache_root=config.resolve_path(config.cache_dir))
    return {name: {"tag": info.tag, "digest": info.image_id, "versions": dict(info.versions)}
            for name, info in infos.items()}


async def docker_tracking_tags(config: RunnerConfig) -> dict[str, str]:
    """Run tags that pin the docker sandbox: image content tags and digests (builds missing images)."""
    import asyncio

    from runner.errors import ConfigError
    from runner.sandbox.docker import DockerSetupError

    sandbox = docker_sandbox(config.sandbox.settings, config=config)
    try:
        return await asyncio.to_thread(sandbox.tracking_tags)
    except DockerSetupError as error:
        raise ConfigError(f"sandbox=docker: {error}") from None
    finally:
        await sandbox.aclose()


def docker_image(config: RunnerConfig, name: str, *, build_missing: bool) -> ImageInfo:
    """One more image of the docker sandbox's (`name`: an agent's), built first where it is missing, `build_missing`
    and the sandbox may build images (blocking: minutes)."""
    import docker
    from docker.errors import DockerException

    from runner.sandbox.images import ensure_images

    settings: DockerSandboxSettings = config.sandbox.settings
    try:
        client = docker.from_env(timeout=int(settings.docker_timeout_s))
    except DockerException as error:
        raise RuntimeError(f"no Docker engine reachable for the {name} image: {error}") from error
    try:
        return ensure_images(client, base_image=settings.base_image, names=[name], overrides=settings.images,
                             cache_root=config.resolve_path(config.cache_dir),
                             build_missing=build_missing and settings.build_missing_images)[name]
    finally:
        client.close()


def docker_browser_in_container(config: RunnerConfig) -> bool:
    """The docker sandbox runs the run's browsers in a container of its own unless told otherwise."""
    return bool(config.sandbox.settings.browser_in_container)


@register_kind("sandbox", "docker", settings="runner.sandbox.docker:DockerSandboxSettings",
               preflight="runner.sandbox.preflight:check_docker_sandbox", images=docker_images,
               tracking_tags=docker_tracking_tags, runs_images=True, browser_in_sandbox=docker_browser_in_container,
               image=docker_image, image_problems="runner.sandbox.preflight:check_docker_image")
def docker_sandbox(settings: DockerSandboxSettings, *, config: RunnerConfig) -> Sandbox:
    from runner.sandbox.docker import DockerSandbox

    return DockerSandbox(settings, cache_root=config.resolve_path(config.cache_dir))
