"""What a run is doing and how far it is: preparation steps and the slot bar.

On a terminal this is one live rich display (a row per preparation step, then the slot bar with passed,
failures by bucket and the estimated time left). Anywhere else (a pipe, a log file, CI) the same facts are
plain log lines, one per change, in a fixed `key=value` shape that scripts can parse:

    [progress] step=web2code-trajectories state=running done=2 total=5 elapsed=3.1s eta=4.6s detail="page-a"
    [progress] slots done=4 total=9 passed=3 failed=build_failed:1 elapsed=20.5s eta=25.6s

Modules deep in the run (the template install, trajectory generation, a vLLM server's start, an image build)
report through `current()`, so none of them needs a reporter passed down; the experiment installs one with
`reporting(...)` for the length of the run.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

log = logging.getLogger(__name__)

PREFIX = "[progress]"
MIN_LINE_INTERVAL_S = 1.0  # plain mode: at most one line per second per step, except the first and last


def format_seconds(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds:.1f}s"


def estimate_left(done: int, total: int | None, elapsed_s: float) -> float | None:
    """Seconds left at the average pace so far; None until something is done or without a total."""
    if not total or done <= 0 or done > total:
        return None
    return elapsed_s / done * (total - done)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


class Step:
    """One preparation step. `advance`/`update` say how far it is; `detail` says what it is on now."""

    def __init__(self, reporter: Reporter, key: str, what: str, total: int | None) -> None:
        self._reporter = reporter
        self.key = key
        self.what = what
        self.total = total
        self.done = 0
        self.detail = ""
        self.started = time.monotonic()
        self._last_line = 0.0
        self._task: TaskID | None = None

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def advance(self, amount: int = 1, *, detail: str | None = None) -> None:
        self.update(done=self.done + amount, detail=detail)

    def update(self, *, done: int | None = None, total: int | None = None, detail: str | None = None) -> None:
        if done is not None:
            self.done = done
        if total is not None:
            self.total = total
        if detail is not None:
            self.detail = detail
        self._reporter._step_changed(self, final=False)

    def line(self, state: str) -> str:
        parts = [PREFIX, f"step={self.key}", f"state={state}", f"done={self.done}"]
        parts.append(f"total={self.total if self.total is not None else '?'}")
        parts.append(f"elapsed={format_seconds(self.elapsed_s)}")
        if state == "running":
            parts.append(f"eta={format_seconds(estimate_left(self.done, self.total, self.elapsed_s))}")
        if self.detail:
            parts.append(f"detail={_quote(self.detail)}")
        return " ".join(parts)


class SlotBar:
    """The requested slots of a run: done of requested, passed, failures by bucket, elapsed, time left."""

    def __init__(self, reporter: Reporter, label: str, total: int, already: int) -> None:
        self._reporter = reporter
        self.label = label
        self.total = total
        self.done = already
        self.already = already  # recorded by an earlier session: not part of this session's pace
        self.passed = 0
        self.failures: Counter[str] = Counter()
        self.started = time.monotonic()
        self._task: TaskID | None = None

    def record(self, *, status: str, passed: bool | None) -> None:
        """Count one finished slot (status is its failure bucket; `ok` is not a failure)."""
        self.done += 1
        if passed is True:
            self.passed += 1
        if status != "ok":
            self.failures[status] += 1
        self._reporter._slots_changed(self)

    @property
    def eta_s(self) -> float | None:
        return estimate_left(self.done - self.already, self.total - self.already, time.monotonic() - self.started)

    def failures_text(self, *, separator: str = ",") -> str:
        return separator.join(f"{bucket}:{count}" for bucket, count in sorted(self.failures.items())) or "none"

    def line(self) -> str:
        return (f"{PREFIX} slots done={self.done} total={self.total} passed={self.passed} "
                f"failed={self.failures_text()} elapsed={format_seconds(time.monotonic() - self.started)} "
                f"eta={format_seconds(self.eta_s)}")


class Reporter:
    """Shows steps and the slot bar live on a terminal (`live=True`), else as plain log lines."""

    def __init__(self, console: Console | None = None, *, live: bool | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.live = self.console.is_terminal if live is None else live
        self._lock = threading.Lock()
        self._progress: Progress | None = None
        self._keys: Counter[str] = Counter()

    # ---- lifecycle (live mode owns a rich Progress while the run lasts)

    def start(self) -> None:
        if self.live and self._progress is None:
            self._progress = Progress(
                SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"), TimeElapsedColumn(), console=self.console, transient=False,
            )
            self._progress.start()

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    # ---- preparation steps

    @contextlib.contextmanager
    def step(self, what: str, *, total: int | None = None, key: str | None = None) -> Iterator[Step]:
        """A preparation step from start to end; an exception marks it failed and propagates."""
        key = key or what.lower().replace(" ", "-")
        with self._lock:
            self._keys[key] += 1
            if self._keys[key] > 1:  # the same kind of step twice (two servers): keep keys unique
                key = f"{key}-{self._keys[key]}"
        step = Step(self, key, what, total)
        if self._progress is not None:
            step._task = self._progress.add_task(what, total=total, info="")
        else:
            log.info(step.line("started"))
        try:
            yield step
        except BaseException:
            self._finish(step, "failed")
            raise
        self._finish(step, "finished")

    def _step_changed(self, step: Step, *, final: bool) -> None:
        if self._progress is not None and step._task is not None:
            self._progress.update(step._task, completed=step.done, total=step.total, info=step.detail[:60])
            return
        now = time.monotonic()
        if final or now - step._last_line >= MIN_LINE_INTERVAL_S or step.done == step.total:
            step._last_line = now
            log.info(step.line("running"))

    def _finish(self, step: Step, state: str) -> None:
        if self._progress is not None and step._task is not None:
            info = f"{state} in {step.elapsed_s:.1f}s"
            completed = step.total if state == "finished" and step.total is not None else step.done
            self._progress.update(step._task, completed=completed, total=step.total or completed or 1, info=info)
            return
        log.info(step.line(state))

    # ---- the slot bar

    def slots(self, label: str, *, total: int, already: int = 0) -> SlotBar:
        bar = SlotBar(self, label, total, already)
        if self._progress is not None:
            bar._task = self._progress.add_task(label, total=total, completed=already, info=self._slot_info(bar))
        else:
            log.info(bar.line())
        return bar

    def _slot_info(self, bar: SlotBar) -> str:
        return f"passed {bar.passed} · failed {bar.failures_text(separator=' ')} · left {format_seconds(bar.eta_s)}"

    def _slots_changed(self, bar: SlotBar) -> None:
        if self._progress is not None and bar._task is not None:
            self._progress.update(bar._task, completed=bar.done, info=self._slot_info(bar))
        else:
            log.info(bar.line())


_current: Reporter | None = None


def current() -> Reporter:
    """The run's reporter; outside a run, one that writes plain log lines."""
    global _current
    if _current is None:
        _current = Reporter(live=False)
    return _current


@contextlib.contextmanager
def reporting(console: Console | None = None, *, live: bool | None = None) -> Iterator[Reporter]:
    """Install a reporter for the length of a run (live on a terminal unless `live` says otherwise)."""
    global _current
    previous = _current
    reporter = Reporter(console, live=live)
    reporter.start()
    _current = reporter
    try:
        yield reporter
    finally:
        reporter.stop()
        _current = previous


def step(what: str, *, total: int | None = None, key: str | None = None) -> Any:
    """`with progress.step("installing the web template"):` on the current reporter."""
    return current().step(what, total=total, key=key)
