"""provider: vllm — a model served by its own vLLM server, reached through the OpenAI-compatible provider.

The config names the weights and the server (`server:` block, see VLLMServerSettings); the generation keys are
the same as for provider openai. The server starts at `start()` (the runner calls it before the first turn) or,
for models built elsewhere (a judge's or an actor's model), on the first `generate`. `aclose()` stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Literal

from pydantic import model_validator

from runner.models.base import (ChatAnswer, GenerationRequest, Model, ModelBase, ModelResponse, ProviderError,
                                RequestLimits)
from runner.models.cache import ResponseCache
from runner.models import server_keep
from runner.models.openai_provider import GenerationSettings, OpenAIModel, OpenAIModelSettings
from runner.models.vllm_server import ServerStartError, VLLMServer, VLLMServerSettings, server_identity

__all__ = ["VLLMModel", "VLLMModelSettings", "vllm_served"]


class VLLMModelSettings(GenerationSettings):
    provider: Literal["vllm"] = "vllm"
    server: VLLMServerSettings
    # api_key_env: attach mode only (a server started with --api-key).

    @model_validator(mode="after")
    def _served_name(self) -> VLLMModelSettings:
        if self.server.served_model_name is None:
            self.server = self.server.model_copy(update={"served_model_name": self.name})
        return self

    @model_validator(mode="after")
    def _server_limits(self) -> VLLMModelSettings:
        """The request limits are the server's own flags (`limit_mm_per_prompt`, `max_model_len`); a `limits`
        block may only tighten them (a request the server would refuse is never fitted for)."""
        server_images = (self.server.limit_mm_per_prompt or {}).get("image")
        declared = self.limits
        update: dict[str, int] = {}
        for key, served in (("images_per_prompt", server_images), ("context_tokens", self.server.max_model_len)):
            value = getattr(declared, key)
            if served is None:
                continue
            if value is not None and value > int(served):
                raise ValueError(f"limits.{key}={value} exceeds what the server is started with ({served})")
            update[key] = int(served) if value is None else value
        if update:
            self.limits = declared.model_copy(update=update)
        return self

    @model_validator(mode="after")
    def _reasoning_budget(self) -> VLLMModelSettings:
        """vLLM refuses `thinking_token_budget` (HTTP 400) from a server started without a reasoning parser."""
        if self.reasoning_budget_tokens is not None and self.server.mode != "attach" and not self.server.reasoning_parser:
            raise ValueError("reasoning_budget_tokens needs a server started with a reasoning parser "
                             "(server.reasoning_parser, e.g. kimi_k2): vLLM ends the reasoning at the budget only then")
        return self

    @property
    def served_model_name(self) -> str:
        return self.server.served_model_name or self.name

    def cache_identity(self) -> str:
        """Stable across runs (the port is not): the weights' pin, or the attached URL."""
        s = self.server
        if s.mode == "attach":
            return str(s.base_url)
        if s.model_path:
            return f"vllm:{Path(s.model_path).expanduser().resolve()}"
        return f"vllm:{s.hf_repo}@{s.revision}"

    @property
    def writes_compact_json(self) -> bool:
        """The runner starts this server with vLLM's `disable_any_whitespace`: a JSON-schema answer has no
        whitespace between tokens to loop on (an attached server's flags are not the runner's to know)."""
        s = self.server
        return s.mode != "attach" and bool((s.structured_outputs or {}).get("disable_any_whitespace"))

    def openai_settings(self, base_url: str) -> OpenAIModelSettings:
        generation = self.model_dump(exclude={"name", "provider", "server"})
        if self.writes_compact_json:
            generation["whitespace_run_limit"] = None  # nothing to bound: the answer is read whole
        return OpenAIModelSettings(
            name=self.name,
            provider="openai",
            model=self.served_model_name,
            base_url=base_url,
            cache_endpoint=self.cache_identity(),
            **generation,
        )


class VLLMModel(ModelBase):
    """Implements the Model protocol; owns one VLLMServer."""

    def __init__(self, settings: VLLMModelSettings, *, cache: ResponseCache | None = None) -> None:
        self.settings = settings
        self.name = settings.name
        api_key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
        self.server = VLLMServer(
            settings.server, name=settings.name, served_model_name=settings.served_model_name, api_key=api_key
        )
        self._cache = cache
        self._client: OpenAIModel | None = None
        self._starting: asyncio.Task[None] | None = None
        self._failure: str | None = None

    @property
    def request_limits(self) -> RequestLimits:
        return self.settings.limits

    @property
    def max_output_tokens(self) -> int:
        return self.settings.output_cap

    @property
    def log_path(self) -> Path | None:
        return self.server.log_path

    def server_identity(self) -> str:
        """Models of one identity can share a server (vllm_server.server_identity; attach: the same key too)."""
        return f"{self.settings.api_key_env or ''}|{server_identity(self.settings.server)}"

    def share_server_of(self, other: VLLMModel) -> None:
        """Use `other`'s server, started once for both (before either starts): the same weights and flags, so
        its requests are served under `other`'s served name and share its response-cache identity."""
        if other.server_identity() != self.server_identity():
            raise ValueError(f"{self.name}: cannot share the server of {other.name}: its weights or flags differ")
        self.adopt_server(other.server)

    def adopt_server(self, server: VLLMServer) -> None:
        """Use `server` (of this model's identity: another role's, or one an earlier run kept up) instead of a
        server of its own; its requests go under the server's served name."""
        if self._client is not None or self._starting is not None:
            raise RuntimeError(f"{self.name}: its server is already started")
        self.settings = self.settings.model_copy(update={"server": server.settings})
        self.server = server

    async def start(self, *, log_dir: Path | None = None) -> None:
        """Bring the server up (idempotent). Raises ServerStartError with the log's tail when it cannot.

        The launch runs in its own task, shielded from the caller: a judge call that times out while a large
        checkpoint loads must not kill the server half-way; the next caller waits on the same launch.
        """
        if self._client is not None:
            return
        if self._failure is not None:
            raise ServerStartError(self._failure)
        if self._starting is None:
            self._starting = asyncio.get_running_loop().create_task(self._launch(log_dir))
        await asyncio.shield(self._starting)

    async def _launch(self, log_dir: Path | None) -> None:
        self.server.hold(self)
        try:
            base_url = await self.server.start(log_dir=log_dir)
        except ServerStartError as error:
            self._failure = str(error)
            raise
        self._client = OpenAIModel(self.settings.openai_settings(base_url), cache=self._cache)

    @property
    def answers_tool_calls(self) -> bool:
        """The server parses tool calls out of the model's text (`enable_auto_tool_choice` with its
        `tool_call_parser`); a server the user runs (attach) is taken at its word."""
        return self.settings.server.enable_auto_tool_choice or self.settings.server.mode == "attach"

    async def _started(self) -> OpenAIModel:
        if self._client is None:
            try:
                await self.start()
            except ServerStartError as error:
                first = str(error).splitlines()[0]
                raise ProviderError(f"{self.name}: the vLLM server failed to start: {first}") from error
        assert self._client is not None
        return self._client

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        return await (await self._started()).generate(request)

    async def chat(self, body: dict, *, task_id: str, turn: int) -> ChatAnswer:
        return await (await self._started()).chat(body, task_id=task_id, turn=turn)

    async def aclose(self) -> None:
        starting, self._starting = self._starting, None
        if starting is not None and not starting.done():
            starting.cancel()  # the server's own start() stops what it launched when cancelled
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await starting
        client, self._client = self._client, None
        try:
            if client is not None:
                await client.aclose()
        finally:
            # Stopped unless another role's model still holds it, or the next run of this command takes it up.
            if self.server.let_go(self) and not server_keep.park(self.server_identity(), self.server):
                await self.server.aclose()


def vllm_served(model: Model) -> VLLMModel | None:
    """`model` when it runs its own vLLM server (the run starts, shares and stops it); None for any other model.
    The model layer alone tells its implementations apart: callers hand it a Model."""
    return model if isinstance(model, VLLMModel) else None
