"""Validation of a composed config, whole: the plugins it lists, the run's own keys and kinds
(runner/config.py, against the kinds registered in runner/kinds.py), then each section's options by its
owner: every model role's provider, the suite, the judge, the actor and the sandbox kind, the browser. Every
error names the dotted key, the bad value and, for choices, the allowed values; a typo fails here, before any
work starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runner.browser.launch import BrowserSettings
from runner.compose import compose
from runner.config import KindConfig, ModelConfig, RunnerConfig, parse_config
from runner.errors import ConfigError, section_settings
from runner.kinds import KINDS, load_plugins
from runner.models.time_limit import model_call_limit_s, turn_limit_s
from runner.suites.registry import validate_suite_options


DECODING_KEYS = ("temperature", "max_tokens")


def validate_config(raw: dict[str, Any]) -> RunnerConfig:
    """Validate the resolved config dict; raise ConfigError naming every bad key and value."""
    load_plugins(_plugin_modules(raw))
    config = parse_config(raw, kinds={family: KINDS.names(family) for family in KINDS.families},
                          sections={family: KINDS.sections(family) for family in KINDS.families})
    # Each kind's and each suite's settings are validated by their owners, with the same error style.
    validate_model_settings(config.model, prefix="model")
    for role, model in config.roles.items():
        validate_model_settings(model, prefix=f"roles.{role}")
    validate_suite_options(config.suite, prefix="suite")
    for family in ("judge", "actor", "sandbox", "agent"):
        validate_kind_settings(family, getattr(config, family))
    section_settings(BrowserSettings, config.browser, "browser")
    return fit_time_limits(config)


def compose_config(overrides: Sequence[str], *, project_root: Path | str | None = None) -> RunnerConfig:
    """`python -m runner OVERRIDES...`'s validated config, composed by runner/compose.py (relative paths resolve
    against `project_root`, default the working dir): what the other commands, the benches and tests run."""
    return validate_config(compose(overrides, project_root=project_root))


def _plugin_modules(raw: dict[str, Any]) -> list[str]:
    modules = raw.get("plugins") or []
    if not isinstance(modules, list) or not all(isinstance(module, str) for module in modules):
        raise ConfigError(f"invalid configuration:\n  plugins = {modules!r}: a list of module names")
    return modules


def validate_kind_settings(family: str, section: KindConfig) -> None:
    """The settings of a judge, actor or sandbox section, by its kind's settings model (`<family>.options.<key>`,
    or the kind's own section: `actor.probe.<key>`)."""
    kind = KINDS.get(family, section.kind, key=f"{family}.kind")
    kind.parse(section.section(kind.section), f"{family}.{kind.section}")


def fit_time_limits(config: RunnerConfig) -> RunnerConfig:
    """The run's limits in seconds: a null `model_timeout_s` fitted to the generator's output cap, a null
    `turn_timeout_s` to that plus the rest of a turn (runner/models/time_limit.py); with an agent, to the agent's
    wall clock (its budget: the proxy cuts its calls there) plus the rest of a turn."""
    model_call = model_call_limit_s(config.model_timeout_s, config.model.model_dump())
    generation = model_call
    kind = KINDS.get("agent", config.agent.kind, key="agent.kind")
    agent = kind.parse(config.agent.section(kind.section), f"agent.{kind.section}")
    if agent is not None:
        generation = float(agent.budget.wall_clock_s)
    return config.model_copy(update={"model_timeout_s": model_call,
                                     "turn_timeout_s": turn_limit_s(config.turn_timeout_s, generation)})


def validate_model_settings(model: ModelConfig, *, prefix: str = "model") -> None:
    """A provider with a settings model validates the whole section; one without (the replays) takes none
    beyond name/provider."""
    raw = model.model_dump()
    provider = KINDS.get("model", model.provider, key=f"{prefix}.provider")
    if provider.settings is not None:
        provider.parse(raw, prefix)
        return
    # Replay providers decode nothing: a preset's decoding settings (a paper's temperature and output cap) are
    # accepted and have no effect, so `+experiment=...` also runs with model=oracle.
    extra = sorted(set(raw) - {"name", "provider", *DECODING_KEYS})
    if extra:
        raise ConfigError(
            f"invalid configuration:\n  {prefix}.{extra[0]}: unknown key for provider {model.provider!r} "
            f"(it takes only name and provider, and ignores {' and '.join(DECODING_KEYS)})"
        )
