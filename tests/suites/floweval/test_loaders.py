"""REAL v2 and WebVoyager task files: parsed into sites with goal-only flows; their live sites are refused
offline unless a local snapshot is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.suites.floweval.loaders import (LiveSiteRefused, load_real_v2, load_webvoyager, resolve_snapshot)
from runner.suites.native import TaskFormatError

FIXTURES = Path(__file__).parent / "fixtures"


def test_real_v2_samples_group_by_website() -> None:
    sites = load_real_v2(FIXTURES / "real-v2")
    assert [site.id for site in sites] == ["dashdish", "gomail", "staynb"]
    gomail = sites[1]
    assert gomail.benchmark == "real-v2" and gomail.name == "Gomail"
    assert "Gmail" in gomail.description and gomail.url.startswith("https://")
    assert [(flow.id, flow.goal) for flow in gomail.flows] == [
        ("gomail-1", "Mark all my emails as read and delete all amazon related emails.")]
    assert all(flow.steps == [] for site in sites for flow in site.flows)  # goals only: a CUA's job


def test_real_v2_bad_file_names_file_and_field(tmp_path: Path) -> None:
    document = json.loads((FIXTURES / "real-v2" / "gomail-1.json").read_text())
    del document["website"]["url"]
    (tmp_path / "bad.json").write_text(json.dumps(document))
    with pytest.raises(TaskFormatError, match=r"bad\.json: website\.url: Field required"):
        load_real_v2(tmp_path)


def test_real_v2_impossible_tasks_are_left_out(tmp_path: Path) -> None:
    document = json.loads((FIXTURES / "real-v2" / "gomail-1.json").read_text())
    (tmp_path / "a.json").write_text(json.dumps({**document, "possible": False}))
    (tmp_path / "b.json").write_text(json.dumps({**document, "id": "gomail-2"}))
    (site,) = load_real_v2(tmp_path)
    assert [flow.id for flow in site.flows] == ["gomail-2"]


def test_webvoyager_jsonl_groups_by_web_name() -> None:
    sites = load_webvoyager(FIXTURES / "webvoyager.jsonl")
    assert [(site.id, len(site.flows)) for site in sites] == [("city-maps", 1), ("recipe-hub", 2)]
    assert sites[1].flows[0].id == "recipe-hub-0" and sites[1].url == "https://recipes.example.org/"


def test_webvoyager_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"web_name": "A", "id": "A--0", "ques": "q", "web": "https://a.example/"}\n{"web_name": "A"}\n')
    with pytest.raises(TaskFormatError, match=r"tasks\.jsonl: line 2\.id: Field required"):
        load_webvoyager(path)


def test_live_site_without_snapshot_is_refused_naming_it() -> None:
    site = load_real_v2(FIXTURES / "real-v2")[0]
    with pytest.raises(LiveSiteRefused) as refused:
        resolve_snapshot(site, {}, root=Path("."))
    message = str(refused.value)
    assert "'dashdish'" in message and site.url in message and "suite.snapshots.dashdish" in message


def test_snapshot_folder_is_used_and_checked(tmp_path: Path) -> None:
    site = load_webvoyager(FIXTURES / "webvoyager.jsonl")[0]
    snapshot = tmp_path / "maps"
    snapshot.mkdir()
    with pytest.raises(LiveSiteRefused, match="no index.html"):
        resolve_snapshot(site, {"city-maps": "maps"}, root=tmp_path)
    (snapshot / "index.html").write_text("<h1>Maps</h1>")
    assert resolve_snapshot(site, {"city-maps": "maps"}, root=tmp_path) == snapshot


def test_a_user_writes_scripted_steps_for_benchmark_flows(tmp_path: Path) -> None:
    from runner.suites.floweval.loaders import add_flow_steps

    steps = tmp_path / "steps.yaml"
    steps.write_text("recipe-hub:\n  recipe-hub-1:\n    - {action: fill, target: {label: Search}, value: pancake}\n"
                     "    - {action: dblclick, target: {text: Pancakes}}\n")
    sites = add_flow_steps(load_webvoyager(FIXTURES / "webvoyager.jsonl"), steps)
    hub = sites[1]
    assert [step.action for step in hub.flows[1].steps] == ["fill", "dblclick"]
    assert hub.flows[0].steps == [] and sites[0].flows[0].steps == []  # flows the file does not name keep none


@pytest.mark.parametrize("text, message", [
    ("nowhere:\n  a: []\n", r"steps\.yaml: nowhere: no such site in the task file"),
    ("recipe-hub:\n  recipe-hub-9: []\n", r"steps\.yaml: recipe-hub\.recipe-hub-9: no such flow of site 'recipe-hub'"),
    ("recipe-hub:\n  recipe-hub-1: [{action: tap}]\n", r"steps\.yaml: recipe-hub\.recipe-hub-1\[0\]"),
])
def test_a_bad_steps_file_names_the_file_and_the_id(tmp_path: Path, text: str, message: str) -> None:
    from runner.suites.floweval.loaders import add_flow_steps

    (tmp_path / "steps.yaml").write_text(text)
    with pytest.raises(TaskFormatError, match=message):
        add_flow_steps(load_webvoyager(FIXTURES / "webvoyager.jsonl"), tmp_path / "steps.yaml")
