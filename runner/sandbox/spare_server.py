"""Spare artifact servers: the next serve's confined server started ahead, its imports done, waiting for its files.

Of a serve (about 80 ms of a local turn) nearly all is the sandbox, Python's start and its imports
(docs/performance.md), none of which depends on the artifact. With `sandbox.local.spare_server`, each serve starts
the next one's server for the same browser (its network namespace: the socket is made there, as a cold server's):
the same bubblewrap, cgroups, rlimits and mounts, its dist folder an empty one, at niceness 19 until it is used. The
next serve for that browser links the built files into that folder (a symbolic link is copied as a link, so it
resolves inside the sandbox, as in a mounted dist), sends the go line and serves from it. Each spare serves one
artifact and is never reused; one that died is stopped and the serve starts cold. A serve with a tool bridge
(EvoGenUI-Bench's) starts cold: its mounts are the turn's own state and log folders.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runner.sandbox.isolation import Mount, SandboxSetupError, ServesAhead, WaitingServer
from runner.sandbox.scratch import scratch_dir
from runner.sandbox.started_ahead import StartedAhead

log = logging.getLogger(__name__)

# Spares kept at once, one per browser: a browser that went away leaves its spare unused until this many newer
# ones push it out (or the run ends).
MAX_SPARES = 8
# (command, mounts) of a server that serves `dist` with its own files in `scratch` (the pipeline's, as a cold one).
ServerFiles = Callable[[Path, Path], tuple[list[str], list[Mount]]]


@dataclass
class SpareServer:
    """One started server: `dist` is mounted as its artifact, empty until its serve fills it."""

    network: str | None
    scratch: Path  # its server.py and log
    dist: Path
    server: WaitingServer


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or links refused: a copy serves the same bytes
        shutil.copy2(source, target)


def fill(dist: Path, spare: SpareServer) -> None:
    """The built artifact's files into the spare's dist folder."""
    shutil.copytree(dist, spare.dist, symlinks=True, copy_function=_link_or_copy, dirs_exist_ok=True)


class SpareServers(StartedAhead[str | None, SpareServer]):
    """At most one spare per browser network namespace (None: the host's loopback), MAX_SPARES in all."""

    def __init__(self, isolation: ServesAhead, server_files: ServerFiles) -> None:
        super().__init__()
        self._isolation = isolation
        self._server_files = server_files
        self.limit = MAX_SPARES

    def alive(self, spare: SpareServer) -> bool:
        return spare.server.alive()

    def start_next(self, network: str | None) -> None:
        """Start a spare for `network` in the background, unless one is ready or starting."""
        self.start_in_background(network, lambda: self._start(network))

    async def _start(self, network: str | None) -> SpareServer | None:
        scratch = scratch_dir("spare-serve")
        dist = scratch / "dist"
        try:
            dist.mkdir()
            command, mounts = self._server_files(scratch, dist)
            server = await self._isolation.start_waiting_server(command, mounts, scratch=scratch, network=network)
        except (SandboxSetupError, OSError) as exc:  # serves go on cold; each says why it failed, if it does
            log.warning("a spare artifact server did not start: %s", exc)
            shutil.rmtree(scratch, ignore_errors=True)
            return None
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        return SpareServer(network, scratch, dist, server)

    async def discard(self, spare: SpareServer) -> None:
        """Stop a spare, used or not, and remove its folders."""
        try:
            await spare.server.stop()
        finally:
            await asyncio.to_thread(shutil.rmtree, spare.scratch, True)
