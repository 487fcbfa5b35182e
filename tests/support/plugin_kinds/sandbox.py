"""A sandbox kind with a preflight check of its own: it needs its `workdir` to exist."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from runner.config import RunnerConfig
from runner.kinds import register_kind
from runner.problems import Problem


class FolderSandboxSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workdir: str
    keep: bool = False


class FolderSandbox:
    def __init__(self, settings: FolderSandboxSettings, *, cache_root: Path) -> None:
        self.settings = settings
        self.cache_root = cache_root

    async def aclose(self) -> None:
        return None


def check_folder(config: RunnerConfig, suite: Any) -> list[Problem]:
    workdir = Path(config.sandbox.options["workdir"])
    if workdir.is_dir():
        return []
    return [Problem("sandbox.options.workdir", f"{workdir} is not a folder", "create it")]


@register_kind("sandbox", "folder", settings=FolderSandboxSettings, preflight=check_folder)
def folder_sandbox(settings: FolderSandboxSettings, *, config: RunnerConfig) -> FolderSandbox:
    return FolderSandbox(settings, cache_root=config.resolve_path(config.cache_dir))
