"""provider: vllm through the registry, in attach mode against the fault-injection server (no vLLM needed).

Proves: readiness via GET /v1/models (and a clear error when the server is absent or serves another name),
the OpenAI provider's retries/timeouts/malformed-body handling behind it (ProviderError -> provider_error), a
server that failed to start is not relaunched per call, and config validation names the bad keys.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.run.validation import validate_model_settings
from runner.config import ModelConfig
from runner.models.base import GenerationRequest, ProviderError
from runner.models.registry import build_model
from runner.models.serving import ServedRoles
from runner.models.vllm_provider import VLLMModel
from runner.models.vllm_server import ServerStartError
from tests.support.fault_server import FaultServer, completion

REQUEST = GenerationRequest(task_id="t", turn=0, messages=[{"role": "user", "content": "A counter."}])


def attach_config(base_url: str, **extra: object) -> dict:
    return {
        "name": "tiny",
        "provider": "vllm",
        "cache": False,
        "timeout_s": 1.0,
        "max_retries": 2,
        "retry_base_s": 0.01,
        "retry_max_s": 0.05,
        "server": {"mode": "attach", "base_url": base_url, "ready_timeout_s": 2, "poll_interval_s": 0.1},
        **extra,
    }


def test_attach_generates_through_openai_provider() -> None:
    with FaultServer(lambda messages: (200, completion("<App/>")), models=["tiny"]) as server:
        model = build_model(attach_config(server.base_url.removesuffix("/v1")))
        assert isinstance(model, VLLMModel)

        async def scenario() -> str:
            await model.start()
            try:
                return (await model.generate(REQUEST)).text
            finally:
                await model.aclose()

        assert asyncio.run(scenario()) == "<App/>"
        assert server.requests[0]["model"] == "tiny"


@pytest.mark.parametrize(
    "behaviour, match, calls",
    [
        (lambda m: (500, '{"error": {"message": "boom"}}'), "HTTP 500", 3),  # retried: max_retries=2
        # a body that is no chat completion is retried like a 5xx (a proxy's page, a truncated answer),
        # then provider_error (docs/faults.md)
        (lambda m: (200, "{not json"), "malformed|APIError|JSON|completion", 3),
        (lambda m: (200, None), "Timeout", 3),
    ],
    ids=["http-500", "malformed-json", "hang"],
)
def test_attach_faults_become_provider_errors(behaviour, match: str, calls: int) -> None:
    with FaultServer(behaviour, hang_s=3.0, models=["tiny"]) as server:
        model = build_model(attach_config(server.base_url))

        async def scenario() -> None:
            try:
                await model.generate(REQUEST)  # starts (attaches) lazily
            finally:
                await model.aclose()

        with pytest.raises(ProviderError, match=match):
            asyncio.run(scenario())
        assert server.calls == calls


def test_attach_to_absent_or_wrong_server_fails_clearly() -> None:
    with FaultServer(lambda m: (200, completion("x")), models=None) as server:  # no /v1/models at all
        model = build_model(attach_config(server.base_url))
        with pytest.raises(ServerStartError, match=r"did not answer GET .*/v1/models within 2 s.*HTTP 404"):
            asyncio.run(model.start())
    with FaultServer(lambda m: (200, completion("x")), models=["other-model"]) as server:
        model = build_model(attach_config(server.base_url))
        with pytest.raises(ServerStartError, match=r"does not serve 'tiny' \(it serves \['other-model'\]\)"):
            asyncio.run(model.start())


def test_failed_start_is_not_retried_per_call(tmp_path: Path) -> None:
    weights = tmp_path / "w"
    weights.mkdir()
    (weights / "config.json").write_text("{}")
    config = {
        "name": "broken",
        "provider": "vllm",
        "server": {"model_path": str(weights), "command": [sys.executable, "-c", "import sys; sys.exit(4)"],
                   "log_dir": str(tmp_path), "poll_interval_s": 0.1},
    }
    model = build_model(config)

    async def scenario() -> list[str]:
        errors = []
        for _ in range(2):
            try:
                await model.generate(REQUEST)
            except ProviderError as error:
                errors.append(str(error))
        await model.aclose()
        return errors

    errors = asyncio.run(scenario())
    assert len(errors) == 2 and all("failed to start" in e and "exit code 4" in e for e in errors)
    assert len(list(tmp_path.glob("broken-*.log"))) == 1  # launched once


def test_served_roles_start_only_the_asked_role(tmp_path: Path) -> None:
    """Served models are known by role; ensure() starts only the roles asked for, stop() stops them."""
    with FaultServer(lambda m: (200, completion("x")), models=["tiny"]) as server:
        generator = build_model(attach_config(server.base_url))
        judge = build_model(attach_config(server.base_url))
        roles = ServedRoles.of(log_dir=tmp_path, generator=generator, judge=judge, actor=object())
        assert roles.names("generator") == ["tiny"] and roles.names("actor") == []

        async def scenario() -> tuple[bool, bool, bool]:
            await roles.ensure("generator")
            started = (generator._client is not None, judge._client is not None)
            await roles.stop("generator")
            return (*started, generator._client is None)

        assert asyncio.run(scenario()) == (True, False, True)
        with pytest.raises(ValueError, match="unknown model role"):
            ServedRoles.of(log_dir=tmp_path, caption=generator)


def test_cache_identity_ignores_the_port(tmp_path: Path) -> None:
    from runner.models.vllm_provider import VLLMModelSettings

    settings = VLLMModelSettings.model_validate(
        {"name": "q", "server": {"hf_repo": "Qwen/X", "revision": "c" * 40}}
    )
    a = settings.openai_settings("http://127.0.0.1:1111/v1")
    b = settings.openai_settings("http://127.0.0.1:2222/v1")
    assert a.cache_endpoint == b.cache_endpoint == f"vllm:Qwen/X@{'c' * 40}"
    assert a.model == "q"  # served name defaults to the config name


@pytest.mark.parametrize(
    "raw, expected",
    [
        ({"server": {"hf_repo": "a/b", "revision": "r", "tensor_paralel_size": 2}}, "model.server.tensor_paralel_size: unknown key"),
        ({"server": {"hf_repo": "a/b", "revision": "r", "gpu_memory_utilization": 1.5}}, "model.server.gpu_memory_utilization = 1.5"),
        ({"server": {"hf_repo": "a/b"}}, "needs revision"),
        ({"server": {"hf_repo": "a/b", "revision": "r"}, "temprature": 0}, "model.temprature: unknown key"),
        ({}, "model.server: required but missing"),
    ],
)
def test_config_validation_names_keys(raw: dict, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected.replace(".", r"\.").replace("(", r"\(")):
        validate_model_settings(ModelConfig(name="x", provider="vllm", **raw))


def test_request_limits_are_the_servers_flags() -> None:
    """Requests are fitted to what the server is started with: --limit-mm-per-prompt and --max-model-len."""
    from runner.models.vllm_provider import VLLMModelSettings

    server = {"hf_repo": "Qwen/X", "revision": "c" * 40, "limit_mm_per_prompt": {"image": 4}, "max_model_len": 32768}
    settings = VLLMModelSettings.model_validate({"name": "q", "max_tokens": 8192, "server": server})
    assert settings.limits.images_per_prompt == 4 and settings.limits.context_tokens == 32768
    assert settings.openai_settings("http://127.0.0.1:1/v1").limits == settings.limits  # the client fits to them
    tighter = VLLMModelSettings.model_validate({"name": "q", "server": server, "limits": {"images_per_prompt": 2}})
    assert tighter.limits.images_per_prompt == 2 and tighter.limits.context_tokens == 32768
    with pytest.raises(ValueError, match=r"limits.images_per_prompt=6 exceeds what the server is started with \(4\)"):
        VLLMModelSettings.model_validate({"name": "q", "server": server, "limits": {"images_per_prompt": 6}})


def test_a_served_model_answers_an_agents_tool_calls_where_its_server_parses_them() -> None:
    def model(server: dict) -> VLLMModel:
        return build_model({"name": "m", "provider": "vllm", "server": server})

    assert model({"model_path": "/w", "enable_auto_tool_choice": True, "tool_call_parser": "hermes"}).answers_tool_calls
    assert not model({"model_path": "/w"}).answers_tool_calls
    assert model({"mode": "attach", "base_url": "http://127.0.0.1:9/v1"}).answers_tool_calls  # taken at its word


def test_an_agents_call_reaches_an_attached_server(tmp_path: Path) -> None:
    with FaultServer(lambda messages: (200, completion("tool answer")), models=["tiny"]) as server:
        model = build_model(attach_config(server.base_url))

        async def go():
            try:
                return await model.chat({"messages": REQUEST.messages, "tools": []}, task_id="t", turn=1)
            finally:
                await model.aclose()

        answer = asyncio.run(go())
    assert answer.completion["choices"][0]["message"]["content"] == "tool answer"
    assert server.requests[0]["model"] == "tiny" and server.requests[0]["tools"] == []
