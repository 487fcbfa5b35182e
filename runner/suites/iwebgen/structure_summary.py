"""The §5 structural analysis in the suite's summary: one AppRow per requested app, then Tables 4 and 5.

Each slot's verdict carries `raw["structure"]` (analyze_app of the app's source) and `raw["theme"]` (from the
background captured on the rendered page; None when it was not captured). Table 4 uses the 100-point score, IR
and the structure; Table 5 ("scaled to 30 points") uses the visual-aesthetics points V, the 30-point dimension
of B.1, since it compares visual choices.
"""

from __future__ import annotations

from typing import Any

from runner.turns.records import TurnRecord
from runner.suites.iwebgen.structure import (
    AppRow, AppStructure, table4_sidebar, table4_state_bins, table5_themes,
)


def structure_rows(records: list[TurnRecord], app_rows: list[dict[str, Any]]) -> list[AppRow]:
    """AppRows of the apps whose source was analysed (an app with no answer has no structure)."""
    by_task = {record.task_id: record for record in records}
    rows: list[AppRow] = []
    for app in app_rows:
        record = by_task.get(app["task_id"])
        raw = record.verdict.raw if record is not None and record.verdict is not None else None
        if not isinstance(raw, dict) or not isinstance(raw.get("structure"), dict):
            continue
        structure = AppStructure(**raw["structure"])
        rows.append(AppRow(app_id=app["task_id"], model=record.model, structure=structure, score=app["score"],
                           interaction_rate=app["ir"], theme=raw.get("theme"), theme_score=app["V"]))
    return rows


def structure_summary(records: list[TurnRecord], app_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """`app_rows`: the suite's per-app rows (metrics.app_row: score, ir, V) of every requested app."""
    rows = structure_rows(records, app_rows)
    return {
        "apps": [{"task_id": row.app_id, "theme": row.theme, **row.structure.to_json()} for row in rows],
        "table4_state": table4_state_bins(rows),
        "table4_sidebar": table4_sidebar(rows),
        "table5_theme": table5_themes(rows),
    }
