"""What each role of a run sends and how it differs from its config: the record lineage.json and the summary keep."""

from __future__ import annotations

from typing import Any

from runner.compose import compose as compose_config
from runner.run.role_requests import request_parameters, role_requests
from runner.run.roles import run_facts
from runner.run.validation import validate_config
from runner.suites.registry import build_suite
from tests.conftest import REPO_ROOT


def _record(*overrides: str, judge_model: dict[str, Any] | None = None) -> tuple[Any, Any]:
    raw = compose_config(list(overrides))
    if judge_model is not None:
        raw["judge"]["options"]["model"] = judge_model
    raw["project_root"] = str(REPO_ROOT)
    config = validate_config(raw)
    suite = build_suite(config.suite, project_root=REPO_ROOT)
    suite.configure_run(run_facts(config))
    return config, suite


def test_evogenui_table2_on_gpt_5_5_records_the_temperature_it_could_not_send() -> None:
    plans, deviations = request_parameters(*_record("+experiment=evogenui-table2", "model=gpt-5.5",
                                               "suite.task_set=project"))
    generator = plans["generator"]
    assert generator["dialect"] == "openai" and generator["token_parameter"] == "max_completion_tokens"
    assert (generator["temperature_configured"], generator["temperature_sent"]) == (0.0, False)
    assert generator["provider_default_temperature"] == 1.0
    assert plans["judge"]["structured_output"] == {"requested": "json_schema", "sent": "json_schema"}  # vLLM
    assert deviations == ["generator gpt-5.5 (model): temperature 0 configured, not sent: gpt-5.5 accepts only "
                          "OpenAI's default, 1"]


def test_a_judge_on_claude_keeps_its_schema_and_one_on_model_studio_says_it_got_json_mode() -> None:
    claude = {**compose_config(["model=claude-sonnet-4"])["model"]}
    plans, deviations = request_parameters(*_record("suite=smoke", "model=oracle", "judge=local-llm",
                                                    judge_model=claude))
    assert plans["judge"]["structured_output"] == {"requested": "json_schema", "sent": "anthropic_tool"}
    assert plans["judge"]["images"] is True and deviations == []
    assert "generator" not in plans  # the oracle sends nothing
    qwen = {**compose_config(["model=qwen3.6-plus"])["model"]}
    _, deviations = request_parameters(*_record("suite=smoke", "model=oracle", "judge=local-llm", judge_model=qwen))
    (deviation,) = deviations
    assert deviation.startswith("judge qwen3.6-plus (judge.options.model): structured output json_schema requested, "
                                "sent as json_object")


def test_a_suites_own_role_asks_what_the_suite_asks_it() -> None:
    config, suite = _record("suite=evogenui", "suite.diagnosis=judge", "model=oracle", "judge=rules",
                            "+model@roles.diagnostic=gpt-4o")
    (diagnostic,) = [r for r in role_requests(config, suite) if r.role == "diagnostic"]
    assert (diagnostic.key, diagnostic.structured, diagnostic.images) == ("roles.diagnostic", "json_schema", True)
