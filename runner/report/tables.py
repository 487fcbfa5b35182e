"""The leaderboard's table data and the cell helpers every table builder shares (runner/report/leaderboard.py
and the tables suites add through their REPORT_TABLES, runner/report/sections.py).

A table is plain data: {"id", "title", "caption", "columns": [{"key", "label", "kind"}], "rows": [{key: value}]}.
`kind` says how a value is shown: text, int, pct (a fraction shown in %), pct_ci / num_ci (a value with a
bootstrap interval: {"value": x, "ci": [lo, hi]}), num, score100 (a 0..1 score shown on the paper's 0-100
scale), elo.
"""

from __future__ import annotations

import math
from typing import Any

Table = dict[str, Any]


def column(key: str, label: str, kind: str = "text") -> dict[str, str]:
    return {"key": key, "label": label, "kind": kind}


def number(value: Any) -> float | None:
    """A finite number as float; anything else (bool, NaN, text, None) as None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        return None
    return float(value)


def with_ci(value: Any, ci: Any) -> dict[str, Any] | None:
    """{"value", "ci": [lo, hi]} for a pct_ci / num_ci cell; None when the value is not a number."""
    value = number(value)
    if value is None:
        return None
    interval = list(ci) if isinstance(ci, (list, tuple)) and len(ci) == 2 else [None, None]
    return {"value": value, "ci": [number(interval[0]), number(interval[1])]}


__all__ = ["Table", "column", "number", "with_ci"]
