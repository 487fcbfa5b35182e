"""The version of a Chromium executable, for lineage (which browser rendered a run's screenshots)."""

from __future__ import annotations

import re
import subprocess
from functools import lru_cache

_VERSION = re.compile(r"\b(\d+\.\d+\.\d+\.\d+)\b")


@lru_cache(maxsize=8)
def executable_version(path: str | None) -> str | None:
    """`chromium --version` -> "156.0.8078.114"; None when there is no such executable or it names no version.

    None for `path=None` too: that is Playwright's own browser, whose version Playwright pins."""
    if not path:
        return None
    try:
        result = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = _VERSION.search(result.stdout)
    return found.group(1) if found else None
