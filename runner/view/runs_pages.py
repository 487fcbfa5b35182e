"""The runs list ("/"), the comparison of runs ("/compare/<a>+<b>[+...]"), the models and a model's profile
("/models", "/models/<model>"), the filtered turn lists ("/turns", "/runs/<run>") and the rows scripts they
read ("/data/rows.js", "/data/runs/<run>/rows.js").

The turn lists filter in the browser (static/lists.js) over the rows script, so one page works for a whole
sweep and from a static export; the server renders only the frame and the filter controls.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from runner.report.leaderboard import build_leaderboard, format_cell
from runner.report.task_set import describe_task_set
from runner.view.catalog import UnknownRun, ViewRun, url_id
from runner.view.compare import compare_all
from runner.view.figures import caption
from runner.view.headline import headline, run_facts
from runner.view.links import Links
from runner.view.pages import ViewState, render, state
from runner.view.profiles import model_ids, model_profile
from runner.view.rows import build_rows, outcome, read_human_labels, rows_script

router = APIRouter()
FACTS = ("model", "agent", "suite", "task set", "judge", "actor", "sandbox", "commit")


def run_summaries(runs: list[ViewRun]) -> tuple[list[str], list[dict[str, Any]]]:
    """(metric labels in first-seen order, one entry per run: id, facts, turns, tasks, metric label -> text)."""
    labels: list[str] = []
    entries = []
    for run in runs:
        metrics = headline(run.data)
        labels += [m.label for m in metrics if m.label not in labels]
        entries.append({"id": run.id, "label": run.data.label, **run_facts(run.data),
                        "model_id": url_id(run.data.model or "unknown"),
                        "turns": len(run.data.records), "tasks": len({r.task_id for r in run.data.records}),
                        "task_set_text": describe_task_set(run.data.summary.get("task_set")),
                        "metrics": {m.label: m.text for m in metrics}})
    return labels, entries


@router.get("/", response_class=HTMLResponse)
def runs_page(request: Request) -> HTMLResponse:
    labels, entries = run_summaries(list(state(request).catalog.runs.values()))
    return render(request, "runs.html", nav="runs", facts=FACTS, labels=labels, runs=entries)


@router.get("/compare/{ids}", response_class=HTMLResponse)
def compare_page(request: Request, ids: str) -> HTMLResponse:
    catalog = state(request).catalog
    chosen = list(dict.fromkeys(part for part in ids.split("+") if part))
    if len(chosen) < 2:
        raise UnknownRun("a comparison needs two or more runs: /compare/<run>+<run>")
    runs = [catalog.run(run_id) for run_id in chosen]
    labels, entries = run_summaries(runs)
    pairs = compare_all({run.id: run.data.records for run in runs})
    board = build_leaderboard([run.data for run in runs])
    tables = [(suite, table) for suite, suite_tables in board["suites"].items() for table in suite_tables]
    names = {run.id: run.data.label for run in runs}
    return render(request, "compare.html", nav="runs", facts=FACTS, labels=labels, runs=entries, pairs=pairs,
                  names=names, tables=tables, format_cell=format_cell)


@router.get("/models", response_class=HTMLResponse)
def models_page(request: Request) -> HTMLResponse:
    catalog = state(request).catalog
    models = []
    for model_id, runs in model_ids(catalog).items():
        labels, entries = run_summaries(runs)
        models.append({"id": model_id, "name": runs[0].data.model or model_id, "runs": entries, "labels": labels,
                       "suites": sorted({run.data.suite for run in runs})})
    return render(request, "models.html", nav="models", models=models)


@router.get("/models/{model_id}", response_class=HTMLResponse)
def model_page(request: Request, model_id: str) -> HTMLResponse:
    catalog = state(request).catalog
    profile = model_profile(catalog, model_id)
    # Every run of the suites this model ran, its own marked: the headline numbers next to the other models'.
    peers = [run for run in catalog.runs.values() if run.data.suite in {r.data.suite for r in profile["runs"]}]
    labels, entries = run_summaries(peers)
    mine = {run.id for run in profile["runs"]}
    figures = request.app.state.figures.names(model_id, [run.data for run in profile["runs"]])
    return render(request, "model.html", nav="models", profile=profile, format_cell=format_cell, facts=FACTS,
                  labels=labels, runs=[{**entry, "mine": entry["id"] in mine} for entry in entries],
                  figures=[{"name": name, "caption": caption(name)} for name in figures])


@router.get("/figures/{model_id}/{name}.png")
def figure(request: Request, model_id: str, name: str) -> FileResponse:
    path = request.app.state.figures.path(model_id, name)
    if path is None:
        raise UnknownRun(f"no figure {name!r} drawn for model {model_id!r} (open its page first)")
    return FileResponse(path, media_type="image/png")


def _filter_context(view: ViewState, run: ViewRun | None) -> dict[str, Any]:
    return {"rows_src": f"/data/runs/{run.id}/rows.js" if run is not None else "/data/rows.js",
            "has_labels": view.labels is not None}


@router.get("/turns", response_class=HTMLResponse)
def turns_page(request: Request) -> HTMLResponse:
    view = state(request)
    return render(request, "turns.html", nav="turns", run=None, **_filter_context(view, None))


def episodes_of(run: ViewRun) -> list[dict[str, Any]]:
    """The run's tasks in order, each with its turns' outcomes: links to every episode and turn rendered on the
    page itself (the filtered list is built by script; a static export follows these)."""
    episodes: dict[str, dict[str, Any]] = {}
    for record in run.data.records:
        episode = episodes.setdefault(record.task_id, {"task": record.task_id, "sub_suite": record.sub_suite, "turns": []})
        episode["turns"].append({"turn": record.turn, "outcome": outcome(record), "bucket": record.status.value})
    return list(episodes.values())


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: str) -> HTMLResponse:
    view = state(request)
    run = view.catalog.run(run_id)
    labels, entries = run_summaries([run])
    return render(request, "turns.html", nav="turns", run=entries[0], labels=labels, facts=FACTS,
                  episodes=episodes_of(run), links=Links(run.id), **_filter_context(view, run))


@lru_cache(maxsize=4)
def _labels_of(sample_dir: Path) -> dict[tuple[str, str, int], bool]:
    return read_human_labels(sample_dir)  # the folder is fixed when the viewer starts: read it once


def _human(request: Request) -> dict[tuple[str, str, int], bool]:
    labels = state(request).labels
    return {} if labels is None else _labels_of(labels)


def _script(text: str) -> Response:
    return Response(text, media_type="text/javascript; charset=utf-8", headers={"Cache-Control": "no-cache"})


@router.get("/data/rows.js")
def all_rows(request: Request) -> Response:
    return _script(rows_script(build_rows(state(request).catalog, _human(request))))


@router.get("/data/runs/{run_id}/rows.js")
def run_rows(request: Request, run_id: str) -> Response:
    return _script(rows_script(build_rows(state(request).catalog, _human(request), run_id)))
