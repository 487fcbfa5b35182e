"""Wait until a page has settled after an action: its tool calls and requests answered, then no DOM change of
any kind (text-node rewrites included) for a quiet window that also spans a number of rendered frames.

A fixed sleep gives one trace on an idle machine and another on a loaded one (the page's update lands after the
sleep). Here the page is waited for, not the clock: what ends the wait is the page having stopped changing, and
because the quiet window counts frames as well as milliseconds, a renderer slowed by load stretches it too.
A page that never stops changing (an animation loop, a clock) is left after `timeout_s`; the caller records that
the step ended unsettled.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

if TYPE_CHECKING:
    from runner.browser.session import PageSession

_ONE_FRAME_JS = "() => new Promise((done) => requestAnimationFrame(() => done(true)))"
_POLL_S = 0.02


@dataclass(frozen=True)
class SettleOutcome:
    settled: bool
    waited_s: float


async def _frame(session: "PageSession") -> None:
    try:
        await session.evaluate(_ONE_FRAME_JS)
    except PlaywrightError:  # a page that navigated or crashed: its next read says so
        await asyncio.sleep(_POLL_S)


async def _mutations(session: "PageSession") -> int | None:
    """The session's mutation count (text included); None while the page cannot answer (a navigation the step
    started replaces the document: the new one's counter starts afresh)."""
    try:
        return await session.mutation_count(character_data=True)
    except PlaywrightError:
        return None


async def wait_until_settled(session: "PageSession", *, quiet_ms: int, quiet_frames: int,
                             timeout_s: float) -> SettleOutcome:
    """Wait until the page is still: tool-bridge calls and requests answered, then neither a DOM mutation
    (child lists, attributes or text) for `quiet_ms` nor within the last `quiet_frames` frames; at most
    `timeout_s`. Reads the session's mutation counter without resetting it (the caller's counts stand)."""
    started = time.monotonic()
    deadline = started + timeout_s
    await session.tool_calls_answered(timeout_s)
    await session.requests_answered(max(0.0, deadline - time.monotonic()))
    last = await _mutations(session)
    quiet_since, frames = time.monotonic(), 0
    while True:
        await _frame(session)
        frames += 1
        now_count = await _mutations(session)
        now = time.monotonic()
        if now_count != last or now_count is None:
            last, quiet_since, frames = now_count, now, 0
        elif frames >= quiet_frames and (now - quiet_since) * 1000 >= quiet_ms:
            return SettleOutcome(True, round(now - started, 3))
        if now >= deadline:
            return SettleOutcome(False, round(now - started, 3))
        if (now - quiet_since) * 1000 < quiet_ms:
            await asyncio.sleep(_POLL_S)
