"""A model the run calls in a role: its role (`generator`, `judge`, `actor` or a suite's own), the config key of its
section, the section as composed, and how `python -m runner.pull` selects it. The run's wiring finds the roles
(runner/run/roles.py); the providers' preflight checks read them (runner/models/preflight.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ModelRole"]


@dataclass(frozen=True)
class ModelRole:
    """A model the run will call, with where it is configured and how `runner.pull` selects it."""

    role: str  # generator, judge, actor, or a role a suite adds (caption)
    key: str  # dotted config key of the model section
    config: dict[str, Any]
    pull_overrides: tuple[str, ...] = ()  # Hydra overrides that make `python -m runner.pull` fetch exactly it

    @property
    def name(self) -> str:
        return str(self.config.get("name", "?"))
