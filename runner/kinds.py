"""The one registry: every kind a config names (judges, actors, sandboxes, model providers, suites, agents) and
every member a suite package adds by name (rubrics, generation strategies, web templates, report sections,
annotation codebooks), with one resolver and one error (ConfigError).

An implementation registers itself with one decorator on its factory, next to where it is defined:

    @register_kind("judge", "llm", settings="runner.judges.llm_settings:LLMJudgeSettings", calls_model=True)
    def llm_judge(settings: LLMJudgeSettings, *, name: str, model: Model | None) -> Judge:
        from runner.judges.llm import LLMJudge  # imported when a run builds it, not when a config is validated

        return LLMJudge(settings, name=name, model=model)

The settings model (and any hook: preflight check, lineage images, ...) may be given as the object or as a
"module:attribute" string, imported on use: validating a config imports only the settings of the kinds it
names. Each family's built-in kinds are declared in one light module (`BUILTIN_MODULES`); more kinds come
from the modules a config lists under `plugins` (`load_plugins`), which register themselves when imported.

What a suite adds it declares in its package's `__init__.py` as string maps (`SUITE_MAPS`), which import nothing,
so finding them imports no suite code (and closes no import cycle); a reference is imported when it is used:

    SUITES = {"iwebgen": "runner.suites.iwebgen.suite:SUITE_ENTRY"}       # (settings class, constructor)
    RUBRICS = {"iwebgen": "runner.suites.iwebgen.rubric:IWebGenRubric"}   # judge.options.rubric names
    GENERATION_STRATEGIES = {"self_repair": "runner.suites.iwebgen.repair:SelfRepair"}
    REPORT_TABLES, REPORT_RUN_TABLES, REPORT_PLOTS, CONSOLE_SECTIONS        # its report sections (runner/report/sections.py)
    WEB_TEMPLATES = {"evogenui": "runner.suites.evogenui.web_template:TEMPLATE"}  # suite.web_template names
    ANNOTATION_CODEBOOKS = {"slot": "runner.suites.evogenui.annotation:CODEBOOK"}  # the annotation page's labels

The suite maps join the families of members (`KINDS.members`, `KINDS.member`), after any built-in ones a
package module registers with `register` (the single-pass generation, the default web template).

This module is a leaf (pydantic and runner.errors only): config validation, preflight, roles and lineage ask it,
and it imports none of them.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from runner.errors import ConfigError, section_settings

__all__ = [
    "BUILTIN_MODULES",
    "FAMILY_FIELD",
    "KINDS",
    "MEMBER_MODULES",
    "SUITE_MAPS",
    "Kind",
    "KindRegistry",
    "Members",
    "load_plugins",
    "register",
    "register_kind",
    "resolve",
]

# family -> the module declaring its built-in kinds (each imports its implementations on use only)
BUILTIN_MODULES: dict[str, str] = {
    "judge": "runner.judges.kinds",
    "actor": "runner.actors.kinds",
    "sandbox": "runner.sandbox.kinds",
    "model": "runner.models.providers",
    "suite": "runner.suites.registry",  # registers what each suite package declares (SUITE_MAPS)
    "agent": "runner.agents.kinds",
}
# family -> the config field that names the kind (`judge.kind`, `model.provider`)
FAMILY_FIELD: dict[str, str] = {"judge": "kind", "actor": "kind", "sandbox": "kind", "model": "provider",
                                "suite": "name", "agent": "kind"}

# family -> the map in each suite package's `__init__.py` that adds to it
SUITE_MAPS: dict[str, str] = {
    "suite": "SUITES",
    "rubric": "RUBRICS",  # judge.options.rubric
    "generation": "GENERATION_STRATEGIES",  # suite.generation
    "web_template": "WEB_TEMPLATES",  # suite.web_template
    "report_table": "REPORT_TABLES",  # over a suite's runs (runner/report/sections.py)
    "report_run_table": "REPORT_RUN_TABLES",  # one per run
    "report_plot": "REPORT_PLOTS",  # <name>.png
    "console_section": "CONSOLE_SECTIONS",  # the end-of-run printout
    "annotation_codebook": "ANNOTATION_CODEBOOKS",  # the annotation page's labels
}
# member family -> the module registering its built-in members, imported the first time the family is asked
MEMBER_MODULES: dict[str, str] = {"generation": "runner.turns.generation", "web_template": "runner.sandbox.web_template"}
SUITES_PACKAGE = "runner.suites"

Reference = str | Callable[..., Any]  # the object, or "module:attribute" imported on first use
FactoryT = TypeVar("FactoryT", bound=Callable[..., Any])


def resolve(reference: Reference | None, *, where: str | None = None) -> Any:
    """The object a reference names (None stays None): the object itself, or "module:attribute" imported now. A
    malformed string is a ConfigError naming `where` (the file or key that holds it)."""
    if reference is None or not isinstance(reference, str):
        return reference
    module, attribute = _split(reference, where=where or repr(reference))
    return getattr(importlib.import_module(module), attribute)


def _split(reference: str, *, where: str) -> tuple[str, str]:
    module, sep, attribute = str(reference).partition(":")
    if not sep or not module or not attribute:
        raise ConfigError(f"{where}: {reference!r} must look like 'package.module:attribute'")
    return module, attribute


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
    agent kind that does nothing (`none`: the run has no actor, the suite's own generation); `deterministic`, an
    actor whose trace the same page repeats exactly (scripted: FlowEval's repeated runs are for a stochastic
    agent); `replays_reference`, a provider that answers with each task's reference (oracle); `vllm_served`, a
    model provider whose section has a `server` the run may start or attach to (runner/models/vllm_server.py);
    `vision`, a model provider whose sections cannot declare `vision` (the replays take no keys) declaring it for
    all of them (runner/models/role.py: a section's own `vision` wins, else this, else the one default);
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
    deterministic: bool = False
    replays_reference: bool = False
    vllm_served: bool = False
    vision: bool | None = None
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

    def __init__(self, builtin_modules: Mapping[str, str], *, suite_maps: Mapping[str, str] = SUITE_MAPS,
                 member_modules: Mapping[str, str] = MEMBER_MODULES, suites_package: str = SUITES_PACKAGE) -> None:
        self._builtin_modules = dict(builtin_modules)
        self._kinds: dict[str, dict[str, Kind]] = {family: {} for family in builtin_modules}
        self._loaded: set[str] = set()
        self._suite_maps = dict(suite_maps)
        self._member_modules = dict(member_modules)
        self._suites_package = suites_package
        self._members: dict[str, dict[str, tuple[Reference, str]]] = {
            family: {} for family in suite_maps if family not in builtin_modules}
        self._declared: dict[str, dict[str, str]] = {}
        self._resolved: dict[tuple[str, str], Any] = {}

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(self._kinds)

    def add(self, kind: Kind) -> None:
        """Register a kind; the same name from another factory is an error naming both."""
        family = self._family(kind.family)
        known = family.get(kind.name)
        if known is not None and known.origin != kind.origin:
            raise ConfigError(f"{kind.family} kind {kind.name!r} is registered by both {known.origin} and "
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

    def resolve(self, family: str, section: Any) -> Any:
        """A judge, actor, sandbox or agent section (runner.config.KindConfig) carrying its kind's parsed settings:
        as config validation resolved it, or, for a section built by hand (a test, a one-off tool), parsed now,
        the one time (`<family>.options.<key>` or the kind's own section `actor.probe.<key>` in errors)."""
        if section.resolved:
            return section
        kind = self.get(family, section.kind, key=f"{family}.kind")
        return section.with_settings(kind.parse(section.section(kind.section), f"{family}.{kind.section}"))

    def unknown(self, family: str, name: Any, *, key: str | None = None) -> str:
        """The error line for a kind nobody registered."""
        field = FAMILY_FIELD.get(family, "kind")
        key = key or f"{family}.{field}"
        return f"{key} = {name!r}: unknown {family} {field}; choose one of {', '.join(self.names(family))}"

    # -- what suite packages declare, and the members of the families that are not kinds

    def declared(self, family: str) -> dict[str, str]:
        """name -> "module:attribute" of the family's suite map over every suite package, in package order (read
        once); a name two packages declare, or a malformed map, is a ConfigError naming the package's file."""
        if family not in self._declared:
            self._declared[family] = self._read_suite_maps(family)
        return dict(self._declared[family])

    def forget_declarations(self) -> None:
        """Read the suite packages' maps again on next use (a package added to the suites path)."""
        self._declared.clear()
        self._resolved.clear()

    def register(self, family: str, name: str, target: Reference) -> None:
        """Register a member of a family that is not a kind (a built-in one, or a plugin's); the same name from
        another origin is an error naming both."""
        members = self._member_family(family)
        origin = _origin(target)
        known = members.get(name)
        if known is not None and known[1] != origin:
            raise ConfigError(f"{family} {name!r} is registered by both {known[1]} and {origin}")
        members[name] = (target, origin)
        self._resolved.pop((family, name), None)

    def member_names(self, family: str) -> tuple[str, ...]:
        """The family's members in declaration order: those registered (built-ins first), then the suite maps'."""
        registered = self._loaded_members(family)
        declared = self.declared(family)
        both = sorted(set(registered) & set(declared))
        if both:
            raise ConfigError(f"{self._suite_maps[family]}[{both[0]!r}] of a suite package names a {family} "
                              f"{registered[both[0]][1]} registers")
        return (*registered, *declared)

    def member(self, family: str, name: str) -> Any:
        """The member, imported now; unknown: a ConfigError naming the family and the known names."""
        cached = (family, str(name))
        if cached not in self._resolved:
            registered = self._loaded_members(family)
            if name in registered:
                target, origin = registered[name]
                self._resolved[cached] = resolve(target, where=origin)
            elif name in self.declared(family):
                where = f"{self._suite_maps[family]}[{name!r}]"
                self._resolved[cached] = resolve(self.declared(family)[name], where=where)
            else:
                raise ConfigError(f"unknown {family.replace('_', ' ')} {name!r}; choose one of "
                                  f"{sorted(self.member_names(family))}")
        return self._resolved[cached]

    def members(self, family: str) -> Members:
        """The family's members by name, in declaration order, each imported when first read."""
        return Members(self, family)

    def _member_family(self, family: str) -> dict[str, tuple[Reference, str]]:
        if family not in self._members:
            raise ConfigError(f"{family!r} is not a member family; one of {', '.join(self._members)}")
        return self._members[family]

    def _loaded_members(self, family: str) -> dict[str, tuple[Reference, str]]:
        members = self._member_family(family)
        if family in self._member_modules and family not in self._loaded:
            self._loaded.add(family)  # first: the module registers into its own family while it is imported
            importlib.import_module(self._member_modules[family])
        return members

    def _read_suite_maps(self, family: str) -> dict[str, str]:
        map_name = self._suite_maps[family]
        found: dict[str, str] = {}
        owners: dict[str, str] = {}
        suites = importlib.import_module(self._suites_package)  # its __init__ is empty; the packages' maps are read
        for info in sorted(pkgutil.iter_modules(suites.__path__), key=lambda item: item.name):
            if not info.ispkg:
                continue
            package = f"{self._suites_package}.{info.name}"
            where = f"{package.replace('.', '/')}/__init__.py: {map_name}"
            entries = vars(importlib.import_module(package)).get(map_name, {})
            if not isinstance(entries, dict):
                raise ConfigError(f"{where} must be a dict of name -> 'module:attribute'")
            for name, reference in entries.items():
                if name in found:
                    raise ConfigError(f"{map_name} name {name!r} is declared by both {owners[name]} and {package}")
                _split(reference, where=f"{where}[{name!r}]")
                found[str(name)], owners[name] = reference, package
        return found

    def _family(self, family: str) -> dict[str, Kind]:
        if family not in self._kinds:
            raise ConfigError(f"{family!r} is not a kind family; one of {', '.join(self._kinds)}")
        return self._kinds[family]

    def _loaded_family(self, family: str) -> dict[str, Kind]:
        kinds = self._family(family)
        if family not in self._loaded:
            importlib.import_module(self._builtin_modules[family])
            self._loaded.add(family)
        return kinds


class Members(Mapping[str, Any]):
    """A member family as a read-only mapping, name -> member (imported when first read)."""

    def __init__(self, registry: KindRegistry, family: str) -> None:
        self._registry = registry
        self._family = family

    def __getitem__(self, name: str) -> Any:
        if name not in self._registry.member_names(self._family):
            raise KeyError(name)
        return self._registry.member(self._family, name)

    def __contains__(self, name: object) -> bool:
        return name in self._registry.member_names(self._family)

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry.member_names(self._family))

    def __len__(self) -> int:
        return len(self._registry.member_names(self._family))


def _origin(target: Reference) -> str:
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None) or type(target).__module__
    qualname = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}:{qualname}"


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
    deterministic: bool = False,
    replays_reference: bool = False,
    vllm_served: bool = False,
    vision: bool | None = None,
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
                       inert=inert, deterministic=deterministic, replays_reference=replays_reference,
                       vllm_served=vllm_served, vision=vision, runs_images=runs_images,
                       browser_in_sandbox_ref=browser_in_sandbox, image_ref=image,
                       image_problems_ref=image_problems))
        return factory

    return register


def register(family: str, name: str, target: Reference) -> None:
    """Register `target` (or its "module:attribute") as member `name` of a family that is not a kind: a rubric, a
    generation strategy, a web template, a report section (a built-in one, or a plugin's)."""
    KINDS.register(family, name, target)


def load_plugins(modules: Iterable[str], *, key: str = "plugins") -> None:
    """Import the modules a config lists under `plugins`: each registers its kinds when imported."""
    for index, module in enumerate(modules):
        try:
            importlib.import_module(str(module))
        except ImportError as error:
            raise ConfigError(f"invalid configuration:\n  {key}.{index} = {module!r}: cannot be imported "
                              f"({error})") from None
