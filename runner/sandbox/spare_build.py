"""Spare builds: the next build's sandbox started ahead, with Vite loaded, waiting for its sources.

Of a warm smoke build (about 0.28 s) nearly half is the sandbox, Node's start and loading Vite, none of which
depends on the sources (docs/performance.md). With `sandbox.local.spare_build`, after each build the pipeline
starts the next one's sandbox: the same bubblewrap, cgroups, rlimits, environment and mounts as a build's, its
workspace an empty folder mounted at /app, running spare-build.mjs, which loads Vite and waits for one line on
stdin; while it waits, it warms Vite's bundler with one small build of a project in the sandbox's own /tmp
(`sandbox.local.spare_build_warm_up`). The next build of the same template and tools fills that folder with the
template and the model's files, sends the go line (the build's wall-clock limit starts then), and the folder
becomes the build's workspace once it ends. Each spare serves one build and is never reused; one that died or was
made for other tools is stopped, and the build runs as it would without spares.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path

from runner.sandbox.isolation import Mount, RunOutcome, StartsAhead, WaitingRun
from runner.sandbox.scratch import scratch_dir
from runner.sandbox.started_ahead import StartedAhead

log = logging.getLogger(__name__)

SCRIPT = Path(__file__).resolve().parent / "spare-build.mjs"
MountsFor = Callable[[Path], list[Mount]]  # a build's mounts, given the folder mounted as its workspace


def spare_command(command: list[str], *, warm_up: bool = True) -> list[str]:
    """`command` (node, its script, the script's arguments) as the launcher runs it once its go line comes.
    `warm_up`: Vite's bundler is warmed on a project of the launcher's own while it waits (spare-build.mjs)."""
    node, *rest = command
    return [node, "--input-type=module", "-e", SCRIPT.read_text(), "warm-up" if warm_up else "cold", *rest]


@dataclass
class Spare:
    """One started build sandbox: `staging` is its /app, empty until its build fills it."""

    key: Hashable
    staging: Path
    run: WaitingRun


def adopt(staging: Path, workspace: Path) -> None:
    """The spare's folder, built, becomes the build's workspace (a rename where both share a file system)."""
    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(staging), str(workspace))


class SpareBuilds(StartedAhead[Hashable, Spare]):
    """At most one spare per key (the template, the tools and the compile cache it was started with)."""

    def __init__(self, isolation: StartsAhead, *, warm_up: bool = True) -> None:
        super().__init__()
        self._isolation = isolation
        self._warm_up = warm_up

    def alive(self, spare: Spare) -> bool:
        return spare.run.alive()

    def start_next(self, key: Hashable, command: list[str], mounts_for: MountsFor, env: dict[str, str],
                   cwd: str) -> None:
        """Start a spare for `key` in the background, unless one is ready or starting."""
        self.start_in_background(key, lambda: self._start(key, command, mounts_for, env, cwd))

    async def _start(self, key: Hashable, command: list[str], mounts_for: MountsFor, env: dict[str, str],
                     cwd: str) -> Spare | None:
        staging = scratch_dir("spare-build")
        try:
            started = await self._isolation.start_waiting(spare_command(command, warm_up=self._warm_up),
                                                          mounts_for(staging), cwd=cwd, env=env)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if isinstance(started, RunOutcome):  # builds go on without spares; each says why it failed, if it does
            log.warning("a spare build sandbox did not start: %s", started.setup_error or started.output[-500:])
            shutil.rmtree(staging, ignore_errors=True)
            return None
        return Spare(key, staging, started)

    async def discard(self, spare: Spare) -> None:
        """Stop a spare, taken or not (its sources could not be laid out), and remove its folder."""
        try:
            await spare.run.discard()
        finally:
            await asyncio.to_thread(shutil.rmtree, spare.staging, True)
