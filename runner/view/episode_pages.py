"""An episode's filmstrip, /runs/<run>/tasks/<task>: the task's turns left to right, each with the screenshot
that sums it up, its pass mark, failure bucket, dimension scores and prompt; a card opens the turn's detail."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runner.turns.records import TurnRecord
from runner.view.pages import render, state
from runner.view.catalog import UnknownRun
from runner.view.turn_evidence import card_screenshot, error_line, first_line, mark, mark_class, task_entry, task_records, turn_prompt

router = APIRouter()


class Links:
    """The URLs of one run's pages and files (plain absolute paths; each segment quoted)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    def run(self) -> str:
        return f"/runs/{quote(self.run_id, safe='')}"

    def episode(self, task_id: str) -> str:
        return f"{self.run()}/tasks/{quote(task_id, safe='')}"

    def turn(self, task_id: str, turn: int) -> str:
        return f"{self.episode(task_id)}/turns/{turn}"

    def file(self, path: str) -> str:
        return f"/files/{quote(self.run_id, safe='')}/{quote(path)}"

    def thumb(self, path: str, width: int = 320) -> str:
        return f"/thumbs/{width}/{quote(self.run_id, safe='')}/{quote(path)}"


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
