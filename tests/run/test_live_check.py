"""The live check: one request per hosted model role, with the run's own parameters, before the first slot.

Against the providers' stand-ins (tests/support/provider_standins.py): a refused parameter and a bad key stop the
command with exit code 2, the role, its config key and the provider's own message, before any slot; a good run
proceeds, its first request the probe; `run.live_check=false` skips it; a vLLM server the run starts itself is not
probed (its start is its check), an attached one is.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from runner.models.parse import render_json_output
from runner.run import preflight
from runner.run.live_check import live_roles
from runner.compose import compose as compose_config
from runner.run.roles import run_facts
from runner.run.validation import validate_config
from runner.suites.native import load_native_tasks
from runner.suites.registry import build_suite
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.support.provider_standins import (KEY, AnthropicRules, OpenAICompatibleRules, OpenAIRules,
                                             ProviderStandIn, images_in)


def _config(raw: dict[str, Any]) -> Any:
    raw["project_root"] = str(REPO_ROOT)
    return validate_config(raw)


def _preflight(config: Any) -> list[str]:
    suite = build_suite(config.suite, project_root=REPO_ROOT)
    suite.configure_run(run_facts(config))
    return asyncio.run(preflight.run_preflight(config, suite))


def test_each_hosted_role_is_probed_once_with_its_own_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Generator GPT-5.5 (max_completion_tokens, no temperature, an image: it has vision), an LLM judge on Claude
    (its JSON schema through the Messages API, a screenshot) and an attached vLLM actor (json_schema, image)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with ProviderStandIn(OpenAIRules()) as openai, ProviderStandIn(AnthropicRules()) as anthropic, \
            ProviderStandIn(OpenAICompatibleRules()) as vllm:
        raw = compose_config(["suite=smoke", "suite.limit=1", "model=gpt-5.5", f"model.base_url={openai.origin}/v1",
                              "judge=local-llm", "actor=llm", f"actor.options.model.base_url={vllm.origin}/v1"])
        claude = compose_config(["model=claude-sonnet-4"])["model"]
        raw["judge"]["options"]["model"] = {**claude, "base_url": f"{anthropic.origin}/v1/"}
        notes = _preflight(_config(raw))
    assert notes == []
    (probe,) = openai.bodies
    assert probe["model"] == "gpt-5.5" and probe["max_completion_tokens"] == 32768
    assert "temperature" not in probe and "response_format" not in probe and images_in(probe)
    (judge,) = anthropic.requests
    assert judge.path == "/v1/messages" and judge.body["tool_choice"]["type"] == "tool" and images_in(judge.body)
    assert judge.body["temperature"] == 0.0 and judge.body["max_tokens"] == 16384
    (actor,) = vllm.bodies
    assert actor["response_format"]["type"] == "json_schema" and actor["max_tokens"] == 4096 and images_in(actor)


def test_a_refused_parameter_is_a_problem_naming_role_key_and_the_providers_words(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ProviderStandIn(OpenAIRules()) as openai:
        config = _config(compose_config(["suite=smoke", "model=gpt-5.5", f"model.base_url={openai.origin}/v1",
                                         "model.fixed_temperature=null", "judge=rules", "actor=none"]))
        with pytest.raises(preflight.PreflightError) as stopped:
            _preflight(config)
    (problem,) = stopped.value.problems
    assert problem.key == "model"
    assert "generator 'gpt-5.5'" in problem.message and "HTTP 400" in problem.message
    assert "Unsupported value: 'temperature' does not support 0.0 with this model" in problem.message
    assert "the provider refused a parameter: fix model" in problem.fix
    assert "run.live_check=false" in str(stopped.value)


def test_live_check_false_sends_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ProviderStandIn(OpenAIRules()) as openai:
        config = _config(compose_config(["suite=smoke", "model=gpt-5.5", f"model.base_url={openai.origin}/v1",
                                         "model.fixed_temperature=null", "judge=rules", "actor=none",
                                         "run.live_check=false"]))
        _preflight(config)
    assert openai.requests == []


def test_a_served_vllm_role_is_not_probed_but_an_attached_one_is() -> None:
    raw = compose_config(["suite=smoke", "model=qwen3-coder", "judge=rules", "actor=none"])
    config = _config(raw)
    suite = build_suite(config.suite, project_root=REPO_ROOT)
    assert live_roles(config, suite) == []  # the run starts that server: its start is its check
    raw = compose_config(["suite=smoke", "model=qwen3-coder", "model.server.mode=attach",
                          "+model.server.base_url=http://127.0.0.1:9/v1", "judge=rules", "actor=none"])
    assert [request.key for request in live_roles(_config(raw), suite)] == ["model"]
    raw = compose_config(["suite=smoke", "model=oracle", "judge=rules", "actor=none"])
    assert live_roles(_config(raw), suite) == []  # a replay sends nothing


# --------------------------------------------------------------------------- the command line


def _command(tmp_path: Path, standin: ProviderStandIn, *overrides: str, key: str = KEY,
             timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**cli_env(), "OPENAI_API_KEY": key}
    started = time.monotonic()
    result = subprocess.run(
        runner_command("suite=smoke", "suite.limit=1", "model=gpt-5.5", f"model.base_url={standin.origin}/v1",
                       "judge=rules", "actor=none", "tracking=off", f"hydra.run.dir={tmp_path / 'run'}", *overrides),
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    return result, time.monotonic() - started


def test_the_command_stops_before_any_slot_on_a_refused_parameter(tmp_path: Path) -> None:
    with ProviderStandIn(OpenAIRules()) as openai:
        result, wall = _command(tmp_path, openai, "model.fixed_temperature=null")
    assert result.returncode == 2, result.stderr[-3000:]
    assert wall < 60, f"took {wall:.1f} s"  # the command's start-up and one request (held at twice a loaded box's)
    assert "live check of generator 'gpt-5.5'" in result.stderr
    assert "Unsupported value: 'temperature' does not support 0.0 with this model" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(openai.requests) == 1  # the probe, and nothing after it
    assert not (tmp_path / "run" / "turns.jsonl").exists()


def test_the_command_stops_on_a_bad_key_naming_its_variable(tmp_path: Path) -> None:
    with ProviderStandIn(OpenAIRules()) as openai:
        result, _ = _command(tmp_path, openai, key="sk-wrong")
    assert result.returncode == 2, result.stderr[-3000:]
    assert "HTTP 401" in result.stderr and "Incorrect API key provided" in result.stderr
    assert "check the key in OPENAI_API_KEY" in result.stderr
    assert len(openai.requests) == 1 and not (tmp_path / "run" / "turns.jsonl").exists()


SMOKE = {task.id: task for task in load_native_tasks(REPO_ROOT / "tasks" / "smoke", suite="smoke")}


def _smoke_answer(body: dict[str, Any]) -> str:
    """The reference answer of the smoke slot a generation request is for; the probe gets its JSON."""
    text = json.dumps(body["messages"])
    if "connection check" in text:
        return '{"ok": true}'
    task = next(task for task in SMOKE.values() if task.turns[0].prompt[:40] in text)
    turn = max(spec.index for spec in task.turns if spec.prompt[:40] in text)
    return render_json_output("done", task.turn(turn).reference_files)


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.build
@pytest.mark.sandbox
def test_a_good_run_proceeds_and_records_the_providers_deviation(tmp_path: Path) -> None:
    """GPT-5.5 as App. D.1 configures it: the probe is accepted, the slots run, and lineage.json and summary.json
    say that temperature 0 was configured but only the provider's default could be sent."""
    with ProviderStandIn(OpenAIRules(), reply=_smoke_answer) as openai:
        result, _ = _command(tmp_path, openai, "suite.turns=1", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    probe, *generations = openai.bodies
    assert "connection check" in json.dumps(probe["messages"]) and generations
    assert all(body["max_completion_tokens"] == 32768 and "temperature" not in body for body in generations)
    run = tmp_path / "run"
    records = [json.loads(line) for line in (run / "turns.jsonl").read_text().splitlines()]
    assert records and all(record["status"] == "ok" for record in records)
    lineage = json.loads((run / "lineage.json").read_text())
    assert lineage["request_parameters"]["generator"]["token_parameter"] == "max_completion_tokens"
    (deviation,) = lineage["provider_deviations"]
    assert deviation.startswith("generator gpt-5.5 (model): temperature 0 configured, not sent")
    summary = json.loads((run / "summary.json").read_text())
    assert summary["run"]["provider_deviations"] == [deviation]
