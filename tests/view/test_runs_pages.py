"""The runs list, the comparison, the turn lists and a model page in real Chromium over real runs (view_runs:
oracle and null on smoke-counter, the mixed probe run). Each test saves its page's screenshot for the docs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from tests.view.conftest import SCREENSHOTS, chromium, viewer

pytestmark = [pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox, pytest.mark.slow]


def _ids(view_runs: dict[str, Path]) -> dict[str, str]:
    """name (oracle, null, mixed) -> the viewer's run id, found from each run dir's name in the id."""
    from runner.view.catalog import Catalog

    catalog = Catalog.from_paths([view_runs[name] for name in ("oracle", "null", "mixed")])
    found = {}
    for run_id, run in catalog.runs.items():
        assert run.path is not None
        found[run.path.name] = run_id
    return found


async def _shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    await page.evaluate("window.scrollTo(0, 0)")  # the sticky top bar stays at the top of a full-page shot
    await page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def test_runs_list_and_compare_two_runs(view_runs: dict[str, Path]) -> None:
    ids = _ids(view_runs)

    async def scenario(url: str) -> None:
        async with chromium() as browser:
            page = await browser.new_page(viewport={"width": 1400, "height": 700})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            # A CSP refusal is a console error; a missing script or style a failed response (the favicon aside).
            page.on("console", lambda message: errors.append(message.text)
                    if message.type == "error" and "Failed to load resource" not in message.text else None)
            page.on("response", lambda response: errors.append(f"{response.status} {response.url}")
                    if response.status >= 400 and not response.url.endswith("/favicon.ico") else None)
            await page.goto(url + "/")
            rows = page.locator("#runs tbody tr")
            await expect(rows).to_have_count(3)
            models = await page.locator("#runs tbody td.fact-model").all_inner_texts()
            assert sorted(models) == ["null", "oracle", "oracle"]
            oracle_row = page.locator(f'#runs tbody tr[data-run="{ids["oracle"]}"]')
            assert "100.0 [100.0, 100.0]" in await oracle_row.inner_text()  # turn pass with its interval
            assert await oracle_row.locator("td.fact-commit").inner_text() != ""
            # What each run measured: the project's own smoke task, and files given elsewhere (the probe task)
            sets = await page.locator("#runs tbody td.fact-task-set").all_inner_texts()
            assert sorted(sets) == ["local 1", "project 1", "project 1"]
            compare = page.locator("#compare")
            await expect(compare).to_be_disabled()
            await oracle_row.locator("input.pick").check()
            await expect(compare).to_be_disabled()  # one run is no comparison
            await page.locator(f'#runs tbody tr[data-run="{ids["null"]}"] input.pick').check()
            await _shot(page, "runs.png")
            await compare.click()
            await page.wait_for_url(f"**/compare/{ids['oracle']}+{ids['null']}")
            await expect(page.locator("#side-by-side tbody tr")).to_have_count(2)
            pair = page.locator(".pair")
            await expect(pair).to_have_count(1)
            await expect(pair.locator(".matched")).to_have_text("1 matched task.")
            diff = pair.locator('tr.diff[data-metric="task pass rate"]')
            assert await diff.get_attribute("data-mean") == "1.000000"  # oracle passes every turn, null none
            assert "[+100.0, +100.0]" in await diff.inner_text()
            await _shot(page, "compare.png")
            # Runs without a common task say so.
            await page.goto(f"{url}/compare/{ids['oracle']}+{ids['mixed']}")
            await expect(page.locator(".pair .no-match")).to_have_count(1)
            await page.goto(f"{url}/runs/{ids['mixed']}")  # a run's page names its task set in full
            await expect(page.locator("p.task-set")).to_contain_text("task set: local (")
            await expect(page.locator("p.task-set")).to_contain_text("1 task(s); no paper set")
            assert errors == []

    with viewer([view_runs[name] for name in ("oracle", "null", "mixed")]) as url:
        asyncio.run(scenario(url))


def test_a_filter_narrows_the_turns_and_survives_a_reload(view_runs: dict[str, Path]) -> None:
    ids = _ids(view_runs)

    async def scenario(url: str) -> None:
        async with chromium() as browser:
            page = await browser.new_page(viewport={"width": 1400, "height": 600})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(url + "/turns")
            count = page.locator("#count")
            await expect(count).to_have_text("9 of 9 turns")
            await expect(page.locator("#turns tbody tr")).to_have_count(9)
            await page.select_option("select[data-filter=bucket]", "build_failed")
            await expect(count).to_have_text("1 of 9 turns")
            row = page.locator("#turns tbody tr")
            await expect(row).to_have_count(1)
            assert await row.get_attribute("data-run") == ids["mixed"]
            assert await row.get_attribute("data-turn") == "3"
            detail = f"/runs/{ids['mixed']}/tasks/viewer-probe/turns/3"
            assert await row.locator(f'a[href="{detail}"]').count() == 1
            assert await row.locator(f'a[href="/runs/{ids["mixed"]}/tasks/viewer-probe"]').count() >= 1
            assert "bucket=build_failed" in page.url
            await page.reload()
            await expect(count).to_have_text("1 of 9 turns")
            assert await page.locator("select[data-filter=bucket]").input_value() == "build_failed"
            # A second filter narrows further; a linked hash is the same list.
            await page.select_option("select[data-filter=outcome]", "pass")
            await expect(count).to_have_text("0 of 9 turns")
            await page.goto(url + "/turns#bucket=ok&outcome=fail")
            await expect(count).to_have_text("1 of 9 turns")  # mixed turn 2: built, and failed its requirement
            assert await page.locator("select[data-filter=outcome]").input_value() == "fail"
            await page.goto(url + "/turns#bucket=build_failed")
            await expect(count).to_have_text("1 of 9 turns")
            await _shot(page, "turns-filtered.png")
            # One run's list reads that run's rows only.
            await page.goto(f"{url}/runs/{ids['null']}")
            await expect(count).to_have_text("3 of 3 turns")
            await page.select_option("select[data-filter=bucket]", "blocked")
            await expect(count).to_have_text("2 of 3 turns")
            assert errors == []

    with viewer([view_runs[name] for name in ("oracle", "null", "mixed")]) as url:
        asyncio.run(scenario(url))


def test_a_model_page_draws_its_plots(view_runs: dict[str, Path]) -> None:
    async def scenario(url: str) -> None:
        async with chromium() as browser:
            page = await browser.new_page(viewport={"width": 1400, "height": 800})
            await page.goto(url + "/models")
            await expect(page.locator(".model-card")).to_have_count(2)
            await page.locator('.model-card[data-model="oracle"] h2 a').click()
            await page.wait_for_url("**/models/oracle")
            chart = page.locator("svg.chart").first
            await expect(chart).to_be_visible()
            oracle = chart.locator('circle.point[data-series="oracle / rules / probe (oracle)"]')
            await expect(oracle).to_have_count(3)
            assert await oracle.evaluate_all("points => points.map(p => p.dataset.value)") == ["1.0000"] * 3
            mixed = chart.locator('circle.point[data-series="oracle / rules / probe (mixed)"]')
            assert await mixed.evaluate_all("points => points.map(p => p.dataset.value)") == ["1.0000", "0.0000", "0.0000"]
            # null is the other model on smoke: drawn beside oracle's lines
            assert await chart.locator('circle.point[data-series="null / rules / probe"]').count() == 3
            buckets = page.locator('svg.chart[aria-label="Turns by failure bucket"] rect.segment')
            assert await buckets.locator('xpath=self::*[@data-category="build_failed"]').count() == 1
            await expect(page.locator("tr.mine").first).to_be_visible()  # its rows in the leaderboard tables
            headline = page.locator("#headline tbody tr")
            await expect(headline).to_have_count(3)  # its two runs and null's, which ran the same suite
            await expect(page.locator("#headline tbody tr.mine")).to_have_count(2)
            # the report's own figures (EvoGenUI-Bench Fig. 3b over this model's runs), drawn by the suite's code
            figure = page.locator('#paper-figures img[src="/figures/oracle/pass_by_turn.png"]')
            await figure.scroll_into_view_if_needed()
            await expect(figure).to_be_visible()
            await page.wait_for_function("img => img.complete && img.naturalWidth > 100", arg=await figure.element_handle())
            await _shot(page, "model.png")

    with viewer([view_runs[name] for name in ("oracle", "null", "mixed")]) as url:
        asyncio.run(scenario(url))


def test_turns_are_paged_at_100_rows_with_the_page_in_the_hash(tmp_path: Path) -> None:
    from bench.viewer import write_sweep

    paths = write_sweep(tmp_path, runs=2, tasks=60, turns=2)  # 240 turns: three pages

    async def scenario(url: str) -> None:
        async with chromium() as browser:
            page = await browser.new_page()
            await page.goto(url + "/turns")
            count = page.locator("#count")
            await expect(count).to_have_text("240 of 240 turns · page 1 of 3")
            await expect(page.locator("#turns tbody tr")).to_have_count(100)
            await page.locator('#pager button[data-page="3"]').first.click()
            await expect(count).to_have_text("240 of 240 turns · page 3 of 3")
            await expect(page.locator("#turns tbody tr")).to_have_count(40)
            assert page.url.endswith("#page=3")
            await page.reload()
            await expect(page.locator("#turns tbody tr")).to_have_count(40)
            await page.select_option("select[data-filter=turn]", "2")  # a new filter starts at its first page
            await expect(count).to_have_text("120 of 240 turns · page 1 of 2")
            turns = await page.locator("#turns tbody tr").evaluate_all("rows => rows.map(r => r.dataset.turn)")
            assert set(turns) == {"2"} and len(turns) == 100

    with viewer(paths) as url:
        asyncio.run(scenario(url))


def test_the_judge_disagreeing_with_people_is_a_filter(view_runs: dict[str, Path], tmp_path: Path) -> None:
    from runner.view.app import ViewState, create_app, serve
    from runner.view.catalog import Catalog

    ids = _ids(view_runs)
    sample = tmp_path / "sample"
    sample.mkdir()
    key = [{"item": f"s-{turn}", "run_dir": str(view_runs["mixed"]), "task_id": "viewer-probe", "turn": turn,
            "model": "oracle", "suite": "smoke", "judge": "rules", "judge_passed": None} for turn in (1, 2)]
    labels = [{"item": "s-1", "task_id": "viewer-probe", "turn": 1, "annotator": name, "passed": False}
              for name in ("ann1", "ann2")]  # the judge passed turn 1; both people fail it
    labels.append({"item": "s-2", "task_id": "viewer-probe", "turn": 2, "annotator": "ann1", "passed": False})
    (sample / "key.jsonl").write_text("".join(json.dumps(line) + "\n" for line in key))
    (sample / "labels.jsonl").write_text("".join(json.dumps(line) + "\n" for line in labels))
    catalog = Catalog.from_paths([view_runs[name] for name in ("oracle", "null", "mixed")])

    async def scenario(url: str) -> None:
        async with chromium() as browser:
            page = await browser.new_page()
            await page.goto(url + "/turns#disagree=yes")
            await expect(page.locator("#count")).to_have_text("1 of 9 turns")
            row = page.locator("#turns tbody tr")
            assert (await row.get_attribute("data-run"), await row.get_attribute("data-turn")) == (ids["mixed"], "1")
            assert "fail (disagrees)" in await row.inner_text()
            await page.select_option("select[data-filter=disagree]", "labelled")
            await expect(page.locator("#count")).to_have_text("2 of 9 turns")

    with serve(create_app(ViewState(catalog, labels=sample))) as url:
        asyncio.run(scenario(url))
