"""Suite registry: the suites the suite packages declare (runner/run/plugins.py), registered as kinds of the
`suite` family (runner/kinds.py). A suite's code is imported when its entry is first asked for."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Callable

from runner.errors import ConfigError
from runner.kinds import KINDS, register_kind
from runner.run.plugins import declared, load
from runner.suites.base import Suite, SuiteSettings

SuiteEntry = tuple[type[SuiteSettings], Callable[..., Suite]]


class DeclaredSuites(Mapping[str, SuiteEntry]):
    """name -> (settings model, constructor), each loaded on first use."""

    def __init__(self) -> None:
        self._loaded: dict[str, SuiteEntry] = {}

    def __getitem__(self, name: str) -> SuiteEntry:
        if name not in self._loaded:
            self._loaded[name] = load(declared("SUITES")[name])
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(declared("SUITES"))

    def __len__(self) -> int:
        return len(declared("SUITES"))


SUITES = DeclaredSuites()


def _register(name: str) -> None:
    def settings_model() -> type[SuiteSettings]:
        return SUITES[name][0]

    def construct(settings: SuiteSettings, *, project_root: Path) -> Suite:
        return SUITES[name][1](settings, project_root=project_root)

    construct.__qualname__ = f"construct[{name}]"  # tells suites apart when a name is registered twice
    register_kind("suite", name, settings=settings_model)(construct)


for _name in declared("SUITES"):
    _register(_name)


def validate_suite_options(suite_config: Any, *, prefix: str = "suite") -> SuiteSettings:
    raw = suite_config.model_dump() if hasattr(suite_config, "model_dump") else dict(suite_config)
    name = raw.get("name")
    kind = KINDS.find("suite", str(name))
    if kind is None:
        raise ConfigError(f"invalid configuration:\n  {prefix}.name = {name!r}: unknown suite; choose one of "
                          f"{sorted(KINDS.names('suite'))}")
    settings = kind.parse(raw, prefix)
    assert isinstance(settings, SuiteSettings)
    return settings


def build_suite(suite_config: Any, *, project_root: Path) -> Suite:
    settings = validate_suite_options(suite_config)
    return KINDS.get("suite", settings.name).factory(settings, project_root=project_root)
