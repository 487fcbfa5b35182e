"""The papers' own data: where each benchmark's released files come from (a git commit or a hub revision), where
`python -m runner.pull` puts them (`<data_dir>/<name>/<kind>-<revision>/`) and whether a pulled copy is the one
pinned.

A suite declares its authors' data under `suite.paper_data` (conf/suite/<name>.yaml), one entry per source:

    paper_data:
      evogenui-bench:
        about: EvoGenUI-Bench v1.0 (MIT): 150 tasks, tool backends, scaffold, prompts
        kind: git                       # git | hub: which of the blocks below is pulled
        git: {url: ..., revision: <40-hex commit>, include: [bench/, runtime/], sha256: null,
              suite_paths: {benchmark_path: .}}

`include` keeps only those paths (git: a sparse checkout; hub: allow patterns); `suite_paths` says which suite
key reads which path of the pulled copy when `suite.task_set=paper` (runner/suites/registry.py fills them in).

Checksum: the sha256 of the copy's manifest lines, one `<sha256 of the file>  <path>` per file, paths relative
to the copy in POSIX form, sorted by their UTF-8 bytes, each line ending in a newline; the manifest file itself
is left out. `sha256sum` gives the same lines (`find . -type f ! -name .pull.json -printf '%P\\n' | LC_ALL=C sort
| xargs -d '\\n' sha256sum | sha256sum` inside the copy). A pin's `sha256` (when known) is checked at every pull;
the digest found is recorded in `.pull.json` beside the files and checked again by every run's preflight, so a
copy edited after its pull is refused.

This module reads local files only; the fetching (git, huggingface_hub) is runner/run/data_pull.py.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "DEFAULT_DATA_DIR",
    "GitPin",
    "HubPin",
    "MANIFEST",
    "PaperData",
    "PulledCopy",
    "copy_folder",
    "find_pulled",
    "tree_digest",
]

DEFAULT_DATA_DIR = ".cache/data"  # `data_dir`, relative to the project root
MANIFEST = ".pull.json"  # beside the pulled files: what was pulled, from where, its checksum
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Pin(_Strict):
    revision: str  # a full commit id: a branch or tag can move
    include: list[str] = Field(default_factory=list)  # only these paths ([]: everything)
    sha256: str | None = None  # the copy's checksum (module docstring); None: recorded at the first pull
    suite_paths: dict[str, str] = Field(default_factory=dict)  # suite key -> path inside the copy

    @field_validator("revision")
    @classmethod
    def _full_commit(cls, value: str) -> str:
        if not _COMMIT.match(value):
            raise ValueError(f"{value!r} is not a full 40-hex commit id (a branch or tag name can move)")
        return value

    @field_validator("sha256")
    @classmethod
    def _hex_digest(cls, value: str | None) -> str | None:
        if value is not None and not _SHA256.match(value):
            raise ValueError(f"{value!r} is not a 64-hex sha256")
        return value

    @field_validator("suite_paths")
    @classmethod
    def _inside(cls, value: dict[str, str]) -> dict[str, str]:
        for key, path in value.items():
            if Path(path).is_absolute() or ".." in Path(path).parts:
                raise ValueError(f"{key}: {path!r} must be a path inside the pulled copy")
        return value


class GitPin(_Pin):
    """A commit of a git repository (GitHub, or any URL or local path git clones from)."""

    url: str

    @property
    def source(self) -> str:
        return self.url


class HubPin(_Pin):
    """A revision of a Hugging Face hub repository, through the hub cache (`hf_cache`, null: HF_HUB_CACHE)."""

    repo_id: str
    repo_type: Literal["dataset", "model"] = "dataset"
    hf_cache: str | None = None

    @property
    def source(self) -> str:
        return f"hf.co/{'datasets/' if self.repo_type == 'dataset' else ''}{self.repo_id}"


class PaperData(_Strict):
    """One source of a paper's released data, as git and/or hub pins; `kind` picks the one pulled."""

    about: str  # what it is, for messages and the task-set record
    kind: Literal["git", "hub"] = "git"
    git: GitPin | None = None
    hub: HubPin | None = None

    @model_validator(mode="after")
    def _kind_has_its_pin(self) -> PaperData:
        if getattr(self, self.kind) is None:
            raise ValueError(f"kind {self.kind!r} needs its `{self.kind}` block (url or repo_id, revision)")
        return self

    @property
    def pin(self) -> GitPin | HubPin:
        pin = getattr(self, self.kind)
        assert pin is not None  # the validator saw to it
        return pin

    def folder(self, data_dir: Path, name: str) -> Path:
        """Where this pin's copy lives: a changed pin is a new folder, never a silently reused old one."""
        return Path(data_dir) / name / f"{self.kind}-{self.pin.revision}"

    def describe(self) -> str:
        return f"{self.pin.source}@{self.pin.revision[:12]}"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(root: Path) -> list[str]:
    """Every regular file under `root` but the manifest, relative and sorted by bytes; a link is refused."""
    names: list[str] = []
    for path in root.rglob("*"):
        if path.is_symlink():
            raise ValueError(f"{path}: a link; a pulled copy holds plain files only")
        if path.is_file():
            relative = path.relative_to(root).as_posix()
            if relative != MANIFEST:
                names.append(relative)
    return sorted(names, key=lambda name: name.encode())


def tree_digest(root: Path) -> tuple[str, int]:
    """(the checksum of the copy at `root`, its number of files): the module docstring's definition."""
    lines = [f"{_file_sha256(root / name)}  {name}\n" for name in _files(root)]
    return hashlib.sha256("".join(lines).encode()).hexdigest(), len(lines)


def copy_folder(source: Path, target: Path, include: list[str]) -> int:
    """Copy the files of `source` (links resolved) that `include` keeps into `target`; returns how many."""
    import shutil

    count = 0
    for path in sorted(Path(source).rglob("*")):
        if not path.is_file():
            continue
        relative = path.relative_to(source).as_posix()
        if include and not any(_included(relative, pattern) for pattern in include):
            continue
        destination = Path(target) / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)  # follows the hub cache's links to its blobs
        count += 1
    return count


def _included(relative: str, pattern: str) -> bool:
    from fnmatch import fnmatchcase

    pattern = pattern.lstrip("/")
    if pattern.endswith("/"):
        return relative.startswith(pattern)
    return fnmatchcase(relative, pattern)


@dataclass(frozen=True)
class PulledCopy:
    """A source's folder under the data dir and what its manifest says (None: nothing pulled there)."""

    name: str
    data: PaperData
    folder: Path
    manifest: dict[str, Any] | None

    @property
    def present(self) -> bool:
        return self.manifest is not None

    @property
    def checksum(self) -> str | None:
        return str(self.manifest["sha256"]) if self.manifest else None

    def problem(self) -> str | None:
        """Why this copy cannot be used (None: it is the pinned one, unchanged since its pull)."""
        if self.manifest is None:
            return f"{self.data.about} ({self.data.describe()}) is not in {self.folder}"
        pin = self.data.pin
        if self.manifest.get("revision") != pin.revision or self.manifest.get("kind") != self.data.kind:
            return f"{self.folder} holds {self.manifest.get('kind')} {self.manifest.get('revision')}, not the pin"
        found, _ = tree_digest(self.folder)
        if found != self.manifest.get("sha256"):
            return (f"{self.folder} changed since it was pulled (checksum {found[:12]}, recorded "
                    f"{str(self.manifest.get('sha256'))[:12]})")
        if pin.sha256 is not None and found != pin.sha256:
            return f"{self.folder}: checksum {found[:12]} is not the pinned {pin.sha256[:12]}"
        return None


def read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        payload = json.loads((Path(folder) / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return payload if isinstance(payload, dict) and "sha256" in payload else None


def find_pulled(data_dir: Path, name: str, data: PaperData) -> PulledCopy:
    folder = data.folder(data_dir, name)
    return PulledCopy(name=name, data=data, folder=folder, manifest=read_manifest(folder))
