"""Fixtures for the browser tests: local HTTP sites on 127.0.0.1 and browser settings."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from browser_support import StaticSite
from runner.browser.launch import BrowserSettings
from tests.support.components import skip_missing


@pytest.fixture
def site() -> Iterator[StaticSite]:
    s = StaticSite().start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def other_site() -> Iterator[StaticSite]:
    """A second origin (another port) used to prove cross-origin requests never reach their server."""
    s = StaticSite().start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def browser_settings() -> BrowserSettings:
    if not shutil.which(BrowserSettings().executable_path or ""):
        skip_missing("chromium", "system Chromium's headless shell not installed (scripts/setup.sh installs it)")
    return BrowserSettings(settle_ms=100)
