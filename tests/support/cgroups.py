"""The cgroups a test's sandboxes create, recorded, and those of them still there afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.sandbox import limits, local
from runner.sandbox.limits import CgroupSet


def record_created_cgroups(monkeypatch: pytest.MonkeyPatch) -> list[CgroupSet]:
    """Every cgroup set the local sandbox creates from now on (other runs may share the machine)."""
    created: list[CgroupSet] = []

    def recording(*args, **kwargs):
        cgroups = limits.create_cgroups(*args, **kwargs)
        created.append(cgroups)
        return cgroups

    monkeypatch.setattr(local, "create_cgroups", recording)
    return created


def leftover_cgroups(created: list[CgroupSet]) -> list[Path]:
    """The memory and pids folders of `created` that still exist."""
    assert created, "no cgroups were created"
    return [d for c in created for d in (c.memory, c.pids) if d is not None and d.exists()]
