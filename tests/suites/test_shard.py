"""suite.shard=I/N: deterministic, disjoint, covering; bad values are named."""

from __future__ import annotations

import pytest

from runner.errors import ConfigError
from runner.suites.base import SuiteSettings, parse_shard, select_tasks
from runner.turns.tasks import Task, TurnSpec
from tests.run.test_lineage import compose_config


def _tasks(n: int) -> list[Task]:
    return [Task(id=f"t{i:02d}", suite="x", turns=[TurnSpec(index=1, prompt="p")]) for i in reversed(range(n))]


@pytest.mark.parametrize("value", ["3/3", "-1/2", "1", "a/b", "0/0", "1/2/3", ""])
def test_bad_shard_values_are_refused_naming_the_value(value: str) -> None:
    with pytest.raises(ValueError, match=repr(value)):
        parse_shard(value)


def test_config_error_names_the_key_and_value() -> None:
    with pytest.raises(ConfigError, match=r"suite.shard = '4/4'.*0 <= I < N"):
        compose_config("suite.shard=4/4")


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_are_disjoint_cover_everything_and_balanced(count: int) -> None:
    tasks = _tasks(10)
    parts = [select_tasks(tasks, SuiteSettings(name="x", shard=f"{i}/{count}")) for i in range(count)]
    ids = [task.id for part in parts for task in part]
    assert sorted(ids) == sorted(task.id for task in tasks) and len(set(ids)) == len(ids)
    sizes = [len(part) for part in parts]
    assert max(sizes) - min(sizes) <= 1
    # Deterministic whatever order the loader returned the tasks in.
    again = select_tasks(list(reversed(tasks)), SuiteSettings(name="x", shard=f"0/{count}"))
    assert [t.id for t in again] == [t.id for t in parts[0]]


def test_shard_applies_after_task_ids_and_limit() -> None:
    tasks = _tasks(10)
    limited = select_tasks(tasks, SuiteSettings(name="x", limit=4))
    parts = [select_tasks(tasks, SuiteSettings(name="x", limit=4, shard=f"{i}/2")) for i in range(2)]
    assert sorted(t.id for p in parts for t in p) == [t.id for t in limited]
