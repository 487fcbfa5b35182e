from pathlib import Path

import pytest

from runner.suites.native import TaskFormatError, load_native_tasks

REPO = Path(__file__).resolve().parents[2]


def test_smoke_tasks_load_with_checks_and_references() -> None:
    tasks = load_native_tasks(REPO / "tasks" / "smoke", suite="smoke")
    assert len(tasks) >= 2
    for task in tasks:
        assert len(task.turns) >= 2, "smoke tasks are multi-turn"
        for turn in task.turns:
            assert turn.reference_files and "src/App.jsx" in turn.reference_files
            assert turn.requirements and all(r.check is not None for r in turn.requirements)


def test_malformed_task_names_file_and_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: t\nturns:\n  - index: 1\n    requirements:\n      - id: r\n        description: d\n        check: {assert: [{type: nope}]}\n")
    with pytest.raises(TaskFormatError) as error:
        load_native_tasks(bad, suite="smoke")
    message = str(error.value)
    assert str(bad) in message
    assert "turns[0].prompt" in message  # missing prompt
    assert "turns[0].requirements[0].check" in message  # unknown assertion type


def test_unparsable_yaml_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("id: [unclosed\n")
    with pytest.raises(TaskFormatError, match="broken.yaml: cannot be read"):
        load_native_tasks(bad, suite="smoke")


def test_duplicate_ids_rejected(tmp_path: Path) -> None:
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text("id: same\nturns: [{index: 1, prompt: hi}]\n")
    with pytest.raises(TaskFormatError, match="duplicate task id"):
        load_native_tasks(tmp_path, suite="smoke")
