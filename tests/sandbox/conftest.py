"""Fixtures shared by the sandbox tests."""

from __future__ import annotations

import pytest

from runner.sandbox.limits import CgroupSet
from tests.support.cgroups import record_created_cgroups


@pytest.fixture
def created_cgroups(monkeypatch: pytest.MonkeyPatch) -> list[CgroupSet]:
    """The cgroups this test's local sandboxes create (tests.support.cgroups.leftover_cgroups checks them)."""
    return record_created_cgroups(monkeypatch)
