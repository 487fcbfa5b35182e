"""The progress display: plain key=value lines off a terminal, a live display on one."""

from __future__ import annotations

import io
import logging
import re

import pytest
from rich.console import Console

from runner import progress

LINE = re.compile(r"\[progress\] (?:step=(?P<step>\S+) state=(?P<state>\w+)|slots) done=(?P<done>\d+) "
                  r"total=(?P<total>\d+|\?)")


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "runner.progress"]


def test_estimate_left() -> None:
    assert progress.estimate_left(0, 10, 5.0) is None
    assert progress.estimate_left(2, 10, 4.0) == pytest.approx(16.0)  # 2 s per item, 8 left
    assert progress.estimate_left(3, None, 4.0) is None


def test_plain_step_lines_in_order(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="runner.progress")
    reporter = progress.Reporter(Console(file=io.StringIO()), live=False)
    with reporter.step("trajectories", total=2, key="traj") as step:
        step.advance(detail="page-a")
        step.advance(detail='page "b"')
    lines = _lines(caplog)
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert [(m["state"], m["done"], m["total"]) for m in parsed] == [
        ("started", "0", "2"), ("running", "1", "2"), ("running", "2", "2"), ("finished", "2", "2")]
    assert 'detail="page \\"b\\""' in lines[2]


def test_failed_step_says_so(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="runner.progress")
    reporter = progress.Reporter(Console(file=io.StringIO()), live=False)
    with pytest.raises(RuntimeError), reporter.step("npm ci", key="install"):
        raise RuntimeError("boom")
    assert "state=failed" in _lines(caplog)[-1]


def test_plain_slot_lines_count_passed_and_buckets(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="runner.progress")
    reporter = progress.Reporter(Console(file=io.StringIO()), live=False)
    bar = reporter.slots("smoke x oracle", total=4, already=1)
    bar.record(status="ok", passed=True)
    bar.record(status="build_failed", passed=None)
    bar.record(status="blocked", passed=None)
    last = _lines(caplog)[-1]
    assert "done=4 total=4 passed=1 failed=blocked:1,build_failed:1" in last
    assert re.search(r"eta=0\.0s$", last)


def test_live_display_shows_passed_failures_and_time_left() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    with progress.reporting(console, live=True) as reporter:
        assert progress.current() is reporter
        with progress.step("installing the template", key="install"):
            pass
        bar = reporter.slots("smoke x oracle", total=3)
        bar.record(status="ok", passed=True)
        bar.record(status="runtime_error", passed=False)
    text = out.getvalue()
    assert "installing the template" in text and "finished in" in text
    assert "passed 1" in text and "runtime_error:1" in text and "left " in text
    assert progress.current() is not reporter  # the run's reporter is gone with the run
