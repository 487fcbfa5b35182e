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
import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runner.sandbox.isolation import Mount, SandboxSetupError, ServesAhead, WaitingServer

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


class SpareServers:
    """At most one spare per browser network namespace (None: the host's loopback), MAX_SPARES in all."""

    def __init__(self, isolation: ServesAhead, server_files: ServerFiles) -> None:
        self._isolation = isolation
        self._server_files = server_files
        self._spares: dict[str | None, SpareServer] = {}
        self._starting: dict[str | None, asyncio.Task[None]] = {}
        self._closed = False

    async def take(self, network: str | None) -> SpareServer | None:
        """The started spare for `network`, if one is ready and alive (a dead one is stopped and cleared)."""
        spare = self._spares.pop(network, None)
        if spare is None or spare.server.alive():
            return spare
        await self.discard(spare)
        return None

    def start_next(self, network: str | None) -> None:
        """Start a spare for `network` in the background, unless one is ready or starting."""
        if self._closed or network in self._spares or network in self._starting:
            return
        task = asyncio.create_task(self._start(network))
        self._starting[network] = task
        task.add_done_callback(lambda _: self._starting.pop(network, None))

    async def _start(self, network: str | None) -> None:
        scratch = Path(tempfile.mkdtemp(prefix="genui-spare-serve-"))
        dist = scratch / "dist"
        try:
            dist.mkdir()
            command, mounts = self._server_files(scratch, dist)
            server = await self._isolation.start_waiting_server(command, mounts, scratch=scratch, network=network)
        except (SandboxSetupError, OSError) as exc:  # serves go on cold; each says why it failed, if it does
            log.warning("a spare artifact server did not start: %s", exc)
            shutil.rmtree(scratch, ignore_errors=True)
            return
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        spare = SpareServer(network, scratch, dist, server)
        if self._closed:
            await self.discard(spare)
            return
        self._spares[network] = spare
        while len(self._spares) > MAX_SPARES:
            await self.discard(self._spares.pop(next(iter(self._spares))))

    @staticmethod
    async def discard(spare: SpareServer) -> None:
        """Stop a spare, used or not, and remove its folders."""
        try:
            await spare.server.stop()
        finally:
            await asyncio.to_thread(shutil.rmtree, spare.scratch, True)

    async def aclose(self) -> None:
        """Stop every spare, started or starting."""
        self._closed = True
        for task in list(self._starting.values()):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        spares, self._spares = list(self._spares.values()), {}
        for spare in spares:
            await self.discard(spare)
