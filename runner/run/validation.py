"""Validation of a composed config, whole: the run's own keys and kinds (runner/config.py), then each section's
options by its owner (model providers, suites). Every error names the dotted key, the bad value and, for
choices, the allowed values; a typo fails here, before any work starts.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from runner.actors.probe import ProbeSettings
from runner.browser.launch import BrowserSettings
from runner.config import ModelConfig, RunnerConfig, parse_config
from runner.errors import ConfigError, format_validation_error, section_settings
from runner.judges.rules import RulesJudgeSettings
from runner.models.openai_provider import OpenAIModelSettings
from runner.models.time_limit import model_call_limit_s, turn_limit_s
from runner.models.vllm_provider import VLLMModelSettings
from runner.sandbox.local import LocalSandboxSettings
from runner.suites.registry import validate_suite_options


DECODING_KEYS = ("temperature", "max_tokens")


def validate_config(raw: dict[str, Any]) -> RunnerConfig:
    """Validate the resolved config dict; raise ConfigError naming every bad key and value."""
    config = parse_config(raw)
    # Provider- and suite-specific sections are validated by their owners, with the same error style.
    validate_model_settings(config.model, prefix="model")
    for role, model in config.roles.items():
        validate_model_settings(model, prefix=f"roles.{role}")
    validate_suite_options(config.suite, prefix="suite")
    section_settings(ProbeSettings, config.actor.probe, "actor.probe")
    section_settings(RulesJudgeSettings, config.judge.rules, "judge.rules")
    section_settings(LocalSandboxSettings, config.sandbox.local, "sandbox.local")
    section_settings(BrowserSettings, config.browser, "browser")
    return fit_time_limits(config)


def fit_time_limits(config: RunnerConfig) -> RunnerConfig:
    """The run's limits in seconds: a null `model_timeout_s` fitted to the generator's output cap, a null
    `turn_timeout_s` to that plus the rest of a turn (runner/models/time_limit.py)."""
    model_call = model_call_limit_s(config.model_timeout_s, config.model.model_dump())
    return config.model_copy(update={"model_timeout_s": model_call,
                                     "turn_timeout_s": turn_limit_s(config.turn_timeout_s, model_call)})


def validate_model_settings(model: ModelConfig, *, prefix: str = "model") -> None:
    """Endpoint providers validate their own keys; replay providers take none beyond name/provider."""
    raw = model.model_dump()
    if model.provider in ("openai", "vllm"):
        if model.provider == "vllm":
            try:
                VLLMModelSettings.model_validate(raw)
            except ValidationError as error:
                raise ConfigError(format_validation_error(error, raw, prefix)) from None
            return
        try:
            OpenAIModelSettings.model_validate(raw)
        except ValidationError as error:
            raise ConfigError(format_validation_error(error, raw, prefix)) from None
        return
    # Replay providers decode nothing: a preset's decoding settings (a paper's temperature and output cap) are
    # accepted and have no effect, so `+experiment=...` also runs with model=oracle.
    extra = sorted(set(raw) - {"name", "provider", *DECODING_KEYS})
    if extra:
        raise ConfigError(
            f"invalid configuration:\n  {prefix}.{extra[0]}: unknown key for provider {model.provider!r} "
            f"(it takes only name and provider, and ignores {' and '.join(DECODING_KEYS)})"
        )
