"""runner/run/data_pull.py against local sources made in the test: a git repository (fetched by the git command
line as from GitHub) and a hub cache read by huggingface_hub offline. All of a pin or nothing: a checksum
mismatch, an unreachable source and a missing revision leave no folder a run could read."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from runner.run.data_pull import DataPullError, pull_paper_data
from runner.suites.paper_data import MANIFEST, PaperData, find_pulled, tree_digest
from runner.suites.webgen.format import load_webgen_tasks
from tests.conftest import REPO_ROOT
from tests.support.data_sources import git_repo, hub_cache

WEBGEN_SAMPLE = REPO_ROOT / "tests" / "suites" / "webgen" / "fixtures" / "test.sample.jsonl"
HUB_REVISION = "e0e05f01a223b5b46e23b61031ec7548e9c34f4c"


def _git_data(url: Path, revision: str, **pin: object) -> PaperData:
    return PaperData.model_validate({"about": "a benchmark", "kind": "git",
                                     "git": {"url": str(url), "revision": revision, **pin}})


def _leftovers(data_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(data_dir)) for p in data_dir.rglob("*")) if data_dir.exists() else []


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("src") / "bench"
    ids = git_repo(path,
                   {"bench/a.json": '{"a": 1}\n', "runtime/x.py": "X = 1\n", "web/big.bin": "not wanted\n",
                    "LICENSE": "MIT\n"},
                   {"bench/a.json": '{"a": 2}\n', "bench/b.json": "{}\n"})
    return path, ids


def test_a_git_pin_is_its_commit_and_only_its_included_paths(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    url, (first, _) = repo
    data = _git_data(url, first, include=["bench/", "LICENSE"])
    pulled = pull_paper_data(tmp_path, "bench", data)
    assert pulled.fetched and pulled.folder == tmp_path / "bench" / f"git-{first}"
    files = sorted(p.relative_to(pulled.folder).as_posix() for p in pulled.folder.rglob("*") if p.is_file())
    assert files == [MANIFEST, "LICENSE", "bench/a.json"]  # the first commit's tree, sparse, no .git
    assert (pulled.folder / "bench" / "a.json").read_text() == '{"a": 1}\n'
    manifest = json.loads((pulled.folder / MANIFEST).read_text())
    assert manifest["sha256"] == pulled.sha256 == tree_digest(pulled.folder)[0]
    assert (manifest["revision"], manifest["files"], manifest["source"]) == (first, 2, str(url))
    assert find_pulled(tmp_path, "bench", data).problem() is None
    again = pull_paper_data(tmp_path, "bench", data)  # there and unchanged: kept, not fetched
    assert not again.fetched and again.sha256 == pulled.sha256
    assert _leftovers(tmp_path / "bench") == [f"git-{first}", *sorted(
        f"git-{first}/{name}" for name in (MANIFEST, "LICENSE", "bench", "bench/a.json"))]


def test_the_pinned_checksum_is_checked_and_a_mismatch_keeps_nothing(repo: tuple[Path, list[str]],
                                                                     tmp_path: Path) -> None:
    url, (first, _) = repo
    right = pull_paper_data(tmp_path / "one", "bench", _git_data(url, first, include=["bench/"])).sha256
    assert pull_paper_data(tmp_path / "two", "bench", _git_data(url, first, include=["bench/"], sha256=right)).fetched
    wrong = "0" * 64
    with pytest.raises(DataPullError, match=f"checksum mismatch: the pin says {wrong}, the pulled files give {right}"):
        pull_paper_data(tmp_path / "three", "bench", _git_data(url, first, include=["bench/"], sha256=wrong))
    assert _leftovers(tmp_path / "three" / "bench") == []


def test_an_unreachable_source_or_revision_is_named_and_leaves_nothing(repo: tuple[Path, list[str]],
                                                                      tmp_path: Path) -> None:
    url, (first, _) = repo
    with pytest.raises(DataPullError, match=r"bench \(.*/nowhere@5e2eb00a041e\): `git fetch -q` failed: fatal: .*"):
        pull_paper_data(tmp_path, "bench", _git_data(tmp_path / "nowhere", "5e2eb00a041e7fdf8e188049394de0a5d8d9a3f3"))
    with pytest.raises(DataPullError, match="`git fetch -q` failed"):
        pull_paper_data(tmp_path, "bench", _git_data(url, "1" * 40))
    with pytest.raises(DataPullError, match=r"no file matched include \['nothing/'\]"):
        pull_paper_data(tmp_path, "bench", _git_data(url, first, include=["nothing/"]))
    assert _leftovers(tmp_path / "bench") == []


def test_an_edited_copy_is_pulled_again_in_place(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    url, (first, _) = repo
    data = _git_data(url, first, include=["bench/"])
    pulled = pull_paper_data(tmp_path, "bench", data)
    (pulled.folder / "bench" / "a.json").write_text("edited\n")
    assert "changed since it was pulled" in str(find_pulled(tmp_path, "bench", data).problem())
    again = pull_paper_data(tmp_path, "bench", data)
    assert again.fetched and again.sha256 == pulled.sha256
    assert (again.folder / "bench" / "a.json").read_text() == '{"a": 1}\n'
    assert _leftovers(tmp_path / "bench") == [f"git-{first}", f"git-{first}/{MANIFEST}", f"git-{first}/bench",
                                              f"git-{first}/bench/a.json"]


def _parquet(rows: list[dict]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


def _pull(*overrides: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m runner.pull` in its own process: huggingface_hub reads HF_HUB_OFFLINE when imported."""
    return subprocess.run([sys.executable, "-m", "runner.pull", *overrides], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=REPO_ROOT, timeout=120)


def test_the_hub_form_of_webgen_bench_from_a_local_hub_cache(tmp_path: Path) -> None:
    """The test set as the hub serves it (parquet at a pinned revision), read offline from a hub cache made here
    from the sample rows: pulled, checksummed, and loaded by the suite as the same tasks as the JSONL; a revision
    the cache does not hold is a clear error and leaves nothing."""
    rows = [json.loads(line) for line in WEBGEN_SAMPLE.read_text().splitlines() if line.strip()]
    cache = tmp_path / "hub"
    hub_cache(cache, "luzimu/WebGen-Bench", HUB_REVISION,
              {"data/test-00000-of-00001.parquet": _parquet(rows), "data/train-00000-of-00001.parquet": b"unwanted"})
    pin = ["suite=webgen", "suite.paper_data.webgen-bench.kind=hub", f"data_dir={tmp_path / 'data'}",
           f"suite.paper_data.webgen-bench.hub.hf_cache={cache}"]
    done = _pull(*pin, env={"HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "data" / "webgen-bench" / f"hub-{HUB_REVISION}"
    assert done.stdout.startswith(f"suite.paper_data.webgen-bench: hf.co/datasets/luzimu/WebGen-Bench@e0e05f01a223 -> "
                                  f"{folder} (1 files, sha256 {tree_digest(folder)[0]}; pulled)")
    assert sorted(p.name for p in folder.rglob("*") if p.is_file()) == [MANIFEST, "test-00000-of-00001.parquet"]
    from_hub = load_webgen_tasks(folder / "data" / "test-00000-of-00001.parquet")
    assert [t.model_dump(exclude={"source_path"}) for t in from_hub] == \
        [t.model_dump(exclude={"source_path"}) for t in load_webgen_tasks(WEBGEN_SAMPLE)]

    other = "f" * 40
    missing = _pull(*pin, f"suite.paper_data.webgen-bench.hub.revision={other}", env={"HF_HUB_OFFLINE": "1"})
    assert missing.returncode == 2
    assert "error: suite.paper_data.webgen-bench: webgen-bench (hf.co/datasets/luzimu/WebGen-Bench@ffffffffffff): " \
           f"not in the hub cache {cache}" in missing.stderr
    assert not (tmp_path / "data" / "webgen-bench" / f"hub-{other}").exists()
    assert sorted(p.name for p in (tmp_path / "data" / "webgen-bench").iterdir()) == [folder.name]
