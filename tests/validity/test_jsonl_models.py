"""A person-written JSONL file: each error names the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from runner.validity.jsonl_models import read_model_lines


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    score: int


class BadFile(ValueError):
    pass


def test_rows_in_file_order_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": "a", "score": 1}\n\n{"id": "b", "score": 2}\n')
    assert [(n, row.id) for n, row in read_model_lines(path, Row, error=BadFile)] == [(1, "a"), (3, "b")]


@pytest.mark.parametrize("text, message", [
    ('{"id": "a", "score": 1}\nnot json\n', r"rows.jsonl:2: not JSON"),
    ('[1, 2]\n', r"rows.jsonl:1: expected a JSON object, got list"),
    ('{"id": "a", "score": "high"}\n', r"rows.jsonl:1: invalid record:\n  row.score = 'high'"),
    ('{"id": "a", "score": 1, "scroe": 2}\n', r"rows.jsonl:1: invalid record:\n  row.scroe: unknown key"),
])
def test_each_error_names_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    with pytest.raises(BadFile, match=message):
        list(read_model_lines(path, Row, error=BadFile, prefix="row"))


def test_a_missing_file_is_the_same_error(tmp_path: Path) -> None:
    with pytest.raises(BadFile, match="missing.jsonl: cannot read it"):
        list(read_model_lines(tmp_path / "missing.jsonl", Row, error=BadFile))
