"""Local stand-ins of the papers' data sources, made in a test: a git repository (what `git fetch` reads from
GitHub) and a Hugging Face hub cache laid out as huggingface_hub writes it (blobs, snapshot links, refs), which
`snapshot_download` reads with HF_HUB_OFFLINE=1."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO_ROOT

CHECKOUT_FIXTURE = REPO_ROOT / "tests" / "suites" / "evogenui" / "fixtures" / "evogenui_bench"
_GIT_ENV = {"GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.invalid", "GIT_COMMITTER_NAME": "test",
            "GIT_COMMITTER_EMAIL": "test@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True,
                          env={**os.environ, **_GIT_ENV})
    return done.stdout.strip()


def git_repo(path: Path, *commits: dict[str, str | None]) -> list[str]:
    """A repository at `path` with one commit per mapping (relative path -> text; None deletes the file);
    returns the commit ids in order."""
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    ids = []
    for number, files in enumerate(commits, start=1):
        for name, text in files.items():
            target = path / name
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "-m", f"commit {number}")
        ids.append(_git(path, "rev-parse", "HEAD"))
    return ids


def checkout_repo(path: Path) -> str:
    """The stand-in EvoGenUI-Bench checkout (tests/suites/evogenui/fixtures) as a repository, plus a later commit
    that adds a file the pin must not bring; returns the first commit's id."""
    shutil.copytree(CHECKOUT_FIXTURE, path)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "the benchmark")
    first = _git(path, "rev-parse", "HEAD")
    (path / "bench" / "later.txt").write_text("after the pinned commit\n")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "a later commit")
    return first


def hub_cache(cache: Path, repo_id: str, revision: str, files: dict[str, bytes], *,
              repo_type: str = "dataset") -> Path:
    """A hub cache holding `files` of `repo_id` at `revision` (content-addressed blobs, the snapshot's files linked
    to them, refs/main naming the revision); returns the snapshot folder."""
    folder = cache / f"{repo_type}s--{repo_id.replace('/', '--')}"
    snapshot = folder / "snapshots" / revision
    for name, data in files.items():
        blob = folder / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snapshot / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / "main").write_text(revision)
    return snapshot
