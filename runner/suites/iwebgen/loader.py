"""I-WebGenBench specifications -> runner.turns.tasks.Task (one single-turn task per specification).

A task folder holds `specs/<id>.yaml|yml|json` (one AppSpec each, runner/suites/iwebgen/spec.py) and,
optionally, `reference/<id>/` with a reference app: its files, laid out as the generator writes them
(`src/App.jsx`, ...), are the turn's private `reference_files` (what model=oracle answers). Mapping:

    spec.id                 -> Task.id (and must match the file's stem)
    spec.paper_title        -> Task.title
    spec.domain             -> Task.domain and Task.sub_suite (per-domain tables, I-WebGenBench Table 2)
    the whole spec          -> Task.extra["spec"] (JSON form; the payload and the judge read it from here)
    the spec file           -> Task.source_path
    reference/<id>/**       -> TurnSpec.reference_files (private)
"""

from __future__ import annotations

from pathlib import Path

from runner.suites.iwebgen.spec import AppSpec, load_spec
from runner.suites.native import TaskFormatError, expand_task_paths
from runner.turns.tasks import Task, TurnSpec

__all__ = ["REFERENCE_DIR", "SPECS_DIR", "load_tasks", "reference_files", "spec_of", "task_from_spec"]

SUITE_NAME = "iwebgen"
SPECS_DIR = "specs"
REFERENCE_DIR = "reference"
_REFERENCE_TEXT = "The reference app for this specification."


def reference_files(folder: Path) -> dict[str, str] | None:
    """Every file under a reference folder, by its path relative to the folder; None when there is none."""
    if not folder.is_dir():
        return None
    files = {path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
             for path in sorted(folder.rglob("*")) if path.is_file()}
    if not files:
        raise TaskFormatError(f"{folder}: reference folder holds no file")
    return files


def task_from_spec(spec: AppSpec, *, source: Path, reference: dict[str, str] | None) -> Task:
    turn = TurnSpec(index=1, prompt=spec.paper_title, reference_files=reference,
                    reference_text=_REFERENCE_TEXT if reference is not None else "",
                    requires_previous_artifact=False)
    return Task(id=spec.id, suite=SUITE_NAME, sub_suite=spec.domain, title=spec.paper_title, domain=spec.domain,
                turns=[turn], source_path=str(source), extra={"spec": spec.model_dump(mode="json")})


def spec_of(task: Task) -> AppSpec:
    """The specification a task was made from."""
    return AppSpec.model_validate(task.extra["spec"])


def _specs_folder(root: Path) -> Path:
    """`root` itself when it is a specs folder or a file, else its `specs/` folder."""
    return root / SPECS_DIR if (root / SPECS_DIR).is_dir() else root


def load_tasks(root: Path) -> list[Task]:
    """All specifications under `root` (a task folder with specs/ and reference/, a specs folder, a file or a
    glob), each with its reference app when `reference/<id>/` exists beside the specs folder."""
    root = Path(root)
    files = expand_task_paths(_specs_folder(root))
    if not files:
        raise TaskFormatError(f"{root}: no specification file (.yaml, .yml, .json)")
    tasks: list[Task] = []
    seen: dict[str, Path] = {}
    for path in files:
        spec = load_spec(path)
        if spec.id != path.stem:
            raise TaskFormatError(f"{path}: id: {spec.id!r} must equal the file name's stem {path.stem!r}")
        if spec.id in seen:
            raise TaskFormatError(f"{path}: id: {spec.id!r} already defined in {seen[spec.id]}")
        seen[spec.id] = path
        reference = reference_files(path.parent.parent / REFERENCE_DIR / spec.id)
        tasks.append(task_from_spec(spec, source=path, reference=reference))
    return tasks
