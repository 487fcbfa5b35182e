"""Sharding: `suite.shard=I/N` runs merged by runner.merge equal the unsharded run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from runner.run.merge import MergeError, merge_runs, shard_groups
from tests.conftest import REPO_ROOT, cli_env, runner_command


def _fake_shard(path: Path, shard: str | None, tasks: dict[str, str], **lineage: object) -> Path:
    """A finished run dir as far as the merge's checks look (they run before any task is loaded)."""
    path.mkdir(parents=True)
    (path / "config.yaml").write_text(yaml.safe_dump({"suite": {"name": "smoke", "shard": shard}}))
    (path / "summary.json").write_text("{}")
    (path / "turns.jsonl").write_text("")
    base = {"git_commit": "a" * 40, "git_dirty": "false", "config_hash": "c" * 64, "shard": shard,
            "task_set_hash": "t", "task_digests": tasks, "image_digests": {}, "model_revisions": {},
            "prompt_versions": {"runner.suites.payload": "webapp-v1"}}
    (path / "lineage.json").write_text(json.dumps({**base, **lineage}))
    return path


def test_merge_refuses_a_missing_shard(tmp_path: Path) -> None:
    a = _fake_shard(tmp_path / "a", "0/3", {"t1": "x"})
    b = _fake_shard(tmp_path / "b", "2/3", {"t3": "x"})
    with pytest.raises(MergeError, match="missing shard\\(s\\) 1/3"):
        merge_runs([a, b])


def test_merge_refuses_overlapping_tasks(tmp_path: Path) -> None:
    a = _fake_shard(tmp_path / "a", "0/2", {"t1": "x"})
    b = _fake_shard(tmp_path / "b", "1/2", {"t1": "x"})
    with pytest.raises(MergeError, match="task 't1' is in two runs"):
        merge_runs([a, b])


def test_merge_refuses_a_different_lineage_naming_it(tmp_path: Path) -> None:
    a = _fake_shard(tmp_path / "a", "0/2", {"t1": "x"})
    b = _fake_shard(tmp_path / "b", "1/2", {"t2": "x"}, prompt_versions={"runner.suites.payload": "webapp-v2"})
    with pytest.raises(MergeError, match="prompt versions \\(runner.suites.payload\\)"):
        merge_runs([a, b])
    c = _fake_shard(tmp_path / "c", "1/2", {"t2": "x"}, git_commit="b" * 40)
    with pytest.raises(MergeError, match="git commit \\(aaaaaaaaaaaa -> bbbbbbbbbbbb\\)"):
        merge_runs([a, c])


def test_merge_refuses_an_unfinished_shard(tmp_path: Path) -> None:
    a = _fake_shard(tmp_path / "a", "0/2", {"t1": "x"})
    b = _fake_shard(tmp_path / "b", "1/2", {"t2": "x"})
    (b / "summary.json").unlink()
    with pytest.raises(MergeError, match="incomplete"):
        merge_runs([a, b])


def test_shard_groups_groups_by_experiment(tmp_path: Path) -> None:
    a = _fake_shard(tmp_path / "a", "0/2", {"t1": "x"})
    b = _fake_shard(tmp_path / "b", "1/2", {"t2": "x"})
    c = _fake_shard(tmp_path / "c", "0/2", {"t1": "x"}, config_hash="d" * 64)
    single = _fake_shard(tmp_path / "s", None, {"t1": "x"})
    assert sorted(sorted(p.name for p in group) for group in shard_groups([a, c, b, single])) == [
        ["a", "b"], ["c"], ["s"]]


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.build
@pytest.mark.sandbox
def test_three_shards_merge_into_the_unsharded_result(tmp_path: Path) -> None:
    # One sweep runs the three shards and the unsharded reference (shard=null) side by side.
    sweep_dir = tmp_path / "sweep"
    result = subprocess.run(
        runner_command("-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "model=oracle",
                       "suite.shard=0/3,1/3,2/3,null", "suite.turns=2", "concurrency.browsers=1", "tracking=off",
                       f"hydra.sweep.dir={sweep_dir}"),
        cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=480,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    shards = [sweep_dir / f"{number}_oracle_rules" for number in (2, 0, 1)]  # any order
    reference = sweep_dir / "3_oracle_rules"
    task_sets = [set(json.loads((s / "lineage.json").read_text())["task_digests"]) for s in shards]
    assert all(len(tasks) == 1 for tasks in task_sets) and len(set().union(*task_sets)) == 3

    merged = merge_runs(shards, tmp_path / "merged")
    expected = json.loads((reference / "summary.json").read_text())
    actual = json.loads((merged / "summary.json").read_text())
    assert actual.pop("run")["merged_from"] == [str(s) for s in shards]
    expected.pop("run")
    assert actual == expected
    records = [json.loads(line) for line in (merged / "turns.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all((merged / r["evidence_dir"]).is_dir() for r in records)
    lineage = json.loads((merged / "lineage.json").read_text())
    assert lineage["shard"] is None
    assert lineage["task_set_hash"] == json.loads((reference / "lineage.json").read_text())["task_set_hash"]
    assert yaml.safe_load((merged / "config.yaml").read_text())["suite"]["shard"] is None

    # The command line gives the same result; a second merge into the same folder replaces the first.
    again = subprocess.run(runner_command()[:-1] + ["runner.merge", *map(str, shards), "--out", str(merged)],
                           cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == str(merged)
    assert json.loads((merged / "summary.json").read_text())["turn_pass"] == expected["turn_pass"]
