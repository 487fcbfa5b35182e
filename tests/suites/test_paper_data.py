"""runner/suites/paper_data.py: the pins a suite declares, the checksum of a pulled copy (its documented definition,
recomputed here from the files), and whether a copy found under the data dir is the pinned one, unchanged."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from runner.suites.paper_data import MANIFEST, PaperData, find_pulled, tree_digest

REVISION = "5e2eb00a041e7fdf8e188049394de0a5d8d9a3f3"


def _data(**git: object) -> PaperData:
    return PaperData.model_validate({"about": "a benchmark", "kind": "git",
                                     "git": {"url": "https://example.invalid/b.git", "revision": REVISION, **git}})


def test_the_checksum_is_the_sorted_sha256sum_lines_of_every_file_but_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.json").write_bytes(b'{"z": 1}\n')
    (tmp_path / "a b.txt").write_bytes("é\n".encode())
    (tmp_path / "B.txt").write_bytes(b"upper case sorts first\n")
    (tmp_path / MANIFEST).write_text("{}")  # never part of what it describes
    lines = "".join(f"{hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()}  {name}\n"
                    for name in ("B.txt", "a b.txt", "b/z.json"))  # byte order: 'B' < 'a' < 'b'
    assert tree_digest(tmp_path) == (hashlib.sha256(lines.encode()).hexdigest(), 3)


def test_a_link_in_a_copy_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    with pytest.raises(ValueError, match="link.txt: a link"):
        tree_digest(tmp_path)


@pytest.mark.parametrize(("git", "message"), [
    ({"revision": "main"}, "not a full 40-hex commit id"),
    ({"revision": REVISION[:12]}, "not a full 40-hex commit id"),
    ({"sha256": "abc"}, "not a 64-hex sha256"),
    ({"suite_paths": {"tasks_path": "../outside"}}, "must be a path inside the pulled copy"),
])
def test_a_pin_that_could_move_or_escape_is_refused(git: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _data(**git)


def test_the_kind_needs_its_block() -> None:
    with pytest.raises(ValidationError, match="kind 'hub' needs its `hub` block"):
        PaperData.model_validate({"about": "x", "kind": "hub",
                                  "git": {"url": "u", "revision": REVISION}})


def test_a_copy_is_usable_only_as_pinned_and_unchanged(tmp_path: Path) -> None:
    data = _data()
    copy = find_pulled(tmp_path, "bench", data)
    assert copy.folder == tmp_path / "bench" / f"git-{REVISION}"  # a new pin is a new folder
    assert "is not in" in str(copy.problem())
    copy.folder.mkdir(parents=True)
    (copy.folder / "task.json").write_text("{}")
    digest, files = tree_digest(copy.folder)
    manifest = {"kind": "git", "revision": REVISION, "sha256": digest, "files": files}
    (copy.folder / MANIFEST).write_text(json.dumps(manifest))
    assert find_pulled(tmp_path, "bench", data).problem() is None
    assert "is not the pinned" in str(find_pulled(tmp_path, "bench", _data(sha256="0" * 64)).problem())
    (copy.folder / "task.json").write_text('{"edited": true}')
    assert "changed since it was pulled" in str(find_pulled(tmp_path, "bench", data).problem())
