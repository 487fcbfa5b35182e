"""Pydantic models of the composed Hydra config.

Hydra composes YAML from conf/; `runner.run.validation.validate_config` checks the resolved dict before any work
starts: this module the keys of the run and the kind of each section, the owners (model providers, suites, the
probe actor, the rules judge, the local sandbox, the browser) their own options, so this module imports none of
them. Every error names the dotted key, the bad value and, for choices, the allowed values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from runner.errors import ConfigError, format_validation_error
from runner.tracking.settings import TrackingSettings


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelConfig(BaseModel):
    """How a model is reached. Provider-specific keys are validated by the provider's own settings."""

    model_config = ConfigDict(extra="allow")

    name: str
    provider: Literal["oracle", "null", "identity", "openai", "vllm"]


class SuiteConfig(BaseModel):
    """Which suite runs. Suite-specific keys are validated by the suite's own settings model."""

    model_config = ConfigDict(extra="allow")

    name: str


class ActorConfig(_Strict):
    name: str
    kind: Literal["probe", "scripted", "none", "llm", "uitars"]
    probe: dict[str, Any] = Field(default_factory=dict)  # runner.actors.probe.ProbeSettings
    options: dict[str, Any] = Field(default_factory=dict)


class JudgeConfig(_Strict):
    name: str
    kind: Literal["rules", "llm"]
    rules: dict[str, Any] = Field(default_factory=dict)  # runner.judges.rules.RulesJudgeSettings
    options: dict[str, Any] = Field(default_factory=dict)


class SandboxConfig(_Strict):
    name: str
    kind: Literal["local", "docker"]
    local: dict[str, Any] = Field(default_factory=dict)  # runner.sandbox.local.LocalSandboxSettings
    options: dict[str, Any] = Field(default_factory=dict)


class ConcurrencyConfig(_Strict):
    """Separate limits per kind of work: model calls, builds, browsers and judge calls.

    None (the default for episodes, model calls and judge calls): follow the serving model's batch capacity
    (runner/run/capacity.py), else 4, 4 and 2."""

    episodes: int | None = Field(default=None, ge=1)
    model_calls: int | None = Field(default=None, ge=1)
    builds: int = Field(default=2, ge=1)
    browsers: int = Field(default=2, ge=1)
    judge_calls: int | None = Field(default=None, ge=1)


class RunSettings(_Strict):
    """How a run places its phases and which stage it runs (runner/run/placement.py, docs/vllm.md)."""

    phases: Literal["auto", "together", "staged"] = "auto"
    stage: Literal["all", "generate", "judge"] = "all"


class RunnerConfig(_Strict):
    model: ModelConfig
    # Model roles a suite declares (runner/run/roles.py), each composed from the conf/model group:
    # `+model@roles.caption=<name>` (or inline `+roles.caption={...}`).
    roles: dict[str, ModelConfig] = Field(default_factory=dict)
    suite: SuiteConfig
    judge: JudgeConfig
    actor: ActorConfig
    sandbox: SandboxConfig
    tracking: TrackingSettings = Field(default_factory=TrackingSettings)
    browser: dict[str, Any] = Field(default_factory=dict)  # runner.browser.launch.BrowserSettings
    concurrency: ConcurrencyConfig = Field(default_factory=ConcurrencyConfig)
    run: RunSettings = Field(default_factory=RunSettings)
    resume: Literal["auto", True, False] = "auto"
    seed: int = 0
    # The index of this run among repeats of one configuration (EvoGenUI-Bench Table 8: regeneration stability):
    # each repeat's model calls get answers of their own from the response cache (`repeat=0,1,2` with -m).
    repeat: int = Field(default=0, ge=0)
    # Independent runs of this configuration in one command (MT-Web2Code Table 3: "averaged over three independent
    # runs"; EvoGenUI-Bench Table 8): run i is `repeat=i` in <run dir>/repeat-<i>/, and <run dir>/repeats.json
    # holds each run's figures with their mean and SD (runner/run/repeats.py).
    repeats: int = Field(default=1, ge=1)
    # Null: fitted to the generator's output cap (runner/models/time_limit.py), so a slow but healthy server's
    # longest answer is not cut into "no response" (e = 0 of EvoGenUI-Bench §4.3); a number is used as given.
    # Both are resolved by runner.run.validation.validate_config: everything downstream reads seconds.
    turn_timeout_s: float | None = Field(default=None, gt=0)
    model_timeout_s: float | None = Field(default=None, gt=0)
    cache_dir: str = ".cache"
    project_root: str = "."  # filled in by the entry point; relative paths resolve against it

    @model_validator(mode="after")
    def _one_repeat_count(self) -> "RunnerConfig":
        if self.repeats > 1 and self.repeat != 0:
            raise ValueError(f"repeat = {self.repeat} with repeats = {self.repeats}: repeats runs repeat=0..."
                             f"{self.repeats - 1} itself; give one of them")
        return self

    def resolve_path(self, value: str | Path) -> Path:
        path = Path(value)
        return path if path.is_absolute() else Path(self.project_root) / path


def parse_config(raw: dict[str, Any]) -> RunnerConfig:
    """Validate the composed config's own keys and each section's kind; raise ConfigError naming every bad key.

    The options of a provider or a suite are left to their owners (runner/run/validation.py calls them)."""
    try:
        return RunnerConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, raw)) from None
