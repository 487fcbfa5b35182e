"""An episode's filmstrip, /runs/<run>/tasks/<task>: the task's turns left to right, each with the screenshot
that sums it up, its pass mark, failure bucket, dimension scores and prompt; a card opens the turn's detail."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runner.turns.records import TurnRecord
from runner.view.links import Links
from runner.view.pages import render, state
from runner.view.catalog import UnknownRun
from runner.view.turn_evidence import card_screenshot, error_line, first_line, mark, mark_class, task_entry, task_records, turn_prompt

router = APIRouter()


@dataclass
class Card:
    record: TurnRecord
    mark: str
    mark_class: str
    prompt: str
    screenshot: str
    dimensions: list[tuple[str, float | None]]
    error: str


@router.get("/runs/{run_id}/tasks/{task_id}", response_class=HTMLResponse)
def episode_page(request: Request, run_id: str, task_id: str) -> HTMLResponse:
    run = state(request).catalog.run(run_id)
    records = task_records(run, task_id)
    if not records:
        raise UnknownRun(f"run {run_id!r} has no task {task_id!r}")
    cards = [Card(record, mark(record), mark_class(record), first_line(turn_prompt(run.data, task_id, record.turn)),
                  card_screenshot(run, record),
                  [(name, d.score) for name, d in (record.verdict.dimensions.items() if record.verdict else [])],
                  error_line(record.error))
             for record in records]
    task = task_entry(run.data, task_id)
    tasks = sorted({r.task_id for r in run.data.records})
    position = tasks.index(task_id)
    return render(request, "episode.html", nav="runs", run=run, task_id=task_id, task=task, cards=cards,
                  links=Links(run.id), first=records[0], previous=tasks[position - 1] if position else None,
                  following=tasks[position + 1] if position + 1 < len(tasks) else None)
