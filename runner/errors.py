"""The root of the errors a user is expected to fix, the project's error for configuration problems, and the
formatting of pydantic's errors in the same style.

A leaf module (pydantic only): every layer raises ConfigError, and each expected error subclasses UserError
where it is defined, so no layer imports another for its error type and the entry points catch one class.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

SettingsT = TypeVar("SettingsT", bound=BaseModel)


class UserError(Exception):
    """An expected failure, already phrased for the user: a bad config, missing weights or backends, a malformed
    task or label file, a server that does not start, a full disk. The entry points print its message alone
    (exit code 2); anything else is the runner's bug and keeps its traceback.

    Subclasses keep their builtin base first (`class X(ValueError, UserError)`), so code that catches the builtin
    catches them as before."""


class ConfigError(ValueError, UserError):
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
