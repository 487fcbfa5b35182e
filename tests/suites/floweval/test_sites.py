"""The project's FlowEval reference sites, the suite's tasks made from them, and the App. A payload."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from runner.errors import ConfigError
from runner.suites.base import EpisodeState
from runner.suites.floweval.sites import load_site, load_sites
from runner.suites.native import TaskFormatError
from runner.suites.registry import build_suite, validate_suite_options
from tests.conftest import REPO_ROOT


def _suite(actor: str = "scripted", **options):
    suite = build_suite({"name": "floweval", **options}, project_root=REPO_ROOT)
    suite.configure_run(SimpleNamespace(actor=SimpleNamespace(kind=actor)))
    return suite


def test_three_multi_view_sites_with_at_least_four_scripted_flows() -> None:
    sites = {site.id: site for site in load_sites()}
    assert set(sites) >= {"shop", "mail", "booking"}
    for site in sites.values():
        assert len(site.spec.flows) >= 4, site.id
        assert all(flow.steps for flow in site.spec.flows), site.id  # every flow has a scripted reference
        assert "src/App.jsx" in site.files and all(path.startswith("src/") for path in site.files)


def test_bad_site_file_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "App.jsx").write_text("export default function App() { return null; }")
    (tmp_path / "site.yaml").write_text("name: X\ndescription: d\nflows:\n  - {id: a, goal: g, steps: [{action: tap}]}\n")
    with pytest.raises(TaskFormatError, match=r"site\.yaml: flows\[0\]\.steps\[0\]"):
        load_site(tmp_path)


def test_tasks_are_sites_with_repeats_as_independent_turns() -> None:
    tasks = asyncio.run(_suite(repeats=3).load_tasks())
    shop = next(task for task in tasks if task.id == "shop")
    assert [turn.index for turn in shop.turns] == [1, 2, 3]
    assert all(not turn.requires_previous_artifact and turn.reference_files for turn in shop.turns)
    assert validate_suite_options({"name": "floweval"}).repeats == 5  # FlowEval §3.1


def test_payload_is_appendix_a_with_description_and_tasks_but_no_reference() -> None:
    suite = _suite(task_ids=["mail"], repeats=1)
    (task,) = asyncio.run(suite.load_tasks())
    system, user = asyncio.run(suite.messages(task, task.turns[0], EpisodeState()))
    assert "src/App.jsx is the main view" in system["content"] and "FontAwesome" in system["content"]
    assert user["content"].startswith("Create a website with the following description: Quill Mail: A web mail")
    for flow in task.extra["flows"]:
        assert f"- {flow['goal']}" in user["content"]
    assert "MESSAGES" not in user["content"] + system["content"]  # the reference source stays private


def test_flow_selection_and_its_errors() -> None:
    (task,) = asyncio.run(_suite(task_ids=["shop"], flows=["search"]).load_tasks())
    assert [flow["id"] for flow in task.extra["flows"]] == ["search"]
    with pytest.raises(ConfigError, match="suite.flows = \\['nope'\\]: task 'booking' has none of them"):
        asyncio.run(_suite(flows=["nope"]).load_tasks())


def test_settings_errors_name_the_value() -> None:
    with pytest.raises(ConfigError, match="unknown featurizer 'clip'"):
        validate_suite_options({"name": "floweval", "featurizer": "clip"})
    with pytest.raises(ConfigError, match="actor = none"):
        _suite(actor="none")


def test_benchmark_source_without_snapshot_is_refused(tmp_path: Path) -> None:
    fixtures = Path(__file__).parent / "fixtures"
    with pytest.raises(ConfigError, match="site 'dashdish' .* lives on the internet"):
        asyncio.run(_suite(actor="uitars", source="real-v2", tasks_file=str(fixtures / "real-v2")).load_tasks())
    snapshot = tmp_path / "recipes"
    snapshot.mkdir()
    (snapshot / "index.html").write_text("<h1>Recipes</h1>")
    suite = _suite(actor="uitars", source="webvoyager", tasks_file=str(fixtures / "webvoyager.jsonl"),
                   task_ids=["recipe-hub"], snapshots={"recipe-hub": str(snapshot)})
    (task,) = asyncio.run(suite.load_tasks())
    assert task.extra["reference"] == {"kind": "snapshot", "folder": str(snapshot), "url": "https://recipes.example.org/"}
    assert task.turns[0].reference_files is None and suite.runs == 3  # §3.3: three CUA runs


def test_scripted_actor_cannot_trace_goal_only_flows(tmp_path: Path) -> None:
    snapshot = tmp_path / "s"
    snapshot.mkdir()
    (snapshot / "index.html").write_text("<h1>Recipes</h1>")
    suite = _suite(source="webvoyager", tasks_file=str(Path(__file__).parent / "fixtures" / "webvoyager.jsonl"),
                   task_ids=["recipe-hub"], snapshots={"recipe-hub": str(snapshot)})
    with pytest.raises(ConfigError, match="without scripted steps"):
        asyncio.run(suite.load_tasks())
    assert suite.runs == 1  # deterministic: one run suffices
