"""One registry for every kind a config names: judges, actors, sandboxes, model providers, suites and agents.

An implementation registers itself with one decorator on its factory, next to where it is defined (suites
are registered from the string maps their packages declare, runner/run/plugins.py):

    @register_kind("judge", "llm", settings="runner.judges.llm_settings:LLMJudgeSettings", calls_model=True)
    def llm_judge(settings: LLMJudgeSettings, *, name: str, model: Model | None) -> Judge:
        from runner.judges.llm import LLMJudge  # imported when a run builds it, not when a config is validated

        return LLMJudge(settings, name=name, model=model)

The settings model (and any hook: preflight check, lineage images, ...) may be given as the object or as a
"module:attribute" string, imported on use: validating a config imports only the settings of the kinds it
names. Each family's built-in kinds are declared in one light module (`BUILTIN_MODULES`); more kinds come
from the modules a config lists under `plugins` (`load_plugins`), which register themselves when imported.

This module is a leaf (pydantic and runner.errors only): config validation, preflight, roles and lineage ask it,
and it imports none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from runner.errors import ConfigError, section_settings

__all__ = [
    "BUILTIN_MODULES",
    "FAMILY_FIELD",
    "KINDS",
    "Kind",
    "KindRegistry",
    "load_plugins",
    "register_kind",
]

# family -> the module declaring its built-in kinds (each imports its implementations on use only)
BUILTIN_MODULES: dict[str, str] = {
    "judge": "runner.judges.kinds",
    "actor": "runner.actors.kinds",
    "sandbox": "runner.sandbox.kinds",
    "model": "runner.models.providers",
    "suite": "runner.suites.registry",  # registers what each suite package declares (runner/run/plugins.py)
    "agent": "runner.agents.kinds",
}
# family -> the config field that names the kind (`judge.kind`, `model.provider`)
FAMILY_FIELD: dict[str, str] = {"judge": "kind", "actor": "kind", "sandbox": "kind", "model": "provider",
                                "suite": "name", "agent": "kind"}

Reference = str | Callable[..., Any]  # the object, or "module:attribute" imported on first use
FactoryT = TypeVar("FactoryT", bound=Callable[..., Any])


def resolve(reference: Reference | None) -> Any:
    """The object a reference names (None stays None)."""
    if reference is None or not isinstance(reference, str):
        return reference
    module, sep, attribute = reference.partition(":")
    if not sep or not module or not attribute:
        raise ValueError(f"{reference!r} must look like 'package.module:attribute'")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class Kind:
    """One registered kind: how to build it and what the run asks of it.

    `section`: the config section holding its settings (`options`; the probe actor, the rules judge and the
    local sandbox keep their own section names, `actor.probe`, `judge.rules`, `sandbox.local`). For a model
    provider the settings model validates the whole model section. `preflight`: the cheap check run before
    work starts (runner/run/preflight.py passes a sandbox's, judge's, actor's or agent's `(config, suite)` and a
    provider's `(role)`; it returns preflight Problems). `calls_model`: a judge or actor whose `options.model` is
    a model role the run calls. `traced`: a provider whose calls cost tokens (traced, never
    replays). `images`: a sandbox's or an agent's images for lineage, `(config) -> {name: {tag, digest,
    versions}}`; `tracking_tags`: a sandbox's run tags, `async (config) -> {tag: value}`. `rubrics`: the rubric names a
    judge's config uses, `(judge config) -> [name]`, whose versions lineage records. `calls_per_use`: for a kind
    that calls a model, the most calls one use makes (a judged slot, an actor's trace), `(settings) -> int`,
    which `run.plan=true` bounds the run's calls by (runner/run/plan.py).

    What the run asks of a kind it reads from these declarations, never from the kind's name: `inert`, an actor or
    agent kind that does nothing (`none`: the run has no actor, the suite's own generation); `vllm_served`, a
    model provider whose section has a `server` the run may start or attach to (runner/models/vllm_server.py);
    `runs_images`, a sandbox that runs commands in images of its own (an official CLI agent's image);
    `browser_in_sandbox`, a sandbox's `(config) -> bool`: the run's browsers run inside the sandbox, not on
    this host; `image`, a sandbox's (with `runs_images`) `(config, name, *, build_missing) -> ImageInfo`: one more
    image of its own (an agent's), built first where missing and allowed; `image_problems`, its `(config, name, *,
    who) -> [Problem]`: that image present or buildable, checked before any work.
    """

    family: str
    name: str
    factory: Callable[..., Any]
    settings_ref: Reference | None = None
    section: str = "options"
    preflight_ref: Reference | None = None
    calls_model: bool = False
    traced: bool = False
    images_ref: Reference | None = None
    tracking_tags_ref: Reference | None = None
    rubrics_ref: Reference | None = None
    calls_per_use_ref: Reference | None = None
    inert: bool = False
    vllm_served: bool = False
    runs_images: bool = False
    browser_in_sandbox_ref: Reference | None = None
    image_ref: Reference | None = None
    image_problems_ref: Reference | None = None

    @property
    def settings(self) -> type[BaseModel] | None:
        found = resolve(self.settings_ref)
        # A function that is no class returns the model: a suite's comes from the entry its package declares.
        return found() if found is not None and not isinstance(found, type) else found

    @property
    def preflight(self) -> Callable[..., Any] | None:
        return resolve(self.preflight_ref)

    @property
    def images(self) -> Callable[[Any], dict[str, dict[str, Any]]] | None:
        return resolve(self.images_ref)

    @property
    def tracking_tags(self) -> Callable[[Any], Any] | None:
        return resolve(self.tracking_tags_ref)

    @property
    def browser_in_sandbox(self) -> Callable[[Any], bool] | None:
        return resolve(self.browser_in_sandbox_ref)

    @property
    def image(self) -> Callable[..., Any] | None:
        return resolve(self.image_ref)

    @property
    def image_problems(self) -> Callable[..., list[Any]] | None:
        return resolve(self.image_problems_ref)

    @property
    def rubrics(self) -> Callable[[Any], list[str]] | None:
        return resolve(self.rubrics_ref)

    @property
    def calls_per_use(self) -> Callable[[Any], int] | None:
        return resolve(self.calls_per_use_ref)

    def parse(self, raw: Mapping[str, Any] | None, prefix: str) -> BaseModel | None:
        """The section's settings, validated by the kind's model; errors name `prefix.key`. A settings model
        with a `from_options(raw, prefix=...)` classmethod checks more than its fields (an endpoint, a rubric)."""
        schema = self.settings
        if schema is None:
            return None
        from_options = getattr(schema, "from_options", None)
        if callable(from_options):
            return from_options(dict(raw or {}), prefix=prefix)
        return section_settings(schema, dict(raw or {}), prefix)

    @property
    def origin(self) -> str:
        return f"{getattr(self.factory, '__module__', '?')}:{getattr(self.factory, '__qualname__', '?')}"


class KindRegistry:
    """Kinds by family and name; a family's built-in module is imported the first time the family is asked."""

    def __init__(self, builtin_modules: Mapping[str, str]) -> None:
        self._builtin_modules = dict(builtin_modules)
        self._kinds: dict[str, dict[str, Kind]] = {family: {} for family in builtin_modules}
        self._loaded: set[str] = set()

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(self._kinds)

    def add(self, kind: Kind) -> None:
        """Register a kind; the same name from another factory is an error naming both."""
        family = self._family(kind.family)
        known = family.get(kind.name)
        if known is not None and known.origin != kind.origin:
            raise ValueError(f"{kind.family} kind {kind.name!r} is registered by both {known.origin} and "
                             f"{kind.origin}")
        family[kind.name] = kind

    def names(self, family: str) -> tuple[str, ...]:
        return tuple(sorted(self._loaded_family(family)))

    def sections(self, family: str) -> tuple[str, ...]:
        """The settings sections the family's kinds declare, besides `options`."""
        return tuple(sorted({kind.section for kind in self._loaded_family(family).values()} - {"options"}))

    def find(self, family: str, name: str) -> Kind | None:
        return self._loaded_family(family).get(str(name))

    def get(self, family: str, name: str, *, key: str | None = None) -> Kind:
        """The kind, or a ConfigError naming the key, the bad value and the known kinds."""
        kind = self.find(family, name)
        if kind is None:
            raise ConfigError(f"invalid configuration:\n  {self.unknown(family, name, key=key)}")
        return kind

    def chosen(self, family: str, section: Any) -> Kind:
        """The kind a config section names (`config.actor`, `config.model`, a model section as a dict), by its
        family's field (`kind`, `provider`)."""
        field = FAMILY_FIELD.get(family, "kind")
        name = section.get(field) if isinstance(section, Mapping) else getattr(section, field)
        return self.get(family, str(name), key=f"{family}.{field}")

    def unknown(self, family: str, name: Any, *, key: str | None = None) -> str:
        """The error line for a kind nobody registered."""
        field = FAMILY_FIELD.get(family, "kind")
        key = key or f"{family}.{field}"
        return f"{key} = {name!r}: unknown {family} {field}; choose one of {', '.join(self.names(family))}"

    def _family(self, family: str) -> dict[str, Kind]:
        if family not in self._kinds:
            raise ValueError(f"{family!r} is not a kind family; one of {', '.join(self._kinds)}")
        return self._kinds[family]

    def _loaded_family(self, family: str) -> dict[str, Kind]:
        kinds = self._family(family)
        if family not in self._loaded:
            importlib.import_module(self._builtin_modules[family])
            self._loaded.add(family)
        return kinds


KINDS = KindRegistry(BUILTIN_MODULES)


def register_kind(
    family: str,
    name: str,
    *,
    settings: Reference | None = None,
    section: str = "options",
    preflight: Reference | None = None,
    calls_model: bool = False,
    traced: bool = False,
    images: Reference | None = None,
    tracking_tags: Reference | None = None,
    rubrics: Reference | None = None,
    calls_per_use: Reference | None = None,
    inert: bool = False,
    vllm_served: bool = False,
    runs_images: bool = False,
    browser_in_sandbox: Reference | None = None,
    image: Reference | None = None,
    image_problems: Reference | None = None,
) -> Callable[[FactoryT], FactoryT]:
    """Register the decorated factory as `family` kind `name` (see Kind for what each argument declares).

    The factory's arguments are its family's: a judge's `(settings, *, name, model)`, an actor's
    `(settings, *, model)` (None: no actor), a sandbox's `(settings, *, config)`, a model provider's
    `(data, *, tasks, cache)` with `data` the model section as a dict, a suite's `(settings, *, project_root)`, an
    agent's `(settings, *, config)` (the run's generation strategy; None for agent=none)."""

    def register(factory: FactoryT) -> FactoryT:
        KINDS.add(Kind(family=family, name=name, factory=factory, settings_ref=settings, section=section,
                       preflight_ref=preflight, calls_model=calls_model, traced=traced, images_ref=images,
                       tracking_tags_ref=tracking_tags, rubrics_ref=rubrics, calls_per_use_ref=calls_per_use,
                       inert=inert, vllm_served=vllm_served, runs_images=runs_images,
                       browser_in_sandbox_ref=browser_in_sandbox, image_ref=image,
                       image_problems_ref=image_problems))
        return factory

    return register


def load_plugins(modules: Iterable[str], *, key: str = "plugins") -> None:
    """Import the modules a config lists under `plugins`: each registers its kinds when imported."""
    for index, module in enumerate(modules):
        try:
            importlib.import_module(str(module))
        except ImportError as error:
            raise ConfigError(f"invalid configuration:\n  {key}.{index} = {module!r}: cannot be imported "
                              f"({error})") from None
