"""Servers kept between the runs of one command (`repeats`): parked as a run ends, taken up by the next run's
role of the same identity, stopped when the command ends; never kept for a staged run or outside the block.
The served end to end (three runs, one server load) is tests/test_presets_served.py's Table 3 macro test."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from runner.models import server_keep


@dataclass(eq=False)
class Server:  # what the keep reads of a VLLMServer: its name, whether it runs, how to stop it
    name: str
    alive: bool = True
    stopped: bool = False

    async def aclose(self) -> None:
        self.stopped, self.alive = True, False


def test_a_parked_server_is_taken_up_by_the_next_run_and_the_rest_stop_with_the_block() -> None:
    judge, caption, dead = Server("judge"), Server("caption"), Server("dead")

    async def scenario() -> None:
        assert server_keep.park("j", judge) is False  # no block: the run stops its own servers
        async with server_keep.kept_between_runs():
            assert server_keep.park("j", judge) and server_keep.park("c", caption)
            assert server_keep.take("j") is judge and server_keep.take("j") is None  # taken once
            dead.alive = False
            assert server_keep.park("d", dead) is False  # exited: nothing to keep
            assert not judge.stopped and not caption.stopped
        assert caption.stopped and not judge.stopped  # judge is held by the run that took it

    asyncio.run(scenario())


def test_a_staged_run_keeps_nothing() -> None:
    generator = Server("generator")

    async def scenario() -> None:
        async with server_keep.kept_between_runs():
            server_keep.allow(False)
            assert server_keep.park("g", generator) is False
            server_keep.allow(True)
            assert server_keep.park("g", generator) is True

    asyncio.run(scenario())
    assert generator.stopped
