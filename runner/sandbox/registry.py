"""Sandbox registry: sandbox config -> Sandbox."""

from __future__ import annotations

from runner.config import ConfigError, RunnerConfig
from runner.sandbox.base import Sandbox


def build_sandbox(config: RunnerConfig) -> Sandbox:
    if config.sandbox.kind == "local":
        from runner.sandbox.local import LocalSandbox

        settings = config.sandbox.local
        if not settings.cache_root:
            settings = settings.model_copy(update={"cache_root": str(config.resolve_path(config.cache_dir))})
        return LocalSandbox(settings)
    raise ConfigError(f"sandbox.kind = {config.sandbox.kind!r}: not available in this version; choose local")
