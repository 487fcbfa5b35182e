"""One turn's detail, /runs/<run>/tasks/<task>/turns/<n>: the request and the answer, the page after load and
after the actor, the actor's steps, the verdict with what each requirement cites, the sources against the
previous turn, the logs, the runtime state and what the judge read (packet.json)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runner.view.pages import render, state
from runner.view.links import Links
from runner.view.turn_evidence import load_turn, mark, mark_class, task_entry, task_records

router = APIRouter()


@router.get("/runs/{run_id}/tasks/{task_id}/turns/{turn}", response_class=HTMLResponse)
def turn_page(request: Request, run_id: str, task_id: str, turn: int) -> HTMLResponse:
    catalog = state(request).catalog
    record = catalog.record(run_id, task_id, turn)
    run = catalog.run(run_id)
    turns = [r.turn for r in task_records(run, task_id)]
    position = turns.index(turn)
    previous = turns[position - 1] if position > 0 else None
    following = turns[position + 1] if position + 1 < len(turns) else None
    return render(request, "turn.html", nav="runs", run=run, task=task_entry(run.data, task_id), ev=load_turn(run, record),
                  record=record, mark=mark(record), mark_class=mark_class(record), links=Links(run.id),
                  previous=previous, following=following, turns=turns)
