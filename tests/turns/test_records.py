from pathlib import Path

from runner.turns.records import FailureBucket, RunDirectory, TurnRecord


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


# A child process whose file size limit (RLIMIT_FSIZE, the kernel's own "file too large") stops turns.jsonl
# part-way through a line: it appends until the write fails and prints what it saw.
_FILL = """
import json, resource, sys
from pathlib import Path
from runner.turns.records import FailureBucket, RunDirectory, StorageFullError, TurnRecord
run_dir = RunDirectory(Path(sys.argv[1]))
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
appended = 0
try:
    for turn in range(1, 1000):
        run_dir.append(TurnRecord(task_id="a", suite="smoke", turn=turn, status=FailureBucket.OK, error="x" * 50))
        appended += 1
except StorageFullError as error:
    print(json.dumps({"appended": appended, "error": str(error)}))
"""


def test_a_full_disk_leaves_no_torn_line_and_names_the_file(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    limit = 2000  # bytes: a few records, the next one cut in the middle
    child = subprocess.run([sys.executable, "-c", _FILL, str(tmp_path), str(limit)], cwd=REPO_ROOT,
                           capture_output=True, text=True, timeout=60)
    assert child.returncode == 0, child.stderr
    seen = json.loads(child.stdout)
    assert 0 < seen["appended"] < 1000
    assert "turns.jsonl" in seen["error"] and "it resumes" in seen["error"]
    data = RunDirectory(tmp_path).records_path.read_bytes()
    assert data.endswith(b"\n") and len(data) < limit, "the cut line was removed again"
    run_dir = RunDirectory(tmp_path)
    assert [r.turn for r in run_dir.load_records()] == list(range(1, seen["appended"] + 1))
    run_dir.append(_record("a", seen["appended"] + 1))  # space again: the run continues where it stopped
    assert len(run_dir.load_records()) == seen["appended"] + 1
