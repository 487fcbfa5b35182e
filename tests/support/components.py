"""Skips for a missing set-up component, which CI turns into failures.

The README's set-up (scripts/setup.sh, scripts/test-deps.sh) installs Chromium, bubblewrap, a Docker engine
with the sandbox images, the vLLM CPU venv and SLURM. A test that needs one of them skips where it is missing,
naming the component; when `CI` is true (CI runs exactly that set-up) the same skip is a failure instead
(tests/conftest.py), so a broken set-up step never passes as a green run of fewer tests.
"""

from __future__ import annotations

import os
import re
from typing import NoReturn

import pytest

COMPONENTS = ("chromium", "bubblewrap", "docker", "vllm", "slurm")
_TAG = "[set-up component: {}]"
_TAGGED = re.compile(r"\[set-up component: (\w+)\]")


def missing(component: str, reason: str) -> str:
    """A skip reason that names the missing set-up component (for `pytest.mark.skipif(reason=...)`)."""
    if component not in COMPONENTS:
        raise ValueError(f"unknown set-up component {component!r}; one of {', '.join(COMPONENTS)}")
    return f"{reason} {_TAG.format(component)}"


def skip_missing(component: str, reason: str, *, allow_module_level: bool = False) -> NoReturn:
    pytest.skip(missing(component, reason), allow_module_level=allow_module_level)


def component_of(reason: str) -> str | None:
    """The set-up component a skip reason names, or None for any other skip."""
    found = _TAGGED.search(reason)
    return found.group(1) if found else None


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}
