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


# Tests that hold a machine-wide resource share one xdist group, so they run one after another on one worker:
# the Docker engine (one test restarts it) and vLLM CPU servers (each takes most of the memory and both cores).
_SHARED_RESOURCE_MARKS = ("docker", "vllm")


# The longest groups start first (xdist hands out groups in collection order), so that no long group is left to
# run alone at the end: a greedy longest-first schedule. The rest keep their order.
_LONGEST_GROUPS_FIRST = ("vllm", "docker", "tests/suites/evogenui/test_end_to_end.py", "tests/sandbox/test_hostile.py",
                         "tests/test_main.py", "tests/run/test_rejudge.py", "tests/test_cluster.py")


def _group_of(item: pytest.Item) -> str:
    resource = next((mark for mark in _SHARED_RESOURCE_MARKS if item.get_closest_marker(mark)), None)
    return resource or item.nodeid.split("::", 1)[0]


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `-n N --dist loadgroup`: a module's tests stay on one worker (its module fixtures are built once)."""
    groups = {}
    for item in items:
        marker = item.get_closest_marker("xdist_group")
        groups[item.nodeid] = marker.args[0] if marker is not None and marker.args else _group_of(item)
        if marker is None:
            item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
    rank = {group: index for index, group in enumerate(_LONGEST_GROUPS_FIRST)}
    order = {item.nodeid: index for index, item in enumerate(items)}
    items.sort(key=lambda item: (rank.get(groups[item.nodeid], len(rank)), order[item.nodeid]))


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
