"""WebGen-Bench's test set in both of its published forms: the GitHub repository's test.jsonl and the hub
dataset's parquet (the same rows, struct fields a row leaves empty as nulls), loaded as the same tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from runner.suites.webgen.format import WebGenFormatError, load_webgen_tasks

SAMPLE = Path(__file__).parent / "fixtures" / "test.sample.jsonl"


def test_the_parquet_form_loads_as_the_jsonl_form(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)  # a column some rows lack becomes null in those rows
    as_parquet, as_jsonl = load_webgen_tasks(path), load_webgen_tasks(SAMPLE)
    assert len(as_parquet) == len(rows) > 1
    assert [t.model_dump(exclude={"source_path"}) for t in as_parquet] == \
        [t.model_dump(exclude={"source_path"}) for t in as_jsonl]


def test_a_bad_parquet_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "test.parquet"
    broken.write_bytes(b"not parquet")
    with pytest.raises(WebGenFormatError, match="cannot be read as WebGen-Bench's test parquet"):
        load_webgen_tasks(broken)
    rows = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": "1", "instruction": "x"}]), rows)
    with pytest.raises(WebGenFormatError, match=r"rows.parquet:1: .*ui_instruct"):
        load_webgen_tasks(rows)
