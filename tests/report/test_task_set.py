"""The task-set record as summaries, the report, the viewer and the tags show it (its identity: tests/run/)."""

from __future__ import annotations

from runner.report.task_set import describe_task_set, task_set_record, task_set_tags


def test_a_run_without_a_record_says_so() -> None:
    assert task_set_record(None, 3) is None
    assert describe_task_set(None) == "task set: not recorded" and task_set_tags(None) == {}


def test_a_record_is_the_identity_with_the_tasks_run_and_its_tags_leave_out_empty_values() -> None:
    identity = {"name": "project", "suite": "smoke", "source": "tasks/smoke", "revision": "0123456789abcdef",
                "checksum": None, "paper_tasks": None}
    record = task_set_record(identity, 3)
    assert record == {**identity, "tasks_run": 3}
    assert describe_task_set(record) == "task set: project (tasks/smoke at 0123456789): 3 task(s); no paper set"
    assert task_set_tags(record) == {"genui.task_set.name": "project", "genui.task_set.suite": "smoke",
                                     "genui.task_set.source": "tasks/smoke",
                                     "genui.task_set.revision": "0123456789abcdef", "genui.task_set.tasks_run": "3"}
