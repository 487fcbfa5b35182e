from pathlib import Path

from runner.records import FailureBucket, RunDirectory, TurnRecord


def _record(task: str, turn: int, status: FailureBucket = FailureBucket.OK) -> TurnRecord:
    return TurnRecord(task_id=task, suite="smoke", turn=turn, status=status, passed=status is FailureBucket.OK)


def test_append_and_load_round_trip(tmp_path: Path) -> None:
    run_dir = RunDirectory(tmp_path)
    run_dir.append(_record("a", 1))
    run_dir.append(_record("a", 2, FailureBucket.BLOCKED))
    loaded = run_dir.load_records()
    assert [(r.task_id, r.turn, r.status) for r in loaded] == [("a", 1, "ok"), ("a", 2, "blocked")]


def test_torn_last_line_is_dropped_and_truncated(tmp_path: Path) -> None:
    run_dir = RunDirectory(tmp_path)
    run_dir.append(_record("a", 1))
    with run_dir.records_path.open("a") as handle:
        handle.write('{"task_id": "a", "turn": 2, "sta')  # a write cut by SIGKILL
    assert [r.turn for r in run_dir.load_records()] == [1]
    run_dir.append(_record("a", 2))
    assert [r.turn for r in run_dir.load_records()] == [1, 2]


def test_evidence_dir_sanitises_task_ids(tmp_path: Path) -> None:
    directory = RunDirectory(tmp_path).evidence_dir("../evil/id", 3)
    assert directory.is_relative_to(tmp_path / "evidence")
    assert directory.name == "3"
