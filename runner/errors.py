"""The project's error for configuration problems, and the formatting of pydantic's errors in the same style.

A leaf module (pydantic only): every layer raises ConfigError, so none of them has to import another for it.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

SettingsT = TypeVar("SettingsT", bound=BaseModel)


class ConfigError(ValueError):
    """A configuration problem, already phrased for the user (key, value, allowed choices)."""


def format_validation_error(error: ValidationError, raw: dict[str, Any], prefix: str = "") -> str:
    """Turn pydantic's errors into lines naming the dotted key, the bad value and the expectation."""
    lines = []
    for item in error.errors():
        key = ".".join(str(part) for part in (prefix, *item["loc"]) if str(part))
        value = item.get("input")
        shown = repr(value) if not isinstance(value, dict) else "{...}"
        if item["type"] == "extra_forbidden":
            lines.append(f"  {key}: unknown key (value {shown}); check its spelling")
        elif item["type"] == "missing":
            lines.append(f"  {key}: required but missing")
        else:
            lines.append(f"  {key} = {shown}: {item['msg']}")
    return "invalid configuration:\n" + "\n".join(lines)


def section_settings(model: type[SettingsT], raw: dict[str, Any] | None, prefix: str) -> SettingsT:
    """A config section's options parsed by the settings model of the section's owner; errors name `prefix.key`."""
    raw = dict(raw or {})
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, raw, prefix)) from None
