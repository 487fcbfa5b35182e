"""Execute one declarative check (runner/judges/checks.py) on a live page.

A check runs its steps like a user would (Playwright locators by role, label, text, test id or CSS),
then evaluates its assertions until they all hold or a short deadline passes, because a UI may update
a few frames (or one tool round-trip) after the last action. Every problem the artifact can cause -
a missing element, a disabled button, an assertion that never holds - becomes a FAILED outcome with a
reason that names the target or assertion; it is never an exception. An assertion whose evidence is
not available (no tool log, no runtime state) is UNASSESSED: the runner cannot check it, so it must not
count as passed or failed.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import time
from dataclasses import asdict, dataclass, field
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Callable

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from runner.judges.checks import (
    AttributeAssertion,
    Check,
    CheckStep,
    ClickStep,
    CountAssertion,
    DoubleClickStep,
    DragStep,
    FillStep,
    HoverStep,
    MutationAssertion,
    PressStep,
    ScrollStep,
    SelectStep,
    StateAssertion,
    Target,
    TextVisible,
    ToolCalledAssertion,
    ToolNotCalledAssertion,
    ValueAssertion,
    WaitForTextStep,
    WaitStep,
)
from runner.turns.records import RequirementStatus

if TYPE_CHECKING:
    from runner.browser.session import PageSession

# A reader returns the turn's whole tool log (dicts with keys tool, arguments, ok) or the runtime state;
# it may be a plain function or a coroutine function.
ToolLogReader = Callable[[], Any]
StateReader = Callable[[], Any]

DEFAULT_STEP_TIMEOUT_S = 2.0
DEFAULT_ASSERT_TIMEOUT_S = 2.0
DEFAULT_MAX_ASSERT_WAIT_S = 10.0
_POLL_INTERVAL_S = 0.1
_MAX_ERROR_CHARS = 300


@dataclass
class StepOutcome:
    index: int
    action: dict[str, Any]
    ok: bool
    error: str = ""
    duration_s: float = 0.0


@dataclass
class AssertionOutcome:
    index: int
    type: str
    status: RequirementStatus
    reason: str = ""
    observed: Any = None


@dataclass
class CheckOutcome:
    status: RequirementStatus
    reason: str = ""
    steps: list[StepOutcome] = field(default_factory=list)
    assertions: list[AssertionOutcome] = field(default_factory=list)
    duration_s: float = 0.0
    # A reloading check that started on the page as its load left it, a reload being sure to give the same page
    # (run_check's page_as_loaded).
    page_as_loaded: bool = False

    @property
    def passed(self) -> bool:
        return self.status is RequirementStatus.PASSED

    def to_json(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self), default=str))


# --- locating elements -------------------------------------------------------------------------


def describe_target(target: Target) -> str:
    """A short human-readable name of a target, used in every reason that mentions it."""
    if target.role is not None:
        text = f"role={target.role}"
        if target.name is not None:
            text += f" name={target.name!r}"
    else:
        kind = next(k for k in ("label", "text", "testid", "css") if getattr(target, k) is not None)
        text = f"{kind}={getattr(target, kind)!r}"
    if target.exact:
        text += " exact"
    if target.nth:
        text += f" nth={target.nth}"
    return text


def base_locator(page: Page, target: Target) -> Locator:
    """All elements the target matches (ignoring `nth`)."""
    if target.role is not None:
        return page.get_by_role(target.role, name=target.name, exact=target.exact)  # type: ignore[arg-type]
    if target.label is not None:
        return page.get_by_label(target.label, exact=target.exact)
    if target.text is not None:
        return page.get_by_text(target.text, exact=target.exact)
    if target.testid is not None:
        return page.get_by_test_id(target.testid)
    assert target.css is not None  # Target's validator guarantees exactly one kind
    return page.locator(target.css)


def locate(page: Page, target: Target) -> Locator:
    return base_locator(page, target).nth(target.nth)


def _short(error: BaseException) -> str:
    """First line of a Playwright error (its call log is long and mostly noise)."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:_MAX_ERROR_CHARS]


# --- steps -------------------------------------------------------------------------------------


class StepFailed(Exception):
    """A step could not be performed; the message is the reason shown to the user."""


async def _present(locator: Locator, target: Target, timeout_s: float) -> None:
    try:
        await locator.wait_for(state="attached", timeout=timeout_s * 1000)
    except PlaywrightTimeoutError:
        raise StepFailed(f"no element matches {describe_target(target)}") from None


async def _ready(locator: Locator, target: Target, timeout_s: float, *, visible: bool = True) -> None:
    """Wait, within `timeout_s`, until the target is present, (for a pointer or form step) visible, and enabled:
    the condition a person waits for before using a control, so a slow page is waited for, never raced."""
    deadline = time.monotonic() + timeout_s
    await _present(locator, target, timeout_s)
    if visible:
        try:
            await locator.wait_for(state="visible", timeout=max(1.0, (deadline - time.monotonic()) * 1000))
        except PlaywrightTimeoutError:
            raise StepFailed(f"{describe_target(target)} is not visible") from None
    while True:
        try:  # the element is there: its lookup is immediate, the limit only covers a page that stopped answering
            if await locator.is_enabled(timeout=timeout_s * 1000):
                return
        except PlaywrightTimeoutError:
            raise StepFailed(f"{describe_target(target)} is no longer there") from None
        if time.monotonic() >= deadline:
            raise StepFailed(f"{describe_target(target)} stayed disabled for {timeout_s:g} s")
        await asyncio.sleep(_POLL_INTERVAL_S)


TextReader = Callable[[], Awaitable[str]]


async def _wait_for_text(page: Page, step: WaitForTextStep, timeout_s: float, read_text: TextReader | None) -> None:
    """Poll the visible text (as the text_visible assertion reads it) until `step.text` is shown (or gone)."""
    wait_s = step.ms / 1000 if step.ms > 0 else timeout_s
    wanted = _normalize_space(step.text)
    deadline = time.monotonic() + wait_s
    while True:
        text = await read_text() if read_text is not None else await page.locator("body").inner_text()
        if (wanted in _normalize_space(text)) == step.present:
            return
        if time.monotonic() >= deadline:
            state = "did not appear" if step.present else "was still visible"
            raise StepFailed(f"text {step.text!r} {state} within {wait_s:g} s")
        await asyncio.sleep(_POLL_INTERVAL_S)


async def _scroll(page: Page, locator: Locator | None, step: ScrollStep, timeout_ms: float) -> None:
    if locator is None:
        await page.evaluate("([dx, dy]) => window.scrollBy(dx, dy)", [step.dx, step.dy])
    elif step.dx == 0 and step.dy == 0:
        await locator.scroll_into_view_if_needed(timeout=timeout_ms)
    else:
        await locator.evaluate("(el, [dx, dy]) => el.scrollBy(dx, dy)", [step.dx, step.dy], timeout=timeout_ms)


async def step_ready(page: Page, step: Any, *, timeout_s: float = DEFAULT_STEP_TIMEOUT_S) -> None:
    """Wait, within `timeout_s`, until a step's target (and a drag's destination) can be used: present, visible
    where a person must see it (a key press goes to an element that only has to be there), and enabled. A step
    without a target, or one that waits itself, has nothing to wait for. Raises StepFailed naming the target."""
    target: Target | None = getattr(step, "target", None)
    if target is None or isinstance(step, (WaitStep, WaitForTextStep)):
        return
    try:
        await _ready(locate(page, target), target, timeout_s, visible=not isinstance(step, (PressStep, ScrollStep)))
        if isinstance(step, DragStep):
            await _ready(locate(page, step.to), step.to, timeout_s)
    except PlaywrightError as error:
        raise StepFailed(f"{step.action} on {describe_target(target)} failed: {_short(error)}") from None


async def perform_step(page: Page, step: Any, *, timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
                       read_text: TextReader | None = None, ready: bool = False) -> None:
    """Perform one step; raises StepFailed with a reason naming the target when it cannot.

    A step on a target first waits until it can be used (`step_ready`; `ready`: the caller has just waited).
    `read_text`: how `wait_for_text` reads the page's visible text (the session's tamper-proof read; default:
    the body's innerText through Playwright)."""
    timeout_ms = timeout_s * 1000
    target: Target | None = getattr(step, "target", None)
    locator = locate(page, target) if target is not None else None
    if not ready:
        await step_ready(page, step, timeout_s=timeout_s)
    try:
        if isinstance(step, WaitStep):
            if locator is None:
                await asyncio.sleep(step.ms / 1000)
                return
            wait_ms = step.ms if step.ms > 0 else timeout_ms
            try:
                await locator.wait_for(state="visible", timeout=wait_ms)
            except PlaywrightTimeoutError:
                waited = f"{wait_ms / 1000:g} s"
                raise StepFailed(f"{describe_target(target)} did not become visible within {waited}") from None
            return
        if isinstance(step, WaitForTextStep):
            await _wait_for_text(page, step, timeout_s, read_text)
            return
        if isinstance(step, PressStep) and locator is None:
            await page.keyboard.press(step.key)
            return
        if isinstance(step, ScrollStep):
            await _scroll(page, locator, step, timeout_ms)
            return
        assert locator is not None and target is not None
        if isinstance(step, ClickStep):
            await locator.click(timeout=timeout_ms)
        elif isinstance(step, DoubleClickStep):
            await locator.dblclick(timeout=timeout_ms)
        elif isinstance(step, HoverStep):
            await locator.hover(timeout=timeout_ms)
        elif isinstance(step, FillStep):
            await locator.fill(step.value, timeout=timeout_ms)
        elif isinstance(step, SelectStep):
            # A string matches an option's value or its label.
            await locator.select_option(step.value, timeout=timeout_ms)
        elif isinstance(step, PressStep):
            await locator.press(step.key, timeout=timeout_ms)
        elif isinstance(step, CheckStep):
            if step.action == "check":
                await locator.check(timeout=timeout_ms)
            else:
                await locator.uncheck(timeout=timeout_ms)
        elif isinstance(step, DragStep):
            await locator.drag_to(locate(page, step.to), timeout=timeout_ms)
        else:  # pragma: no cover - the discriminated union has no other members
            raise StepFailed(f"unknown step {step!r}")
    except StepFailed:
        raise
    except PlaywrightError as error:
        where = f" on {describe_target(target)}" if target is not None else ""
        raise StepFailed(f"{step.action}{where} failed: {_short(error)}") from None


def step_summary(step: Any) -> dict[str, Any]:
    """The step as a plain dict (for traces and outcome details)."""
    return step.model_dump(mode="json", exclude_none=True)


# --- assertions --------------------------------------------------------------------------------


def _normalize_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def json_subset(expected: Any, actual: Any) -> bool:
    """True when `expected` is contained in `actual`: dict keys recursively, lists element-wise, scalars equal."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and json_subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(json_subset(e, a) for e, a in zip(expected, actual))
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    return expected == actual


def json_equal(expected: Any, actual: Any) -> bool:
    """Equality of JSON values that does not confuse booleans with numbers."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and expected.keys() == actual.keys() and json_subset(expected, actual) and all(
            json_equal(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(json_equal(e, a) for e, a in zip(expected, actual))
        )
    return json_subset(expected, actual)


def json_contains(container: Any, item: Any) -> bool:
    """`contains` for state values: substring of a string, subset-match of a list element, or dict subset."""
    if isinstance(container, str):
        return isinstance(item, str) and item in container
    if isinstance(container, list):
        return any(json_subset(item, element) for element in container)
    if isinstance(container, dict):
        return isinstance(item, dict) and json_subset(item, container)
    return False


_MISSING = object()


def _json_text(value: Any, limit: int = 200) -> str:
    return json.dumps(value, sort_keys=True, default=str)[:limit]


def resolve_path(data: Any, path: str) -> Any:
    """Follow a dot path through dicts and lists (numeric parts index lists); _MISSING when absent."""
    current = data
    for part in path.split(".") if path else []:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and re.fullmatch(r"-?\d+", part) and -len(current) <= int(part) < len(current):
            current = current[int(part)]
        else:
            return _MISSING
    return current


async def _call_reader(reader: Callable[[], Any]) -> Any:
    result = reader()
    if inspect.isawaitable(result):
        result = await result
    return result


def _ok(index: int, kind: str, reason: str = "", observed: Any = None) -> AssertionOutcome:
    return AssertionOutcome(index, kind, RequirementStatus.PASSED, reason, observed)


def _fail(index: int, kind: str, reason: str, observed: Any = None) -> AssertionOutcome:
    return AssertionOutcome(index, kind, RequirementStatus.FAILED, reason, observed)


def _unassessed(index: int, kind: str, reason: str) -> AssertionOutcome:
    return AssertionOutcome(index, kind, RequirementStatus.UNASSESSED, reason)


class _Context:
    """What assertions read: the page, the readers and the tool-log length before the check."""

    def __init__(
        self,
        session: "PageSession",
        tool_log_reader: ToolLogReader | None,
        state_reader: StateReader | None,
        tool_log_start: int,
    ) -> None:
        self.session = session
        self.tool_log_reader = tool_log_reader
        self.state_reader = state_reader
        self.tool_log_start = tool_log_start

    async def new_tool_calls(self) -> list[dict[str, Any]]:
        assert self.tool_log_reader is not None
        log = list(await _call_reader(self.tool_log_reader) or [])
        return [call for call in log[self.tool_log_start :] if isinstance(call, dict)]


async def _evaluate(index: int, assertion: Any, ctx: _Context) -> AssertionOutcome:
    kind = assertion.type
    page = ctx.session.page
    if isinstance(assertion, TextVisible):
        text = _normalize_space(await ctx.session.visible_text())
        wanted = _normalize_space(assertion.text)
        shown = wanted in text
        if shown == assertion.present:
            return _ok(index, kind)
        if assertion.present:
            return _fail(index, kind, f"text {assertion.text!r} is not visible", text[:500])
        return _fail(index, kind, f"text {assertion.text!r} is visible but should not be", text[:500])

    if isinstance(assertion, CountAssertion):
        count = await base_locator(page, assertion.target).count()
        name = describe_target(assertion.target)
        if assertion.equals is not None and count != assertion.equals:
            return _fail(index, kind, f"{name} matches {count} elements, expected exactly {assertion.equals}", count)
        if assertion.min is not None and count < assertion.min:
            return _fail(index, kind, f"{name} matches {count} elements, expected at least {assertion.min}", count)
        if assertion.max is not None and count > assertion.max:
            return _fail(index, kind, f"{name} matches {count} elements, expected at most {assertion.max}", count)
        return _ok(index, kind, observed=count)

    if isinstance(assertion, (AttributeAssertion, ValueAssertion)):
        name = describe_target(assertion.target)
        locator = locate(page, assertion.target)
        if await base_locator(page, assertion.target).count() <= assertion.target.nth:
            return _fail(index, kind, f"no element matches {name}")
        try:
            if isinstance(assertion, ValueAssertion):
                value = await locator.input_value(timeout=500)
                if value == assertion.equals:
                    return _ok(index, kind, observed=value)
                return _fail(index, kind, f"value of {name} is {value!r}, expected {assertion.equals!r}", value)
            value = await locator.get_attribute(assertion.name, timeout=500)
        except PlaywrightError as error:
            return _fail(index, kind, f"cannot read {name}: {_short(error)}")
        label = f"attribute {assertion.name!r} of {name}"
        if value is None:
            return _fail(index, kind, f"{label} is absent")
        if assertion.equals is not None and value != assertion.equals:
            return _fail(index, kind, f"{label} is {value!r}, expected {assertion.equals!r}", value)
        if assertion.contains is not None and assertion.contains not in value:
            return _fail(index, kind, f"{label} is {value!r}, expected it to contain {assertion.contains!r}", value)
        return _ok(index, kind, observed=value)

    if isinstance(assertion, MutationAssertion):
        count = await ctx.session.mutation_count(character_data=True)
        if (count > 0) == assertion.changed:
            return _ok(index, kind, observed=count)
        if assertion.changed:
            return _fail(index, kind, "the steps did not change the DOM (0 mutations)", count)
        return _fail(index, kind, f"the steps changed the DOM ({count} mutations) but should not", count)

    if isinstance(assertion, (ToolCalledAssertion, ToolNotCalledAssertion)):
        if ctx.tool_log_reader is None:
            return _unassessed(index, kind, f"no tool log available to check {kind} {assertion.tool!r}")
        calls = [c for c in await ctx.new_tool_calls() if c.get("tool") == assertion.tool]
        if isinstance(assertion, ToolNotCalledAssertion):
            if calls:
                return _fail(index, kind, f"tool {assertion.tool!r} was called {len(calls)} time(s)", calls[:5])
            return _ok(index, kind)
        matching = [
            c
            for c in calls
            if json_subset(assertion.args_subset, c.get("arguments") or {})
            and (not assertion.ok or c.get("ok", True) is True)
        ]
        if len(matching) >= assertion.min_calls:
            return _ok(index, kind, observed=matching[:5])
        wanted = f"tool {assertion.tool!r}"
        if assertion.args_subset:
            wanted += f" with arguments containing {json.dumps(assertion.args_subset, sort_keys=True)}"
        if assertion.ok:
            wanted += " (succeeding)"
        return _fail(
            index,
            kind,
            f"expected {assertion.min_calls} call(s) of {wanted}, found {len(matching)}"
            f" ({len(calls)} call(s) of {assertion.tool!r} in all)",
            calls[:5],
        )

    if isinstance(assertion, StateAssertion):
        if ctx.state_reader is None:
            return _unassessed(index, kind, f"no runtime state available to check {assertion.path!r}")
        state = await _call_reader(ctx.state_reader)
        value = resolve_path(state, assertion.path)
        if value is _MISSING:
            if assertion.exists:
                return _fail(index, kind, f"state path {assertion.path!r} does not exist")
            return _ok(index, kind)
        if not assertion.exists:
            return _fail(index, kind, f"state path {assertion.path!r} exists but should not", value)
        shown = f"state {assertion.path!r} is {_json_text(value)}"
        if assertion.equals is not None and not json_equal(assertion.equals, value):
            return _fail(index, kind, f"{shown}, expected {_json_text(assertion.equals)}", value)
        if assertion.contains is not None and not json_contains(value, assertion.contains):
            return _fail(index, kind, f"{shown}, expected it to contain {_json_text(assertion.contains)}", value)
        return _ok(index, kind, observed=value)

    return _unassessed(index, kind, f"unknown assertion type {kind!r}")  # pragma: no cover


async def _evaluate_all(assertions: list[Any], ctx: _Context) -> list[AssertionOutcome]:
    outcomes = []
    for index, assertion in enumerate(assertions):
        try:
            outcomes.append(await _evaluate(index, assertion, ctx))
        except PlaywrightError as error:
            outcomes.append(_fail(index, assertion.type, f"{assertion.type} could not be evaluated: {_short(error)}"))
    return outcomes


def _combine(outcomes: list[AssertionOutcome]) -> tuple[RequirementStatus, str]:
    failed = [o for o in outcomes if o.status is RequirementStatus.FAILED]
    if failed:
        return RequirementStatus.FAILED, "; ".join(f"assertion {o.index} ({o.type}): {o.reason}" for o in failed)
    unassessed = [o for o in outcomes if o.status is RequirementStatus.UNASSESSED]
    if unassessed:
        return RequirementStatus.UNASSESSED, "; ".join(
            f"assertion {o.index} ({o.type}) unassessed: {o.reason}" for o in unassessed
        )
    return RequirementStatus.PASSED, f"all {len(outcomes)} assertion(s) held"


# --- the whole check ---------------------------------------------------------------------------


async def run_check(
    session: "PageSession",
    check: Check,
    *,
    tool_log_reader: ToolLogReader | None = None,
    state_reader: StateReader | None = None,
    step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
    assert_timeout_s: float = DEFAULT_ASSERT_TIMEOUT_S,
    max_assert_wait_s: float = DEFAULT_MAX_ASSERT_WAIT_S,
    page_as_loaded: bool = False,
) -> CheckOutcome:
    """Run `check` on the live page of `session` and say whether its assertions hold.

    Tool calls count only when made during this check: the log length is taken before the reload, so
    calls the fresh page makes on load belong to the check too, earlier calls do not.

    `page_as_loaded`: the caller says that nothing but reads ran on the page since its load (no actor, no
    check's steps). A reloading check then starts on that page when a reload would give the same page
    (PageSession.reload_would_match: its one load, unchanged, no bridge call, nothing a reload would start from),
    which saves a load and its settle window; else it reloads.

    Assertions are polled until they all hold, for `assert_timeout_s` past the later of the last step and
    the page's last tool-bridge activity, and never longer than `max_assert_wait_s` in all.
    """
    started = time.monotonic()
    as_loaded = False

    def done(status: RequirementStatus, reason: str, **parts: Any) -> CheckOutcome:
        return CheckOutcome(status, reason, duration_s=round(time.monotonic() - started, 3),
                            page_as_loaded=as_loaded, **parts)

    tool_log_start = 0
    if tool_log_reader is not None:
        tool_log_start = len(list(await _call_reader(tool_log_reader) or []))

    as_loaded = check.reload and page_as_loaded and await session.reload_would_match()
    if check.reload and not as_loaded:
        try:
            await session.goto()
        except Exception as error:  # the artifact's page failed to load: a failure of the artifact
            return done(RequirementStatus.FAILED, f"page did not load: {_short(error)}")
    try:
        await session.reset_mutations()
    except PlaywrightError as error:  # crashed or navigated away: the artifact's doing
        return done(RequirementStatus.FAILED, f"page is not usable: {_short(error)}")

    steps: list[StepOutcome] = []
    for index, step in enumerate(check.steps):
        step_started = time.monotonic()
        error = ""
        try:
            await perform_step(session.page, step, timeout_s=step_timeout_s, read_text=session.visible_text)
        except StepFailed as failure:
            error = str(failure)
        took = round(time.monotonic() - step_started, 3)
        steps.append(StepOutcome(index, step_summary(step), not error, error, took))
        if error:
            return done(RequirementStatus.FAILED, f"step {index} ({step.action}): {error}", steps=steps)
        # The next step acts on what this one's tool calls bring back (a lookup fills the form the next step
        # uses): without this wait a correct page fails whenever the bridge answers slower than the steps run.
        await session.tool_calls_answered(step_timeout_s)

    ctx = _Context(session, tool_log_reader, state_reader, tool_log_start)
    # Poll until every assertion holds at once. A UI may render a frame or a tool round-trip later, and one
    # action may chain calls (a booking, then re-reading two lists): while the page still talks to the bridge
    # the window stays open, so a correct page does not fail because the machine is busy.
    asserts_started = time.monotonic()
    while True:
        outcomes = await _evaluate_all(check.assertions, ctx)
        status, reason = _combine(outcomes)
        waited = time.monotonic() - asserts_started
        if status is not RequirementStatus.FAILED or waited >= max_assert_wait_s:
            break
        if waited >= assert_timeout_s and session.tool_bridge_idle_s() >= assert_timeout_s:
            break
        await asyncio.sleep(_POLL_INTERVAL_S)
    return done(status, reason, steps=steps, assertions=outcomes)
