"""Real runs for the viewer's pages, made once per test session through the CLI and shared by the workers
(a lock on a folder above every worker's temp dir), and a viewer served over them with a real Chromium.

- oracle: model=oracle, actor=probe on smoke-counter (3 turns): every turn passes; the probe's steps have
  before/after screenshots.
- null: model=null on smoke-counter: an invalid first turn, then blocked turns.
- mixed: the report tests' probe task (canned answers): turn 1 passes, turn 2 fails a requirement, turn 3 does
  not build; turn 1's assistant text carries HTML that would run script if a page inserted it raw.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

from runner.browser.launch import BrowserSettings
from runner.view.app import ViewMode, ViewState, create_app, serve
from runner.view.catalog import Catalog
from tests.conftest import REPO_ROOT
from tests.report.conftest import PROBE_TASK, XSS_TEXT, run_cli

# Pages' screenshots, linked from docs/reports.md (the tests rewrite them on every run).
SCREENSHOTS = REPO_ROOT / "docs" / "img" / "viewer"


@contextmanager
def _shared_lock(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def view_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.getbasetemp()
    # An xdist worker's temp dir sits in the session's (shared by its workers); without xdist it is the session's.
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "view-runs"
    root.mkdir(exist_ok=True)
    with _shared_lock(root / ".lock"):
        runs = {"oracle": root / "oracle", "null": root / "null", "mixed": root / "mixed"}
        if not (root / "done").exists():
            tasks = root / "tasks"
            tasks.mkdir(exist_ok=True)
            (tasks / "probe.yaml").write_text(PROBE_TASK % {"xss": json.dumps(XSS_TEXT)})
            run_cli(runs["oracle"], "model=oracle", "actor=probe", "suite.task_ids=[smoke-counter]")
            run_cli(runs["null"], "model=null", "suite.task_ids=[smoke-counter]")
            run_cli(runs["mixed"], "model=oracle", f"suite.tasks_path={tasks}")
            (root / "done").write_text("")
    return runs


@pytest.fixture(scope="module")
def served(view_runs: dict[str, Path]) -> Iterator[tuple[str, dict[str, str]]]:
    """The viewer over the three runs; its base URL and each run's id by name."""
    names = ("oracle", "null", "mixed")
    paths = [view_runs[name] for name in names]
    ids = dict(zip(names, Catalog.from_paths(paths).runs))
    with viewer(paths) as url:
        yield url, ids


@contextmanager
def viewer(paths: list[Path], *modes: ViewMode) -> Iterator[str]:
    """The viewer app over these runs (and modes), served on a free port; yields its base URL."""
    with serve(create_app(ViewState(Catalog.from_paths(paths), modes={mode.name: mode for mode in modes}))) as url:
        yield url


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    settings = BrowserSettings()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=settings.executable_path, args=settings.launch_args)
        try:
            yield browser
        finally:
            await browser.close()
