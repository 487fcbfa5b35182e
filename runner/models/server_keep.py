"""vLLM servers kept up between the runs of one command (`repeats: N`), so a model loads once, not N times.

MT-Web2Code Table 3 and EvoGenUI-Bench Table 8 are three independent runs of one configuration
(runner/run/repeats.py). Each run builds its roles anew, with its own response-cache draw, but the servers are the
same: within `kept_between_runs()`, a server whose last holder lets go as its run ends is parked here instead
of stopped, and the next run's role of the same identity (runner/models/vllm_server.py server_identity) takes
it up. Parked servers the next run does not take up stop when the block ends. A staged run keeps nothing
(`allow(False)`): its servers must be down between phases, so that the next phase's fit in GPU memory.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.models.vllm_server import VLLMServer

log = logging.getLogger(__name__)

__all__ = ["ServerKeep", "allow", "kept_between_runs", "park", "take"]


@dataclass
class ServerKeep:
    servers: dict[str, VLLMServer] = field(default_factory=dict)  # identity -> a running server nobody holds
    allowed: bool = True

    async def aclose(self) -> None:
        servers, self.servers = list(self.servers.values()), {}
        for server in servers:
            await server.aclose()


_current: ContextVar[ServerKeep | None] = ContextVar("genui_server_keep", default=None)


@contextlib.asynccontextmanager
async def kept_between_runs() -> AsyncIterator[ServerKeep]:
    """Within the block, servers outlive the run that started them; every parked one stops as it ends."""
    keep = ServerKeep()
    token = _current.set(keep)
    try:
        yield keep
    finally:
        _current.reset(token)
        await keep.aclose()


def allow(keeping: bool) -> None:
    """Whether the current run's servers may be kept (False: a staged run)."""
    keep = _current.get()
    if keep is not None:
        keep.allowed = keeping


def park(identity: str, server: VLLMServer) -> bool:
    """Keep `server` (running, no holder left) for the next run; False when nothing keeps servers now."""
    keep = _current.get()
    if keep is None or not keep.allowed or not server.alive:
        return False
    keep.servers[identity] = server
    log.info("vLLM server %s kept up for the next run", server.name)
    return True


def take(identity: str) -> VLLMServer | None:
    """The parked server of that identity, still running, for a role of this run (None: start one)."""
    keep = _current.get()
    server = keep.servers.pop(identity, None) if keep is not None else None
    return server if server is not None and server.alive else None
