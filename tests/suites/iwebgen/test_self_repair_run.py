"""Self-repair end to end (I-WebGenBench C.3): a scripted endpoint whose first answer does not build and whose
second does, through the real engine, Vite build in the sandbox and browser; both rounds are in the evidence,
first-pass BSR 0 and BSR after repair 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.models.parse import render_json_output
from tests.conftest import REPO_ROOT
from tests.support.fault_server import FaultServer, completion
from tests.test_main import _records, _run

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]

TASK = "bio-lotka-volterra"
REFERENCE = {"src/App.jsx": (REPO_ROOT / "tasks" / "iwebgen" / "reference" / TASK / "src" / "App.jsx").read_text()}
BROKEN = render_json_output("first try", {"src/App.jsx": "export default function App( {"})


def test_a_broken_first_answer_is_repaired_and_both_rounds_are_recorded(tmp_path: Path) -> None:
    def answer(messages: list[dict]) -> tuple[int, str]:
        repairing = "does not build" in messages[-1]["content"]
        return 200, completion(render_json_output("fixed", REFERENCE) if repairing else BROKEN)

    run_dir = tmp_path / "run"
    with FaultServer(answer) as server:
        result = _run(
            "suite=iwebgen", "model=local-openai", f"model.base_url={server.base_url}", "model.cache=false",
            "tracking=off", "suite.generation=self_repair", f"suite.task_ids=[{TASK}]", "actor=none",
            f"hydra.run.dir={run_dir}",
        )
        calls = server.calls
    assert result.returncode == 0, result.stderr[-3000:]
    [record] = _records(run_dir)
    assert record["status"] == "ok" and calls == 2
    assert record["extra"]["generation"] == {"strategy": "self_repair", "rounds": 2, "builds": [False, True]}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["bsr_first_pass"], summary["bsr"]) == (0.0, 1.0)
    evidence = run_dir / record["evidence_dir"]
    generation = json.loads((evidence / "generation.json").read_text())
    assert [(r["round"], r["purpose"], r["built"]) for r in generation["rounds"]] == [(1, "answer", False),
                                                                                    (2, "repair", True)]
    assert [(r["request"], r["raw_response"], r["build_log"]) for r in generation["rounds"]] == [
        ("request.json", "raw_response.round1.txt", "build.round1.log"),
        ("request.round2.json", "raw_response.txt", "build.log")]
    assert "App(" in (evidence / "raw_response.round1.txt").read_text()
    first_log = (evidence / "build.round1.log").read_text()
    assert "App.jsx" in first_log
    repair = json.loads((evidence / "request.round2.json").read_text())["messages"]
    assert first_log.strip()[:200] in repair[-1]["content"]  # the model saw the build-error log
    assert (evidence / "src" / "src" / "App.jsx").read_text() == REFERENCE["src/App.jsx"]
