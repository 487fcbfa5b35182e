"""The project's FlowEval reference sites, the suite's tasks made from them, and the App. A payload."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.kinds import KINDS
from runner.suites.base import ActorFacts, EpisodeState, ModelFacts, RunFacts
from runner.suites.floweval.sites import load_site, load_sites
from runner.suites.native import TaskFormatError
from runner.suites.registry import build_suite, validate_suite_options
from tests.conftest import REPO_ROOT


def _suite(actor: str = "scripted", **options):
    suite = build_suite({"name": "floweval", **options}, project_root=REPO_ROOT)
    suite.configure_run(_facts(actor=actor, provider="openai"))
    return suite


def _facts(*, actor: str, provider: str) -> RunFacts:
    """What the run tells the suite, for an actor and a generator of these kinds (runner/run/roles.py)."""
    kind = KINDS.get("actor", actor)
    return RunFacts(generator=ModelFacts(name=provider, section={"name": provider, "provider": provider},
                                         replays_reference=KINDS.get("model", provider).replays_reference),
                    actor=ActorFacts(kind=actor, acts=not kind.inert, deterministic=kind.deterministic))


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


def test_a_snapshot_with_steps_the_user_wrote_is_a_scripted_reference(tmp_path: Path) -> None:
    snapshot = tmp_path / "s"
    snapshot.mkdir()
    (snapshot / "index.html").write_text("<h1>Recipes</h1>")
    steps = tmp_path / "steps.yaml"
    steps.write_text("recipe-hub:\n  recipe-hub-0: [{action: click, target: {text: Recipes}}]\n"
                     "  recipe-hub-1: [{action: hover, target: {text: Recipes}}]\n")
    suite = _suite(source="webvoyager", tasks_file=str(Path(__file__).parent / "fixtures" / "webvoyager.jsonl"),
                   task_ids=["recipe-hub"], snapshots={"recipe-hub": str(snapshot)}, flow_steps=str(steps))
    (task,) = asyncio.run(suite.load_tasks())
    assert task.extra["reference"]["kind"] == "snapshot"
    assert [flow["steps"][0]["action"] for flow in task.extra["flows"]] == ["click", "hover"]


def _static_site(root: Path, *, static: str = "public", index: bool = True) -> Path:
    (root / static).mkdir(parents=True)
    if index:
        (root / static / "index.html").write_text("<!doctype html><h1>Todos</h1><script src='js/app.js'></script>")
        (root / static / "js").mkdir()
        (root / static / "js" / "app.js").write_text("document.title = 'todos';")
        (root / static / "bg.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
        (root / static / "readme.md").write_text("# not served to answers")
    (root / "site.yaml").write_text(f"name: Todos\ndescription: A to-do list.\nstatic: {static}\nflows:\n"
                                    "  - {id: add, goal: Add one, steps: [{action: dblclick, target: {text: Todos}}]}\n")
    return root


def test_a_static_folder_is_a_reference_site_served_as_it_is(tmp_path: Path) -> None:
    from runner.suites.floweval.sites import static_assets

    site = load_site(_static_site(tmp_path / "todos"))
    assert site.static_dir == (tmp_path / "todos" / "public").resolve()
    assert site.reference == {"kind": "static", "folder": str(site.static_dir)}
    assert set(site.files) == {"index.html", "js/app.js"}  # what an answer's text can carry
    assets = static_assets(site.static_dir)
    assert sorted(p.relative_to(assets).as_posix() for p in assets.rglob("*") if p.is_file()) == ["bg.png",
                                                                                                   "readme.md"]
    assert static_assets(site.static_dir) == assets  # made once per content


def test_a_static_site_needs_its_index_and_no_sources_beside_it(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match=r"site\.yaml: static: 'public': no index\.html"):
        load_site(_static_site(tmp_path / "a", index=False))
    both = _static_site(tmp_path / "b")
    (both / "src").mkdir()
    (both / "src" / "App.jsx").write_text("export default function App() { return null; }")
    with pytest.raises(TaskFormatError, match="both a static site"):
        load_site(both)


def _todos_suite(tmp_path: Path, provider: str = "oracle", **options):
    if not (tmp_path / "sites").is_dir():
        _static_site(tmp_path / "sites" / "todos")
    suite = build_suite({"name": "floweval", "sites_path": str(tmp_path / "sites"), "repeats": 1, **options},
                        project_root=REPO_ROOT)
    suite.configure_run(_facts(actor="scripted", provider=provider))
    return suite


def test_the_oracle_answers_a_static_reference_only_as_a_static_site(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="set suite.artifact=static"):
        asyncio.run(_todos_suite(tmp_path).load_tasks())
    suite = _todos_suite(tmp_path, artifact="static")
    (task,) = asyncio.run(suite.load_tasks())
    assert task.extra["reference"]["kind"] == "static" and set(task.turns[0].reference_files) == {"index.html",
                                                                                                  "js/app.js"}
    assert suite.artifact_kind == "static" and suite.artifact_assets(task, task.turns[0]) is not None
    assert suite.prompt_version == "floweval-appendix-a-static-v1"
    system, _ = asyncio.run(suite.messages(task, task.turns[0], EpisodeState()))
    assert "static site" in system["content"] and "src/App.jsx" not in system["content"]
    assert "## Common Design Principles" in system["content"]  # App. A's design principles kept
    # A generator other than the oracle may be run against a static reference in the paper's React setting.
    (task,) = asyncio.run(_todos_suite(tmp_path / "other", provider="openai").load_tasks())
    assert _todos_suite(tmp_path / "third", provider="openai").artifact_assets(task, task.turns[0]) is None


def test_flow_steps_and_region_options_are_checked() -> None:
    with pytest.raises(ValueError, match="flow_steps: scripted steps for benchmark sites"):
        validate_suite_options({"name": "floweval", "flow_steps": "steps.yaml"})
    settings = validate_suite_options({"name": "floweval"})
    assert settings.exclude_regions == [] and settings.artifact == "vite"  # the paper's readings by default
