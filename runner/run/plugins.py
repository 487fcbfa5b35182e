"""What suite packages contribute, found by looking: each package under runner/suites/ declares, in its
`__init__.py`, string maps of what it adds, and nothing outside its folder names it.

    SUITES = {"iwebgen": "runner.suites.iwebgen.suite:SUITE_ENTRY"}       # (settings class, constructor)
    RUBRICS = {"iwebgen": "runner.suites.iwebgen.rubric:IWebGenRubric"}   # judge.options.rubric names
    GENERATION_STRATEGIES = {"self_repair": "runner.suites.iwebgen.repair:SelfRepair"}
    REPORT_TABLES, REPORT_RUN_TABLES, REPORT_PLOTS, CONSOLE_SECTIONS        # its report sections (runner/report/sections.py)
    WEB_TEMPLATES = {"evogenui": "runner.suites.evogenui.web_template:TEMPLATE"}  # suite.web_template names
    ANNOTATION_CODEBOOKS = {"slot": "runner.suites.evogenui.annotation:CODEBOOK"}  # the annotation page's labels

The maps are "module:attribute" strings and the `__init__.py` imports nothing, so finding them imports no suite
code (no import cycle with the registries that read them); a reference is imported when it is used.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any, Literal


SUITES_PACKAGE = "runner.suites"
Contribution = Literal["SUITES", "RUBRICS", "GENERATION_STRATEGIES", "REPORT_TABLES", "REPORT_RUN_TABLES", "REPORT_PLOTS",
                       "CONSOLE_SECTIONS",
                       "WEB_TEMPLATES", "ANNOTATION_CODEBOOKS"]


@cache
def declared(kind: Contribution) -> dict[str, str]:
    """name -> "module:attribute" over every suite package, in package order; a name two packages declare is an
    error naming both."""
    found: dict[str, str] = {}
    owners: dict[str, str] = {}
    suites = importlib.import_module(SUITES_PACKAGE)  # its __init__ is empty; only the packages' maps are read
    for info in sorted(pkgutil.iter_modules(suites.__path__), key=lambda item: item.name):
        if not info.ispkg:
            continue
        package = importlib.import_module(f"{SUITES_PACKAGE}.{info.name}")
        entries = vars(package).get(kind, {})
        if not isinstance(entries, dict):
            raise TypeError(f"runner/suites/{info.name}/__init__.py: {kind} must be a dict of name -> 'module:attribute'")
        for name, reference in entries.items():
            if name in found:
                raise ValueError(f"{kind} name {name!r} is declared by both runner.suites.{owners[name]} and "
                                 f"runner.suites.{info.name}")
            _split(reference, where=f"runner/suites/{info.name}/__init__.py: {kind}[{name!r}]")
            found[name], owners[name] = reference, info.name
    return found


def load(reference: str) -> Any:
    """Import "module:attribute" and return the attribute."""
    module, attribute = _split(reference, where=reference)
    return getattr(importlib.import_module(module), attribute)


def _split(reference: str, *, where: str) -> tuple[str, str]:
    module, sep, attribute = str(reference).partition(":")
    if not sep or not module or not attribute:
        raise ValueError(f"{where}: {reference!r} must look like 'package.module:attribute'")
    return module, attribute
