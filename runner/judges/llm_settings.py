"""The options of a `kind: llm` judge (`judge.options`), apart from the judge itself: the evidence bundle
(runner/judges/llm_bundle.py) sizes its sections by them, and the judge builds on the bundle."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from runner.errors import ConfigError, format_validation_error
from runner.judges.rubrics import RUBRICS, rubric_class
from runner.models.role import declared_vision
from runner.kinds import KINDS


class EndpointSettings(BaseModel):
    """Options of a kind that calls an endpoint model under `model` (the LLM judge, the LLM and UI-TARS actors):
    the model's provider settings are parsed with them, once (`with_endpoint`, from their `from_options`)."""

    model: dict[str, Any]
    _endpoint: Any = PrivateAttr(default=None)

    @property
    def endpoint(self) -> Any:
        """The model's provider settings (e.g. OpenAIModelSettings), as validated with these options."""
        return self._endpoint

    @property
    def vision(self) -> bool:
        """The model's declared `vision` (runner/models/role.py: one default)."""
        return declared_vision(self.model)

    def with_endpoint(self, *, prefix: str) -> None:
        """Check `model` like a model config (ConfigError naming `prefix.<key>`) and keep its provider's settings."""
        self.model, self._endpoint = validate_endpoint(self.model, prefix=prefix)


class LLMJudgeSettings(EndpointSettings):
    """`judge.options` of a `kind: llm` judge."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    # The endpoint: the keys of a model config (provider openai: OpenAIModelSettings; name defaults to `model`).
    model: dict[str, Any]
    rubric: str = "evogenui"
    max_attempts: int = Field(3, ge=1, le=10)  # malformed verdicts are retried, then judge_error (a cut one: truncated)
    structured_output: Literal["json_schema", "json_object", "none"] = "json_schema"
    strict_schema: bool = False  # OpenAI strict mode; most local servers ignore it
    judge_unevaluable: bool = False  # also ask the model when the artifact did not build or load
    # What the bundle holds, and how much of each (characters).
    include_screenshot: bool = True  # sent only when the model has vision (model.vision: true)
    # None: the rubric's own default (evogenui: full page, EvoGenUI-Bench §5.2 "refreshed full-page screenshots").
    screenshot: Literal["viewport", "full"] | None = None
    screenshot_max_side: int = Field(2048, ge=0)  # pixels; 0 keeps the original size
    max_step_screenshots: int = Field(0, ge=0)  # also the last N actor step screenshots
    max_dom_chars: int = Field(20000, ge=0)
    max_visible_text_chars: int = Field(6000, ge=0)
    max_source_chars: int = Field(40000, ge=0)
    max_trace_chars: int = Field(12000, ge=0)
    max_tool_log_chars: int = Field(12000, ge=0)
    max_state_chars: int = Field(6000, ge=0)
    include_state_diffs: bool = False  # each tool call's state_after in the log section
    max_build_log_chars: int = Field(3000, ge=0)
    max_contract_chars: int = Field(8000, ge=0)
    max_context_chars: int = Field(4000, ge=0)
    max_assistant_chars: int = Field(6000, ge=0)
    max_previous_chars: int = Field(600, ge=0)  # per field of each previous turn

    @classmethod
    def from_options(cls, options: dict[str, Any], *, prefix: str = "judge.options") -> "LLMJudgeSettings":
        try:
            settings = cls.model_validate(options)
        except ValidationError as error:
            raise ConfigError(format_validation_error(error, options, prefix)) from None
        if settings.rubric not in RUBRICS:
            raise ConfigError(
                f"invalid configuration:\n  {prefix}.rubric = {settings.rubric!r}: choose one of {sorted(RUBRICS)}"
            )
        settings.with_endpoint(prefix=f"{prefix}.model")
        return settings

    @property
    def screenshot_kind(self) -> str:
        """The screenshot sent: `screenshot` when set, else the rubric's default."""
        if self.screenshot is not None:
            return self.screenshot
        return rubric_class(self.rubric).default_screenshot



def validate_endpoint(model: dict[str, Any], *, prefix: str) -> tuple[dict[str, Any], Any]:
    """Check an endpoint dict like a model config; returns it with `name` defaulted to the served id, and its
    provider's settings."""
    model = dict(model)
    if "model" in model and "name" not in model:
        model["name"] = str(model["model"])
    provider = model.get("provider", "openai")
    model["provider"] = provider
    endpoints = [name for name in KINDS.names("model") if KINDS.get("model", name).traced]
    if provider not in endpoints:
        raise ConfigError(
            f"invalid configuration:\n  {prefix}.provider = {provider!r}: a judge or actor needs an endpoint "
            f"model ({' or '.join(endpoints)})"
        )
    settings = KINDS.get("model", provider).parse(model, prefix)  # the provider's own, before any work starts
    return model, settings
