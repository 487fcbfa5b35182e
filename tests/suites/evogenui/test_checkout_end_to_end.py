"""A checkout laid out like EvoGenUI-Bench, through the command line: a scripted model writes the app the
benchmark's way (`assistant_text:` + `#### \\`src/App.tsx\\``, `callTool` from './genui/toolClient'), it builds
in the benchmark scaffold, its tool calls reach the checkout's backend in the sandboxed artifact server,
and the scenario state carries across five turns (local sandbox, and Docker with the docker marker)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.suites.evogenui.test_checkout import FIXTURE, STAND_IN_ACTOR, STAND_IN_GENERATOR, TOOL_TASK
from tests.support.fault_server import FaultServer, completion
from tests.test_main import _records, _run

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build]

APP = """import { useEffect, useState } from 'react'
import { callTool } from './genui/toolClient'

type Item = { sku: string; count: number }
const LEDGER = 'pantry_ledger_12'

export default function App() {
  const [items, setItems] = useState<Item[] | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    (async () => {
      try {
        await callTool('pantry_restock', { ledger_id: LEDGER, sku: 'turn-TURN', count: TURN })
        const stock = await callTool<{ items: Item[] }>('pantry_get_stock', { ledger_id: LEDGER })
        setItems(stock.items)
      } catch (caught) {
        setError(String(caught))
      }
    })()
  }, [])
  if (error) return <p role="alert">Tool error: {error}</p>
  if (!items) return <p>Loading the ledger…</p>
  return (
    <main>
      <h1>Pantry ledger (turn TURN)</h1>
      <ul>{items.map((item) => <li key={item.sku}>{item.sku}: {item.count}</li>)}</ul>
    </main>
  )
}
"""


def _answer(seen: list[list[dict]]):
    def answer(messages: list[dict]) -> tuple[int, str]:
        seen.append(messages)
        request = json.loads(messages[-1]["content"])["current_user_request"]
        turn = int(re.match(r"Turn (\d+):", request).group(1))
        text = (f"assistant_text: Turn {turn}: the ledger restocks turn-{turn} and lists every saved count.\n\n"
                f"#### `src/App.tsx`\n```tsx\n{APP.replace('TURN', str(turn))}```\n")
        return 200, completion(text)

    return answer


def _run_checkout(tmp_path: Path, sandbox: str, *extra: str) -> tuple[Path, list[list[dict]]]:
    seen: list[list[dict]] = []
    run_dir = tmp_path / "run"
    with FaultServer(_answer(seen)) as server:
        result = _run("suite=evogenui", f"suite.benchmark_path={FIXTURE}", "suite.prompts=benchmark",
                      f"suite.task_ids=[{TOOL_TASK}]", "model=local-openai", f"model.base_url={server.base_url}",
                      "model.cache=false", "judge=rules", "actor=probe", f"sandbox={sandbox}", "tracking=off",
                      f"hydra.run.dir={run_dir}", *extra, timeout=1200)
    assert result.returncode == 0, result.stderr[-4000:]
    return run_dir, seen


def _check_five_turns(run_dir: Path, seen: list[list[dict]]) -> None:
    records = _records(run_dir)
    assert [(r["turn"], r["status"]) for r in records] == [(t, "ok") for t in range(1, 6)], \
        [(r["turn"], r["status"], r["error"][:300]) for r in records]
    assert len(seen) == 5 and all(m[0] == {"role": "system", "content": STAND_IN_GENERATOR} for m in seen)
    lineage = json.loads((run_dir / "lineage.json").read_text())
    assert lineage["prompt_versions"]["suite:evogenui"].startswith("evogenui-bench:")
    for turn in range(1, 6):
        folder = run_dir / "evidence" / TOOL_TASK / str(turn)
        log = [json.loads(line) for line in (folder / "tool_log.jsonl").read_text().splitlines()]
        assert [(e["tool"], e["ok"]) for e in log] == [("pantry_restock", True), ("pantry_get_stock", True)], log
        restock, stock = log
        earlier = [f"turn-{t}" for t in range(1, turn)]
        # state carried: the restock of turn t starts from what turns 1..t-1 wrote
        assert [i["sku"] for i in restock["state_before"]["pantry_ledger_v1"]["items"]] == ["PRIVATE-SEED-OATS", *earlier]
        assert [w["args"]["sku"] for w in restock["state_after"]["writes"]] == [*earlier, f"turn-{turn}"]
        traced = [t["turn"] for t in restock["state_after"]["tool_trace"]]
        assert set(traced[:-1]) == set(range(1, turn)) and traced == sorted(traced) and traced[-1] == turn
        assert set(restock["state_delta"]) == {"pantry_ledger_v1", "writes", "tool_trace"}
        assert stock["result"]["items"][-1] == {"sku": f"turn-{turn}", "count": turn}
        # The engine snapshots the state after the actor (a call still in flight may land after it);
        # the snapshot is the state after one of this turn's calls, and it is what the next turn starts from.
        carried = json.loads((folder / "state_carried.json").read_text())
        assert carried["scenarios"]["default"] in [entry["state_after"] for entry in log]
        if turn < 5:
            following = json.loads((folder.parent / str(turn + 1) / "state_in.json").read_text())
            assert following == carried
        runtime_logs = json.loads((folder / "runtime_logs.json").read_text())
        assert runtime_logs["scenarios"]["default"]["state"] == stock["state_after"]


@pytest.mark.sandbox
def test_tool_grounded_checkout_task_runs_five_turns_in_the_local_sandbox(tmp_path: Path) -> None:
    run_dir, seen = _run_checkout(tmp_path, "local")
    _check_five_turns(run_dir, seen)


@pytest.mark.docker
@pytest.mark.parametrize("browser_in_container", [True, False], ids=["container-browser", "host-browser"])
def test_tool_grounded_checkout_task_runs_five_turns_in_docker(tmp_path: Path, browser_in_container: bool) -> None:
    """Build container (the scaffold's pinned node_modules mounted read-only) and artifact-server container
    (the checkout's runtime package mounted read-only)."""
    from tests.sandbox.test_docker import _engine

    _engine().close()  # skips without an engine
    run_dir, seen = _run_checkout(tmp_path, "docker", f"sandbox.options.browser_in_container={browser_in_container}")
    _check_five_turns(run_dir, seen)


@pytest.mark.sandbox
@pytest.mark.parametrize("prompts", ["benchmark", "own"])
def test_llm_actor_gets_the_checkouts_actor_prompt_only_with_benchmark_prompts(tmp_path: Path, prompts: str) -> None:
    """One turn with actor=llm: the engine hands the suite's actor prompt to the actor's model request."""
    generator_calls: list[list[dict]] = []
    actor_systems: list[str] = []
    write_app = _answer(generator_calls)

    def answer(messages: list[dict]) -> tuple[int, str]:
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        if '{"action": "finish"' in system:  # the actor's action protocol
            actor_systems.append(system)
            return 200, completion(json.dumps({"action": "finish", "success": True, "summary": "ledger listed"}))
        return write_app(messages)

    run_dir = tmp_path / "run"
    with FaultServer(answer) as server:
        result = _run("suite=evogenui", f"suite.benchmark_path={FIXTURE}", f"suite.prompts={prompts}",
                      f"suite.task_ids=[{TOOL_TASK}]", "suite.turns=1", "model=local-openai",
                      f"model.base_url={server.base_url}", "model.cache=false", "judge=rules", "actor=llm",
                      f"actor.options.model.base_url={server.base_url}", "actor.options.model.max_retries=0",
                      "sandbox=local", "tracking=off", f"hydra.run.dir={run_dir}", timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    assert [(r["turn"], r["status"]) for r in _records(run_dir)] == [(1, "ok")]
    assert len(generator_calls) == 1 and len(actor_systems) == 1
    own_role = "You are the interaction actor of a UI benchmark."
    if prompts == "benchmark":
        assert STAND_IN_ACTOR in actor_systems[0] and own_role not in actor_systems[0]
    else:
        assert "STAND-IN ACTOR" not in actor_systems[0] and own_role in actor_systems[0]
    trace = json.loads((run_dir / "evidence" / TOOL_TASK / "1" / "trace.json").read_text())
    assert trace["actor"] == "llm" and trace["finished"] is True
