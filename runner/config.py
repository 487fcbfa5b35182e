"""Pydantic models of the composed Hydra config.

Hydra composes YAML from conf/; `runner.run.validation.validate_config` checks the resolved dict before any work
starts: this module the keys of the run and the kind of each section (against the kinds registered in
runner/kinds.py, which the caller passes in), the owners (model providers, suites, each judge, actor and
sandbox kind, the browser) their own options, so this module imports none of them. Every error names the
dotted key, the bad value and, for choices, the allowed values.
"""

from __future__ import annotations

from pathlib import Path
from collections.abc import Collection, Mapping
from typing import Any, Literal

from pydantic import (BaseModel, ConfigDict, Field, PrivateAttr, SerializerFunctionWrapHandler, ValidationError,
                      model_serializer, model_validator)

from runner.errors import ConfigError, format_validation_error
from runner.tracking.settings import TrackingSettings

class UnresolvedConfig(RuntimeError):
    """A section's parsed settings were asked of a config that runner.run.validation.validate_config did not
    resolve (a programming error: every config the runner works with comes from there)."""


def _resolved(value: Any, what: str) -> Any:
    if value is None:
        raise UnresolvedConfig(f"{what} is not resolved: build the config with runner.run.validation.validate_config")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelConfig(BaseModel):
    """How a model is reached. Provider-specific keys are validated by the provider's own settings."""

    model_config = ConfigDict(extra="allow")

    name: str
    provider: str  # a model provider registered in runner/kinds.py; parse_config checks it is one


class SuiteConfig(BaseModel):
    """Which suite runs. Suite-specific keys are validated by the suite's own settings model."""

    model_config = ConfigDict(extra="allow")

    name: str
    _settings: Any = PrivateAttr(default=None)  # the suite's settings model, parsed once by runner.run.validation

    @property
    def settings(self) -> Any:
        """The suite's validated settings (its SuiteSettings subclass), or None where validation did not parse it."""
        return self._settings

    def with_settings(self, settings: BaseModel) -> "SuiteConfig":
        """A copy carrying the suite's parsed settings (runner.run.validation is the one caller)."""
        copy = self.model_copy()
        copy._settings = settings
        return copy


class KindConfig(BaseModel):
    """A section that names a registered kind (runner/kinds.py) and holds that kind's settings: under `options`,
    or under the section the kind declares (`actor.probe`, `judge.rules`, `sandbox.local`). parse_config checks
    the kind is registered and that every other key is a section some kind of the family declares."""

    model_config = ConfigDict(extra="allow")

    name: str
    kind: str
    options: dict[str, Any] = Field(default_factory=dict)
    # The kind's settings, parsed once by runner.run.validation (not dumped: config.yaml and the hash keep the
    # section as written); None for a kind without settings.
    _settings: BaseModel | None = PrivateAttr(default=None)
    _parsed: bool = PrivateAttr(default=False)

    def section(self, name: str) -> dict[str, Any]:
        """The settings under `name` ({} when the section is absent)."""
        value = self.options if name == "options" else (self.model_extra or {}).get(name)
        return dict(value or {})

    @property
    def resolved(self) -> bool:
        """Its kind's settings are parsed (runner.kinds.KINDS.resolve)."""
        return self._parsed

    @property
    def settings(self) -> Any:
        """The kind's validated settings model (its `options` or its own section), or None where it has none."""
        _resolved(self._parsed or None, f"the {self.kind!r} section's settings")
        return self._settings

    def with_settings(self, settings: BaseModel | None) -> "KindConfig":
        """A copy carrying its kind's parsed settings (runner.run.validation is the one caller)."""
        copy = self.model_copy()
        copy._settings, copy._parsed = settings, True
        return copy


class ActorConfig(KindConfig):
    pass


class JudgeConfig(KindConfig):
    pass


class SandboxConfig(KindConfig):
    pass


class AgentConfig(KindConfig):
    """`agent`: who generates, in the slot's workspace (runner/agents/); `none`, one model call per turn (or the
    suite's rounds), is the default. `paper`: model name -> the agent a paper generated that model with (a
    preset's, FlowEval §3.1's official CLIs); a run of a listed model with another agent records the deviation."""

    paper: dict[str, str] = Field(default_factory=dict)


def _no_agent() -> AgentConfig:
    return AgentConfig(name="none", kind="none")


class ConcurrencyConfig(_Strict):
    """Separate limits per kind of work: episodes, model calls, builds, browser visits, browsers and judge calls.

    None (the default for all but builds): follow the serving models' batch capacity, bounded by the machine's
    memory and cores (runner/run/capacity.py, which says why for each); else 4 episodes, 4 model calls, visits as
    episodes, browsers one per core, 2 judge calls."""

    episodes: int | None = Field(default=None, ge=1)
    model_calls: int | None = Field(default=None, ge=1)
    builds: int = Field(default=2, ge=1)
    visits: int | None = Field(default=None, ge=1)  # browser pages open at once, over all browsers
    browsers: int | None = Field(default=None, ge=1)  # browser processes; each holds many visits' contexts
    judge_calls: int | None = Field(default=None, ge=1)


class RunSettings(_Strict):
    """How a run places its phases and which stage it runs (runner/run/placement.py, docs/vllm.md)."""

    phases: Literal["auto", "together", "staged"] = "auto"
    stage: Literal["all", "generate", "judge"] = "all"
    # One minimal request per hosted or attached model role, with the run's own parameters, before any slot: a
    # refused parameter or a bad key stops the run in seconds (runner/run/live_check.py). false: skip it.
    live_check: bool = True
    plan: bool = False  # print what the run would do and need (runner/run/plan.py), then stop before any work


class RunnerConfig(_Strict):
    # Modules that register more kinds (runner/kinds.py) when imported, e.g. a judge of your own: imported before
    # the kinds are checked.
    plugins: list[str] = Field(default_factory=list)
    model: ModelConfig
    # Model roles a suite declares (runner/run/roles.py), each composed from the conf/model group:
    # `+model@roles.caption=<name>` (or inline `+roles.caption={...}`).
    roles: dict[str, ModelConfig] = Field(default_factory=dict)
    suite: SuiteConfig
    judge: JudgeConfig
    actor: ActorConfig
    sandbox: SandboxConfig
    agent: AgentConfig = Field(default_factory=_no_agent)
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
    # Where `python -m runner.pull` puts the papers' data, each source at its pin (runner/suites/paper_data.py).
    data_dir: str = ".cache/data"
    project_root: str = "."  # filled in by the entry point; relative paths resolve against it
    # Parsed once by runner.run.validation (not dumped): the browser's settings and every model role's model.
    _browser: Any = PrivateAttr(default=None)
    _model_roles: dict[str, Any] | None = PrivateAttr(default=None)

    @property
    def browser_settings(self) -> Any:
        """`browser`, validated (runner.browser.launch.BrowserSettings)."""
        return _resolved(self._browser, "browser")

    @property
    def model_roles(self) -> dict[str, Any]:
        """Every role that calls a model (generator; judge and actor when their kind calls one; the suite's own
        `roles`) -> its model, with its provider's parsed settings and its declared capabilities."""
        return _resolved(self._model_roles, "the model roles")

    def with_resolved(self, *, browser: Any, model_roles: Mapping[str, Any]) -> "RunnerConfig":
        """A copy carrying the parsed browser settings (runner.browser.launch.BrowserSettings) and model roles
        (role -> runner.models.role.ModelRole); runner.run.validation is the one caller. Typed loosely here: this
        module imports no section's owner."""
        copy = self.model_copy()
        copy._browser, copy._model_roles = browser, dict(model_roles)
        return copy

    @model_validator(mode="after")
    def _one_repeat_count(self) -> "RunnerConfig":
        if self.repeats > 1 and self.repeat != 0:
            raise ValueError(f"repeat = {self.repeat} with repeats = {self.repeats}: repeats runs repeat=0..."
                             f"{self.repeats - 1} itself; give one of them")
        return self

    @model_serializer(mode="wrap")
    def _without_defaults_of_new_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A run without plugins, and one without an agent, dumps as before: its config.yaml and config hash stay
        # comparable on resume with runs written before these keys.
        data = handler(self)
        if not self.plugins:
            data.pop("plugins", None)
        if self.agent.kind == "none" and not (self.agent.options or self.agent.paper or self.agent.model_extra):
            data.pop("agent", None)
        return data

    def resolve_path(self, value: str | Path) -> Path:
        path = Path(value)
        return path if path.is_absolute() else Path(self.project_root) / path


# The sections that name a kind, with the field naming it; the model roles name a provider the same way.
KIND_SECTIONS = {"judge": "kind", "actor": "kind", "sandbox": "kind", "agent": "kind"}
SECTION_KEYS = {"name", "kind", "options"}
FAMILY_KEYS = {"agent": {"paper"}}  # keys of a family's section besides those


def parse_config(raw: dict[str, Any], *, kinds: Mapping[str, Collection[str]],
                 sections: Mapping[str, Collection[str]]) -> RunnerConfig:
    """Validate the composed config's own keys and each section's kind; raise ConfigError naming every bad key.

    `kinds`: family (judge, actor, sandbox, model) -> the registered kind names; `sections`: family -> the
    settings sections its kinds declare besides `options` (filled in empty when absent, as every run records
    them). The kinds' own options are left to their owners (runner/run/validation.py calls them)."""
    raw = _with_declared_sections(raw, sections)
    lines = _kind_errors(raw, kinds, sections)
    try:
        config = RunnerConfig.model_validate(raw)
    except ValidationError as error:
        lines += format_validation_error(error, raw).split("\n")[1:]
    if lines:
        raise ConfigError("invalid configuration:\n" + "\n".join(lines))
    return config


def _with_declared_sections(raw: dict[str, Any], sections: Mapping[str, Collection[str]]) -> dict[str, Any]:
    raw = dict(raw)
    for family in KIND_SECTIONS:
        if isinstance(raw.get(family), dict):
            raw[family] = {**{name: {} for name in sorted(sections.get(family, ()))}, **raw[family]}
    return raw


def _kind_errors(raw: dict[str, Any], kinds: Mapping[str, Collection[str]],
                 sections: Mapping[str, Collection[str]]) -> list[str]:
    """Lines for kinds nobody registered and for keys that are no section of the family."""
    lines: list[str] = []
    named = [(family, field, family, raw.get(family)) for family, field in KIND_SECTIONS.items()]
    named.append(("model", "provider", "model", raw.get("model")))
    roles = raw.get("roles")
    if isinstance(roles, dict):
        named += [("model", "provider", f"roles.{role}", section) for role, section in roles.items()]
    for family, field, key, section in named:
        if not isinstance(section, dict):
            continue  # missing or not a mapping: the model validation says so
        value = section.get(field)
        if isinstance(value, str) and value not in kinds.get(family, ()):
            lines.append(f"  {key}.{field} = {value!r}: unknown {family} {field}; choose one of "
                         f"{', '.join(sorted(kinds.get(family, ())))}")
        if family == "model":
            continue  # a model section's other keys are its provider's settings
        for extra in sorted(set(section) - SECTION_KEYS - FAMILY_KEYS.get(family, set())
                            - set(sections.get(family, ()))):
            lines.append(f"  {key}.{extra}: unknown key (value {_shown(section[extra])}); check its spelling")
        for name in sorted(set(sections.get(family, ())) & set(section)):
            if not isinstance(section[name], dict):
                lines.append(f"  {key}.{name} = {section[name]!r}: a mapping of settings")
    return lines


def _shown(value: Any) -> str:
    return "{...}" if isinstance(value, dict) else repr(value)
