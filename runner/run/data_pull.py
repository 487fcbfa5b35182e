"""Fetch one paper-data pin (runner/suites/paper_data.py) into the data dir: all of it or nothing.

The files land in a fresh folder beside their final place (`<data_dir>/<name>/.pull-*`), are checked (the
commit git checked out, the checksum against the pin's when it has one), get their manifest, and only then are
renamed into `<data_dir>/<name>/<kind>-<revision>/`; any failure removes the temporary folder, so a broken
download, an unreachable source or a checksum mismatch leaves nothing a run could mistake for the data.

git: the git command line (`git fetch --depth 1` of the pinned commit, a sparse checkout of `include`), the
`.git` folder dropped afterwards. hub: huggingface_hub's `snapshot_download` into the hub cache at the pinned
revision (offline with HF_HUB_OFFLINE=1, from the cache), then the included files copied out of it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from runner.errors import UserError
from runner.suites.paper_data import MANIFEST, GitPin, HubPin, PaperData, copy_folder, find_pulled, tree_digest

__all__ = ["DataPullError", "Pulled", "pull_paper_data"]

GIT_TIMEOUT_S = 1800  # a slow link fetching a benchmark repository


class DataPullError(RuntimeError, UserError):
    """A source could not be pulled as pinned; the message names it and why."""


@dataclass(frozen=True)
class Pulled:
    name: str
    folder: Path
    sha256: str
    files: int
    fetched: bool  # False: the pinned copy was already there


def pull_paper_data(data_dir: Path, name: str, data: PaperData) -> Pulled:
    """The pinned copy of `data` under `data_dir`, fetched unless an unchanged one is already there."""
    existing = find_pulled(data_dir, name, data)
    if existing.present and existing.problem() is None:
        _, files = tree_digest(existing.folder)
        return Pulled(name, existing.folder, str(existing.checksum), files, fetched=False)
    parent = existing.folder.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".pull-", dir=parent))
    try:
        files_dir = staging / "files"
        pin = data.pin
        if isinstance(pin, GitPin):
            _fetch_git(pin, files_dir, what=f"{name} ({data.describe()})")
        else:
            _fetch_hub(pin, files_dir, what=f"{name} ({data.describe()})")
        try:
            digest, files = tree_digest(files_dir)
        except ValueError as error:
            raise DataPullError(f"{name} ({data.describe()}): {error}") from None
        if files == 0:
            raise DataPullError(f"{name} ({data.describe()}): no file matched include {pin.include}")
        if pin.sha256 is not None and digest != pin.sha256:
            raise DataPullError(f"{name} ({data.describe()}): checksum mismatch: the pin says {pin.sha256}, the "
                                f"pulled files give {digest}; nothing was kept")
        manifest = {"name": name, "kind": data.kind, "source": pin.source, "revision": pin.revision,
                    "include": pin.include, "sha256": digest, "files": files,
                    "pulled_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (files_dir / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        _move_into_place(files_dir, existing.folder, staging)
        return Pulled(name, existing.folder, digest, files, fetched=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _move_into_place(files_dir: Path, folder: Path, staging: Path) -> None:
    """Rename the checked copy into place; an older copy of the same pin (edited, or pulled half by an older
    version) is moved aside first and removed with the staging folder."""
    if folder.exists():
        folder.rename(staging / "replaced")
    files_dir.rename(folder)


def _git(args: list[str], cwd: Path, what: str) -> str:
    try:
        result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
                                env=_git_env())
    except FileNotFoundError:
        raise DataPullError(f"{what}: the git command is not installed (apt-get install -y git)") from None
    except subprocess.TimeoutExpired:
        raise DataPullError(f"{what}: `git {args[0]}` took over {GIT_TIMEOUT_S} s") from None
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("warning:")]
        raise DataPullError(f"{what}: `git {' '.join(args[:2])}` failed: {' / '.join(lines[-3:]) or result.returncode}")
    return result.stdout


def _git_env() -> dict[str, str]:
    import os

    # Never prompt for credentials: a private or mistyped URL fails at once instead of waiting for a person.
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0"}


def _fetch_git(pin: GitPin, target: Path, *, what: str) -> None:
    target.mkdir(parents=True)
    _git(["init", "-q"], target, what)
    _git(["remote", "add", "origin", pin.url], target, what)
    _git(["fetch", "-q", "--depth", "1", "--filter=blob:none", "origin", pin.revision], target, what)
    if pin.include:
        _git(["sparse-checkout", "set", "--no-cone", *(f"/{path.lstrip('/')}" for path in pin.include)], target, what)
    _git(["checkout", "-q", "--detach", "FETCH_HEAD"], target, what)
    head = _git(["rev-parse", "HEAD"], target, what).strip()
    if head != pin.revision:
        raise DataPullError(f"{what}: git checked out {head}, not the pinned {pin.revision}")
    shutil.rmtree(target / ".git")


def _fetch_hub(pin: HubPin, target: Path, *, what: str) -> None:
    from huggingface_hub import snapshot_download

    cache = _hub_cache(pin)
    try:
        snapshot = snapshot_download(repo_id=pin.repo_id, repo_type=pin.repo_type, revision=pin.revision,
                                     cache_dir=str(cache), allow_patterns=pin.include or None)
    except Exception as error:  # huggingface_hub raises a kind per cause; the message says which
        raise DataPullError(f"{what}: {_hub_reason(error, cache)}") from None
    target.mkdir(parents=True)
    copy_folder(Path(snapshot), target, pin.include)


def _hub_cache(pin: HubPin) -> Path:
    if pin.hf_cache:
        return Path(pin.hf_cache).expanduser().resolve()
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def _hub_reason(error: Exception, cache: Path) -> str:
    from huggingface_hub.errors import (LocalEntryNotFoundError, OfflineModeIsEnabled, RepositoryNotFoundError,
                                        RevisionNotFoundError)

    if isinstance(error, RevisionNotFoundError):
        return "revision not found on the hub (the pin must be a commit of that repository)"
    if isinstance(error, RepositoryNotFoundError):
        return "repository not found on the hub (check repo_id and repo_type, or HF_TOKEN for a private one)"
    if isinstance(error, (OfflineModeIsEnabled, LocalEntryNotFoundError)):
        return (f"not in the hub cache {cache} and the hub cannot be reached (HF_HUB_OFFLINE set, or no "
                "network): pull on a machine with hub access and copy the data dir or the cache over")
    return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
