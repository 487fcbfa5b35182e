"""Regions left out of a flow state's text: each region's text taken out once, as a block or line by line."""

from __future__ import annotations

from runner.actors.flow_text import without_regions


def test_a_region_is_taken_out_once_as_a_block() -> None:
    text = "todos\nBuy milk\n\nDouble-click to edit a todo\nCreated by Ada\n\nPart of TodoMVC"
    assert without_regions(text, ["Double-click to edit a todo\nCreated by Ada\n\nPart of TodoMVC"]) == \
        "todos\nBuy milk"


def test_a_region_whose_block_is_not_found_goes_line_by_line_and_a_hidden_one_takes_nothing() -> None:
    text = "Created by Ada\ntodos\nPart of TodoMVC"
    assert without_regions(text, ["Part of TodoMVC\n\nCreated by Ada"]) == "todos"
    assert without_regions("todos\nBuy milk", ["nowhere to be seen"]) == "todos\nBuy milk"
    assert without_regions("todos\ntodos", ["todos"]) == "todos"  # once per region
