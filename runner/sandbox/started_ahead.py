"""What spare builds and spare artifact servers share: one item per key, started in the background, taken once.

An item is started for a key unless one is ready or starting; `take` hands it out once (a dead one is stopped
instead); past `limit` ready items the oldest is stopped; `aclose` stops every item, started or starting. What an
item is, how it starts, whether it is alive and how it stops are the subclass's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

Key = TypeVar("Key", bound=Hashable)
Item = TypeVar("Item")


class StartedAhead(Generic[Key, Item]):
    limit: int | None = None  # ready items kept at once (None: one per key, unbounded)

    def __init__(self) -> None:
        self._spares: dict[Key, Item] = {}
        self._starting: dict[Key, asyncio.Task[None]] = {}
        self._closed = False

    def alive(self, item: Item) -> bool:
        raise NotImplementedError

    async def discard(self, item: Item) -> None:
        """Stop an item, taken or not, with everything it started."""
        raise NotImplementedError

    async def take(self, key: Key) -> Item | None:
        """The started item for `key`, if one is ready and alive (a dead one is stopped and cleared)."""
        item = self._spares.pop(key, None)
        if item is None or self.alive(item):
            return item
        await self.discard(item)
        return None

    def start_in_background(self, key: Key, start: Callable[[], Awaitable[Item | None]]) -> None:
        """Run `start` (None: it did not start, and said why) for `key` unless an item is ready or starting."""
        if self._closed or key in self._spares or key in self._starting:
            return
        task = asyncio.create_task(self._keep(key, start))
        self._starting[key] = task
        task.add_done_callback(lambda _: self._starting.pop(key, None))

    async def _keep(self, key: Key, start: Callable[[], Awaitable[Item | None]]) -> None:
        item = await start()
        if item is None:
            return
        if self._closed:
            await self.discard(item)
            return
        self._spares[key] = item
        while self.limit is not None and len(self._spares) > self.limit:
            await self.discard(self._spares.pop(next(iter(self._spares))))

    async def aclose(self) -> None:
        """Stop every item, started or starting."""
        self._closed = True
        for task in list(self._starting.values()):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        items, self._spares = list(self._spares.values()), {}
        for item in items:
            await self.discard(item)
