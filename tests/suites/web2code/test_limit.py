"""`suite.limit=N` prepares only the trajectories its first N tasks can come from, and selects the same tasks as
preparing every page would. Which pages yield a trajectory is injected (a page whose corruption fails is skipped),
so the rule is checked over every pattern of skipped pages without rendering one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from runner.suites.web2code.suite import Web2CodeSuite, Web2CodeSuiteSettings

# Names whose page order and task-id order differ ("a-b" < "a.chain" but "a" < "a-b").
PAGES = ["a", "a-b", "b", "b.x", "c", "d"]


def _prepared(limit: int | None, mode: str, usable: set[str]) -> tuple[list[str], list[str]]:
    """(the pages prepared, the task ids the run selects) for pages PAGES of which only `usable` yield one."""
    suite = Web2CodeSuite(Web2CodeSuiteSettings(name="micro", limit=limit, mode=mode), project_root=Path("."), track="micro")
    asked: list[str] = []

    async def generate(dirs: list[Path], params: object) -> list[SimpleNamespace]:
        asked.extend(d.name for d in dirs)
        return [SimpleNamespace(page=d.name, ok=d.name in usable) for d in dirs]

    suite._generate = generate  # type: ignore[method-assign]
    modes = ["chain", "independent"] if mode == "both" else [mode]
    trajectories = asyncio.run(suite._prepare_trajectories([Path(p) for p in PAGES], None, modes))  # type: ignore[arg-type]
    ids = sorted(suite._task_id(t.page, m, single=len(modes) == 1) for t in trajectories if t.ok for m in modes)
    return asked, ids[:limit] if limit is not None else ids


def test_limit_one_prepares_the_first_page_only() -> None:
    asked, chosen = _prepared(1, "chain", set(PAGES))
    assert asked == ["a"] and chosen == ["a"]


def test_a_skipped_page_lets_the_next_one_in() -> None:
    asked, chosen = _prepared(1, "chain", set(PAGES) - {"a"})
    assert asked == ["a", "a-b"] and chosen == ["a-b"]


def test_both_modes_order_pages_by_their_task_ids() -> None:
    # a-b.chain < a.chain: the page "a-b" comes first, and its two tasks fill a limit of 2
    asked, chosen = _prepared(2, "both", set(PAGES))
    assert asked == ["a-b"] and chosen == ["a-b.chain", "a-b.independent"]


@settings(max_examples=200, deadline=None)
@given(limit=st.integers(1, 8), mode=st.sampled_from(["chain", "independent", "both"]),
       usable=st.sets(st.sampled_from(PAGES)))
def test_the_limited_selection_equals_the_full_one(limit: int, mode: str, usable: set[str]) -> None:
    asked, chosen = _prepared(limit, mode, usable)
    _, everything = _prepared(None, mode, usable)
    assert chosen == everything[:limit]
    assert len(asked) <= len(PAGES)
