"""An agent run as a slot's generation strategy: a looping agent is stopped by each part of its budget, the model's
failure and the agent's own are told apart, and the slot's evidence says which ended it.

The agent is the built-in one, asking a scripted model behind a real HTTP server through the real proxy, with the
run's real model role (runner/models/openai_provider.py); the engine's other tools (builds, previews) are not used
by these scripts. The engine's part (the record's `extra.agent`) is tested end to end in test_builtin.py.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from runner.agents.budget import AgentBudget
from runner.agents.builtin import BuiltinAgent, BuiltinAgentSettings
from runner.agents.strategy import AgentGeneration
from runner.models.base import ChatAnswer, ProviderError
from runner.models.openai_provider import OpenAIModel, OpenAIModelSettings
from runner.turns.evidence_folder import EvidenceFolder
from tests.support.scripted_agent_model import answer, looping, scripted_server, tool_call

PAYLOAD = [{"role": "system", "content": "Build things."}, {"role": "user", "content": "## Current request (turn 1)\nGo."}]


class Tools:
    """The engine's GenerationTools as far as these agents use them: the evidence folder and the model."""

    def __init__(self, folder: Path, model: OpenAIModel, previous: dict[str, str] | None = None) -> None:
        self.task_id, self.turn = "t", 1
        self.evidence = EvidenceFolder(folder)
        self.previous_files = previous or {}
        self.web_template, self.static = None, False
        self.model = model

    async def chat(self, body: dict[str, Any]) -> ChatAnswer:
        return await self.model.chat(body, task_id=self.task_id, turn=self.turn)

    async def build(self, text: str) -> Any:
        raise AssertionError("not used")

    build_files = preview = run_confined = build


def _run(script, folder: Path, budget: AgentBudget, **settings: Any):
    async def scenario():
        with scripted_server(script) as server:
            model = OpenAIModel(OpenAIModelSettings(name="scripted", model="scripted", base_url=server.base_url,
                                                    max_retries=0, cache=False))
            strategy = AgentGeneration(BuiltinAgent(BuiltinAgentSettings(budget=budget, **settings)),
                                       BuiltinAgentSettings(budget=budget, **settings), kind="builtin",
                                       model_name="scripted", vision=False)
            try:
                return await strategy.generate(PAYLOAD, None, Tools(folder, model)), server
            finally:
                await strategy.aclose()
                await model.aclose()

    return asyncio.run(scenario())


def _evidence(folder: Path) -> tuple[dict, list[dict], list[dict]]:
    evidence = EvidenceFolder(folder)
    return evidence.read_agent(), evidence.read_agent_steps(), evidence.read_agent_calls()


def test_a_looping_agent_is_stopped_by_its_steps(tmp_path: Path) -> None:
    generation, server = _run(looping, tmp_path, AgentBudget(steps=3))
    summary, steps, calls = _evidence(tmp_path)
    assert generation.extra["agent"]["stopped_by"] == "steps" == summary["stopped_by"]
    assert server.calls == 3 and [call["status"] for call in calls] == [200, 200, 200, 400]
    assert len(steps) == 3 and all(step["tool_calls"][0]["name"] == "list_files" for step in steps)
    assert generation.answer is not None and generation.answer.files == {}  # it wrote nothing
    assert summary["spent"]["steps"] == 3 and summary["spent"]["tokens"] == 360


def test_a_looping_agent_is_stopped_by_its_tokens(tmp_path: Path) -> None:
    generation, server = _run(looping, tmp_path, AgentBudget(tokens=250))
    summary, _, calls = _evidence(tmp_path)
    assert summary["stopped_by"] == "tokens" and server.calls == 3  # 120 tokens a call: 360 >= 250 after three
    assert calls[-1]["error_kind"] == "budget_exhausted" and "tokens: 360 of 250" in calls[-1]["error"]
    assert [json.loads(json.dumps(r))["max_tokens"] for r in server.requests] == [250, 130, 10]


def test_a_looping_agent_is_stopped_by_its_wall_clock(tmp_path: Path) -> None:
    def slow(messages: list[dict]) -> tuple[int, str]:
        time.sleep(0.4)
        return looping(messages)

    started = time.monotonic()
    generation, server = _run(slow, tmp_path, AgentBudget(wall_clock_s=1.5))
    summary, _, _ = _evidence(tmp_path)
    assert summary["stopped_by"] == "wall_clock" and 2 <= server.calls <= 5
    assert time.monotonic() - started < 10


def test_the_models_failure_is_a_provider_error_with_the_agents_record(tmp_path: Path) -> None:
    def failing(messages: list[dict]) -> tuple[int, str]:
        return (503, json.dumps({"error": {"message": "overloaded"}})) if len(messages) > 3 else looping(messages)

    with pytest.raises(ProviderError, match="HTTP 503") as failed:
        _run(failing, tmp_path, AgentBudget())
    summary, steps, _ = _evidence(tmp_path)
    assert failed.value.extra["agent"]["stopped_by"] == "model_error" == summary["stopped_by"]
    assert "overloaded" in summary["error"] and len(steps) == 1


def test_an_agent_that_cannot_go_on_is_its_own_failure_and_its_workspace_stands(tmp_path: Path) -> None:
    def refusing(messages: list[dict]) -> tuple[int, str]:
        if len(messages) > 3:
            return 400, json.dumps({"error": {"message": "This model's maximum context length is 8192 tokens"}})
        return answer("", [tool_call("write_file", path="src/App.jsx", content="export default () => null;\n")])

    generation, _ = _run(refusing, tmp_path, AgentBudget())
    summary, steps, calls = _evidence(tmp_path)
    assert summary["stopped_by"] == "agent_error" and "maximum context length" in summary["notes"][0]
    assert calls[-1]["error_kind"] == "refused"
    assert generation.answer.files == {"src/App.jsx": "export default () => null;\n"}
    assert steps[0]["files_changed"] == {"modified": ["src/App.jsx"]}
