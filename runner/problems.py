"""One missing thing a check before the run found: where it is configured, what is wrong, what to do about it.

A leaf (standard library only): the kinds' own preflight checks (runner/sandbox/preflight.py,
runner/models/preflight.py, runner/agents/preflight.py, a plugin's) return Problems, and runner/run/preflight.py
lists them all at once (PreflightError)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Problem"]


@dataclass(frozen=True)
class Problem:
    """One missing thing: where it is configured, what is wrong, and what to do about it."""

    key: str  # the config key (or file) it comes from, e.g. `model` or `judge.options.model`
    message: str
    fix: str

    def line(self) -> str:
        return f"  - {self.key}: {self.message}\n      fix: {self.fix}"
