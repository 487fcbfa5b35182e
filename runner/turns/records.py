"""TurnRecord, Verdict and the run directory (JSONL with atomic appends, resume support)."""

from __future__ import annotations

import errno
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runner.errors import UserError


# The errors that say the run's storage is full (the disk, a quota, a file size limit).
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


class StorageFullError(OSError, UserError):
    """The run directory cannot be written: the disk (or a quota, or RLIMIT_FSIZE) is full. Phrased for the
    user; the run stops, and what was written holds whole records only, so rerunning on the run dir resumes it."""


def is_storage_full(error: BaseException) -> bool:
    return isinstance(error, OSError) and error.errno in _FULL


def storage_full(path: Path, error: OSError) -> StorageFullError:
    return StorageFullError(
        error.errno, f"cannot write {path}: {error.strerror or error} (the disk or a quota is full); free space, "
        "then rerun the same command on this run dir: it resumes (every recorded slot is whole and kept)")


class FailureBucket(StrEnum):
    """Why a slot did not produce a passing, scored turn (DESIGN.md, "Failure buckets")."""

    OK = "ok"
    INVALID_OUTPUT = "invalid_output"
    BUILD_FAILED = "build_failed"
    RUNTIME_ERROR = "runtime_error"
    PROVIDER_ERROR = "provider_error"
    JUDGE_ERROR = "judge_error"
    TRUNCATED = "truncated"  # the judge's answer was cut at its output cap (no verdict; extra.truncated says where)
    BLOCKED = "blocked"
    TIMEOUT = "timeout"
    INFRA = "infra"


class ModelCall(StrEnum):
    """What the slot's generation call gave, recorded apart from how the slot ended.

    EvoGenUI-Bench §4.3: e_{T,t} = 0 only "if no response is obtained because of a provider failure";
    a turn that timed out after the model answered, or whose harness failed, keeps e = 1.
    """

    ANSWERED = "answered"  # a model response exists (also an empty or invalid one)
    NO_RESPONSE = "no_response"  # the provider gave no response: e = 0
    NOT_CALLED = "not_called"  # blocked, or the harness failed before the call


class RequirementStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    UNASSESSED = "unassessed"


class RequirementResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    status: RequirementStatus
    reason: str = ""


class DimensionScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    score: float | None  # None: not assessed
    reason: str = ""


class Verdict(BaseModel):
    """A judge's per-dimension scores and per-requirement results, plus the official pass decision.

    `passed` is None when the judge could not decide (some requirement unassessed, none failed):
    metrics count it as not passed and report it as unassessed, never as a pass.
    """

    model_config = ConfigDict(extra="forbid")

    judge: str
    passed: bool | None
    dimensions: dict[str, DimensionScore] = Field(default_factory=dict)
    requirements: list[RequirementResult] = Field(default_factory=list)
    failure_types: list[str] = Field(default_factory=list)
    mechanism: str | None = None  # diagnostic failure mechanism (EvoGenUI §6.1)
    scores: dict[str, float] = Field(default_factory=dict)  # continuous suite scores (e.g. S_inbox, S_outbox)
    summary: str = ""
    raw: Any = None  # the judge model's raw output, if any

    @property
    def unassessed(self) -> list[str]:
        return [r.id for r in self.requirements if r.status is RequirementStatus.UNASSESSED]


class TurnRecord(BaseModel):
    """The persisted result of one requested slot (task, turn). Exactly one per slot."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    suite: str
    sub_suite: str = ""
    turn: int
    status: FailureBucket
    passed: bool | None = False
    model_responded: bool = False  # the generation call returned a response (also when the slot then failed)
    model_call: ModelCall | None = None  # None: a record written before this field (derived from status)
    verdict: Verdict | None = None
    scores: dict[str, float] = Field(default_factory=dict)  # suite-specific numeric results
    error: str = ""
    timings: dict[str, float] = Field(default_factory=dict)  # seconds per stage
    usage: dict[str, int] = Field(default_factory=dict)  # prompt/completion tokens
    evidence_dir: str = ""  # relative to the run dir
    model: str = ""
    judge: str = ""
    actor: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def slot(self) -> tuple[str, int]:
        return (self.task_id, self.turn)

    @property
    def provider_failed(self) -> bool:
        """e_{T,t} = 0 of EvoGenUI-Bench §4.3: no response because of a provider failure."""
        if self.model_call is not None:
            return self.model_call is ModelCall.NO_RESPONSE
        return self.status is FailureBucket.PROVIDER_ERROR


class RunDirectory:
    """A run directory: config.yaml, turns.jsonl, summary.json, evidence/.

    Records are appended one JSON line at a time with a single write + fsync, so a killed run leaves
    only whole lines (a torn last line is ignored on load and rewritten on resume).
    """

    RECORDS = "turns.jsonl"
    SUMMARY = "summary.json"
    CONFIG = "config.yaml"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    @property
    def records_path(self) -> Path:
        return self.path / self.RECORDS

    def evidence_dir(self, task_id: str, turn: int) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task_id)
        directory = self.path / "evidence" / safe / str(turn)
        directory.mkdir(parents=True, exist_ok=True)
        return directory

    def model_name(self) -> str:
        """The generator's name from the run's config.yaml ("" when the dir holds none)."""
        import yaml

        path = self.path / self.CONFIG
        if not path.is_file():
            return ""
        config = yaml.safe_load(path.read_text()) or {}
        model = config.get("model") if isinstance(config, dict) else None
        return str(model.get("name") or "") if isinstance(model, dict) else ""

    def load_records(self) -> list[TurnRecord]:
        """All complete records; a torn trailing line from a killed run is dropped (and truncated)."""
        if not self.records_path.exists():
            return []
        lines = read_jsonl(self.records_path, parse=TurnRecord.model_validate_json)
        records: list[TurnRecord] = lines.items
        if lines.whole_bytes != self.records_path.stat().st_size:
            with self.records_path.open("r+b") as handle:
                handle.truncate(lines.whole_bytes)
        # Last record wins if a slot was somehow written twice.
        latest: dict[tuple[str, int], TurnRecord] = {}
        for record in records:
            latest[record.slot] = record
        return list(latest.values())

    def append(self, record: TurnRecord) -> None:
        """One whole line or nothing: a short or failed write (disk full) is cut back off before raising."""
        line = (record.model_dump_json() + "\n").encode()
        with self._lock:
            fd = os.open(self.records_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                try:
                    written = os.write(fd, line)
                    if written != len(line):  # the file system took only part of the line
                        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                    os.fsync(fd)
                except OSError as error:
                    os.ftruncate(fd, size)
                    raise storage_full(self.records_path, error) if is_storage_full(error) else error
            finally:
                os.close(fd)

    def write_json(self, name: str, payload: Any) -> Path:
        return write_json_atomic(self.path / name, payload)


def write_json_atomic(path: Path, payload: Any) -> Path:
    """Write JSON through a temporary file and rename, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        temporary.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str))
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise storage_full(path, error) if is_storage_full(error) else error
    os.replace(temporary, path)
    return path


@dataclass
class JsonLines:
    items: list[Any]
    whole_bytes: int  # the length of the leading lines that were read: where the next append belongs


def read_jsonl(path: Path, *, parse: Callable[[bytes], Any] = json.loads) -> JsonLines:
    """The lines of a JSONL file written by whole-line appends (turns.jsonl, the tool and resource logs), up to
    the first line that is torn (a writer mid-append, or killed: no newline yet) or does not parse."""
    items: list[Any] = []
    whole_bytes = 0
    if not Path(path).exists():
        return JsonLines(items, whole_bytes)
    with Path(path).open("rb") as handle:
        for line in handle:
            if not line.endswith(b"\n"):
                break
            try:
                items.append(parse(line))
            except ValueError:
                break
            whole_bytes += len(line)
    return JsonLines(items, whole_bytes)
