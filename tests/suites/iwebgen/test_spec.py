"""The specification format: what it accepts, what it refuses and how the error names file and field."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from runner.suites.iwebgen.spec import AppSpec, dump_spec, load_spec, parse_spec
from runner.suites.native import TaskFormatError


def _element(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"{name} changes the curve",
        "controllable_parameters": [{"name": "k", "control": "slider", "min": 0, "max": 1, "default": 0.5}],
        "dynamic_components": ["curve"],
        "expected_responses": ["the curve moves"],
    }


def _spec() -> dict[str, Any]:
    return {
        "id": "bio-test",
        "domain": "Biology",
        "paper_title": "A paper",
        "interactions": [_element("a"), _element("b"), _element("c")],
        "visual_style": {"theme": "light"},
        "tech_stack": {"framework": "plain HTML, CSS and JavaScript"},
    }


def test_valid_spec_round_trips_through_yaml_and_json(tmp_path: Path) -> None:
    spec = parse_spec(_spec())
    assert isinstance(spec, AppSpec)
    for name in ("s.yaml", "s.json"):
        assert load_spec(dump_spec(spec, tmp_path / name)) == spec


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.update(domain="Physics"), "domain"),
        (lambda d: d.update(interactions=d["interactions"][:2]), "interactions"),
        (lambda d: d.update(interactions=[_element(str(i)) for i in range(11)]), "interactions"),
        (lambda d: d.update(colour="red"), "colour"),
        (lambda d: d["interactions"][1].update(expected_responses=[]), "interactions.1.expected_responses"),
        (lambda d: d["interactions"][0]["controllable_parameters"][0].update(min=2), "interactions.0.controllable_parameters.0"),
        (lambda d: d.update(id="Bad Id"), "id"),
        (lambda d: d.pop("tech_stack"), "tech_stack"),
    ],
)
def test_bad_spec_error_names_file_and_field(tmp_path: Path, change: Any, field: str) -> None:
    data = copy.deepcopy(_spec())
    change(data)
    with pytest.raises(TaskFormatError) as caught:
        parse_spec(data, tmp_path / "bad.yaml")
    assert f"bad.yaml: {field}" in str(caught.value)


def test_repeated_interaction_names_are_refused() -> None:
    data = _spec()
    data["interactions"] = [_element("a"), _element("a"), _element("c")]
    with pytest.raises(TaskFormatError, match="repeated: a"):
        parse_spec(data, "x.yaml")


def test_unreadable_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("id: [unclosed\n")
    with pytest.raises(TaskFormatError, match="broken.yaml: cannot read"):
        load_spec(bad)
    with pytest.raises(TaskFormatError, match="ends in"):
        load_spec(tmp_path / "spec.txt")
