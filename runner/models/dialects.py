"""Provider dialects: what each family of chat endpoints accepts, as its own documentation states it.

An endpoint model's config names its dialect (`dialect:`, provider openai); the request is built from that one
row, never from the model's name. A dialect fixes

- the name of the output-cap parameter (OpenAI's GPT-5 and o-series refuse `max_tokens`),
- the temperatures the API accepts (a model that takes only its provider's default declares it in its config,
  `fixed_temperature`; the request then leaves temperature and top_p out and the run records the deviation),
- which structured-output request the endpoint honours: a requested `json_schema` is sent as is, narrowed to
  `json_object`, sent through the provider's own API (`anthropic_tool`: Anthropic's Messages API with a forced
  tool call, since its OpenAI-compatibility layer ignores `response_format`), or not sent at all (`prompt`: the
  prompt alone asks for the JSON, which is parsed and validated as always);
- the API hosts that speak it: a `base_url` on one of them must name its dialect (a config error otherwise).

`request_plan` says what one role's requests carry and `deviations` what differs from its config; lineage.json
and the run's summary record both (runner/run/lineage.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlparse

__all__ = [
    "DIALECTS",
    "Dialect",
    "DialectName",
    "StructuredKind",
    "check_settings",
    "deviations",
    "dialect_of",
    "request_plan",
    "sampling_parameters",
    "structured_kind",
]

DialectName = Literal["openai", "anthropic", "gemini", "dashscope", "zai", "openai-compatible"]
# What a structured request becomes on the wire (see the module docstring).
StructuredKind = Literal["json_schema", "json_object", "anthropic_tool", "prompt"]


@dataclass(frozen=True)
class Dialect:
    name: str
    provider: str  # who documents it
    docs: tuple[str, ...]  # the pages each rule below comes from
    token_parameter: Literal["max_completion_tokens", "max_tokens"]
    temperature_min: float
    temperature_max: float
    temperature_max_inclusive: bool
    structured: Mapping[str, StructuredKind]  # requested response_format type -> what is sent
    structured_note: str  # why a request is narrowed, for the record
    hosts: frozenset[str] = field(default_factory=frozenset)

    def temperature_accepted(self, value: float) -> bool:
        if value < self.temperature_min:
            return False
        return value <= self.temperature_max if self.temperature_max_inclusive else value < self.temperature_max

    @property
    def temperature_range(self) -> str:
        upper = "]" if self.temperature_max_inclusive else ")"
        top = "inf" if math.isinf(self.temperature_max) else f"{self.temperature_max:g}"
        return f"[{self.temperature_min:g}, {top}{upper}"


_PASS_THROUGH: Mapping[str, StructuredKind] = {"json_schema": "json_schema", "json_object": "json_object"}

DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect
    for dialect in (
        Dialect(
            name="openai",
            provider="OpenAI",
            docs=(
                # `max_tokens` is deprecated in favour of `max_completion_tokens` and not compatible with the
                # o-series; GPT-5 models answer it with HTTP 400 "Unsupported parameter".
                "https://platform.openai.com/docs/api-reference/chat/create",
                # Reasoning models (GPT-5 family, o-series) accept only the default temperature (1) and top_p.
                "https://platform.openai.com/docs/guides/reasoning",
                "https://platform.openai.com/docs/guides/structured-outputs",
            ),
            token_parameter="max_completion_tokens",
            temperature_min=0.0, temperature_max=2.0, temperature_max_inclusive=True,
            structured=_PASS_THROUGH,
            structured_note="",
            hosts=frozenset({"api.openai.com"}),
        ),
        Dialect(
            name="anthropic",
            provider="Anthropic",
            docs=(
                # The OpenAI-compatibility layer: temperature between 0 and 1, `max_tokens` and
                # `max_completion_tokens` fully supported, `response_format` ignored.
                "https://platform.claude.com/docs/en/api/openai-sdk",
                # Structured output through the Messages API: a tool whose input_schema is the schema, forced
                # with tool_choice {"type": "tool", "name": ...}; the answer is the tool_use block's input.
                "https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use",
                "https://platform.claude.com/docs/en/api/messages",
                # Claude Opus 4.7 removed temperature, top_p and top_k: any value is refused with HTTP 400.
                "https://platform.claude.com/docs/en/about-claude/models/whats-new-claude-4-7",
            ),
            token_parameter="max_tokens",
            temperature_min=0.0, temperature_max=1.0, temperature_max_inclusive=True,
            structured={"json_schema": "anthropic_tool", "json_object": "prompt"},
            structured_note="Anthropic's OpenAI-compatibility layer ignores response_format: a JSON schema goes "
                            "through the Messages API as a forced tool call; JSON mode has no equivalent, so the "
                            "prompt alone asks for the JSON",
            hosts=frozenset({"api.anthropic.com"}),
        ),
        Dialect(
            name="gemini",
            provider="Google (Gemini API, OpenAI mode)",
            docs=(
                "https://ai.google.dev/gemini-api/docs/openai",
                # ChatCompletionsRequest: maxCompletionTokens, temperature, responseFormat with a JSON schema;
                # a field it does not know is refused (HTTP 400 INVALID_ARGUMENT "Unknown name").
                "https://ai.google.dev/api/compatibility",
            ),
            token_parameter="max_completion_tokens",
            temperature_min=0.0, temperature_max=2.0, temperature_max_inclusive=True,
            structured=_PASS_THROUGH,
            structured_note="",
            hosts=frozenset({"generativelanguage.googleapis.com"}),
        ),
        Dialect(
            name="dashscope",
            provider="Alibaba Cloud Model Studio (DashScope, OpenAI-compatible mode)",
            docs=(
                "https://www.alibabacloud.com/help/en/model-studio/compatibility-of-openai-with-dashscope",
                # max_completion_tokens replaces max_tokens on every OpenAI-compatible model from 2026-04-20.
                "https://www.alibabacloud.com/en/notice/model_studio_notice_of_changes_to_certain_model_fields_724",
                # JSON Object mode for most Qwen models (the prompt must contain "JSON"); JSON Schema mode only for
                # the qwen3-max, qwen-plus and qwen-flash series.
                "https://www.alibabacloud.com/help/en/model-studio/json-mode",
            ),
            token_parameter="max_completion_tokens",
            temperature_min=0.0, temperature_max=2.0, temperature_max_inclusive=False,
            structured={"json_schema": "json_object", "json_object": "json_object"},
            structured_note="Model Studio's JSON Schema mode covers only the qwen3-max, qwen-plus and qwen-flash "
                            "series: a JSON schema is requested as JSON Object mode",
            hosts=frozenset({"dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com", "dashscope-us.aliyuncs.com"}),
        ),
        Dialect(
            name="zai",
            provider="Z.ai",
            docs=(
                # max_tokens, temperature in [0.0, 1.0], response_format {"type": "text" | "json_object"}.
                "https://docs.z.ai/api-reference/llm/chat-completion",
                "https://docs.z.ai/guides/overview/concept-param",
                "https://docs.z.ai/api-reference/api-code",
            ),
            token_parameter="max_tokens",
            temperature_min=0.0, temperature_max=1.0, temperature_max_inclusive=True,
            structured={"json_schema": "json_object", "json_object": "json_object"},
            structured_note="Z.ai documents response_format types text and json_object only: a JSON schema is "
                            "requested as json_object",
            hosts=frozenset({"api.z.ai", "open.bigmodel.cn"}),
        ),
        Dialect(
            name="openai-compatible",
            provider="any OpenAI-compatible server (vLLM, llama.cpp, SGLang, ...)",
            docs=(
                "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html",
                "https://docs.vllm.ai/en/latest/features/structured_outputs.html",
            ),
            token_parameter="max_tokens",
            temperature_min=0.0, temperature_max=math.inf, temperature_max_inclusive=False,
            structured=_PASS_THROUGH,
            structured_note="",
        ),
    )
}


def dialect_of(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r}; choose one of {', '.join(DIALECTS)}") from None


def _get(settings: Any, key: str, default: Any = None) -> Any:
    if isinstance(settings, Mapping):
        return settings.get(key, default)
    return getattr(settings, key, default)


def check_settings(settings: Any) -> None:
    """The dialect's rules on a model config (ValueError naming the key): its base_url host is not another
    dialect's, and the temperature it sends is one the API accepts."""
    chosen = dialect_of(str(_get(settings, "dialect", "openai-compatible")))
    host = (urlparse(str(_get(settings, "base_url") or "")).hostname or "").lower()
    owner = next((d for d in DIALECTS.values() if host in d.hosts), None)
    if owner is not None and owner.name != chosen.name:
        raise ValueError(f"dialect = {chosen.name!r}: base_url {_get(settings, 'base_url')!r} is {owner.provider}'s "
                         f"API: set dialect: {owner.name} ({owner.docs[0]})")
    fixed = _get(settings, "fixed_temperature")
    if fixed is not None:
        if _get(settings, "top_p") is not None:
            raise ValueError(f"top_p = {_get(settings, 'top_p')}: a model that accepts only its provider's default "
                             "sampling (fixed_temperature) takes no top_p either")
        return
    temperature = float(_get(settings, "temperature", 0.0))
    if not chosen.temperature_accepted(temperature):
        raise ValueError(f"temperature = {temperature:g}: outside what {chosen.provider} accepts, "
                         f"{chosen.temperature_range} ({chosen.docs[0]})")


def sampling_parameters(settings: Any) -> dict[str, Any]:
    """The sampling and output-cap parameters of every request, named as the dialect names them."""
    chosen = dialect_of(str(_get(settings, "dialect", "openai-compatible")))
    # the request's cap: the answer's, plus a thinking model's reasoning budget where one is set
    cap = int(_get(settings, "max_tokens")) + int(_get(settings, "reasoning_budget_tokens", None) or 0)
    params: dict[str, Any] = {chosen.token_parameter: cap}
    if _get(settings, "fixed_temperature") is None:  # else the provider's own default applies: nothing is sent
        params["temperature"] = float(_get(settings, "temperature"))
        if _get(settings, "top_p") is not None:
            params["top_p"] = float(_get(settings, "top_p"))
    if _get(settings, "seed") is not None:
        params["seed"] = int(_get(settings, "seed"))
    return params


def structured_kind(settings: Any, requested: str | None) -> StructuredKind | None:
    """What a request for `requested` (a response_format type: json_schema, json_object; None: none) becomes."""
    if requested is None or requested == "text":
        return None
    chosen = dialect_of(str(_get(settings, "dialect", "openai-compatible")))
    return chosen.structured.get(requested, "prompt")


def request_plan(settings: Any, *, structured: str | None = None, images: bool = False) -> dict[str, Any]:
    """What one role's requests carry (lineage.json's `request_parameters`)."""
    chosen = dialect_of(str(_get(settings, "dialect", "openai-compatible")))
    params = sampling_parameters(settings)
    fixed = _get(settings, "fixed_temperature")
    plan: dict[str, Any] = {
        "dialect": chosen.name,
        "token_parameter": chosen.token_parameter,
        "max_tokens": int(_get(settings, "max_tokens")),
        "temperature": params.get("temperature"),
        "temperature_configured": float(_get(settings, "temperature", 0.0)),
        "temperature_sent": "temperature" in params,
    }
    if fixed is not None:
        plan["provider_default_temperature"] = float(fixed)
    if structured is not None:
        plan["structured_output"] = {"requested": structured, "sent": structured_kind(settings, structured)}
    plan["images"] = images
    return plan


def deviations(settings: Any, *, structured: str | None = None) -> list[str]:
    """How this model's requests differ from its config, one phrase each (empty: none)."""
    chosen = dialect_of(str(_get(settings, "dialect", "openai-compatible")))
    found: list[str] = []
    fixed = _get(settings, "fixed_temperature")
    configured = float(_get(settings, "temperature", 0.0))
    if fixed is not None and not math.isclose(float(fixed), configured):
        found.append(f"temperature {configured:g} configured, not sent: {_get(settings, 'model') or _get(settings, 'name')} "
                     f"accepts only {chosen.provider}'s default, {float(fixed):g}")
    sent = structured_kind(settings, structured)
    # A schema sent as a forced tool's input schema is still the schema: not a deviation.
    if structured is not None and sent != structured and not (structured == "json_schema" and sent == "anthropic_tool"):
        found.append(f"structured output {structured} requested, sent as {sent}: {chosen.structured_note}")
    return found
