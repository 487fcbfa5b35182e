"""Real runs for the report tests, made once per session through the CLI (`python -m runner`).

- null_run: model=null on smoke-counter: an invalid first turn, then two blocked turns (no verdicts).
- probe_run: model=oracle on a task of this file whose reference answers pass turn 1, fail a requirement
  in turn 2 (Reset does nothing) and fail to build in turn 3; turn 1's assistant text carries HTML that
  would run script if the viewer ever inserted it raw.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, cli_env

XSS_TEXT = ('Here is the counter. <script>window.__pwned = "script";</script>'
            '<img src=x onerror="window.__pwned = \'img\'"> </pre></details><b>bold?</b>')

PROBE_TASK = """
id: viewer-probe
title: Viewer probe
domain: testing
context: A counter used to exercise the evidence viewer.
turns:
  - index: 1
    prompt: 'Build a counter showing "Count: 0" with an "Increment" button.'
    requirements:
      - id: initial-count
        description: 'The page shows "Count: 0".'
        check:
          assert:
            - {type: text_visible, text: "Count: 0"}
    reference_text: %(xss)s
    reference_files:
      src/App.jsx: |
        import { useState } from "react";
        export default function App() {
          const [count, setCount] = useState(0);
          return (<main><p>Count: {count}</p><button onClick={() => setCount(count + 1)}>Increment</button></main>);
        }
  - index: 2
    prompt: Add a "Reset" button that sets the count back to zero.
    requirements:
      - id: reset
        description: After incrementing, Reset brings the count back to 0.
        check:
          steps:
            - {action: click, target: {role: button, name: Increment}}
            - {action: click, target: {role: button, name: Reset}}
          assert:
            - {type: text_visible, text: "Count: 0"}
    reference_text: Added a Reset button.
    reference_files:
      src/App.jsx: |
        import { useState } from "react";
        export default function App() {
          const [count, setCount] = useState(0);
          return (<main><p>Count: {count}</p><button onClick={() => setCount(count + 1)}>Increment</button><button>Reset</button></main>);
        }
  - index: 3
    prompt: Add a Step input.
    requirements:
      - id: step
        description: There is a Step input.
        check:
          assert:
            - {type: text_visible, text: "Step"}
    reference_text: Added a step input.
    reference_files:
      src/App.jsx: |
        export default function App() {
          return (<main><p>Count: {count</p></main>);
        }
"""


def run_cli(run_dir: Path, *overrides: str, timeout: float = 300) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "runner", "tracking=off", f"hydra.run.dir={run_dir}", "concurrency.browsers=1", *overrides],
        cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=timeout, check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == str(run_dir)
    return run_dir


@pytest.fixture(scope="session")
def report_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report-runs")
    tasks = root / "tasks"
    tasks.mkdir()
    import json

    (tasks / "probe.yaml").write_text(PROBE_TASK % {"xss": json.dumps(XSS_TEXT)})
    return {
        "null": run_cli(root / "null", "model=null", "suite.task_ids=[smoke-counter]"),
        "probe": run_cli(root / "probe", "model=oracle", f"suite.tasks_path={tasks}"),
    }
