"""A model the run calls in a role: its role (`generator`, `judge`, `actor` or a suite's own), the config key of its
section, the section as composed, its provider's validated settings, what it declares it can do (its
capabilities) and how `python -m runner.pull` selects it. Config validation (runner/run/validation.py) builds
every role once; the run's wiring (runner/run/roles.py), preflight (runner/models/preflight.py), placement and
capacity read them.

`vision` has ONE default, `VISION_DEFAULT` (false: a model that does not say it reads images is sent none);
every reader takes the declared value through `ModelCapabilities`. A suite that needs another behaviour for an
undeclared model says so in a setting of its own, never with a second default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from runner.config import RunnerConfig
from runner.kinds import KINDS

__all__ = ["VISION_DEFAULT", "VLLM_DEFAULT_MAX_NUM_SEQS", "ModelCapabilities", "ModelRole", "declared_vision",
           "role_key", "role_model_settings"]

VISION_DEFAULT = False  # a model section without `vision` reads no images
VLLM_DEFAULT_MAX_NUM_SEQS = 256  # vLLM's --max-num-seqs default for its OpenAI server (1024 only on >= 70 GiB GPUs)


def declared_vision(section: Mapping[str, Any]) -> bool:
    """The model section's `vision`, or the one default where it declares none."""
    return bool(section.get("vision", VISION_DEFAULT))


@dataclass(frozen=True)
class ModelCapabilities:
    """What a model section declares it can do, each with one default."""

    vision: bool = VISION_DEFAULT  # it reads images
    vllm_served: bool = False  # its provider kind serves it with vLLM (runner/kinds.py `vllm_served`)
    batch_size: int | None = None  # requests its server batches at once (vLLM max_num_seqs); None: unknown

    @classmethod
    def of(cls, section: Mapping[str, Any], *, vllm_served: bool, kind_vision: bool | None = None) -> "ModelCapabilities":
        """The capabilities of a model section whose provider kind does (or does not) serve it with vLLM and
        declares (or does not) the vision of all its models (`kind_vision`: the replays, whose sections take no
        keys; a section's own `vision` wins)."""
        vision = declared_vision(section) if "vision" in section or kind_vision is None else kind_vision
        return cls(vision=vision, vllm_served=vllm_served, batch_size=_batch_size(section) if vllm_served else None)


def _batch_size(section: Mapping[str, Any]) -> int | None:
    server = section.get("server") or {}
    if server.get("max_num_seqs"):
        return int(server["max_num_seqs"])
    if server.get("mode") == "attach":  # someone else's server: its flags are unknown
        return None
    return VLLM_DEFAULT_MAX_NUM_SEQS


@dataclass(frozen=True)
class ModelRole:
    """A model the run will call, with where it is configured and how `runner.pull` selects it."""

    role: str  # generator, judge, actor, or a role a suite adds (caption)
    key: str  # dotted config key of the model section
    config: dict[str, Any]
    pull_overrides: tuple[str, ...] = ()  # Hydra overrides that make `python -m runner.pull` fetch exactly it
    settings: Any = None  # the provider's validated settings (its kind's settings model); None: a replay
    capabilities: ModelCapabilities = field(default_factory=ModelCapabilities)

    @property
    def name(self) -> str:
        return str(self.config.get("name", "?"))


def role_key(role: str) -> str:
    """The config key of a role's model, as errors and preflight name it."""
    return {"generator": "model", "judge": "judge.options.model", "actor": "actor.options.model"}.get(role, f"roles.{role}")


def role_model_settings(config: RunnerConfig) -> dict[str, dict[str, Any]]:
    """The model config of every role that calls a model: generator always, judge and actor when LLM-based,
    and every suite-declared role the config composes under `roles`."""
    settings: dict[str, dict[str, Any]] = {"generator": config.model.model_dump()}
    for role, section in (("judge", config.judge), ("actor", config.actor)):
        model = section.options.get("model") if KINDS.get(role, section.kind, key=f"{role}.kind").calls_model else None
        if isinstance(model, dict):
            settings[role] = {"name": str(model.get("model", role)), **model}  # name defaults to the served id
    for role, model_config in config.roles.items():
        settings[role] = model_config.model_dump()
    return settings
