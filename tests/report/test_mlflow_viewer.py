"""A job run's MLflow page says how to open it in the local viewer, and its experiment opens on the runs table:
a real run (oracle, probe actor, one turn of smoke-counter) into a real sqlite store, the real `mlflow ui`, real
Chromium."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mlflow import MlflowClient
from mlflow.entities import Run
from playwright.async_api import Locator, Page, async_playwright, expect

from runner.tracking import viewer_link
from runner.view.catalog import Catalog
from tests.conftest import REPO_ROOT, cli_env
from tests.report.mlflow_ui import mlflow_ui_server

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build]

EXPERIMENT = "viewer-link"


@pytest.fixture(scope="module")
def tracked(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("viewer-link")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    run_dir = root / "run"
    done = subprocess.run(
        [sys.executable, "-m", "runner", "model=oracle", "actor=probe", "suite.task_ids=[smoke-counter]", "suite.turns=1",
         "concurrency.browsers=1", f"tracking.uri={uri}", f"tracking.artifact_root={root / 'artifacts'}",
         f"tracking.experiment={EXPERIMENT}", f"hydra.run.dir={run_dir}"],
        cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    (job,) = [r for r in client.search_runs([experiment.experiment_id]) if r.data.tags.get("genui.kind") == "job"]
    return {"root": root, "uri": uri, "run_dir": run_dir, "experiment": experiment, "job": job}


def test_the_job_runs_description_names_the_viewer_command_and_page(tracked: dict) -> None:
    note = tracked["job"].data.tags[viewer_link.NOTE_TAG]
    (viewer_id,) = Catalog.from_paths([tracked["run_dir"]]).runs  # the id the viewer really gives this run
    assert f"python -m runner.view {tracked['run_dir']}" in note
    assert f"/runs/{viewer_id}" in note
    description = tracked["experiment"].tags[viewer_link.NOTE_TAG]
    assert viewer_link.experiment_runs_path(tracked["experiment"].experiment_id).lstrip("/") in description
    assert json.loads(tracked["experiment"].tags[viewer_link.VIEW_TAG])["selectedColumns"]


def test_a_users_own_experiment_description_is_kept(tracked: dict) -> None:
    from runner.tracking.tracker import _describe_experiment

    client = MlflowClient(tracking_uri=tracked["uri"])
    experiment_id = client.create_experiment("described-by-a-user")
    client.set_experiment_tag(experiment_id, viewer_link.NOTE_TAG, "my notes")
    _describe_experiment(client, experiment_id)
    assert client.get_experiment(experiment_id).tags[viewer_link.NOTE_TAG] == "my notes"
    assert viewer_link.VIEW_TAG in client.get_experiment(experiment_id).tags  # its own key: always the runner's
    other = client.create_experiment("undescribed")
    _describe_experiment(client, other)
    assert client.get_experiment(other).tags[viewer_link.NOTE_TAG] == viewer_link.experiment_note(other)


@pytest.fixture
def mlflow_ui(tracked: dict) -> Iterator[str]:
    with mlflow_ui_server(tracked["uri"], tracked["root"] / "mlflow-ui.log") as url:
        yield url


def test_the_experiment_opens_on_its_runs_and_the_run_page_shows_the_viewer_note(tracked: dict, mlflow_ui: str,
                                                                                   tmp_path: Path) -> None:
    experiment_id = tracked["experiment"].experiment_id
    job = tracked["job"]
    (viewer_id,) = Catalog.from_paths([tracked["run_dir"]]).runs

    async def check() -> None:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                                       args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            try:
                page = await browser.new_page(viewport={"width": 1800, "height": 1000})
                page.set_default_timeout(60_000)
                # Opened plainly, MLflow 3.17 lands on the GenAI overview, which shows the description; its link leads
                # to the runs table (followed by its href: the overview's charts keep the header from settling).
                start = await browser.new_page(viewport={"width": 1800, "height": 1000})
                start.set_default_timeout(60_000)
                await start.goto(f"{mlflow_ui}/#/experiments/{experiment_id}")
                # (A guidance popover may cover the page as a modal dialog: the link is found by its markup.)
                link = start.locator("a[href*='workflowType=machine_learning']").filter(
                    has_text="open this experiment's runs table").first
                await link.wait_for(state="attached")
                href = await link.get_attribute("href")
                assert href is not None and href.startswith("#/") and await link.get_attribute("target") == "_blank"
                opened = await browser.new_page(viewport={"width": 1800, "height": 1000})  # a new tab, as it opens
                opened.set_default_timeout(60_000)
                await opened.goto(f"{mlflow_ui}/{href}")
                await _expect_runs_table(opened, job)
                # The path the runner documents opens there directly, in a fresh browser (no stored preference).
                context = await browser.new_context(viewport={"width": 1800, "height": 1000})
                page = await context.new_page()
                page.set_default_timeout(60_000)
                await page.goto(mlflow_ui + viewer_link.experiment_runs_path(experiment_id))
                row = await _expect_runs_table(page, job)
                await page.screenshot(path=str(tmp_path / "runs.png"))
                # The job run's page, opened from the table as a user does: its description tells how to view it.
                await row.locator("[col-id='attributes.`Run Name`'] a").first.click()
                await page.wait_for_url(f"**/runs/{job.info.run_id}**")
                await expect(page.get_by_text(f"python -m runner.view {tracked['run_dir']}").first).to_be_visible()
                await expect(page.get_by_text(f"/runs/{viewer_id}").first).to_be_visible()
                await page.screenshot(path=str(tmp_path / "run.png"))
            finally:
                await browser.close()

    asyncio.run(check())


async def _expect_runs_table(page: Page, job: Run) -> Locator:
    """The runs table is shown, with the job run's row (returned)."""
    await page.wait_for_url("**/experiments/*/runs?*")
    await page.get_by_text("matching runs").first.wait_for()
    rows = page.locator(f"[role=row][row-id='{job.info.run_id}']")  # the grid's pinned and scrolling parts
    await expect(rows.locator("[col-id='attributes.`Run Name`']")).to_contain_text(job.info.run_name, timeout=30_000)
    # Its metrics are columns (the shared view the link names), with the run's values.
    for name in ("turn_pass", "build_success_rate"):
        await expect(rows.locator(f"[col-id='metrics.`{name}`']")).to_have_text(f"{job.data.metrics[name]:g}",
                                                                                 timeout=30_000)
    return rows.first
