"""Suite registry: the suites the suite packages declare (SUITES in their `__init__.py`, runner/kinds.py),
registered as kinds of the `suite` family. A suite's code is imported when its entry is first asked for."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Callable

from runner.errors import ConfigError
from runner.kinds import KINDS, register_kind, resolve
from runner.suites.paper_data import DEFAULT_DATA_DIR, find_pulled
from runner.suites.base import Suite, SuiteSettings

SuiteEntry = tuple[type[SuiteSettings], Callable[..., Suite]]


class DeclaredSuites(Mapping[str, SuiteEntry]):
    """name -> (settings model, constructor), each loaded on first use."""

    def __init__(self) -> None:
        self._loaded: dict[str, SuiteEntry] = {}

    def __getitem__(self, name: str) -> SuiteEntry:
        if name not in self._loaded:
            self._loaded[name] = resolve(KINDS.declared("suite")[name], where=f"SUITES[{name!r}]")
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(KINDS.declared("suite"))

    def __len__(self) -> int:
        return len(KINDS.declared("suite"))


SUITES = DeclaredSuites()


def _register(name: str) -> None:
    def settings_model() -> type[SuiteSettings]:
        return SUITES[name][0]

    def construct(settings: SuiteSettings, *, project_root: Path) -> Suite:
        return SUITES[name][1](settings, project_root=project_root)

    construct.__qualname__ = f"construct[{name}]"  # tells suites apart when a name is registered twice
    register_kind("suite", name, settings=settings_model)(construct)


for _name in KINDS.declared("suite"):
    _register(_name)


def validate_suite_options(suite_config: Any, *, prefix: str = "suite") -> SuiteSettings:
    """The suite section's settings: those config validation parsed (runner.config.SuiteConfig.settings), or, for a
    section not validated yet (a raw dict, the validation itself), parsed now by the suite's settings model."""
    if isinstance(getattr(suite_config, "settings", None), SuiteSettings):
        return suite_config.settings
    raw = suite_config.model_dump() if hasattr(suite_config, "model_dump") else dict(suite_config)
    name = raw.get("name")
    kind = KINDS.find("suite", str(name))
    if kind is None:
        raise ConfigError(f"invalid configuration:\n  {prefix}.name = {name!r}: unknown suite; choose one of "
                          f"{sorted(KINDS.names('suite'))}")
    settings = kind.parse(raw, prefix)
    assert isinstance(settings, SuiteSettings)
    return settings


class PaperDataMissing(ConfigError):
    """`suite.task_set=paper`, and a source of the paper's data is not pulled (or not as pinned)."""


def with_paper_data(settings: SuiteSettings, data_dir: Path) -> SuiteSettings:
    """The settings with every `suite_paths` key of the paper's data pointing into its pulled copy, when
    `task_set` is `paper`; PaperDataMissing names the source and the pull command when a copy is unusable."""
    if settings.task_set != "paper":
        return settings
    paths: dict[str, str] = {}
    for name, data in settings.paper_data.items():
        copy = find_pulled(data_dir, name, data)
        problem = copy.problem()
        if problem is not None:
            raise PaperDataMissing(f"suite.task_set=paper: {problem}; fetch it with `python -m runner.pull "
                                   f"suite={settings.name}` (with the run's other overrides), or run the project's "
                                   "own tasks with suite.task_set=project")
        paths.update({key: str(copy.folder / path) for key, path in data.pin.suite_paths.items()})
    return settings.model_copy(update=paths)


def build_suite(suite_config: Any, *, project_root: Path, data_dir: Path | None = None) -> Suite:
    """The suite of a config section; `data_dir`: where `python -m runner.pull` put the papers' data (None: the
    default under the project root)."""
    settings = validate_suite_options(suite_config)
    settings = with_paper_data(settings, Path(data_dir) if data_dir is not None else project_root / DEFAULT_DATA_DIR)
    return KINDS.get("suite", settings.name).factory(settings, project_root=project_root)


def build_run_suite(config: Any) -> Suite:
    """The suite of a validated run config (its project root and data dir)."""
    return build_suite(config.suite, project_root=Path(config.project_root),
                       data_dir=config.resolve_path(config.data_dir))
