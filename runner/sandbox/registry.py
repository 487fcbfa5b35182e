"""Sandbox registry: sandbox config -> Sandbox, by the kind registered under its name (runner/kinds.py)."""

from __future__ import annotations

from runner.config import RunnerConfig
from runner.kinds import KINDS
from runner.sandbox.base import Sandbox


def build_sandbox(config: RunnerConfig) -> Sandbox:
    kind = KINDS.get("sandbox", config.sandbox.kind, key="sandbox.kind")
    return kind.factory(config.sandbox.settings, config=config)


async def sandbox_tracking_tags(config: RunnerConfig) -> dict[str, str]:
    """Run tags that pin the sandbox (docker: image content tags and digests; builds missing images)."""
    hook = KINDS.get("sandbox", config.sandbox.kind, key="sandbox.kind").tracking_tags
    return await hook(config) if hook is not None else {}
