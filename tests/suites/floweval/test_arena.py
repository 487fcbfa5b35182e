"""The arena page (FlowEval §4, the viewer app's arena mode): pairs of sites for one prompt from two models, blind,
recorded, resumable. (Keyboard-only voting and skips: tests/view/test_modes.py.)"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from runner.browser.launch import BrowserPool, BrowserSettings
from runner.errors import ConfigError
from runner.suites.floweval.pair_labels import read_labels
from runner.turns.records import FailureBucket, RunDirectory, TurnRecord
from runner.suites.floweval.arena.queue import Arena, build_pairs
from runner.suites.floweval.arena.server import SiteServers
from runner.suites.floweval.arena.sites import collect_sites
from runner.suites.floweval.arena.view_mode import ArenaMode
from runner.view.app import ViewState, create_app, serve
from runner.view.catalog import Catalog

PROMPTS = {"shop": "Corner Shop: an online grocery store", "mail": "Quick Mail: a web mail client",
           "booking": "StayNow: a hotel booking site"}
SITE = """<!doctype html><html><body><h1 id="title">{label}</h1><script>
localStorage.setItem('visits', String(Number(localStorage.getItem('visits') || 0) + 1));
document.body.insertAdjacentHTML('beforeend', '<p id="visits">' + localStorage.getItem('visits') + '</p>');
</script></body></html>"""


def _run_dir(root: Path, model: str, *, with_site: bool = True) -> Path:
    """A run dir by hand: config.yaml, turns.jsonl, tasks.json and one built site per prompt."""
    run = RunDirectory(root / model)
    (run.path / RunDirectory.CONFIG).write_text(yaml.safe_dump({"model": {"name": model}}))
    library = []
    for task, prompt in PROMPTS.items():
        evidence = run.evidence_dir(task, 1)
        if with_site:
            (evidence / "site").mkdir()
            (evidence / "site" / "index.html").write_text(SITE.format(label=f"{task} by {model}"))
        run.append(TurnRecord(task_id=task, suite="floweval", turn=1, status=FailureBucket.OK, passed=None,
                              evidence_dir=str(evidence.relative_to(run.path)), model=model if model != "m-two" else ""))
        library.append({"id": task, "title": prompt.split(":")[0],
                        "turns": [{"index": 1, "prompt": prompt}]})
    (run.path / "tasks.json").write_text(json.dumps(library))
    return run.path


@pytest.fixture
def run_dirs(tmp_path: Path) -> list[Path]:
    return [_run_dir(tmp_path, "m-one"), _run_dir(tmp_path, "m-two")]


def test_sites_models_and_descriptions(run_dirs: list[Path], tmp_path: Path) -> None:
    sites = collect_sites(run_dirs)
    assert len(sites) == 6
    assert {s.model for s in sites} == {"m-one", "m-two"}, "m-two's records leave model empty: config.yaml names it"
    assert {s.description for s in sites if s.task_id == "mail"} == {PROMPTS["mail"]}
    assert collect_sites([_run_dir(tmp_path / "x", "m-three", with_site=False)]) == []
    with pytest.raises(ConfigError, match="not a run directory"):
        collect_sites([tmp_path])


def test_pairs_are_seeded_cross_model_and_resume(run_dirs: list[Path], tmp_path: Path) -> None:
    sites = collect_sites(run_dirs)
    pairs = build_pairs(sites, seed=3)
    assert len(pairs) == 3 and all(p.left.model != p.right.model and p.left.task_id == p.right.task_id for p in pairs)
    assert [p.token for p in pairs] == [p.token for p in build_pairs(sites, seed=3)]
    sides = {tuple(p.left.model for p in build_pairs(sites, seed=s)) for s in range(20)}
    assert len(sides) > 1, "the A/B sides vary with the seed"
    labels = tmp_path / "labels.jsonl"
    arena = Arena(pairs, labels, "r1")
    first = arena.next_pair()
    assert first is pairs[0]
    label = arena.decide(first.token, "a")
    assert (label.model_a, label.site_a) == (first.left.model, first.left.site_id)
    with pytest.raises(ValueError, match="already decided"):
        arena.decide(first.token, "b")
    again = Arena(pairs, labels, "r1")
    assert again.decided == 1 and again.next_pair() is pairs[1]
    assert Arena(pairs, labels, "r2").next_pair() is pairs[0], "another rater starts from the beginning"


@contextmanager
def serve_arena(arena: Arena) -> Iterator[tuple[str, ArenaMode]]:
    """The viewer app with only the arena mode (as `python -m runner.arena` starts it); yields the page's URL."""
    mode = ArenaMode(arena, SiteServers())
    try:
        with serve(create_app(ViewState(Catalog([]), modes={mode.name: mode}))) as url:
            yield f"{url}/{mode.name}", mode
    finally:
        mode.close()


@pytest.mark.browser
def test_three_decisions_in_a_real_browser_then_resume(run_dirs: list[Path], tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    pairs = build_pairs(collect_sites(run_dirs), seed=0)
    picks = ["a", "tie", "b"]
    texts = {"a": "A is better", "b": "B is better", "tie": "Tie"}

    async def rate(pool: BrowserPool, url: str, mode: ArenaMode, decisions: list[str]) -> list[str]:
        origins = [mode.sites.url(site).rstrip("/") for pair in pairs for site in (pair.left, pair.right)]
        seen = []
        async with pool.session(url, extra_origins=origins) as session:
            await session.goto()
            page = session.page
            for decision in decisions:
                header = await page.locator("header.task").inner_text()
                body = await page.locator("body").inner_text()
                assert "m-one" not in body and "m-two" not in body, "models blinded"
                assert "m-one" not in await page.content() and str(tmp_path) not in await page.content(), \
                    "no model name or run dir even in the page's source (the form's pair token is opaque)"
                frame_a = page.frame_locator("iframe[name=site-A]")
                frame_b = page.frame_locator("iframe[name=site-B]")
                title_a = await frame_a.locator("#title").inner_text()
                title_b = await frame_b.locator("#title").inner_text()
                assert title_a.split(" by ")[0] == title_b.split(" by ")[0], "the same prompt"
                # each site on its own origin: its own localStorage, so each counts its first visit
                assert await frame_a.locator("#visits").inner_text() == "1"
                assert await frame_b.locator("#visits").inner_text() == "1"
                seen.append(header)
                # the page's own script runs under its Content-Security-Policy (no inline script)
                await page.get_by_role("button", name="Expand").first.click()
                assert "expanded" in (await page.locator("#pane-A").get_attribute("class") or "")
                await page.get_by_role("button", name=texts[decision]).click()
                await page.wait_for_load_state()
            return seen + [await page.locator("body").inner_text()]

    async def main() -> tuple[list[str], int, list[str]]:
        async with BrowserPool(BrowserSettings(settle_ms=50)) as pool:
            with serve_arena(Arena(pairs, labels, "r1")) as (url, mode):
                first = await rate(pool, url, mode, picks[:2])
            stored = len(read_labels(labels))
            with serve_arena(Arena(pairs, labels, "r1")) as (url, mode):  # a restart resumes with the third pair
                second = await rate(pool, url, mode, picks[2:])
        return first, stored, second

    first, stored, second = asyncio.run(main())
    assert PROMPTS[pairs[0].left.task_id] in first[0], "the description is shown"
    assert "0 of 3" in first[0] and "1 of 3" in first[1]
    assert stored == 2
    assert "2 of 3" in second[0] and PROMPTS[pairs[2].left.task_id] in second[0]
    assert "All done" in second[-1]

    recorded = read_labels(labels)
    assert [x.winner for x in recorded] == picks
    assert [(x.prompt_id, x.model_a, x.model_b) for x in recorded] == [
        (p.left.task_id, p.left.model, p.right.model) for p in pairs]
    assert {x.rater for x in recorded} == {"r1"} and all(x.decided_at for x in recorded)


def test_the_mode_refuses_bad_votes_and_skips_without_writing(run_dirs: list[Path], tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    labels = tmp_path / "labels.jsonl"
    pairs = build_pairs(collect_sites(run_dirs), seed=0)
    arena = Arena(pairs, labels, "r1")
    with serve_arena(arena) as (_, mode):
        client = TestClient(create_app(ViewState(Catalog([]), modes={mode.name: mode})))
        page = client.get("/arena")
        assert "frame-src http://127.0.0.1:*" in page.headers["content-security-policy"]
        assert pairs[0].token in page.text and "m-one" not in page.text
        assert client.post("/arena/decide", data={"pair": pairs[0].token, "winner": "left"}).status_code == 400
        assert client.post("/arena/decide", data={"pair": "nope", "winner": "a"}).status_code == 400
        skipped = client.post("/arena/skip", data={"pair": pairs[0].token}, follow_redirects=False)
        assert skipped.status_code == 303 and not labels.exists(), "a skip writes nothing"
        assert arena.next_pair() is pairs[1], "the skipped pair goes to the back"
        for pair in pairs[1:]:
            assert client.post("/arena/decide", data={"pair": pair.token, "winner": "tie"},
                               follow_redirects=False).status_code == 303
        assert arena.next_pair() is pairs[0], "only the skipped pair is left"
    assert Arena(pairs, labels, "r1").next_pair() is pairs[0]


def test_cli_refuses_run_dirs_without_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from runner.suites.floweval.arena.command import main

    assert main([str(_run_dir(tmp_path, "m-one"))]) == 2
    assert "no prompt has built sites from two different models" in capsys.readouterr().err
    assert main([str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
