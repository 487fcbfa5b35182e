"""The viewer's turn list on a large sweep: time to the first page of rows, and to apply a filter.

    .venv/bin/python bench/viewer.py [--runs 4] [--tasks 250] [--turns 3] [--repeats 3] [--keep DIR]

Writes a synthetic sweep of run dirs that look like real ones (config.yaml, turns.jsonl of TurnRecords with
verdicts and failure mechanisms, summary.json with the shared episode metrics and their bootstrap CIs,
lineage.json, tasks.json, a small screenshot.png per turn), serves the viewer over it (python -m runner.view's
app), opens /turns in real Chromium and measures, in one run:
- first rows: from navigation start until the first page of 100 rows is in the table (the rows script of the
  whole sweep fetched, parsed, filtered and rendered);
- filter: from choosing bucket = build_failed until the count and the rows show the filtered list.
Prints the median of `--repeats` fresh page loads, each against its target (first rows < 2 s, filter
< 0.5 s) as a ratio (below 1: within target).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner.metrics.basic import basic_summary  # noqa: E402
from runner.metrics.reliability import summarize as reliability_summary  # noqa: E402
from runner.turns.records import FailureBucket, TurnRecord, Verdict  # noqa: E402

FIRST_ROWS_TARGET_S = 2.0
FILTER_TARGET_S = 0.5
MODELS = ("qwen2.5-coder-32b", "llama-3.3-70b", "gpt-4o-mini", "deepseek-v3", "mistral-large", "gemma-2-27b")
SUB_SUITES = ("presentation", "interaction", "tool_grounded")
MECHANISMS = ("spec_omission", "state_regression", "interaction_failure", "tool_misuse", "render_defect")
FAILING = (FailureBucket.BUILD_FAILED, FailureBucket.RUNTIME_ERROR, FailureBucket.INVALID_OUTPUT)


def _png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 40), (230, 236, 245)).save(buffer, "PNG")
    return buffer.getvalue()


def _records(model: str, tasks: int, turns: int, rng: random.Random) -> list[TurnRecord]:
    skill = rng.uniform(0.35, 0.8)
    records = []
    for t in range(tasks):
        task_id, sub_suite = f"task-{t:04d}", SUB_SUITES[t % len(SUB_SUITES)]
        blocked = False
        for turn in range(1, turns + 1):
            if blocked:
                status, passed = FailureBucket.BLOCKED, False
            elif rng.random() < 0.08:
                status, passed = rng.choice(FAILING), False
                blocked = status is not FailureBucket.RUNTIME_ERROR
            else:
                status, passed = FailureBucket.OK, rng.random() < skill
            mechanism = None if passed or status is FailureBucket.BLOCKED else rng.choice(MECHANISMS)
            verdict = None if status is FailureBucket.BLOCKED else Verdict(judge="rules", passed=passed, mechanism=mechanism)
            records.append(TurnRecord(
                task_id=task_id, suite="evogenui", sub_suite=sub_suite, turn=turn, status=status, passed=passed,
                model_responded=status is not FailureBucket.BLOCKED, verdict=verdict,
                scores={"interaction_rate": round(rng.random(), 3)}, evidence_dir=f"evidence/{task_id}/{turn}",
                model=model, judge="rules", actor="probe",
                extra={"build_status": "failed" if status is FailureBucket.BUILD_FAILED else "ok"}))
    return records


def write_sweep(root: Path, *, runs: int = 4, tasks: int = 250, turns: int = 3, seed: int = 0) -> list[Path]:
    """`runs` run dirs under root, one model each, over the same tasks; returns their paths."""
    rng = random.Random(seed)
    png = _png()
    paths = []
    for index in range(runs):
        model = MODELS[index % len(MODELS)] + ("" if index < len(MODELS) else f"-{index}")
        path = root / f"run-{index:02d}-{model}"
        path.mkdir(parents=True, exist_ok=True)
        records = _records(model, tasks, turns, rng)
        (path / "turns.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
        (path / "config.yaml").write_text(
            f"model:\n  name: {model}\n  provider: openai\nsuite:\n  name: evogenui\njudge:\n  name: rules\n"
            "actor:\n  name: probe\nsandbox:\n  name: docker\n")
        summary = basic_summary(records, requested_slots=tasks * turns)
        summary["reliability"] = reliability_summary(
            records, turns, requested_tasks={r.task_id: r.sub_suite for r in records}, n_resamples=200)
        summary["run"] = {"model": model, "suite": "evogenui", "judge": "rules", "actor": "probe",
                          "sandbox": "docker", "tasks": tasks}
        (path / "summary.json").write_text(json.dumps(summary))
        (path / "lineage.json").write_text(json.dumps({"git_commit": "0123456789abcdef", "git_dirty": "false"}))
        library = [{"id": f"task-{t:04d}", "suite": "evogenui", "sub_suite": SUB_SUITES[t % len(SUB_SUITES)],
                    "title": f"Synthetic task {t}", "domain": "", "tools": [],
                    "turns": [{"index": n, "prompt": f"Turn {n}"} for n in range(1, turns + 1)]} for t in range(tasks)]
        (path / "tasks.json").write_text(json.dumps(library))
        for record in records:
            folder = path / record.evidence_dir
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "screenshot.png").write_bytes(png)
        paths.append(path)
    return paths


async def _measure(url: str, repeats: int) -> tuple[list[float], list[float], int, int]:
    from playwright.async_api import async_playwright

    from runner.browser.launch import BrowserSettings

    settings = BrowserSettings()
    first, filtering = [], []
    total = shown = 0
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=settings.executable_path, args=settings.launch_args)
        try:
            for _ in range(repeats):
                page = await browser.new_page()
                await page.goto(url + "/turns", wait_until="commit")
                await page.wait_for_selector("#turns tbody tr")
                # navigationStart -> now, measured by the page itself: includes the rows script's load and parse.
                first.append(await page.evaluate("() => performance.now()") / 1000)
                total = int(await page.evaluate("() => window.GENUI_ROWS.length"))
                start = time.perf_counter()
                await page.select_option("select[data-filter=bucket]", "build_failed")
                await page.wait_for_function("() => document.getElementById('count').textContent.indexOf(' of ') > 0"
                                             " && !document.getElementById('count').textContent.startsWith("
                                             "String(window.GENUI_ROWS.length) + ' of')")
                filtering.append(time.perf_counter() - start)
                shown = int(await page.evaluate("() => document.querySelectorAll('#turns tbody tr').length"))
                await page.close()
        finally:
            await browser.close()
    return first, filtering, total, shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=250)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the sweep here and keep it (default: a temp dir)")
    args = parser.parse_args(argv)

    from runner.view.app import ViewState, create_app, serve
    from runner.view.catalog import Catalog

    with tempfile.TemporaryDirectory(prefix="viewer-bench-") as scratch:
        root = args.keep or Path(scratch)
        began = time.perf_counter()
        paths = write_sweep(root, runs=args.runs, tasks=args.tasks, turns=args.turns)
        written = time.perf_counter() - began
        began = time.perf_counter()
        catalog = Catalog.from_paths(paths)
        loaded = time.perf_counter() - began
        turns = sum(len(run.data.records) for run in catalog.runs.values())
        print(f"sweep: {len(paths)} runs x {args.tasks} tasks x {args.turns} turns = {turns} turns "
              f"(written in {written:.2f} s, loaded in {loaded:.2f} s) under {root}")
        with serve(create_app(ViewState(catalog))) as url:
            first, filtering, total, shown = asyncio.run(_measure(url, args.repeats))
    first_s, filter_s = statistics.median(first), statistics.median(filtering)
    print(f"rows in the page: {total}; rows shown after the filter (bucket = build_failed, first page): {shown}")
    print(f"first page of rows: {first_s:.3f} s (median of {len(first)}; target {FIRST_ROWS_TARGET_S} s; "
          f"ratio {first_s / FIRST_ROWS_TARGET_S:.2f})")
    print(f"apply a filter:     {filter_s:.3f} s (median of {len(filtering)}; target {FILTER_TARGET_S} s; "
          f"ratio {filter_s / FILTER_TARGET_S:.2f})")
    ok = first_s < FIRST_ROWS_TARGET_S and filter_s < FILTER_TARGET_S
    print("within targets" if ok else "OVER TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
