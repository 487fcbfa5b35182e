"""The API dialects the model proxy speaks, found by looking: every module in this folder but `base` defines
`DIALECT` (runner/agents/dialects/base.py), and nothing else names it. A request is routed by its path."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from runner.agents.dialects.base import Dialect, RouteMatch, match_route

__all__ = ["dialects", "find_listing", "find_route"]


@cache
def dialects() -> tuple[Dialect, ...]:
    """Every dialect, by module name; two that claim one route are an error naming both."""
    found: list[Dialect] = []
    claimed: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda item: item.name):
        if info.name == "base" or info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        dialect: Any = vars(module).get("DIALECT")
        if dialect is None:
            raise TypeError(f"runner/agents/dialects/{info.name}.py defines no DIALECT")
        for route in dialect.routes:
            if route in claimed:
                raise ValueError(f"route {route!r} is claimed by both dialect {claimed[route]!r} and {dialect.name!r}")
            claimed[route] = dialect.name
        found.append(dialect)
    return tuple(found)


def _split(target: str) -> tuple[str, dict[str, str]]:
    parts = urlsplit(target)
    return parts.path, dict(parse_qsl(parts.query))


def find_route(target: str) -> tuple[Dialect, RouteMatch] | None:
    """The dialect whose POST route matches the request target (path and query), with the match."""
    path, query = _split(target)
    for dialect in dialects():
        for route in dialect.routes:
            params = match_route(route, path)
            if params is not None:
                return dialect, RouteMatch(route=route, path=path, params=params, query=query)
    return None


def find_listing(target: str) -> Dialect | None:
    """The dialect that lists models at this GET path (the first by module name where two list at one path)."""
    path, _ = _split(target)
    return next((dialect for dialect in dialects() if path in dialect.listing_routes), None)
