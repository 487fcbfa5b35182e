"""Validation of a composed config, whole, and its resolution: the plugins it lists, the run's own keys and kinds
(runner/config.py, against the kinds registered in runner/kinds.py), then each section's options by its
owner: every model role's provider, the suite, the judge, the actor and the sandbox kind, the browser. Every
error names the dotted key, the bad value and, for choices, the allowed values; a typo fails here, before any
work starts.

Each section is parsed here once and the result travels with the config (runner/config.py): `config.<family>
.settings` (judge, actor, sandbox, agent), `config.browser_settings`, `config.model_roles` (each role's model with
its provider's settings and its capabilities, runner/models/role.py). Nothing downstream parses a section again.
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
from runner.judges.llm_settings import EndpointSettings
from runner.models.role import ModelCapabilities, ModelRole, role_key, role_model_settings
from runner.models.time_limit import model_call_limit_s, turn_limit_s
from runner.suites.registry import validate_suite_options


DECODING_KEYS = ("temperature", "max_tokens")


def validate_config(raw: dict[str, Any]) -> RunnerConfig:
    """Validate the resolved config dict; raise ConfigError naming every bad key and value."""
    load_plugins(_plugin_modules(raw))
    config = parse_config(raw, kinds={family: KINDS.names(family) for family in KINDS.families},
                          sections={family: KINDS.sections(family) for family in KINDS.families})
    # Each kind's and each suite's settings are validated by their owners, with the same error style, once.
    generator = validate_model_settings(config.model, prefix="model")
    suite_roles = {role: validate_model_settings(model, prefix=f"roles.{role}") for role, model in config.roles.items()}
    suite = config.suite.with_settings(validate_suite_options(config.suite, prefix="suite"))
    sections: dict[str, Any] = {family: resolve_kind_section(family, getattr(config, family))
                                for family in ("judge", "actor", "sandbox", "agent")}
    sections["suite"] = suite
    browser = section_settings(BrowserSettings, config.browser, "browser")
    config = config.model_copy(update=sections)
    parsed = {"generator": generator, **suite_roles}
    # The judge's and actor's models were parsed with their kind's options (EndpointSettings); a plugin kind's
    # model section that was not is parsed here, the one time.
    parsed.update({family: sections[family].settings.endpoint for family in ("judge", "actor")
                   if isinstance(sections[family].settings, EndpointSettings)})
    roles = {role: _role(role, role_key(role), section,
                         parsed[role] if role in parsed else _provider_settings(section, role_key(role)))
             for role, section in role_model_settings(config).items()}
    return fit_time_limits(config.with_resolved(browser=browser, model_roles=roles))


def _provider_settings(model: dict[str, Any], key: str) -> Any:
    provider = KINDS.find("model", str(model.get("provider")))
    return provider.parse(model, key) if provider is not None else None


def _role(role: str, key: str, section: dict[str, Any], settings: Any) -> ModelRole:
    provider = KINDS.find("model", str(section.get("provider")))
    served = provider is not None and provider.vllm_served
    capabilities = ModelCapabilities.of(section, vllm_served=served,
                                        kind_vision=provider.vision if provider is not None else None)
    return ModelRole(role, key, section, settings=settings, capabilities=capabilities)


def compose_config(overrides: Sequence[str], *, project_root: Path | str | None = None) -> RunnerConfig:
    """`python -m runner OVERRIDES...`'s validated config, composed by runner/compose.py (relative paths resolve
    against `project_root`, default the working dir): what the other commands, the benches and tests run."""
    return validate_config(compose(overrides, project_root=project_root))


def _plugin_modules(raw: dict[str, Any]) -> list[str]:
    modules = raw.get("plugins") or []
    if not isinstance(modules, list) or not all(isinstance(module, str) for module in modules):
        raise ConfigError(f"invalid configuration:\n  plugins = {modules!r}: a list of module names")
    return modules


def resolve_kind_section(family: str, section: KindConfig) -> KindConfig:
    """The judge, actor, sandbox or agent section carrying its settings, parsed by its kind's settings model
    (`<family>.options.<key>`, or the kind's own section: `actor.probe.<key>`)."""
    return KINDS.resolve(family, section)


def fit_time_limits(config: RunnerConfig) -> RunnerConfig:
    """The run's limits in seconds: a null `model_timeout_s` fitted to the generator's output cap, a null
    `turn_timeout_s` to that plus the rest of a turn (runner/models/time_limit.py); with an agent, to the agent's
    wall clock (its budget: the proxy cuts its calls there) plus the rest of a turn."""
    model_call = model_call_limit_s(config.model_timeout_s, config.model.model_dump())
    generation = model_call
    agent = config.agent.settings
    if agent is not None:
        generation = float(agent.budget.wall_clock_s)
    return config.model_copy(update={"model_timeout_s": model_call,
                                     "turn_timeout_s": turn_limit_s(config.turn_timeout_s, generation)})


def validate_model_settings(model: ModelConfig, *, prefix: str = "model") -> Any:
    """A provider with a settings model validates the whole section (and returns its settings); one without (the
    replays) takes none beyond name/provider (None)."""
    raw = model.model_dump()
    provider = KINDS.get("model", model.provider, key=f"{prefix}.provider")
    if provider.settings is not None:
        return provider.parse(raw, prefix)
    # Replay providers decode nothing: a preset's decoding settings (a paper's temperature and output cap) are
    # accepted and have no effect, so `+experiment=...` also runs with model=oracle.
    extra = sorted(set(raw) - {"name", "provider", *DECODING_KEYS})
    if extra:
        raise ConfigError(
            f"invalid configuration:\n  {prefix}.{extra[0]}: unknown key for provider {model.provider!r} "
            f"(it takes only name and provider, and ignores {' and '.join(DECODING_KEYS)})"
        )
    return None
