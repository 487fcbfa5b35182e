"""suite=webgen end to end through the CLI on the five WebGen-Bench samples: real builds, real Chromium, the
real LLM actor per test case. The generator and the tester are scripted OpenAI-compatible servers (fault
injection: a fixed small site, an unparsable answer, a site that does not build, a failing endpoint;
YES / PARTIAL / NO answers and one that is none of them)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from runner.models.parse import render_json_output
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.support.fault_server import FaultServer, completion

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]

SAMPLE = Path(__file__).parent / "fixtures" / "test.sample.jsonl"

SITE = {"src/App.jsx": """import { useState } from "react";
export default function App() {
  const [count, setCount] = useState(0);
  return <main><h1>Report desk</h1><button onClick={() => setCount(count + 1)}>Generate ({count})</button></main>;
}
"""}
BROKEN = {"src/App.jsx": "export default function App() { return <main> }\n"}


def answer_as_generator(messages: list[dict]) -> tuple[int, str]:
    request = messages[-1]["content"]
    if "neighborhood mapping" in request.lower():
        return 200, completion("I cannot help with that.")  # no files: invalid_output
    if "regulatory policies" in request.lower():
        return 500, json.dumps({"error": {"message": "overloaded"}})  # provider_error
    if "basketball" in request.lower():
        return 200, completion(render_json_output("Here is the site.", BROKEN))
    return 200, completion(render_json_output("Here is the site.", SITE))


# The tester's answer per test case: tc1 YES, tc2 PARTIAL, tc3 NO, tc4 no answer word (unassessed), others YES.
ANSWERS = {"tc1": "YES: it works", "tc2": "PARTIAL: half of it", "tc3": "NO: nothing happened",
           "tc4": "I could not decide"}


def answer_as_tester(messages: list[dict]) -> tuple[int, str]:
    briefing = messages[0]["content"]
    case = re.search(r"- \[(tc\d+)\]", briefing).group(1)
    summary = ANSWERS.get(case, "YES: as expected")
    return 200, completion(json.dumps({"action": "finish", "success": summary.startswith("YES"), "summary": summary}))


def test_the_five_samples_run_to_one_record_each_with_accuracy_per_category(tmp_path: Path) -> None:
    tasks = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    assert len(tasks) == 5
    with FaultServer(answer_as_generator) as gen, FaultServer(answer_as_tester) as test:
        run_dir = tmp_path / "run"
        role = (f"{{name:tester,provider:openai,model:tester,base_url:'{test.base_url}',cache:false,"
                f"max_retries:0,vision:false}}")
        cmd = runner_command(
            "suite=webgen", f"suite.tasks_path={SAMPLE}", "model=local-openai", f"model.base_url={gen.base_url}",
            "model.cache=false", "model.max_retries=0", f"+roles.tester={role}", "actor=none", "tracking=off",
            f"hydra.run.dir={run_dir}")
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
        generated = list(gen.requests)
    records = {r["task_id"]: r for r in map(json.loads, (run_dir / "turns.jsonl").read_text().splitlines())}
    assert sorted(records) == [task["id"] for task in tasks] and len(generated) == 5  # one call per slot
    by_instruction = {task["id"]: task["instruction"].lower() for task in tasks}
    broken = [tid for tid, text in by_instruction.items() if "basketball" in text]
    unparsable = [tid for tid, text in by_instruction.items() if "neighborhood mapping" in text]
    failing = [tid for tid, text in by_instruction.items() if "regulatory policies" in text]
    assert len(broken) == 1 and len(unparsable) == 1 and len(failing) == 1
    assert records[broken[0]]["status"] == "build_failed" and records[unparsable[0]]["status"] == "invalid_output"
    assert records[failing[0]]["status"] == "provider_error"
    built = [tid for tid in records if tid not in broken + unparsable + failing]
    assert built and all(records[tid]["status"] == "ok" for tid in built)
    summary = json.loads((run_dir / "summary.json").read_text())
    total = sum(len(task["ui_instruct"]) for task in tasks)
    built_cases = {tid: len(next(t for t in tasks if t["id"] == tid)["ui_instruct"]) for tid in built}
    assert summary["requested_slots"] == 5 and summary["recorded_slots"] == 5
    assert summary["test_cases"] == total
    assert summary["unassessed_cases"] == len(built)  # every built site's tc4
    assert summary["missed_cases"] == total - sum(built_cases.values())
    # Per built site: 1 + 0.5 + 0 + (the rest YES); every miss scores 0.
    earned = sum(1.5 + (n - 4) for n in built_cases.values())
    assert summary["accuracy"] == pytest.approx(earned / (total - len(built)))
    assert set(summary["accuracy_by_category"]) == {case["task_category"]["primary_category"]
                                                    for task in tasks for case in task["ui_instruct"]}
    # One tester trace per test case of each built site, each in its own folder.
    for tid in built:
        traces = sorted((run_dir / "evidence" / tid / "1" / "cases").glob("*/trace.json"))
        assert len(traces) == built_cases[tid]
        verdict = records[tid]["verdict"]
        assert [r["status"] for r in verdict["requirements"][:4]] == ["passed", "failed", "failed", "unassessed"]
        assert records[tid]["passed"] is False
