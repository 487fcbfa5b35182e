"""An agent needs a generator that answers tool calls: checked before any work."""

from __future__ import annotations

from runner.agents.preflight import check_agent_model
from tests.run.test_validation import _composed
from runner.run.validation import validate_config


def _problems(*overrides: str) -> list:
    return check_agent_model(validate_config(_composed(*overrides)), None)


def test_a_replayed_model_cannot_run_an_agent() -> None:
    (problem,) = _problems("agent=builtin")  # model=oracle, the default
    assert problem.key == "model" and "only replays answers" in problem.message and "agent=builtin" in problem.message


def test_a_vllm_server_without_its_tool_call_parser_is_named_unless_calls_are_required() -> None:
    parser = ["agent=builtin", "model=qwen3-coder"]
    assert _problems(*parser) == []  # the shipped config starts the server with qwen3_coder
    (problem,) = _problems(*parser, "model.server.enable_auto_tool_choice=false")
    assert problem.key == "model.server.enable_auto_tool_choice" and "tool_call_parser" in problem.fix
    assert _problems(*parser, "model.server.enable_auto_tool_choice=false", "agent.options.tool_choice=required") == []


def test_an_endpoint_answers_tool_calls() -> None:
    assert _problems("agent=builtin", "model=local-openai") == []
