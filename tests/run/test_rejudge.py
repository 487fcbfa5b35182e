"""Frozen evidence packets, the judging phase and `python -m runner.rejudge`, on a real smoke run.

One smoke run (oracle, rules judge, a real MLflow store) is made for the module. Re-judging it with
judge=rules reproduces its summary exactly, with the source's browser made unlaunchable (a fault injected
into its config) to show that re-judging never browses; a two-judge grid runs through Hydra multirun and
lands as two MLflow runs tagged with the source run and nested under the sweep's run. `run.stage=generate`
then `run.stage=judge` on one run dir gives the same summary as the one-pass run. Re-judging with
`judge.ablate` leaves the removed evidence sources out of the copied packets and records which.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from runner.turns.packets import read_packet
from tests.conftest import REPO_ROOT, cli_env

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]


def _cli(module: str, *arguments: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *arguments], cwd=REPO_ROOT, env=cli_env(),
                          capture_output=True, text=True, timeout=timeout)


def _tracking(root: Path) -> list[str]:
    return [f"tracking.uri=sqlite:///{root}/mlflow.db", f"tracking.artifact_root={root}/artifacts"]


def _records(run_dir: Path) -> dict[tuple[str, int], dict]:
    lines = (run_dir / "turns.jsonl").read_text().splitlines()
    return {(r["task_id"], r["turn"]): r for r in map(json.loads, lines)}


@pytest.fixture(scope="module")
def source_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rejudge")
    result = _cli("runner", f"hydra.run.dir={root / 'source'}", *_tracking(root))
    assert result.returncode == 0, result.stderr[-3000:]
    return root / "source"


def test_every_slot_leaves_a_packet_with_what_the_judge_reads(source_run: Path) -> None:
    packet = json.loads((source_run / "evidence" / "smoke-counter" / "2" / "packet.json").read_text())
    folder = source_run / "evidence" / "smoke-counter" / "2"
    assert packet["judged"] is True and packet["turn"] == 2
    assert (folder / "request.json").is_file() and packet["assistant_text"]
    # The sources are stored once, in src/: the packet names them (EvidenceFolder.files_entry).
    assert "files" not in packet and packet["files_in"]["folder"] == "src"
    assert "src/App.jsx" in packet["files_in"]["names"] and any((folder / "src").rglob("App.jsx"))
    assert "src/App.jsx" in read_packet(folder).files
    assert packet["build"]["status"] == "ok"
    assert (folder / packet["evidence"]["screenshot_viewport"]).is_file()
    assert (folder / packet["evidence"]["dom_path"]).is_file()
    assert packet["trace"]["actor"] == "probe" and (folder / "trace.json").is_file()
    task = packet["task"]
    requirements = [r["id"] for r in task["turns"][1]["requirements"] if r.get("check")]
    assert sorted(packet["checks"]) == sorted(requirements) and requirements  # the private contract's checks ran
    assert all(outcome["status"] == "passed" for outcome in packet["checks"].values())
    assert [p["turn"] for p in packet["previous_turns"]] == [1]
    assert packet["record"]["verdict"] is None  # frozen before any verdict: the next turn never waited for one


def test_rejudging_with_rules_reproduces_the_summary_without_browsing(source_run: Path, tmp_path: Path) -> None:
    # Fault injection: a source whose browser cannot launch. Re-judging must not need it.
    source = tmp_path / "source"
    shutil.copytree(source_run, source, symlinks=True)
    config = yaml.safe_load((source / "config.yaml").read_text())
    config["browser"]["executable_path"] = "/nonexistent/chromium"
    (source / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    out = tmp_path / "rejudged"
    result = _cli("runner.rejudge", str(source), "judge=rules", f"hydra.run.dir={out}", "tracking=off")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == str(out)
    assert json.loads((out / "summary.json").read_text()) == json.loads((source_run / "summary.json").read_text())
    before, after = _records(source_run), _records(out)
    assert before.keys() == after.keys()
    for slot, record in before.items():
        assert after[slot]["status"] == record["status"] and after[slot]["passed"] == record["passed"]
        assert after[slot]["verdict"]["dimensions"] == record["verdict"]["dimensions"], slot
        assert after[slot]["verdict"]["requirements"] == record["verdict"]["requirements"], slot
    assert not any(out.glob("evidence/*/*/workspace"))  # nothing was built
    assert (out / "evidence" / "smoke-todo" / "1" / "verdict.json").is_file()
    assert json.loads((out / "rejudge.json").read_text())["source_run_dir"] == str(source)
    assert json.loads((out / "plan.json").read_text())["phases"][0]["name"] == "judging"


def test_a_two_judge_grid_lands_as_mlflow_runs_linked_to_the_source(source_run: Path, tmp_path: Path) -> None:
    conf = tmp_path / "conf" / "judge"
    conf.mkdir(parents=True)
    (conf / "rules-lenient.yaml").write_text(yaml.safe_dump(
        {"name": "rules-lenient", "kind": "rules", "rules": {"require_no_page_errors": False}}))
    root = source_run.parent
    sweep = tmp_path / "sweep"
    result = _cli("runner.rejudge", str(source_run), "-m", "judge=rules,rules-lenient",
                  f"hydra.searchpath=[file://{tmp_path / 'conf'}]", f"hydra.sweep.dir={sweep}", *_tracking(root))
    assert result.returncode == 0, result.stderr[-3000:]
    for job in ("0_rules", "1_rules-lenient"):
        assert (sweep / job / "summary.json").is_file()
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{root}/mlflow.db")
    source_id = json.loads((source_run / "tracking.json").read_text())["run_id"]
    sweep_id = json.loads((sweep / "mlflow_sweep.json").read_text())["parent_run_id"]
    experiment = client.get_experiment_by_name("genui-runner").experiment_id
    runs = client.search_runs([experiment], f"tags.`genui.source_run_id` = '{source_id}'")
    grid = [run for run in runs if run.data.tags.get("mlflow.parentRunId") == sweep_id]
    assert sorted(run.data.tags["judge"] for run in grid) == ["rules", "rules-lenient"]
    assert all(run.data.metrics["turn_pass"] == 1.0 for run in grid)
    assert len({run.info.run_id for run in grid}) == 2


def test_generate_then_judge_stages_equal_the_one_pass_run(source_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "staged"
    common = [f"hydra.run.dir={run_dir}", "tracking=off"]
    generated = _cli("runner", "run.stage=generate", *common)
    assert generated.returncode == 0, generated.stderr[-3000:]
    assert not (run_dir / "turns.jsonl").exists() and not (run_dir / "summary.json").exists()
    assert len(list(run_dir.glob("evidence/*/*/packet.json"))) == 9
    assert not list(run_dir.glob("evidence/*/*/verdict.json"))  # no verdict in the generation stage
    judged = _cli("runner", "run.stage=judge", *common)
    assert judged.returncode == 0, judged.stderr[-3000:]
    assert json.loads((run_dir / "summary.json").read_text()) == json.loads((source_run / "summary.json").read_text())
    again = _cli("runner", "run.stage=judge", *common)  # resumable: nothing left to do, nothing counted twice
    assert again.returncode == 0 and len(_records(run_dir)) == 9
    assert len((run_dir / "turns.jsonl").read_text().splitlines()) == 9


def test_judge_stage_without_execution_is_refused(tmp_path: Path) -> None:
    result = _cli("runner", "run.stage=judge", f"hydra.run.dir={tmp_path / 'empty'}", "tracking=off")
    assert result.returncode == 2
    assert "have no frozen evidence packet" in result.stderr and "run.stage=generate" in result.stderr


def test_ablated_rejudging_removes_the_sources_and_records_them(source_run: Path, tmp_path: Path) -> None:
    """judge.ablate (EvoGenUI-Bench Table 3, D.2.1): the re-judged packets lack the removed sources, the source
    run keeps them, and the run records which sources were removed."""
    source = source_run
    out = tmp_path / "ablated"
    result = _cli("runner.rejudge", str(source), "judge=rules", "judge.ablate=[actor_trace,private_reference]",
                  f"hydra.run.dir={out}", "tracking=off")
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads((out / "rejudge.json").read_text())["ablated"] == ["actor_trace", "private_reference"]
    assert json.loads((out / "summary.json").read_text())["run"]["ablated"] == ["actor_trace", "private_reference"]
    folders = sorted((out / "evidence").glob("*/*/packet.json"))
    assert len(folders) == 9
    for path in folders:
        packet = json.loads(path.read_text())
        assert packet["trace"] is None and not (path.parent / "trace.json").exists()
        assert not list(path.parent.glob("step_*.png"))
        assert all(turn["requirements"] == [] and turn["reference_files"] is None for turn in packet["task"]["turns"])
        assert packet["checks"] is None and sorted(packet["ablated"]) == ["actor_trace", "private_reference"]
        assert (path.parent / "final_screenshot.png").is_file()  # D.2.1: the final screenshot stays
        original = json.loads((source / path.relative_to(out)).read_text())
        assert original["trace"] is not None and original["task"]["turns"][0]["requirements"]
    # The rules judge, left without the contract, assesses no requirement: no pass for what it did not check.
    records = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
    assert records and all(r["verdict"]["requirements"] == [] for r in records)
    assert all(r["verdict"]["dimensions"]["requirements"]["score"] is None for r in records)

    wrong = _cli("runner.rejudge", str(source), "judge=rules", "judge.ablate=[dom]", f"hydra.run.dir={tmp_path / 'x'}",
                 "tracking=off")
    assert wrong.returncode == 2 and "judge.ablate: unknown evidence source 'dom'" in wrong.stderr
