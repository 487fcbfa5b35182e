"""FlowEval flows: a task's goal text plus, optionally, a declarative reference flow for actor=scripted.

A flow run is one actor episode on a freshly loaded page; its trace follows the convention every flow actor
shares (FlowEval §3.2 "traces"): `TraceStep.screenshot_before` is the screenshot at that step,
`TraceStep.observation` the page's visible text at that moment, `TraceStep.action` the action taken, and
`Trace.summary["final_screenshot"]` / `["final_text"]` the page after the last action.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runner.actors.base import Actor, ActorContext
from runner.actors.flow_text import EXCLUDE_REGIONS_KEY
from runner.actors.scripted import FLOW_STEPS_KEY
from runner.browser.launch import BrowserPools
from runner.turns.evidence import Evidence, Trace
from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.checks import Step
from runner.sandbox.base import Sandbox
from runner.turns.tasks import Task, TurnSpec

FLOW_KEY = FLOW_STEPS_KEY  # the TurnSpec.extra key the scripted actor replays
FLOW_TRACES_DIR = "flows"


class FlowSpec(BaseModel):
    """One flow task of a site: its goal (what a CUA is asked) and its scripted reference steps."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    goal: str = Field(min_length=1)
    steps: list[Step] = Field(default_factory=list)  # empty: no scripted reference (a CUA only)


def flow_turn(turn: TurnSpec, flow: FlowSpec) -> TurnSpec:
    """The turn an actor sees for one flow: the goal as its prompt, the scripted steps in `extra`."""
    return turn.model_copy(update={
        "prompt": flow.goal,
        "requirements": [],
        "extra": {**turn.extra, FLOW_KEY: [step.model_dump(mode="json", exclude_none=True) for step in flow.steps]},
    })


def flow_run_dir(root: Path, flow_id: str, run: int) -> Path:
    return root / FLOW_TRACES_DIR / flow_id / f"run_{run}"


async def record_flow_traces(actor: Actor, browsers: BrowserPools, sandbox: Sandbox, site_dir: Path, *, task: Task,
                             turn: TurnSpec, flows: list[FlowSpec], runs: int, out_dir: Path,
                             exclude_regions: list[str] | None = None) -> dict[str, list[str]]:
    """Serve the built site in `site_dir` and run every flow `runs` times on it, each from a freshly loaded
    page in a fresh browser context (FlowEval §3.2: a new browser per trace capture). `exclude_regions`: CSS
    selectors whose text the actor records beside each state (runner/actors/flow_text.py).

    Every run is a visit of its own (its own context and artifact server, on the browser the run's visits share),
    all at once within the run's `concurrency.visits`: a computer-use agent's runs wait on its model server, which
    batches them. Returns flow id -> the trace.json paths, one per run, in run order.
    """

    async def one_run(flow: FlowSpec, run: int) -> str:
        run_dir = flow_run_dir(out_dir, flow.id, run)
        run_dir.mkdir(parents=True, exist_ok=True)
        async with browsers.checkout() as pool:
            async with sandbox.serve(site_dir, network=pool.network_namespace) as served:
                async with pool.session(served.url) as session:
                    await session.goto()
                    context = ActorContext(task=task, turn=flow_turn(turn, flow), evidence=Evidence(url=served.url),
                                           out_dir=run_dir, goal=flow.goal,
                                           extra={"flow": flow.id, "run": run,
                                                  EXCLUDE_REGIONS_KEY: list(exclude_regions or [])})
                    await actor.act(session, context)  # the actor writes run_dir/trace.json
        return str(run_dir / EvidenceFolder.TRACE)

    pairs = [(flow, run) for flow in flows for run in range(1, runs + 1)]
    async with asyncio.TaskGroup() as group:  # one run failing cancels the others, as the slot fails
        traces = [group.create_task(one_run(flow, run)) for flow, run in pairs]
    paths: dict[str, list[str]] = {flow.id: [] for flow in flows}
    for (flow, _), trace in zip(pairs, traces):
        paths[flow.id].append(trace.result())
    return paths


def load_trace(path: Path) -> dict[str, Any]:
    """A flow trace as saved (Trace.to_json)."""
    import json

    return json.loads(Path(path).read_text())


__all__ = ["FLOW_KEY", "FlowSpec", "Trace", "flow_turn", "load_trace", "record_flow_traces"]
