"""A 2 x 2 grid over the smoke suite (joblib launcher) into a real MLflow sqlite store, then what a user does
next: `runner.report` over it (run dirs, and the experiment alone), and the MLflow UI (`mlflow ui`, real
Chromium) showing the grid's four runs with their turn-pass metric."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from mlflow import MlflowClient
from playwright.async_api import async_playwright, expect

from tests.conftest import REPO_ROOT, cli_env
from tests.report.mlflow_ui import mlflow_ui_server

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]

EXPERIMENT = "report-grid"


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("grid")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    sweep = root / "sweep"
    done = subprocess.run(
        [sys.executable, "-m", "runner", "-m", "hydra/launcher=joblib", "model=oracle,null", "actor=probe,none",
         "suite.task_ids=[smoke-counter]", "suite.turns=1", "concurrency.browsers=1", f"tracking.uri={uri}",
         f"tracking.artifact_root={root / 'artifacts'}", f"tracking.experiment={EXPERIMENT}", f"hydra.sweep.dir={sweep}"],
        cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    parents = [r for r in runs if r.data.tags.get("genui.kind") == "sweep"]
    jobs = [r for r in runs if r.data.tags.get("genui.kind") == "job"]
    return {"root": root, "uri": uri, "sweep": sweep, "client": client, "experiment_id": experiment.experiment_id,
            "parents": parents, "jobs": jobs}


def test_grid_is_one_parent_with_four_children(grid: dict) -> None:
    assert len(grid["parents"]) == 1 and len(grid["jobs"]) == 4
    parent = grid["parents"][0].info.run_id
    assert {job.data.tags.get("mlflow.parentRunId") for job in grid["jobs"]} == {parent}
    pairs = {(job.data.params["model.name"], job.data.params["actor.name"]) for job in grid["jobs"]}
    assert pairs == {("oracle", "probe"), ("oracle", "none"), ("null", "probe"), ("null", "none")}
    for job in grid["jobs"]:
        assert job.data.metrics["turn_pass"] == (1.0 if job.data.params["model.name"] == "oracle" else 0.0)
        names = {a.path for a in grid["client"].list_artifacts(job.info.run_id)}
        assert "report.html" in names  # the evidence viewer, logged by the run itself


def test_report_over_the_grid_and_over_the_experiment(grid: dict) -> None:
    out = grid["root"] / "report"
    done = subprocess.run([sys.executable, "-m", "runner.report", str(grid["sweep"]), "--out", str(out),
                           "--tracking-uri", grid["uri"]], cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    board = json.loads((out / "leaderboard.json").read_text())
    overview = next(t for t in board["suites"]["smoke"] if t["id"] == "overview")
    values = {row["run"]: row["turn_pass"]["value"] for row in overview["rows"]}
    assert values == {"oracle / rules / probe": 1.0, "oracle / rules / none": 1.0, "null / rules / probe": 0.0, "null / rules / none": 0.0}
    assert "pass_by_turn.png" in board["plots"] and (out / "pass_by_turn.png").is_file()
    # Logged as artifacts of the sweep's parent run.
    parent = grid["parents"][0].info.run_id
    logged = {a.path for a in grid["client"].list_artifacts(parent, "report")}
    assert {"report/leaderboard.md", "report/leaderboard.json", "report/leaderboard.html", "report/pass_by_turn.png"} <= logged

    # The experiment alone (as on a machine without the run dirs): records come back from the task runs' metrics.
    grid["sweep"].rename(grid["root"] / "sweep-moved")
    try:
        out2 = grid["root"] / "report-mlflow"
        done = subprocess.run([sys.executable, "-m", "runner.report", "--mlflow-experiment", EXPERIMENT, "--tracking-uri",
                               grid["uri"], "--out", str(out2), "--no-log"], cwd=REPO_ROOT, env=cli_env(), capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        board = json.loads((out2 / "leaderboard.json").read_text())
        rows = next(t for t in board["suites"]["smoke"] if t["id"] == "overview")["rows"]
        assert {row["run"]: row["turn_pass"]["value"] for row in rows} == values
        assert {row["slots"] for row in rows} == {"1/1"}
        assert "pass_by_turn.png" in board["plots"]
    finally:
        (grid["root"] / "sweep-moved").rename(grid["sweep"])


@pytest.fixture
def mlflow_ui(grid: dict) -> Iterator[str]:
    with mlflow_ui_server(grid["uri"], grid["root"] / "mlflow-ui.log") as url:
        yield url


def test_mlflow_ui_shows_the_four_runs_with_turn_pass(grid: dict, mlflow_ui: str, tmp_path: Path) -> None:
    parent = grid["parents"][0].info.run_id
    jobs = {job.info.run_id: (job.info.run_name, job.data.metrics["turn_pass"]) for job in grid["jobs"]}

    async def check() -> None:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                                       args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            try:
                page = await browser.new_page(viewport={"width": 2000, "height": 1000})
                page.set_default_timeout(60_000)
                # The experiment's runs page, filtered as a user would type it in the search box.
                search = urllib.parse.quote("metrics.turn_pass >= 0")
                await page.goto(f"{mlflow_ui}/#/experiments/{grid['experiment_id']}/runs?searchFilter={search}")
                await page.get_by_text("matching runs").first.wait_for()
                # Show the turn_pass metric column (Columns -> search -> tick it).
                await page.get_by_role("button", name="Columns", exact=True).click()  # not "Show more columns"
                await page.get_by_placeholder("Search columns").fill("turn_pass")
                option = page.locator("[class*=tree-treenode]").filter(has_text=re.compile(r"^\s*turn_pass\s*$"))
                for _ in range(60):  # the Metrics group of the column tree sometimes renders collapsed: open it
                    if await option.count() and await option.first.is_visible():
                        break
                    collapsed = page.locator("[class*=tree-switcher_close]")
                    if await collapsed.count():
                        await collapsed.first.click()
                    await page.wait_for_timeout(500)
                await option.first.locator("[class*=tree-title]").click()
                await page.keyboard.press("Escape")
                # The jobs are nested under the sweep's parent run: expand it.
                parent_row = page.locator(f"[role=row][row-id='{parent}']").first
                await parent_row.wait_for()
                await parent_row.locator("[col-id='attributes.`Run Name`'] button").first.click()
                for run_id, (name, turn_pass) in jobs.items():
                    rows = page.locator(f"[role=row][row-id='{run_id}']")
                    await expect(rows.locator("[col-id='attributes.`Run Name`']")).to_contain_text(name, timeout=30_000)
                    await expect(rows.locator("[col-id='metrics.`turn_pass`']")).to_have_text(f"{turn_pass:g}", timeout=30_000)
                await page.screenshot(path=str(tmp_path / "mlflow_runs.png"))
            finally:
                await browser.close()

    asyncio.run(check())
    assert (tmp_path / "mlflow_runs.png").stat().st_size > 10_000
