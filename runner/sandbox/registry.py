"""Sandbox registry: sandbox config -> Sandbox."""

from __future__ import annotations

from runner.errors import ConfigError, section_settings
from runner.config import RunnerConfig
from runner.sandbox.base import Sandbox


def build_sandbox(config: RunnerConfig) -> Sandbox:
    if config.sandbox.kind == "local":
        from runner.sandbox.local import LocalSandbox, LocalSandboxSettings

        settings = section_settings(LocalSandboxSettings, config.sandbox.local, "sandbox.local")
        if not settings.cache_root:
            settings = settings.model_copy(update={"cache_root": str(config.resolve_path(config.cache_dir))})
        return LocalSandbox(settings)
    if config.sandbox.kind == "docker":
        return _docker_sandbox(config)
    raise ConfigError(f"sandbox.kind = {config.sandbox.kind!r}: not available in this version; choose local")


def _docker_sandbox(config: RunnerConfig) -> Sandbox:
    from pydantic import ValidationError

    from runner.errors import format_validation_error
    from runner.sandbox.docker import DockerSandbox, DockerSandboxSettings

    try:
        settings = DockerSandboxSettings.model_validate(config.sandbox.options)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, config.sandbox.options, "sandbox.options")) from None
    return DockerSandbox(settings, cache_root=config.resolve_path(config.cache_dir))


async def sandbox_tracking_tags(config: RunnerConfig) -> dict[str, str]:
    """Run tags that pin the sandbox (docker: image content tags and digests; builds missing images)."""
    if config.sandbox.kind != "docker":
        return {}
    import asyncio

    from runner.sandbox.docker import DockerSetupError

    sandbox = _docker_sandbox(config)
    try:
        return await asyncio.to_thread(sandbox.tracking_tags)
    except DockerSetupError as error:
        raise ConfigError(f"sandbox=docker: {error}") from None
    finally:
        await sandbox.aclose()
