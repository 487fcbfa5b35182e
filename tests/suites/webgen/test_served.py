"""suite=webgen with its tester served for real: `+model@roles.tester=qwen2.5-vl-7b` on its own vLLM server (CPU
build) that the run starts, on the tiny random vision-language model, with the shipped config's server
arguments (4 images per prompt). Every `ui_instruct` test case is run by the LLM actor on that server.

WebGen-Bench bundles no reference sites, so the generator is `model=identity`, the do-nothing baseline that
hands back the files it was shown: the task's instruction carries a starting site as a fenced file, which
builds, so the tester has a page to exercise. One task of two test cases, one server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.served_runs import assert_completed, run_served
from tests.support.tiny_models import NO_VLLM_REASON, READY_TIMEOUT_S, VLLM_PYTHON, served_overrides, tiny_model_dir

pytestmark = [pytest.mark.vllm, pytest.mark.served, pytest.mark.slow, pytest.mark.browser, pytest.mark.build,
              pytest.mark.sandbox, pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=NO_VLLM_REASON)]

INSTRUCTION = """Please implement a website for counting visitors: a heading and a button that adds one to a shown count.
Keep this file as it is:

```jsx title=src/App.jsx
import { useState } from "react";
export default function App() {
  const [count, setCount] = useState(0);
  return <main><h1>Visitor counter</h1><button onClick={() => setCount(count + 1)}>Add visitor ({count})</button></main>;
}
```
"""
CASES = [("Click the 'Add visitor' button once.", "The count shown on the button becomes 1."),
         ("Look at the page heading.", "The heading reads 'Visitor counter'.")]


def _tasks_file(path: Path) -> Path:
    category = {"primary_category": "Functional Testing", "subcategories": []}
    row = {"id": "served-1", "instruction": INSTRUCTION, "application_type": "Counters",
           "Category": {"primary_category": "Data Management", "subcategories": []},
           "ui_instruct": [{"task": task, "expected_result": expected, "task_category": category}
                           for task, expected in CASES]}
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.mark.timeout(READY_TIMEOUT_S + 1800)
def test_webgen_test_cases_run_by_the_served_tester(tmp_path: Path) -> None:
    run = run_served(["suite=webgen", f"suite.tasks_path={_tasks_file(tmp_path / 'test.jsonl')}", "model=identity",
                      "+model@roles.tester=qwen2.5-vl-7b", "actor=none", "suite.tester.max_steps=3",
                      # the Unigram tiny VLM: the BPE one serves the actor path in the other presets' turns
                      *served_overrides("roles.tester", tiny_model_dir("vlm-unigram"))], tmp_path / "run",
                     timeout_s=1800)
    assert_completed(run, requested=1, servers=["qwen2.5-vl-7b"], listed=("tester",))
    record = run.records[0]
    assert record["status"] == "ok", record["error"]
    slot = run.run_dir / record["evidence_dir"]
    for case in ("tc1", "tc2"):
        trace = json.loads((slot / "cases" / case / "trace.json").read_text())
        assert trace["steps"], trace["summary"]  # the served tester's schema-constrained actions, executed
        assert trace["summary"]["stop_reason"] != "the model returned no valid action", trace["summary"]
        assert not trace["summary"]["stop_reason"].startswith("actor model failed"), trace["summary"]
