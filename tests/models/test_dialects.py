"""Every shipped endpoint config is accepted by its provider: composed as a run composes it, sent through a local
stand-in that enforces the provider's documented rules (tests/support/provider_standins.py, each rule citing its
page), with the requests the run sends (a generator's answer with an image where the model has vision; a judge's
or actor's structured answer; the live check's probe).

And the converse: the stand-ins refuse what the providers refuse, with their status and error body, so a config
that sent `max_tokens` and temperature 0 to GPT-5.5 (as the configs did before dialects) fails here as it would
there.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from runner.errors import ConfigError
from runner.judges.llm_settings import validate_endpoint
from runner.judges.rubrics import rubric_class
from runner.models.base import GenerationRequest
from runner.models.dialects import DIALECTS, deviations, request_plan
from runner.models.fitting import RequestRefused
from runner.models.registry import build_model
from runner.models.structured import ask_structured, response_format_for
from runner.run.live_check import SCHEMA, probe_messages
from runner.compose import compose as compose_config
from tests.conftest import REPO_ROOT
from tests.support.provider_standins import KEY, RULES, AnthropicRules, OpenAICompatibleRules, ProviderStandIn, images_in

CONF = REPO_ROOT / "conf"
PIXEL = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/AAX+Av4N70a4AAA"
         "AAElFTkSuQmCC")


def _endpoint_configs() -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(config id, role, model settings, the role's options) of every shipped config reached over the OpenAI chat
    API (provider openai), composed as `python -m runner model=... / judge=... / actor=...` composes it."""
    found = []
    for path in sorted((CONF / "model").glob("*.yaml")):
        model = compose_config([f"model={path.stem}"])["model"]
        if model.get("provider") == "openai":
            found.append((f"model={path.stem}", "generator", model, {}))
    for family in ("judge", "actor"):
        for path in sorted((CONF / family).glob("*.yaml")):
            section = compose_config([f"{family}={path.stem}"])[family]
            model = (section.get("options") or {}).get("model")
            if isinstance(model, dict) and model.get("provider", "openai") == "openai":
                found.append((f"{family}={path.stem}", family, validate_endpoint(model, prefix=f"{family}.options.model")[0],
                              section["options"]))
    return found


ENDPOINTS = _endpoint_configs()
# The App. D.1 generators (EvoGenUI-Bench Table 6) and the other hosted models the project ships.
HOSTED = {"model=gpt-5.5", "model=gemini-3.1-pro-preview", "model=gemini-3-flash-preview",
          "model=claude-haiku-4-5-20251001", "model=claude-opus-4-7", "model=glm-4.5-air-api", "model=qwen3.6-plus",
          "model=qwen3-coder-480b-a35b-instruct", "model=gpt-4.1", "model=gpt-4o", "model=claude-sonnet-4",
          "model=claude-opus-4.5", "model=gemini-2.5-pro", "judge=gpt-4o"}


def test_every_hosted_config_is_covered_and_names_its_providers_dialect() -> None:
    ids = {config_id for config_id, *_ in ENDPOINTS}
    assert HOSTED <= ids
    for config_id, _, model, _ in ENDPOINTS:
        assert "dialect" in model, f"{config_id}: a shipped endpoint config names its dialect"
    assert {model["dialect"] for _, _, model, _ in ENDPOINTS} == set(DIALECTS)


class Verdict(BaseModel):
    ok: bool
    score: int
    reason: str


def _answer_model(role: str, options: dict[str, Any]) -> Any:
    if role == "judge":
        return rubric_class(options.get("rubric", "evogenui"))().answer_model(["R1", "R2"])
    from runner.actors.llm import ActionAnswer

    return ActionAnswer


def _rules_for(model: dict[str, Any]):
    dialect = model["dialect"]
    if dialect == "openai-compatible":
        from urllib.parse import urlparse

        return OpenAICompatibleRules(chat_path=urlparse(model["base_url"]).path.rstrip("/") + "/chat/completions")
    return RULES[dialect]()


async def _exchange(model: Any, role: str, options: dict[str, Any], vision: bool) -> list[Any]:
    """The requests the run sends in this role: the live check's probe, then its own calls."""
    results: list[Any] = []
    structured = options.get("structured_output") if role != "generator" else None
    probe = response_format_for(SCHEMA, name="live_check", mode=structured, strict=False) if structured else None
    results.append(await model.generate(GenerationRequest(task_id="t", turn=0, messages=probe_messages(vision),
                                                          response_format=probe)))
    content: Any = "Build a counter app."
    if vision:
        content = [{"type": "text", "text": "Build a counter app like this one."},
                   {"type": "image_url", "image_url": {"url": PIXEL}}]
    messages = [{"role": "system", "content": "You build web apps. Reply in JSON when asked."},
                {"role": "user", "content": content}]
    if structured:
        results.append(await ask_structured(model, messages=messages, answer=_answer_model(role, options),
                                            name="verdict", mode=structured, max_attempts=1))
    else:
        results.append(await model.generate(GenerationRequest(task_id="t", turn=1, messages=messages)))
    return results


@pytest.mark.parametrize(("config_id", "role", "model", "options"), ENDPOINTS, ids=[e[0] for e in ENDPOINTS])
def test_each_shipped_endpoint_config_is_accepted_by_its_providers_stand_in(
        config_id: str, role: str, model: dict[str, Any], options: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    if model.get("api_key_env"):
        monkeypatch.setenv(model["api_key_env"], KEY)
    with ProviderStandIn(_rules_for(model)) as standin:
        settings = {**model, "base_url": standin.base_url(model["base_url"]), "max_retries": 0}
        built = build_model(settings)
        vision = bool(model.get("vision")) and bool(options.get("include_screenshot", True))

        async def go() -> list[Any]:
            try:
                return await _exchange(built, role, options, vision)
            finally:
                await built.aclose()

        results = asyncio.run(go())  # a refusal raises RequestRefused naming the provider's message
    dialect = DIALECTS[model["dialect"]]
    probe, answer = standin.requests[0], standin.requests[-1]
    if model["dialect"] == "anthropic" and role != "generator":
        assert answer.path.endswith("/v1/messages") and answer.body["tool_choice"]["type"] == "tool"
    else:
        assert dialect.token_parameter in answer.body and answer.body[dialect.token_parameter] == model["max_tokens"]
        other = "max_tokens" if dialect.token_parameter == "max_completion_tokens" else "max_completion_tokens"
        assert other not in answer.body
    if model.get("fixed_temperature") is not None:
        assert "temperature" not in probe.body and "temperature" not in answer.body
    else:
        assert answer.body["temperature"] == model["temperature"]
    assert bool(images_in(probe.body)) == vision and bool(images_in(answer.body)) == vision
    if role != "generator":  # the structured answer validated (ask_structured raises otherwise)
        assert results[-1].attempts == 1


def test_gpt_5_5_is_sent_max_completion_tokens_and_no_temperature(monkeypatch: pytest.MonkeyPatch) -> None:
    """EvoGenUI-Bench App. D.1 says temperature 0; GPT-5 takes only 1: none is sent, and the deviation is said."""
    model = compose_config(["model=gpt-5.5"])["model"]
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ProviderStandIn(RULES["openai"]()) as standin:
        built = build_model({**model, "base_url": standin.base_url(model["base_url"])})
        response = asyncio.run(_generate(built, [{"role": "user", "content": "hi"}]))
    assert response.text == "OK"
    (sent,) = standin.bodies
    assert sent["max_completion_tokens"] == 32768 and "max_tokens" not in sent and "temperature" not in sent
    plan = request_plan(built.settings)
    assert plan["token_parameter"] == "max_completion_tokens" and plan["temperature_sent"] is False
    assert plan["provider_default_temperature"] == 1.0 and plan["temperature_configured"] == 0.0
    (deviation,) = deviations(built.settings)
    assert "temperature 0 configured, not sent" in deviation and "default, 1" in deviation


async def _generate(model: Any, messages: list[dict[str, Any]], response_format: dict | None = None) -> Any:
    try:
        return await model.generate(GenerationRequest(task_id="t", turn=1, messages=messages,
                                                      response_format=response_format))
    finally:
        await model.aclose()


def _refusal(rules: Any, settings: dict[str, Any], messages: list[dict[str, Any]] | None = None,
             response_format: dict | None = None) -> RequestRefused:
    with ProviderStandIn(rules) as standin:
        built = build_model({**settings, "base_url": standin.base_url(settings["base_url"]), "max_retries": 0})
        with pytest.raises(RequestRefused) as refused:
            asyncio.run(_generate(built, messages or [{"role": "user", "content": "hi"}], response_format))
    return refused.value


def test_the_old_gpt_5_5_request_is_refused_as_openai_refuses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request the config made before dialects: max_tokens and temperature 0 (HTTP 400, OpenAI's words)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = compose_config(["model=gpt-5.5"])["model"]
    old = {**model, "dialect": "openai-compatible", "fixed_temperature": None}
    refused = _refusal(RULES["openai"](), {**old, "base_url": "http://127.0.0.1/v1"})
    assert refused.status == 400
    assert refused.server_message == ("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                      "'max_completion_tokens' instead.")
    refused = _refusal(RULES["openai"](), {**model, "fixed_temperature": None, "base_url": "http://127.0.0.1/v1"})
    assert "'temperature' does not support 0.0 with this model" in refused.server_message


def test_claude_opus_4_7_refuses_any_temperature(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = compose_config(["model=claude-opus-4-7"])["model"]
    refused = _refusal(AnthropicRules(), {**model, "fixed_temperature": None})
    assert refused.status == 400 and refused.server_message == "`temperature` is deprecated for this model."


def test_anthropics_compatibility_layer_ignores_response_format_so_schemas_go_through_messages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the layer, a JSON-schema request comes back as prose (the doc: response_format is ignored); the
    dialect sends it to the Messages API as a forced tool call and gets the schema's JSON back."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = compose_config(["model=claude-sonnet-4"])["model"]
    schema_request = response_format_for(SCHEMA, name="verdict", mode="json_schema")
    messages = [{"role": "system", "content": "You judge apps."},
                {"role": "user", "content": [{"type": "text", "text": "Judge this."},
                                             {"type": "image_url", "image_url": {"url": PIXEL}}]}]
    with ProviderStandIn(AnthropicRules()) as standin:
        url = standin.base_url(model["base_url"])
        through_layer = build_model({**model, "base_url": url, "dialect": "openai-compatible"})
        ignored = asyncio.run(_generate(through_layer, messages, schema_request))
        native = build_model({**model, "base_url": url})
        answered = asyncio.run(_generate(native, messages, schema_request))
    assert ignored.text == "Sure! Everything looks fine to me."  # no JSON: the schema was ignored
    assert json.loads(answered.text) == {"ok": True}
    assert answered.raw["finish_reason"] == "stop" and answered.usage == {"prompt_tokens": 21, "completion_tokens": 5}
    sent = standin.requests[-1]
    assert sent.path == "/v1/messages" and sent.headers["x-api-key"] == KEY and "authorization" not in sent.headers
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body["system"] == "You judge apps." and [m["role"] for m in sent.body["messages"]] == ["user"]
    image = sent.body["messages"][0]["content"][1]
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert sent.body["tools"][0]["input_schema"] == SCHEMA
    assert sent.body["tool_choice"] == {"type": "tool", "name": "verdict"}
    assert sent.body["max_tokens"] == model["max_tokens"] and sent.body["temperature"] == 0.0


def test_a_schema_that_is_no_object_is_wrapped_for_the_tool_and_unwrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """An actor's action is a union of objects; a tool's input must be one: it becomes the input's one field."""
    from runner.actors.llm import ActionAnswer
    from runner.models.structured import decoding_schema

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = compose_config(["model=claude-haiku-4-5-20251001"])["model"]
    schema = decoding_schema(ActionAnswer)
    assert schema.get("type") != "object"
    with ProviderStandIn(AnthropicRules()) as standin:
        built = build_model({**model, "base_url": standin.base_url(model["base_url"])})
        response = asyncio.run(_generate(built, [{"role": "user", "content": "Act."}],
                                         response_format_for(schema, name="actor_action", mode="json_schema")))
    assert standin.requests[-1].body["tools"][0]["input_schema"]["required"] == ["answer"]
    ActionAnswer.validate_python(json.loads(response.text))  # the action itself, not the wrapper


def test_gemini_refuses_a_field_it_does_not_define(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    model = compose_config(["model=gemini-3-flash-preview"])["model"]
    refused = _refusal(RULES["gemini"](), {**model, "extra_body": {"top_k": 5}})
    assert refused.status == 400 and refused.server_message == ('Invalid JSON payload received. Unknown name "top_k": '
                                                                'Cannot find field.')


def test_dashscope_and_zai_get_json_mode_for_a_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither documents JSON Schema mode for these models: the dialect asks for JSON mode and says so; sent as
    json_schema, both refuse it."""
    schema_request = response_format_for(SCHEMA, name="verdict", mode="json_schema")
    messages = [{"role": "user", "content": "Answer in JSON."}]
    for config, env in (("qwen3.6-plus", "DASHSCOPE_API_KEY"), ("glm-4.5-air-api", "ZAI_API_KEY")):
        monkeypatch.setenv(env, KEY)
        model = compose_config([f"model={config}"])["model"]
        with ProviderStandIn(RULES[model["dialect"]]()) as standin:
            built = build_model({**model, "base_url": standin.base_url(model["base_url"])})
            assert json.loads(asyncio.run(_generate(built, messages, schema_request)).text) == {"ok": True}
        assert standin.bodies[-1]["response_format"] == {"type": "json_object"}
        (deviation,) = deviations(built.settings, structured="json_schema")
        assert "sent as json_object" in deviation
        refused = _refusal(RULES[model["dialect"]](), {**model, "dialect": "openai-compatible", "max_tokens": 64},
                           messages, schema_request)
        assert refused.status == 400


def test_dashscopes_json_mode_needs_the_word_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DASHSCOPE_API_KEY", KEY)
    model = compose_config(["model=qwen3.6-plus"])["model"]
    refused = _refusal(RULES["dashscope"](), model, [{"role": "user", "content": "Answer."}],
                       {"type": "json_object"})
    assert "must contain the word 'json'" in refused.server_message


@pytest.mark.parametrize(("config", "dialect"), [("local-openai", "openai-compatible"), ("gpt-4o", "anthropic")])
def test_a_base_url_on_a_providers_host_must_name_its_dialect(config: str, dialect: str) -> None:
    """`model=local-openai model.base_url=https://api.openai.com/v1` would send max_tokens to OpenAI: refused."""
    model = compose_config([f"model={config}"])["model"]
    with pytest.raises(ConfigError, match="is OpenAI's API: set dialect: openai"):
        build_model({**model, "base_url": "https://api.openai.com/v1", "dialect": dialect})


def test_temperatures_a_provider_refuses_are_config_errors() -> None:
    model = compose_config(["model=claude-sonnet-4"])["model"]
    with pytest.raises(ConfigError, match=r"temperature = 1.5: outside what Anthropic accepts, \[0, 1\]"):
        build_model({**model, "temperature": 1.5})
    dashscope = compose_config(["model=qwen3.6-plus"])["model"]
    with pytest.raises(ConfigError, match=r"\[0, 2\)"):
        build_model({**dashscope, "temperature": 2.0})
    gpt = compose_config(["model=gpt-5.5"])["model"]
    with pytest.raises(ConfigError, match="takes no top_p"):
        build_model({**gpt, "top_p": 0.9})


def test_an_unknown_dialect_is_a_config_error_naming_the_choices() -> None:
    model = compose_config(["model=gpt-4o"])["model"]
    with pytest.raises(ConfigError, match="dialect"):
        build_model({**model, "dialect": "openia"})


def test_dialect_docs_are_cited() -> None:
    for dialect in DIALECTS.values():
        assert dialect.docs and all(url.startswith("https://") for url in dialect.docs)
