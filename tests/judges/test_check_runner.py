"""run_check against real Chromium on small vanilla-JS pages (fixtures in conftest.py)."""

from __future__ import annotations

import time

import pytest

from runner.judges.check_runner import json_contains, json_subset, resolve_path, run_check, _MISSING
from runner.judges.checks import Check
from runner.turns.records import RequirementStatus

ADD_TODO = {
    "steps": [
        {"action": "fill", "target": {"label": "Task"}, "value": "Water plants"},
        {"action": "click", "target": {"role": "button", "name": "Add"}},
    ],
    "assert": [
        {"type": "text_visible", "text": "Water plants"},
        {"type": "count", "target": {"css": "li.todo"}, "equals": 1},
        {"type": "attribute", "target": {"css": "li.todo"}, "name": "data-state", "equals": "open"},
        {"type": "value", "target": {"testid": "task-input"}, "equals": ""},
        {"type": "mutation", "changed": True},
    ],
}


def check(payload: dict) -> Check:
    return Check.model_validate(payload)


# --- pure helpers --------------------------------------------------------------------------------


def test_json_subset_and_contains() -> None:
    assert json_subset({"a": 1}, {"a": 1, "b": 2})
    assert json_subset({"a": {"b": [1, 2]}}, {"a": {"b": [1, 2], "c": 0}})
    assert not json_subset({"a": [1]}, {"a": [1, 2]})
    assert not json_subset({"a": True}, {"a": 1})  # booleans are not numbers
    assert not json_subset({"a": 1}, {"b": 1})
    assert json_contains(["x", {"id": 3, "n": "y"}], {"id": 3})
    assert json_contains("hello world", "world")
    assert not json_contains(5, 5)


def test_resolve_path() -> None:
    state = {"notes": [{"title": "A"}, {"title": "B"}], "count": 2}
    assert resolve_path(state, "notes.1.title") == "B"
    assert resolve_path(state, "count") == 2
    assert resolve_path(state, "notes.5.title") is _MISSING
    assert resolve_path(state, "missing") is _MISSING


# --- on a live page ------------------------------------------------------------------------------


@pytest.mark.browser
def test_working_todo_passes(site, browse, pages) -> None:
    url = site.page("todo.html", pages.todo())
    outcome = browse(url, lambda s: run_check(s, check(ADD_TODO)))
    assert outcome.status is RequirementStatus.PASSED, outcome.reason
    assert [a.status for a in outcome.assertions] == [RequirementStatus.PASSED] * 5
    assert all(step.ok for step in outcome.steps) and len(outcome.steps) == 2
    assert outcome.to_json()["status"] == "passed"


@pytest.mark.browser
def test_dead_button_fails_naming_the_assertion(site, browse, pages) -> None:
    url = site.page("dead.html", pages.dead)
    outcome = browse(url, lambda s: run_check(s, check(ADD_TODO), assert_timeout_s=0.5))
    assert outcome.status is RequirementStatus.FAILED
    assert "assertion 0 (text_visible)" in outcome.reason and "'Water plants' is not visible" in outcome.reason
    assert "matches 0 elements, expected exactly 1" in outcome.reason
    assert "did not change the DOM" in outcome.reason
    # the input kept its text: the value assertion names what it saw
    value = next(a for a in outcome.assertions if a.type == "value")
    assert value.status is RequirementStatus.FAILED and "'Water plants'" in value.reason


@pytest.mark.browser
def test_missing_target_fails_naming_the_target(site, browse, pages) -> None:
    url = site.page("todo.html", pages.todo())
    payload = {
        "steps": [{"action": "click", "target": {"role": "button", "name": "Delete all"}}],
        "assert": [{"type": "count", "target": {"css": "li"}, "equals": 0}],
    }
    started = time.monotonic()
    outcome = browse(url, lambda s: run_check(s, check(payload), step_timeout_s=1.0))
    assert time.monotonic() - started < 15
    assert outcome.status is RequirementStatus.FAILED
    assert "step 0 (click)" in outcome.reason and "role=button name='Delete all'" in outcome.reason
    assert outcome.steps[0].ok is False and outcome.assertions == []


@pytest.mark.browser
def test_negative_text_and_count_bounds(site, browse, pages) -> None:
    url = site.page("todo.html", pages.todo())
    payload = {
        "steps": [
            {"action": "fill", "target": {"role": "textbox", "name": "Task"}, "value": "A"},
            {"action": "press", "target": {"label": "Task"}, "key": "Tab"},
            {"action": "click", "target": {"text": "Add", "exact": True}},
            {"action": "fill", "target": {"css": "#task"}, "value": "B"},
            {"action": "click", "target": {"role": "button"}},
            {"action": "wait", "target": {"text": "B", "exact": True}},
        ],
        "assert": [
            {"type": "count", "target": {"role": "listitem"}, "min": 2, "max": 2},
            {"type": "text_visible", "text": "Nothing to do", "present": False},
            {"type": "attribute", "target": {"css": "li.todo", "nth": 1}, "name": "class", "contains": "todo"},
        ],
    }
    outcome = browse(url, lambda s: run_check(s, check(payload)))
    assert outcome.status is RequirementStatus.PASSED, outcome.reason


@pytest.mark.browser
def test_select_check_and_keyboard_steps(site, browse) -> None:
    html = """<!doctype html><body>
    <label>Size <select id="size"><option value="s">Small</option><option value="l">Large</option></select></label>
    <label><input type="checkbox" id="gift"> Gift wrap</label>
    <input id="q" aria-label="Search">
    <p id="out"></p>
    <script>
      const render = () => { document.getElementById('out').textContent =
        'size=' + document.getElementById('size').value + ' gift=' + document.getElementById('gift').checked; };
      document.getElementById('size').addEventListener('change', render);
      document.getElementById('gift').addEventListener('change', render);
      document.getElementById('q').addEventListener('keydown', e => {
        if (e.key === 'Enter') document.getElementById('out').textContent += ' searched';
      });
    </script></body>"""
    url = site.page("form.html", html)
    payload = {
        "steps": [
            {"action": "select", "target": {"label": "Size"}, "value": "Large"},  # by option label
            {"action": "check", "target": {"role": "checkbox", "name": "Gift wrap"}},
            {"action": "fill", "target": {"label": "Search"}, "value": "shoes"},
            {"action": "press", "key": "Enter"},  # the focused element
        ],
        "assert": [
            {"type": "text_visible", "text": "size=l gift=true searched"},
            {"type": "value", "target": {"label": "Size"}, "equals": "l"},
        ],
    }
    outcome = browse(url, lambda s: run_check(s, check(payload)))
    assert outcome.status is RequirementStatus.PASSED, outcome.reason


@pytest.mark.browser
def test_tool_called_with_supplied_log(site, browse, pages) -> None:
    url = site.page("tool.html", pages.tool)
    site.tool_log.append({"tool": "delete_note", "arguments": {"id": 1}, "ok": True})  # before the check
    payload = {
        "steps": [
            {"action": "fill", "target": {"label": "Title"}, "value": "Groceries"},
            {"action": "click", "target": {"role": "button", "name": "Save"}},
        ],
        "assert": [
            {"type": "tool_called", "tool": "create_note", "args_subset": {"title": "Groceries", "tags": ["a", "b"]}},
            {"type": "tool_not_called", "tool": "delete_note"},  # the earlier call does not count
            {"type": "text_visible", "text": "Saved Groceries"},
        ],
    }
    wrong = {
        "steps": payload["steps"],
        "assert": [{"type": "tool_called", "tool": "create_note", "args_subset": {"title": "Other"}}],
    }
    reader = lambda: list(site.tool_log)  # noqa: E731

    async def body(session):
        return (
            await run_check(session, check(payload), tool_log_reader=reader),
            await run_check(session, check(wrong), tool_log_reader=reader, assert_timeout_s=0.3),
            await run_check(session, check(payload)),
        )

    good, bad, no_reader = browse(url, body)
    assert good.status is RequirementStatus.PASSED, good.reason
    assert bad.status is RequirementStatus.FAILED
    assert "create_note" in bad.reason and '{"title": "Other"}' in bad.reason
    # Without a reader the tool assertions cannot be checked: unassessed, not failed and not passed.
    assert no_reader.status is RequirementStatus.UNASSESSED
    assert "no tool log" in no_reader.reason


@pytest.mark.browser
def test_state_assertion(site, browse, pages) -> None:
    url = site.page("todo.html", pages.todo())
    payload = {
        "assert": [
            {"type": "state", "path": "notes.0.title", "equals": "Groceries"},
            {"type": "state", "path": "notes", "contains": {"title": "Groceries"}},
            {"type": "state", "path": "deleted", "exists": False},
        ]
    }
    state = {"notes": [{"title": "Groceries", "id": 1}]}

    async def async_reader() -> dict:
        return {"notes": [], "deleted": True}

    async def body(session):
        return (
            await run_check(session, check(payload)),
            await run_check(session, check(payload), state_reader=lambda: state),
            await run_check(session, check(payload), state_reader=async_reader, assert_timeout_s=0.2),
        )

    no_reader, good, bad = browse(url, body)
    assert no_reader.status is RequirementStatus.UNASSESSED
    assert all(a.status is RequirementStatus.UNASSESSED for a in no_reader.assertions)
    assert good.status is RequirementStatus.PASSED, good.reason
    assert bad.status is RequirementStatus.FAILED
    assert "'notes.0.title' does not exist" in bad.reason and "'deleted' exists" in bad.reason


@pytest.mark.browser
def test_failed_and_unassessed_mix_is_failed(site, browse, pages) -> None:
    url = site.page("dead.html", pages.dead)
    payload = {
        "assert": [
            {"type": "text_visible", "text": "Water plants"},
            {"type": "state", "path": "x"},
        ]
    }
    outcome = browse(url, lambda s: run_check(s, check(payload), assert_timeout_s=0.2))
    assert outcome.status is RequirementStatus.FAILED
    assert [a.status for a in outcome.assertions] == [RequirementStatus.FAILED, RequirementStatus.UNASSESSED]


LOOKUP_PAGE = """<!doctype html><body>
<button onclick="fetch('/__tools/call', {method: 'POST', body: JSON.stringify({tool: 'find', delay_ms: 700})})
  .then((r) => r.json()).then(() => { window.found = true; document.getElementById('out').textContent = 'Found'; })">Find</button>
<button onclick="document.getElementById('out').textContent = window.found ? 'Used' : 'Find first'">Use</button>
<p id=out></p></body>"""


@pytest.mark.browser
def test_a_step_waits_for_the_tool_calls_the_step_before_started(site, browse) -> None:
    """A lookup over the tool bridge fills what the next step uses: the check waits for its answer, as a person
    would, instead of failing a correct page whenever the bridge is slower than the steps."""
    url = site.page("lookup.html", LOOKUP_PAGE)
    payload = {
        "steps": [{"action": "click", "target": {"role": "button", "name": "Find"}},
                  {"action": "click", "target": {"role": "button", "name": "Use"}}],
        "assert": [{"type": "text_visible", "text": "Used"}],
    }
    outcome = browse(url, lambda s: run_check(s, check(payload), assert_timeout_s=0.3))
    assert outcome.status is RequirementStatus.PASSED, outcome.reason
    assert outcome.steps[0].duration_s < 0.5  # the click itself returned at once; the wait came after it


# A booking, then re-reading two lists: three bridge calls one after another, with a pause between them.
CHAINED_PAGE = """<!doctype html><body>
<script>
const call = (tool) => fetch('/__tools/call', {method: 'POST', body: JSON.stringify({tool, delay_ms: 400})});
const pause = () => new Promise((done) => setTimeout(done, 100));
async function save() {
  await call('reserve'); await pause(); await call('list_slips'); await pause(); await call('list_reservations');
  document.getElementById('out').textContent = 'Booked';
}
</script>
<button onclick="save()">Save</button><p id=out></p></body>"""

# A page that keeps asking the bridge and never shows what the check wants.
POLLING_PAGE = """<!doctype html><body><script>
setInterval(() => fetch('/__tools/call', {method: 'POST', body: JSON.stringify({tool: 'poll', delay_ms: 50})}), 150);
</script><p>Waiting</p></body>"""


@pytest.mark.browser
def test_assertions_wait_while_the_page_still_talks_to_the_tool_bridge(site, browse) -> None:
    """The rows a booking refreshes arrive a chain of calls after the click; the assertion window stays open
    while the page is still calling the bridge, so a correct page passes on a busy machine."""
    url = site.page("chained.html", CHAINED_PAGE)
    payload = {"steps": [{"action": "click", "target": {"role": "button", "name": "Save"}}],
               "assert": [{"type": "text_visible", "text": "Booked"}]}
    outcome = browse(url, lambda s: run_check(s, check(payload), assert_timeout_s=0.3))
    assert outcome.status is RequirementStatus.PASSED, outcome.reason
    assert [c["tool"] for c in site.tool_log] == ["reserve", "list_slips", "list_reservations"]


@pytest.mark.browser
def test_a_page_that_never_stops_calling_fails_at_the_assertion_cap(site, browse) -> None:
    url = site.page("polling.html", POLLING_PAGE)
    payload = {"steps": [], "assert": [{"type": "text_visible", "text": "Done"}]}
    outcome = browse(url, lambda s: run_check(s, check(payload), assert_timeout_s=0.3, max_assert_wait_s=1.5))
    assert outcome.status is RequirementStatus.FAILED
    assert "'Done' is not visible" in outcome.reason
    assert 1.5 <= outcome.duration_s < 4.0  # kept open past 0.3 s by the polling, closed by the cap


@pytest.mark.browser
def test_a_check_starts_on_the_page_as_loaded_only_where_a_reload_would_give_that_page(site, browse, pages) -> None:
    """page_as_loaded: the check runs on the loaded page (a mark in its JavaScript survives) and says so; a page
    whose load left something a reload would start from (here localStorage) is reloaded, as is every page
    without page_as_loaded; the outcome is the same either way."""
    plain = site.page("todo.html", pages.todo())
    storing = site.page("storing.html", pages.todo().replace("<script>", "<script>localStorage.setItem('seen', '1');"))

    def run(url: str, **options):
        async def body(session):
            await session.page.evaluate("window.loadMark = 1")  # JavaScript only: a reload clears it
            outcome = await run_check(session, check(ADD_TODO), **options)
            return outcome, await session.page.evaluate("window.loadMark === 1")

        return browse(url, body)

    for url, as_loaded in ((plain, True), (storing, False)):
        outcome, kept = run(url, page_as_loaded=True)
        assert outcome.status is RequirementStatus.PASSED, outcome.reason
        assert outcome.page_as_loaded is as_loaded and kept is as_loaded
        assert outcome.to_json()["page_as_loaded"] is as_loaded
    outcome, kept = run(plain)
    assert outcome.status is RequirementStatus.PASSED and outcome.page_as_loaded is False and kept is False


@pytest.mark.browser
def test_the_flow_steps_are_the_checks_steps_too(site, browse) -> None:
    """dblclick, key presses, hover and wait_for_text in a rules check, on the scripted actor's flow page."""
    from tests.actors.flow_pages import flow_page

    url = site.page("flow.html", flow_page())
    steps = [{"action": "dblclick", "target": {"text": "Buy milk"}},
             {"action": "fill", "target": {"label": "Edit title"}, "value": "Buy oat milk"},
             {"action": "press", "target": {"label": "Edit title"}, "key": "Enter"},
             {"action": "hover", "target": {"css": "#item"}},
             {"action": "click", "target": {"role": "button", "name": "Remove"}},
             {"action": "click", "target": {"css": "#status"}},
             {"action": "wait_for_text", "text": "found 3 results"},
             {"action": "click", "target": {"role": "button", "name": "Confirm"}},
             {"action": "wait_for_text", "text": "confirmed"}]
    outcome = browse(url, lambda s: run_check(s, check({"steps": steps, "assert": [
        {"type": "text_visible", "text": "Buy oat milk"}, {"type": "text_visible", "text": "confirmed"}]})))
    assert outcome.status is RequirementStatus.PASSED, outcome.reason
    never = steps[:1] + [{"action": "wait_for_text", "text": "never shown", "ms": 300}]
    outcome = browse(url, lambda s: run_check(s, check({"steps": never, "assert": [
        {"type": "text_visible", "text": "Buy milk"}]})))
    assert outcome.status is RequirementStatus.FAILED
    assert "text 'never shown' did not appear within 0.3 s" in outcome.reason
