"""Shared test helpers: the repository root and a clean subprocess environment for the CLI."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

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
