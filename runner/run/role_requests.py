"""What each model role of a run sends: its model config, the structured output it asks for, whether it sends
images. The live check (runner/run/live_check.py) sends one request of that shape per hosted role, and lineage
(runner/run/lineage.py) records the parameters and every deviation of each role's dialect
(runner/models/dialects.py) from its config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runner.config import RunnerConfig
from runner.kinds import KINDS
from runner.models import dialects
from runner.models.role import ModelRole
from runner.models.role import role_key
from runner.run.roles import roles_used
from runner.suites.base import Suite

__all__ = ["RoleRequest", "request_parameters", "role_requests"]


@dataclass(frozen=True)
class RoleRequest:
    role: str  # generator, judge, actor, or a suite's own role
    key: str  # the config key of its model
    settings: dict[str, Any]  # the model config
    structured: str | None  # json_schema | json_object; None: plain text
    strict: bool  # OpenAI strict schema
    images: bool  # its requests carry images
    endpoint: Any = None  # the provider's validated settings, for a model reached over HTTP; None: a replay

    @property
    def name(self) -> str:
        return str(self.settings.get("name", self.role))


def _endpoint(role: ModelRole) -> Any:
    """The provider's validated settings when its calls reach an endpoint (`traced` providers), else None."""
    provider = KINDS.get("model", str(role.config.get("provider")), key=f"{role.key}.provider")
    return role.settings if provider.traced else None


def _kind_options(config: RunnerConfig, family: str) -> Any:
    """The judge's or actor's validated options (its kind's settings model), or None."""
    section = getattr(config, family)
    kind = KINDS.get(family, section.kind, key=f"{family}.kind")
    return section.settings if kind.section == "options" else None


def role_requests(config: RunnerConfig, suite: Suite) -> list[RoleRequest]:
    """One entry per model role the run calls (runner/run/roles.py), in the order the run uses them."""
    models = config.model_roles
    found: list[RoleRequest] = []
    for role in roles_used(config, suite):
        if role not in models:
            continue
        settings = models[role].config
        vision = models[role].capabilities.vision
        structured: str | None = None
        strict = False
        images = vision
        if role in ("judge", "actor"):
            options = _kind_options(config, role)
            mode = getattr(options, "structured_output", None)
            structured = mode if mode in ("json_schema", "json_object") else None
            strict = bool(getattr(options, "strict_schema", False))
            images = vision and bool(getattr(options, "include_screenshot", True))
        elif role != "generator":
            structured = suite.role_structured_output(role)
        key = role_key(role)
        found.append(RoleRequest(role, key, settings, structured, strict, images, _endpoint(models[role])))
    return found


def request_parameters(config: RunnerConfig, suite: Suite) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """(role -> what its requests carry, the deviations of every endpoint role from its config), for lineage.json
    and the summary. Replay providers (oracle, null, identity) send nothing and are left out."""
    plans: dict[str, dict[str, Any]] = {}
    found: list[str] = []
    for request in role_requests(config, suite):
        if request.endpoint is None:
            continue
        plans[request.role] = dialects.request_plan(request.endpoint, structured=request.structured,
                                                    images=request.images)
        found += [f"{request.role} {request.name} ({request.key}): {phrase}"
                  for phrase in dialects.deviations(request.endpoint, structured=request.structured)]
    return plans, found
