"""The built-in agent on a model served for real: the shipped Qwen3-Coder config (vLLM with its `qwen3_coder`
tool-call parser) on the CPU vLLM build, the weights swapped for each tiny local text model (tests/support/tiny_models.py
TINY_TEXT_MODELS: a Llama and a Qwen3, made differently), its chat template for one that renders tools.

The tiny models' weights are random, so what they do is not the point: `tool_choice: required` makes the server
decode every answer as a tool call under the tools' schema, and the test proves that the loop, the proxy, the
budget and the records hold with a real server answering: every slot recorded once, each call's tokens as the
server counted them, each step's tool calls run with their results, and the stop reason consistent with what
the calls show.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.turns.evidence_folder import EvidenceFolder
from tests.support.served_runs import run_served
from tests.support.tiny_models import NO_VLLM_REASON, TINY_TEXT_MODELS, VLLM_PYTHON, served_overrides, tiny_model_dir

pytestmark = [pytest.mark.slow, pytest.mark.vllm, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox,
              pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=NO_VLLM_REASON)]

TEMPLATE = Path(__file__).resolve().parents[1] / "support" / "tool_chat_template.jinja"
STEPS = 3


@pytest.mark.parametrize("tiny", TINY_TEXT_MODELS)
def test_a_served_model_runs_the_builtin_agent_through_the_proxy(tiny: str, tmp_path: Path) -> None:
    run = run_served([
        "model=qwen3-coder", "agent=builtin", "suite=smoke", "suite.task_ids=[smoke-counter]", "judge=rules",
        "agent.options.tool_choice=required", f"agent.options.budget.steps={STEPS}",
        "agent.options.budget.wall_clock_s=600", "model.max_tokens=256",
        *served_overrides("model", tiny_model_dir(tiny)), "++model.server.max_model_len=32768",
        f"++model.server.extra_args=[--chat-template,{TEMPLATE}]",
    ], tmp_path / "run", timeout_s=1800)
    assert run.returncode == 0, run.stderr[-4000:]
    assert [record["turn"] for record in run.records] == [1, 2, 3]
    assert all(record["status"] not in ("infra", "provider_error") for record in run.records), run.records
    first = run.records[0]
    agent = first["extra"]["agent"]
    assert agent["stopped_by"] in ("done", "steps", "tokens", "agent_error"), agent
    folder = EvidenceFolder(run.run_dir / first["evidence_dir"])
    calls = folder.read_agent_calls()
    answered = [call for call in calls if call["status"] == 200]
    assert 1 <= len(answered) <= STEPS and agent["steps"] == len(answered)
    assert run.answered_requests("qwen3-coder") == len(answered)  # the server's own access log
    for call in answered:
        assert call["usage"]["prompt_tokens"] > 100 and call["model_seconds"] > 0  # the server counted them
        assert call["response"]["choices"][0]["message"]["tool_calls"], call["response"]  # required: a tool call
    steps = folder.read_agent_steps()
    assert len(steps) == len(answered)
    assert all(call.get("result") for step in steps for call in step["tool_calls"])
    if agent["stopped_by"] == "steps":
        assert len(answered) == STEPS and calls[-1]["error_kind"] == "budget_exhausted"
    if agent["stopped_by"] == "done":
        assert steps[-1]["tool_calls"][-1]["name"] == "finish"
    assert json.loads((run.run_dir / "summary.json").read_text())["run"]["agent"] == "builtin"
