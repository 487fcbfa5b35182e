"""Suite registry: name -> (settings model, constructor), over what the suite packages declare
(runner/run/plugins.py). Registries only register."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from runner.suites.base import Suite, SuiteSettings
from runner.run.plugins import declared, load

SuiteEntry = tuple[type[SuiteSettings], Callable[..., Suite]]

SUITES: dict[str, SuiteEntry] = {name: load(reference) for name, reference in declared("SUITES").items()}


def validate_suite_options(suite_config: Any, *, prefix: str = "suite") -> SuiteSettings:
    from runner.errors import ConfigError, format_validation_error

    raw = suite_config.model_dump() if hasattr(suite_config, "model_dump") else dict(suite_config)
    name = raw.get("name")
    if name not in SUITES:
        raise ConfigError(f"invalid configuration:\n  {prefix}.name = {name!r}: unknown suite; choose one of {sorted(SUITES)}")
    settings_model, _ = SUITES[name]
    try:
        return settings_model.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, raw, prefix)) from None


def build_suite(suite_config: Any, *, project_root: Path) -> Suite:
    settings = validate_suite_options(suite_config)
    _, constructor = SUITES[settings.name]
    return constructor(settings, project_root=project_root)
