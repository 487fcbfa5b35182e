"""The Model protocol: one chat request in, one raw text answer out (and, for agents, a raw chat exchange)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True)
class GenerationRequest:
    """What the model under test sees: public messages only (OpenAI chat format, images as data URLs)."""

    task_id: str
    turn: int
    messages: list[dict[str, Any]]
    response_format: dict[str, Any] | None = None  # JSON schema request, where supported
    # Which independent generation of the same messages this is (FlowEval §3.1: five per prompt); 0: the only one.
    # Part of the response-cache key, so each sample is answered (and replayed) on its own.
    sample: int = 0


# How an answer ended when it did not end by itself: the server's output cap (OpenAI's `finish_reason: length`),
# or the runner's own bound on a run of whitespace outside JSON strings (runner/models/whitespace_guard.py).
CUT_REASONS = ("length", "whitespace_run")


@dataclass
class ModelResponse:
    text: str  # the answer (a reasoning model's final content, its reasoning apart)
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens, reasoning_tokens
    latency_s: float = 0.0
    cached: bool = False
    raw: Any = None
    finish_reason: str | None = None  # the server's ("stop", "length", ...), or "whitespace_run"
    reasoning: str = ""  # what a reasoning model thought before answering, where the server returns it apart
    max_tokens: int | None = None  # the output cap the request was sent with (reasoning included)

    @property
    def cut(self) -> bool:
        """The answer did not end by itself: the output cap, or the whitespace bound, stopped it."""
        return self.finish_reason in CUT_REASONS

    @property
    def cut_in_reasoning(self) -> bool:
        """Cut before any answer was written: the whole cap went to the reasoning."""
        return self.cut and bool(self.reasoning.strip()) and not self.text.strip()

    def cut_record(self) -> dict[str, Any] | None:
        """What a cut answer spent: where it was cut, its tokens against the cap (None: it ended by itself)."""
        if not self.cut:
            return None
        completion = int(self.usage.get("completion_tokens", 0) or 0)
        reasoning = int(self.usage.get("reasoning_tokens", 0) or 0)
        return {"finish_reason": self.finish_reason, "in": "reasoning" if self.cut_in_reasoning else "answer",
                "completion_tokens": completion, "reasoning_tokens": reasoning,
                "answer_tokens": max(completion - reasoning, 0), "max_tokens": self.max_tokens}


@dataclass
class ChatAnswer:
    """One chat-completions exchange as an agent makes it (runner/agents/proxy.py): the request as it left (the
    model, sampling settings and output cap the config's; never the key) and the completion as the server gave it."""

    request: dict[str, Any]
    completion: dict[str, Any]
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens
    latency_s: float = 0.0


class RequestLimits(BaseModel):
    """What one server accepts. vLLM configs get `images_per_prompt` and `context_tokens` from their `server`
    block (`limit_mm_per_prompt`, `max_model_len`); hosted endpoints declare them in `limits:`."""

    model_config = ConfigDict(extra="forbid")

    images_per_prompt: int | None = Field(None, ge=0)  # None: no limit known
    context_tokens: int | None = Field(None, ge=1)  # prompt + output; None: not checked
    image_max_side: int | None = Field(None, ge=1)  # a family's fixed image size (longer side, px)
    chars_per_token: float = Field(3.0, gt=0)  # UTF-8 bytes per token assumed; 1 for a byte-level tokenizer
    pixels_per_image_token: int = Field(784, ge=1)  # 28 x 28: Qwen2-VL's merged patch


class ProviderError(RuntimeError):
    """No usable response after retries (bucket `provider_error`). `extra`: what the slot's record keeps beside it
    (an agent's summary, runner/agents/strategy.py)."""

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.extra = dict(extra or {})


class Model(Protocol):
    """What callers use of a model; `ModelBase` gives the optional members their defaults."""

    name: str

    @property
    def request_limits(self) -> RequestLimits:
        """What one request to the model's server may hold; requests are fitted to it (runner/models/fitting.py)."""

    @property
    def max_output_tokens(self) -> int:
        """The output cap a request keeps free in the context; 0: none declared."""

    @property
    def answers_tool_calls(self) -> bool:
        """Whether `chat` answers an agent's requests, tools included; False: no agent can run on this model."""

    async def generate(self, request: GenerationRequest) -> ModelResponse: ...

    async def chat(self, body: dict[str, Any], *, task_id: str, turn: int) -> ChatAnswer:
        """One chat-completions request of an agent (messages, tools, tool_choice, stop, an output cap), answered
        whole. The model, the sampling settings and the largest output cap are the config's; ProviderError when no
        answer came after the retries, RequestRefused when the server refused the request itself."""
        ...

    async def aclose(self) -> None: ...


class ModelBase:
    """The defaults of `Model`'s optional members: no declared limits (the oracle, the null and identity models)."""

    name: str

    @property
    def request_limits(self) -> RequestLimits:
        return RequestLimits()

    @property
    def max_output_tokens(self) -> int:
        return 0

    @property
    def answers_tool_calls(self) -> bool:
        return False

    async def chat(self, body: dict[str, Any], *, task_id: str, turn: int) -> ChatAnswer:
        raise ProviderError(f"{self.name}: answers no chat requests with tools (it cannot run an agent)")

    async def aclose(self) -> None:
        return None
