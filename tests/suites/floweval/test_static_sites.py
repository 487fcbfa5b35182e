"""A static third-party reference site end to end: TodoMVC's VanillaJS implementation (npm `todomvc@0.1.1`, MIT,
fetched by scripts/fetch-todomvc.sh) served as it is, its four flows (double-click editing, Escape, hover, checks,
filter links, waits for text) replayed by the scripted actor on a machine loaded with twice as many busy processes
as cores, the oracle answering with the same site (suite.artifact=static). The reference against itself scores
the best value of every metric and completes every flow; a copy that lost double-click editing stops where it
should, and every table that shows DTW shows that.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from runner.actors.registry import build_actor
from runner.report.collect import RunData
from runner.run.experiment import open_browsers, run_experiment
from runner.compose import compose as compose_config
from runner.run.roles import run_facts
from runner.run.validation import validate_config
from runner.sandbox.registry import build_sandbox
from runner.suites.base import SuiteContext
from runner.suites.floweval.featurizers import get_featurizer
from runner.suites.floweval.report import floweval_slots
from runner.suites.floweval.scoring import score_flows
from runner.suites.floweval.suite import completion_line
from runner.suites.registry import build_suite
from runner.turns.records import RunDirectory
from runner.view.headline import headline
from tests.conftest import REPO_ROOT
from tests.suites.floweval import todomvc

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FLOWS = ["add-todos", "cancel-delete-clear", "complete-and-filter", "edit-todo"]


def _config():
    raw = compose_config(["suite=floweval", "model=oracle", "actor=scripted", "suite.artifact=static",
                          f"suite.sites_path={todomvc.SITES}", "suite.repeats=1", "suite.featurizer=pixels",
                          "tracking=off"])
    raw["project_root"] = str(REPO_ROOT)
    return validate_config(raw)


def _burn(until: float) -> None:
    while time.monotonic() < until:
        pass


@pytest.fixture(scope="module")
def package() -> Path:
    try:
        return todomvc.fetch()
    except todomvc.FetchFailed as failure:
        pytest.fail(str(failure))


@pytest.fixture(scope="module")
def loaded_run(package: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oracle run, traced while busy processes (twice the cores, stopped after at most 5 minutes) load the
    machine."""
    run_dir = tmp_path_factory.mktemp("todomvc") / "run"
    workers = [multiprocessing.Process(target=_burn, args=(time.monotonic() + 300,), daemon=True)
               for _ in range(2 * (os.cpu_count() or 2))]
    for worker in workers:
        worker.start()
    try:
        asyncio.run(run_experiment(_config(), run_dir))
    finally:
        for worker in workers:
            worker.terminate()
            worker.join()
    return run_dir


def test_the_static_reference_against_itself_is_best_and_complete_under_load(loaded_run: Path) -> None:
    (record,) = RunDirectory(loaded_run).load_records()
    assert record.status.value == "ok", record
    scores = record.verdict.scores
    assert scores["dtw"] == pytest.approx(0.0, abs=1e-9)
    assert scores["ebleu"] == pytest.approx(1.0, abs=1e-9)
    assert scores["wmd"] == pytest.approx(0.0, abs=1e-4)
    assert scores["completion"] == 1.0 and all(scores[f"completion/{flow}"] == 1.0 for flow in FLOWS)
    assert "4/4 flows complete" in record.verdict.summary
    evidence = loaded_run / record.evidence_dir
    edit = json.loads((evidence / "flows" / "edit-todo" / "run_1" / "trace.json").read_text())
    assert [step["action"]["kind"] for step in edit["steps"]] == ["fill", "press", "dblclick", "fill", "press",
                                                                 "wait_for_text"]
    assert all(step["ok"] for step in edit["steps"]) and "Buy oat milk" in edit["summary"]["final_text"]
    cleared = json.loads((evidence / "flows" / "cancel-delete-clear" / "run_1" / "trace.json").read_text())
    assert "Call mum" in cleared["summary"]["final_text"] and "Walk the dog" not in cleared["summary"]["final_text"]
    summary = json.loads((loaded_run / "summary.json").read_text())
    assert summary["floweval"]["completion"]["median"] == 1.0
    assert summary["floweval"]["completion"]["incomplete_slots"] == {}
    assert any("suite.artifact=static" in line for line in summary["floweval_deviations"])


def test_completion_shows_wherever_dtw_does(loaded_run: Path) -> None:
    run = RunData(label="todomvc", config={}, summary=json.loads((loaded_run / "summary.json").read_text()),
                  records=RunDirectory(loaded_run).load_records())
    shown = {metric.label: metric.text for metric in headline(run)}
    assert shown["dtw (median)"] == "0.00" and shown["completion (median)"] == "1.00"
    assert shown["slots with an incomplete flow"] == "0"
    (row,) = floweval_slots(run)["rows"]
    assert row["dtw"] == pytest.approx(0.0, abs=1e-9) and row["completion"] == 1.0 and row["stopped"] == "-"


def test_a_copy_without_double_click_editing_stops_where_editing_begins(loaded_run: Path, package: Path,
                                                                         tmp_path: Path) -> None:
    folder = todomvc.make_analogs(package, tmp_path / "analogs")["no-dblclick-edit"]

    async def traces() -> dict[str, list[str]]:
        config = _config()
        suite = build_suite(config.suite, project_root=REPO_ROOT)
        suite.configure_run(run_facts(config))
        sandbox = build_sandbox(config)
        browsers = await open_browsers(config, sandbox)
        try:
            suite.bind(SuiteContext(browsers=browsers, sandbox=sandbox, actor=build_actor(config.actor)))
            (task,) = await suite.load_tasks()
            return await suite.site_traces(task, task.turns[0], folder, tmp_path / "traces")
        finally:
            await browsers.aclose()
            await sandbox.aclose()

    generated = asyncio.run(traces())
    reference = loaded_run / "reference" / "vanillajs" / "flows"
    flows = {flow: {"reference": [str(reference / flow / "run_1" / "trace.json")], "generated": generated[flow]}
             for flow in FLOWS}
    result = score_flows(flows, get_featurizer("pixels").featurize)
    completion = result["completion"]
    assert completion["incomplete"] == ["cancel-delete-clear", "edit-todo"]
    edit = completion["flows"]["edit-todo"]
    # The double-click reaches the label but opens no editor: the next step, filling the editor, cannot be taken.
    assert (edit["steps"], edit["of"], edit["complete"]) == (3, 6, False)
    assert edit["stopped_at"]["index"] == 3 and edit["stopped_at"]["action"] == "fill"
    assert "li.editing .edit" in edit["stopped_at"]["error"] and edit["reference_complete"] is True
    assert completion["flows"]["add-todos"]["complete"] and completion["mean"] == pytest.approx(
        (1 + 1 + 3 / 6 + 7 / 14) / 4)
    assert "edit-todo stopped at step 4 (fill) of 6" in completion_line(completion)
