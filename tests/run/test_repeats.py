"""`repeats: N`: N independent runs of one configuration and one summary, each run's figures beside their mean and
SD (runner/run/repeats.py; MT-Web2Code Table 3, EvoGenUI-Bench Table 8)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from runner.errors import ConfigError
from runner.run.repeats import REPEATS_FILE, aggregate_repeats, run_repeats, summary_figures
from runner.run.validation import validate_config
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.test_presets import composed


def _summary_dir(path: Path, summary: dict[str, Any]) -> Path:
    path.mkdir(parents=True)
    (path / "summary.json").write_text(json.dumps(summary))
    return path


def test_table8s_mean_and_sd_by_hand(tmp_path: Path) -> None:
    # EvoGenUI-Bench Table 8, Presentation: R1-R3 turn pass 60.0, 55.2, 62.0 -> 59.1 ± 3.5 (SD with n - 1).
    dirs = [_summary_dir(tmp_path / f"r{i}", {"turn_pass": value, "by_sub_suite": {"presentation": {"apr": apr}},
                                              "run": {"tasks": 150}, "complete": True})
            for i, (value, apr) in enumerate([(60.0, 0.5), (55.2, 0.7), (62.0, 0.6)])]
    report = aggregate_repeats(dirs)
    turn_pass = report["figures"]["turn_pass"]
    assert turn_pass["values"] == [60.0, 55.2, 62.0]
    assert round(turn_pass["mean"], 1) == 59.1 and round(turn_pass["sd"], 1) == 3.5 and turn_pass["n"] == 3
    assert report["figures"]["by_sub_suite.presentation.apr"]["mean"] == pytest.approx(0.6)
    assert "run.tasks" not in report["figures"] and "complete" not in report["figures"]  # not results
    assert [run["repeat"] for run in report["runs"]] == [0, 1, 2]


def test_a_figure_one_run_lacks_is_none_there_and_left_out_of_the_mean(tmp_path: Path) -> None:
    dirs = [_summary_dir(tmp_path / "a", {"score": 1.0, "ir": 0.5}), _summary_dir(tmp_path / "b", {"score": 3.0})]
    report = aggregate_repeats(dirs)
    assert report["figures"]["ir"] == {"values": [0.5, None], "mean": 0.5, "sd": None, "n": 1}
    assert summary_figures({"a": {"b": 2, "c": [1, 2]}, "d": False}) == {"a.b": 2.0}


def test_an_unfinished_repeat_is_named(tmp_path: Path) -> None:
    (tmp_path / "r0").mkdir()
    with pytest.raises(FileNotFoundError, match="r0: no summary.json; repeat 0 did not finish"):
        aggregate_repeats([tmp_path / "r0"])


def test_each_repeat_runs_with_its_own_index_in_its_own_dir(tmp_path: Path) -> None:
    config = validate_config(composed("repeats=3"))
    seen: list[tuple[int, Path]] = []

    async def run_one(repeat_config: Any, path: Path) -> None:
        seen.append((repeat_config.repeat, path))
        assert repeat_config.repeats == 1  # each run is one run: its config.yaml re-validates (rejudge, merge)
        (path / "summary.json").write_text(json.dumps({"turn_pass": float(repeat_config.repeat)}))

    report = asyncio.run(run_repeats(config, tmp_path, run_one))
    assert seen == [(i, tmp_path / f"repeat-{i}") for i in range(3)]
    assert json.loads((tmp_path / REPEATS_FILE).read_text())["figures"]["turn_pass"]["values"] == [0.0, 1.0, 2.0]
    assert report["figures"]["turn_pass"]["mean"] == 1.0


def test_repeat_and_repeats_together_are_refused() -> None:
    with pytest.raises(ConfigError, match="repeat = 2 with repeats = 3"):
        validate_config(composed("repeats=3", "repeat=2"))


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.build
@pytest.mark.sandbox
def test_the_command_line_runs_the_repeats_and_writes_one_summary(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = subprocess.run(
        runner_command("repeats=2", "suite.task_ids=[smoke-counter]", "suite.turns=1", "tracking=off",
                       f"hydra.run.dir={run_dir}"),
        cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == str(run_dir)
    for index in range(2):
        repeat = run_dir / f"repeat-{index}"
        records = [json.loads(line) for line in (repeat / "turns.jsonl").read_text().splitlines()]
        assert len(records) == 1 and records[0]["passed"] is True  # one record per requested slot
        stored = (repeat / "config.yaml").read_text()
        assert f"repeat: {index}\n" in stored and "repeats: 1\n" in stored
    report = json.loads((run_dir / REPEATS_FILE).read_text())
    assert report["repeats"] == 2
    assert report["figures"]["turn_pass"] == {"values": [1.0, 1.0], "mean": 1.0, "sd": 0.0, "n": 2}
