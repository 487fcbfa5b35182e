"""RulesJudge on real Chromium: generic checks, executable requirements, and the never-pass-unchecked rule."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from runner.turns.evidence import Evidence
from runner.judges.base import JudgeInput
from runner.judges.checks import Check
from runner.judges.rules import Readers, RulesJudge, RulesJudgeSettings, default_readers
from runner.turns.records import RequirementStatus, Verdict
from runner.sandbox.base import BuildResult
from runner.turns.tasks import Requirement, Task, TurnSpec

ADD_TODO = Check.model_validate(
    {
        "steps": [
            {"action": "fill", "target": {"label": "Task"}, "value": "Water plants"},
            {"action": "click", "target": {"role": "button", "name": "Add"}},
        ],
        "assert": [
            {"type": "text_visible", "text": "Water plants"},
            {"type": "count", "target": {"css": "li.todo"}, "equals": 1},
        ],
    }
)
HAS_HEADING = Check.model_validate({"assert": [{"type": "count", "target": {"role": "heading"}, "min": 1}]})


def make_input(out_dir: Path, requirements: list[Requirement], *, build: str = "ok", **extra: Any) -> JudgeInput:
    turn = TurnSpec(index=1, prompt="Build a todo list", requirements=requirements)
    task = Task(id="todo", suite="test", turns=[turn])
    return JudgeInput(
        task=task,
        turn=turn,
        build=BuildResult(status=build, log="error: something broke" if build != "ok" else ""),
        evidence=None,
        trace=None,
        files={},
        assistant_text="",
        out_dir=out_dir,
        **extra,
    )


def judge_on_page(url: str, judge_input: JudgeInput, judge: RulesJudge | None = None, *, browse) -> Verdict:
    judge = judge or RulesJudge(RulesJudgeSettings(assert_timeout_s=0.5))

    async def body(session):
        judge_input.session = session
        judge_input.evidence = Evidence(url=url, page_errors=list(session.page_errors))
        return await judge.score(judge_input)

    return browse(url, body)


ADD = Requirement(id="add", description="Adding a task shows it", check=ADD_TODO)
HEADING = Requirement(id="heading", description="Has a heading", check=HAS_HEADING)
LOOKS_NICE = Requirement(id="nice", description="Looks nice", check=None)


@pytest.mark.browser
def test_everything_checked_and_passing_passes(site, browse, pages, tmp_path) -> None:
    url = site.page("todo.html", pages.todo())
    verdict = judge_on_page(url, make_input(tmp_path, [ADD, HEADING]), browse=browse)
    assert verdict.passed is True, verdict.summary
    assert verdict.judge == "rules"
    assert {n: d.score for n, d in verdict.dimensions.items()} == {
        "build": 1.0,
        "loaded": 1.0,
        "page_errors": 1.0,
        "requirements": 1.0,
    }
    assert [r.status for r in verdict.requirements] == [RequirementStatus.PASSED] * 2
    saved = json.loads((tmp_path / "verdict.json").read_text())
    assert saved["passed"] is True and saved["requirements"][0]["id"] == "add"


@pytest.mark.browser
def test_requirement_without_check_is_unassessed_and_never_passes(site, browse, pages, tmp_path) -> None:
    url = site.page("todo.html", pages.todo())
    verdict = judge_on_page(url, make_input(tmp_path, [ADD, LOOKS_NICE]), browse=browse)
    assert verdict.passed is None  # never True with an unchecked requirement
    nice = next(r for r in verdict.requirements if r.id == "nice")
    assert nice.status is RequirementStatus.UNASSESSED and nice.reason == "no executable check"
    assert verdict.unassessed == ["nice"]
    assert verdict.dimensions["requirements"].score == 1.0  # 1 of 1 assessed
    assert json.loads((tmp_path / "verdict.json").read_text())["passed"] is None


@pytest.mark.browser
def test_dead_button_fails_with_reason(site, browse, pages, tmp_path) -> None:
    url = site.page("dead.html", pages.dead)
    verdict = judge_on_page(url, make_input(tmp_path, [ADD, HEADING, LOOKS_NICE]), browse=browse)
    assert verdict.passed is False
    add = next(r for r in verdict.requirements if r.id == "add")
    assert add.status is RequirementStatus.FAILED and "'Water plants' is not visible" in add.reason
    assert verdict.dimensions["requirements"].score == 0.5
    assert "requirement_failed" in verdict.failure_types
    assert verdict.raw["checks"]["add"]["assertions"][0]["status"] == "failed"


@pytest.mark.browser
def test_page_error_fails_the_verdict(site, browse, pages, tmp_path) -> None:
    html = pages.todo().replace("<h1>Todos</h1>", "<h1>Todos</h1><script>null.boom();</script>")
    url = site.page("broken.html", html)
    verdict = judge_on_page(url, make_input(tmp_path, [ADD, HEADING]), browse=browse)
    assert all(r.status is RequirementStatus.PASSED for r in verdict.requirements)  # the app still works
    assert verdict.passed is False
    assert verdict.dimensions["page_errors"].score == 0.0 and "TypeError" in verdict.dimensions["page_errors"].reason
    assert "page_error" in verdict.failure_types

    # The rule can be switched off.
    lenient = RulesJudge(RulesJudgeSettings(require_no_page_errors=False))
    verdict = judge_on_page(url, make_input(tmp_path, [ADD, HEADING]), lenient, browse=browse)
    assert verdict.passed is True and verdict.dimensions["page_errors"].score == 0.0


@pytest.mark.browser
def test_error_during_a_check_fails_the_verdict(site, browse, pages, tmp_path) -> None:
    url = site.page("todo.html", pages.todo(on_add="undefinedFunction();"))
    verdict = judge_on_page(url, make_input(tmp_path, [ADD]), browse=browse)
    assert verdict.requirements[0].status is RequirementStatus.PASSED
    assert verdict.passed is False and "undefinedFunction" in verdict.dimensions["page_errors"].reason


@pytest.mark.browser
def test_blank_page_fails_without_running_checks(site, browse, tmp_path) -> None:
    url = site.page("blank.html", "<!doctype html><body><div id='root'></div></body>")
    judge = RulesJudge(RulesJudgeSettings(assert_timeout_s=0.5))

    async def body(session):
        judge_input = make_input(tmp_path, [ADD, LOOKS_NICE], session=session)  # no evidence: judge looks itself
        return await judge.score(judge_input)

    verdict = browse(url, body, load=False)
    assert verdict.passed is False
    assert verdict.dimensions["loaded"].score == 0.0 and "blank" in verdict.dimensions["loaded"].reason
    assert verdict.requirements[0].status is RequirementStatus.FAILED
    assert verdict.requirements[1].status is RequirementStatus.UNASSESSED
    assert "blank_page" in verdict.failure_types


@pytest.mark.browser
def test_check_timeout_is_a_failure(site, browse, pages, tmp_path) -> None:
    url = site.page("todo.html", pages.todo())
    slow = Requirement(
        id="slow",
        description="waits too long",
        check=Check.model_validate(
            {"steps": [{"action": "wait", "ms": 30000}], "assert": [{"type": "text_visible", "text": "Todos"}]}
        ),
    )
    # The limit applies to every check: 3 s leaves the quick one room on a loaded machine.
    judge = RulesJudge(RulesJudgeSettings(check_timeout_s=3))
    verdict = judge_on_page(url, make_input(tmp_path, [slow, HEADING]), judge, browse=browse)
    assert verdict.passed is False
    assert verdict.requirements[0].status is RequirementStatus.FAILED
    assert verdict.requirements[0].reason == "check timed out after 3 s"
    assert verdict.requirements[1].status is RequirementStatus.PASSED  # the page is still usable


@pytest.mark.browser
def test_tool_log_is_reread_from_the_evidence_file(site, browse, pages, tmp_path) -> None:
    url = site.page("tool.html", pages.tool)
    site.log_path = tmp_path / "tool_log.jsonl"
    site.log_path.write_text("")  # the engine creates it when the artifact has a tool bridge
    saves = Requirement(
        id="saves",
        description="Save calls create_note",
        check=Check.model_validate(
            {
                "steps": [
                    {"action": "fill", "target": {"label": "Title"}, "value": "Milk"},
                    {"action": "click", "target": {"role": "button", "name": "Save"}},
                ],
                "assert": [{"type": "tool_called", "tool": "create_note", "args_subset": {"title": "Milk"}}],
            }
        ),
    )
    stored = Requirement(
        id="stored",
        description="The note is in the state",
        check=Check.model_validate(
            {"reload": False, "assert": [{"type": "state", "path": "notes.0.title", "equals": "Milk"}]}
        ),
    )
    verdict = judge_on_page(url, make_input(tmp_path, [saves, stored]), browse=browse)
    assert verdict.requirements[0].status is RequirementStatus.PASSED, verdict.requirements[0].reason
    assert verdict.requirements[1].status is RequirementStatus.UNASSESSED  # no state.json, no runtime_state
    assert verdict.passed is None

    (tmp_path / "state.json").write_text(json.dumps({"notes": [{"title": "Milk"}]}))
    verdict = judge_on_page(url, make_input(tmp_path, [saves, stored]), browse=browse)
    assert verdict.passed is True, verdict.summary


def test_no_log_file_and_no_log_means_no_reader(tmp_path) -> None:
    readers = default_readers(make_input(tmp_path, []))
    assert readers.tool_log is None and readers.state is None
    log = [{"tool": "x", "arguments": {}, "ok": True}]
    readers = default_readers(make_input(tmp_path, [], tool_log=log, runtime_state={"a": 1}))
    assert readers.tool_log() == [{"tool": "x", "arguments": {}, "ok": True}]
    assert readers.state() == {"a": 1}
    (tmp_path / "tool_log.jsonl").write_text('{"tool": "y", "arguments": {}, "ok": true}\n{"tool": "torn')
    assert [c["tool"] for c in readers.tool_log()] == ["y"]  # file wins; a torn last line is skipped


def test_build_failure_fails_without_a_page(tmp_path) -> None:
    verdict = asyncio.run(RulesJudge().score(make_input(tmp_path, [ADD, LOOKS_NICE], build="build_failed")))
    assert verdict.passed is False
    assert verdict.dimensions["build"].score == 0.0 and "something broke" in verdict.dimensions["build"].reason
    assert verdict.requirements[0].status is RequirementStatus.FAILED
    assert "build_failed" in verdict.failure_types
    assert (tmp_path / "verdict.json").exists()


def test_no_session_leaves_checks_unassessed(tmp_path) -> None:
    judge_input = make_input(tmp_path, [ADD])
    judge_input.evidence = Evidence(url="http://127.0.0.1:1/")
    verdict = asyncio.run(RulesJudge().score(judge_input))
    assert verdict.requirements[0].status is RequirementStatus.UNASSESSED
    assert verdict.passed is None


def test_custom_readers_are_used(tmp_path) -> None:
    seen: list[str] = []

    def readers(judge_input: JudgeInput) -> Readers:
        seen.append(judge_input.task.id)
        return Readers()

    asyncio.run(RulesJudge(readers=readers).score(make_input(tmp_path, [])))
    assert seen == ["todo"]


@pytest.mark.browser
def test_live_checks_start_on_the_page_as_loaded_until_a_check_acts_on_it(site, browse, pages, tmp_path) -> None:
    """Given a page only read since its load, the execution phase's checks start on it while no check's steps
    acted on it (a heading check, then the add check); after the add check's steps the next one reloads.
    `reuse_loaded_page: false`, or a page not given as loaded, reloads for every check."""
    url = site.page("todo.html", pages.todo())
    again = Requirement(id="heading-again", description="Still has a heading", check=HAS_HEADING)

    def run(judge: RulesJudge, **extra: Any) -> dict[str, dict[str, Any]]:
        async def body(session):
            judge_input = make_input(tmp_path, [HEADING, ADD, again], session=session, **extra)
            judge_input.evidence = Evidence(url=url)
            return await judge.run_live_checks(judge_input)

        return browse(url, body)

    for judge, extra, as_loaded in ((RulesJudge(), {"page_as_loaded": True}, [True, True, False]),
                                    (RulesJudge(RulesJudgeSettings(reuse_loaded_page=False)),
                                     {"page_as_loaded": True}, [False] * 3),
                                    (RulesJudge(), {}, [False] * 3)):
        outcomes = run(judge, **extra)
        assert [outcomes[r]["status"] for r in ("heading", "add", "heading-again")] == ["passed"] * 3
        assert [outcomes[r]["page_as_loaded"] for r in ("heading", "add", "heading-again")] == as_loaded
