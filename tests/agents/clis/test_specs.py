"""What each official CLI is run with (runner/agents/clis/): its headless command line, the proxy's address in the
variable its own documentation names, a placeholder key, its side calls off, and the prompt on standard input.
That each of these works is the business of test_clis_in_image.py, which runs them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from runner.agents.clis.claude_code import ClaudeCode
from runner.agents.clis.codex import DISABLED_FEATURES, Codex, config_toml
from runner.agents.clis.gemini_cli import GeminiCli
from runner.agents.clis.image import check_cli_agent, require_docker
from runner.agents.clis.qwen_code import QwenCode
from runner.agents.command import PROXY_KEY, ProxyAddress
from runner.errors import ConfigError

ADDRESS = ProxyAddress("http://127.0.0.1:8080", model="qwen3-coder")
TURN = SimpleNamespace(prompt="## Current request (turn 1)\nBuild a counter.", first_turn=True)
SPECS = (QwenCode, Codex, GeminiCli, ClaudeCode)


@pytest.mark.parametrize("spec", SPECS)
def test_every_cli_runs_in_the_agent_image_with_the_prompt_on_stdin_and_a_placeholder_key(spec) -> None:
    command = spec("genui-agent:0123456789abcdef").command(TURN, ADDRESS)
    assert command.image == "genui-agent:0123456789abcdef" and command.stdin == TURN.prompt
    assert TURN.prompt not in " ".join(command.argv)
    assert PROXY_KEY in command.env.values()
    assert not command.mounts  # nothing of the host: the image carries the CLI
    assert all("sk-" not in value for value in command.env.values())


def test_qwen_code_speaks_chat_to_the_proxys_v1_with_its_statistics_off() -> None:
    command = QwenCode("img").command(TURN, ADDRESS)
    assert command.argv[:3] == ["qwen", "--auth-type", "openai"] and "yolo" in command.argv
    assert command.env["OPENAI_BASE_URL"] == "http://127.0.0.1:8080/v1"
    assert command.env["QWEN_USAGE_STATISTICS_ENABLED"] == "false"
    settings = json.loads(command.home_files[".qwen/settings.json"])
    assert settings["privacy"]["usageStatisticsEnabled"] is False and settings["telemetry"]["enabled"] is False
    assert settings["general"]["enableAutoUpdate"] is False


def test_codex_has_a_provider_of_its_own_on_the_responses_api() -> None:
    command = Codex("img").command(TURN, ADDRESS)
    assert command.argv[:2] == ["codex", "exec"] and command.argv[-1] == "-"
    assert "--strict-config" in command.argv and "--dangerously-bypass-approvals-and-sandbox" in command.argv
    config = tomllib.loads(command.home_files[".codex/config.toml"])
    assert command.env["CODEX_HOME"] == "/home/agent/.codex"
    provider = config["model_providers"][config["model_provider"]]
    assert provider["base_url"] == "http://127.0.0.1:8080/v1" and provider["wire_api"] == "responses"
    assert command.env[provider["env_key"]] == PROXY_KEY
    assert provider["request_max_retries"] == 0 and provider["supports_websockets"] is False
    assert config["model"] == "qwen3-coder" and config["check_for_update_on_startup"] is False
    assert config["analytics"]["enabled"] is False and config["feedback"]["enabled"] is False
    assert config["agents"]["enabled"] is False and config["web_search"] == "disabled"
    assert all(config["features"][name] is False for name in DISABLED_FEATURES)


def test_codexs_config_quotes_what_it_is_given() -> None:
    config = tomllib.loads(config_toml(ProxyAddress("http://127.0.0.1:9", model='odd "name"\\x')))
    assert config["model"] == 'odd "name"\\x'


def test_gemini_cli_uses_an_api_key_against_the_proxys_base_url() -> None:
    command = GeminiCli("img").command(TURN, ADDRESS)
    assert command.env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:8080"
    assert command.env["GEMINI_API_KEY"] == PROXY_KEY and command.env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    settings = json.loads(command.home_files[".gemini/settings.json"])
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["privacy"]["usageStatisticsEnabled"] is False and settings["telemetry"]["enabled"] is False


def test_claude_code_asks_the_proxy_with_every_model_it_uses() -> None:
    command = ClaudeCode("img").command(TURN, ADDRESS)
    assert command.argv[:2] == ["claude", "--print"] and "--dangerously-skip-permissions" in command.argv
    assert command.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8080"
    assert command.env["ANTHROPIC_MODEL"] == command.env["ANTHROPIC_DEFAULT_HAIKU_MODEL"] == "qwen3-coder"
    assert command.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"


def _config(sandbox: str, agent: str = "codex") -> SimpleNamespace:
    return SimpleNamespace(sandbox=SimpleNamespace(kind=sandbox, options={}), agent=SimpleNamespace(name=agent))


def test_a_cli_needs_the_docker_sandbox() -> None:
    with pytest.raises(ConfigError, match="agent=codex .* needs sandbox=docker.*sandbox=local"):
        require_docker(_config("local"))
    require_docker(_config("docker"))


def test_the_preflight_says_so_naming_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("runner.agents.preflight.check_agent_model", lambda config, suite: [])
    problems = check_cli_agent(_config("local", "claude-code"), None)
    assert [problem.key for problem in problems] == ["sandbox"]
    assert "agent=claude-code" in problems[0].message


def test_each_cli_has_a_config_file_naming_its_kind() -> None:
    from runner.kinds import KINDS

    conf = Path(__file__).resolve().parents[3] / "conf" / "agent"
    for spec in SPECS:
        name = spec.name
        text = (conf / f"{name}.yaml").read_text()
        assert f"kind: {name}" in text and KINDS.find("agent", name) is not None
