"""Reuse the page server and browser fixtures of tests/judges/conftest.py (one source of truth)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "_judges_fixtures", Path(__file__).resolve().parents[1] / "judges" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_fixtures = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _fixtures  # dataclasses look their module up there
_spec.loader.exec_module(_fixtures)

site = _fixtures.site
browse = _fixtures.browse
pages = _fixtures.pages
