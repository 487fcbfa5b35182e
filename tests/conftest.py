"""Shared test helpers: the repository root, a clean subprocess environment for the CLI, and skip reporting."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.components import component_of, in_ci

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


def runner_command(*overrides: str) -> list[str]:
    return [sys.executable, "-m", "runner", *overrides]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _fail_missing_component_in_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    """In CI, a skip because a set-up component is missing becomes a failure (tests/support/components.py)."""
    if not (report.skipped and in_ci() and isinstance(report.longrepr, tuple)):
        return
    reason = str(report.longrepr[2])
    component = component_of(reason)
    if component is not None:
        report.outcome = "failed"
        report.longrepr = (f"CI=true and the set-up component '{component}' is missing: {reason}\n"
                           "scripts/setup.sh and scripts/test-deps.sh install it; a CI run must not skip it")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    _fail_missing_component_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield  # a module-level skip (e.g. no vLLM venv) is a skipped collection
    _fail_missing_component_in_ci(outcome.get_result())


def pytest_collection_finish(session: pytest.Session) -> None:
    # The runner image's cold build is mostly downloads: start it now, beside the other tests.
    if session.config.option.collectonly:
        return
    if any(item.nodeid.startswith("tests/test_runner_image.py") for item in session.items):
        from tests.support.runner_image import start_runner_image_build

        start_runner_image_build()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Every skipped test with its reason, one line each (`-rs` groups equal reasons into one line)."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    terminalreporter.section(f"skipped tests ({len(skipped)})", sep="-")
    for report in skipped:
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        terminalreporter.write_line(f"SKIPPED {report.nodeid}: {reason.removeprefix('Skipped: ')}")
