"""The Interaction Probe of I-WebGenBench (§3.2, §4.1, Appendix B.1) and its Interaction Rate.

Three stages (B.1): (1) enumerate the visible interactive elements with their bounding boxes, (2) give each
one canonical action by its HTML semantics (click buttons, populate text inputs, set sliders to midpoints,
...), (3) observe DOM mutations with a MutationObserver around each action.

IR (§3.2): IR(p) = (1/|A_p|) * sum_{a in A_p} Delta_DOM(a, p), where Delta_DOM(a, p) = 1 iff action a on
page p triggers at least one DOM mutation. The seed text defines A_p as the actions the probe executes
(§4.1: GenerateOps builds candidate operations that "are executed sequentially"); an element that cannot be
acted on any more (detached by an earlier action, hidden, disabled) has no executed action, so by default
it is left out of A_p (`count_failed_actions=True` counts it as Delta=0 instead). A page with no interactive
element gets IR = 0: it "merely renders" (B.1).

Two modes (`mode`), and the trace says which one produced the IR:
- `paper` (default): the paper's text. Sliders to midpoints, inputs filled the way a user types (React's
  controlled inputs see it), every visible control (up to max_elements), and a MutationObserver on child
  lists, subtrees and attributes (B.1). `observe_character_data=true` also counts text-node rewrites.
- `benchmark`: the behaviour of the benchmark's published probe, quirks included, for numbers comparable
  with the paper's tables: ranges set to 65%, inputs set by assigning `el.value` and dispatching
  input/change events (which a React controlled input ignores), only the first 16 visible elements inside
  a 1024 x 768 viewport, and a fixed 350 ms wait after each action.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urljoin

from playwright.async_api import ElementHandle, Error as PlaywrightError
from pydantic import BaseModel, ConfigDict, Field

from runner.actors.base import ActorContext
from runner.browser.page_diff import describe_change, read_page_state
from runner.turns.evidence import Trace, TraceStep
from runner.turns.evidence_folder import EvidenceFolder

if TYPE_CHECKING:
    from runner.browser.session import PageSession



ProbeMode = Literal["paper", "benchmark"]

# The published probe's fixed behaviour (module docstring, `benchmark` mode).
BENCHMARK_SLIDER_POSITION = 0.65
BENCHMARK_MAX_ELEMENTS = 16
BENCHMARK_SETTLE_MS = 350
BENCHMARK_VIEWPORT = {"width": 1024, "height": 768}


class ProbeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: ProbeMode = "paper"  # see the module docstring
    # Count text-node rewrites (characterData) as mutations too; B.1 observes child lists, subtrees and
    # attributes only. React updates text in place, so this raises the IR of many counters.
    observe_character_data: bool = False
    max_elements: int = Field(30, gt=0)
    slider_position: float = Field(0.5, ge=0.0, le=1.0)  # "setting sliders to midpoints" (B.1)
    # When the slider already sits at slider_position, setting it there again is no action at all;
    # move it here instead so the element is really exercised (recorded in the step).
    slider_fallback_position: float = Field(0.75, ge=0.0, le=1.0)
    text_value: str = "test input 42"
    number_value: str = "7"
    settle_ms: int = Field(150, ge=0)
    # Stop waiting once the action's first DOM mutation is seen (it already decides "responsive");
    # false: always wait the whole settle window.
    early_settle: bool = True
    # Copy the previous 'after' view as the next 'before' view when nothing can have changed in between.
    reuse_views: bool = True
    screenshots: bool = True
    action_timeout_ms: int = Field(2000, gt=0)
    step_timeout_ms: int = Field(10000, gt=0)  # bound on one element's whole step (a hung page aborts the probe)
    count_failed_actions: bool = False  # see the module docstring: False = the seed's A_p
    reload_first: bool = False  # the probe loads the page itself only if it is not loaded yet


# Interactive elements per B.1 / the runner's brief. querySelectorAll returns document order, once per node.
_SELECTOR = ", ".join(
    [
        "button",
        "a[href]",
        "input:not([type=hidden])",
        "select",
        "textarea",
        "[role=button]",
        "[role=tab]",
        "[role=slider]",
        "[role=checkbox]",
        "[role=switch]",
        "[role=menuitem]",
        "[role=link]",
        "[contenteditable='']",
        "[contenteditable=true]",
        "[contenteditable=plaintext-only]",
    ]
)

# Where an element is, as an XPath of element positions from the root: how Playwright's own (utility world)
# query finds the node the harness world chose, for an ElementHandle the actions use.
_XPATH_OF_JS = """(el) => {
  const steps = [];
  for (let node = el; node; node = node.parentElement) {
    let i = 1;
    for (let sib = node.previousElementSibling; sib; sib = sib.previousElementSibling) i++;
    steps.unshift('*[' + i + ']');
  }
  return '/' + steps.join('/');
}"""

# Stage 1, read in the harness world (PageSession.observe) so that the page cannot hide a control from the probe
# or show it one: enumerate, annotate (kind, label, bounding box, css path), and keep the nodes in that world
# so the probe acts on exactly these nodes (`paths`: where each one is, for its ElementHandle). Nested targets
# with the same box as an already taken ancestor (e.g. <div role=button><span role=button>) are one control
# and are taken once.
_ENUMERATE_JS = """
([selector, maxElements, inViewportOnly]) => {
  const xpathOf = """ + _XPATH_OF_JS + """;
  const TEXT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'password']);
  const SPECIAL_TYPES = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'color']);
  const CLICK_TYPES = new Set(['submit', 'button', 'reset', 'image']);
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return false;
    if (el.checkVisibility && !el.checkVisibility({ visibilityProperty: true })) return false;
    return getComputedStyle(el).visibility === 'visible';
  };
  const kindOf = (el) => {
    const tag = el.tagName.toLowerCase();
    const role = (el.getAttribute('role') || '').toLowerCase();
    if (tag === 'input') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (type === 'range') return 'range';
      if (type === 'checkbox' || type === 'radio') return 'toggle';
      if (type === 'number') return 'number';
      if (type === 'file') return 'file';
      if (SPECIAL_TYPES.has(type)) return 'special';
      if (CLICK_TYPES.has(type)) return 'click';
      return 'text';  // text-like and unknown types behave as text
    }
    if (tag === 'select') return 'select';
    if (tag === 'textarea') return 'text';
    if (role === 'slider') return 'aria_slider';
    if (role === 'checkbox' || role === 'switch') return 'toggle';
    if (el.isContentEditable && tag !== 'button' && tag !== 'a' && !role) return 'editable';
    return 'click';
  };
  const labelOf = (el) => {
    const text = el.getAttribute('aria-label') || (el.innerText || '').trim() || el.getAttribute('placeholder')
      || el.getAttribute('title') || el.getAttribute('name') || el.id || '';
    return text.replace(/\\s+/g, ' ').slice(0, 80);
  };
  const cssPath = (el) => {
    const parts = [];
    for (let node = el; node && node.nodeType === 1 && node !== document.documentElement; node = node.parentElement) {
      if (node.id && document.querySelectorAll('#' + CSS.escape(node.id)).length === 1) {
        parts.unshift('#' + CSS.escape(node.id));
        break;
      }
      let i = 1;
      for (let sib = node.previousElementSibling; sib; sib = sib.previousElementSibling)
        if (sib.tagName === node.tagName) i++;
      parts.unshift(node.tagName.toLowerCase() + ':nth-of-type(' + i + ')');
    }
    return parts.join(' > ');
  };
  const sameBox = (a, b) => Math.abs(a.x - b.x) < 1 && Math.abs(a.y - b.y) < 1
    && Math.abs(a.width - b.width) < 1 && Math.abs(a.height - b.height) < 1;
  const taken = [];
  const elements = [];
  let visibleCount = 0, disabled = 0, duplicates = 0;
  for (const el of document.querySelectorAll(selector)) {
    if (!visible(el)) continue;
    if (inViewportOnly) {
      const v = el.getBoundingClientRect();
      if (v.bottom <= 0 || v.right <= 0 || v.top >= window.innerHeight || v.left >= window.innerWidth) continue;
    }
    visibleCount++;
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') { disabled++; continue; }
    const r = el.getBoundingClientRect();
    if (taken.some((t) => t.contains(el) && sameBox(t.getBoundingClientRect(), r))) { duplicates++; continue; }
    taken.push(el);
    elements.push({
      tag: el.tagName.toLowerCase(),
      type: (el.getAttribute('type') || '').toLowerCase(),
      role: (el.getAttribute('role') || '').toLowerCase(),
      kind: kindOf(el),
      label: labelOf(el),
      href: el.tagName === 'A' ? el.getAttribute('href') : null,
      target: el.getAttribute('target') || '',
      selector: cssPath(el),
      bbox: { x: r.x + window.scrollX, y: r.y + window.scrollY, width: r.width, height: r.height },
    });
  }
  globalThis.__genuiProbeTargets = taken.slice(0, maxElements);
  return { elements: elements.slice(0, maxElements), visible: visibleCount, disabled, duplicates,
           eligible: elements.length, paths: globalThis.__genuiProbeTargets.map(xpathOf) };
}
"""

# Same label rule as in _ENUMERATE_JS, to recognise a re-rendered node as the same control.
_LABEL_JS = """
(el) => (el.getAttribute('aria-label') || (el.innerText || '').trim() || el.getAttribute('placeholder')
  || el.getAttribute('title') || el.getAttribute('name') || el.id || '').replace(/\\s+/g, ' ').slice(0, 80)
"""

# The element into view (centred, at once) unless it already is wholly in view; returns the window's scroll
# position after. Playwright's scroll_into_view_if_needed would wait two frames for the element to be stable
# first, which the click that follows checks anyway.
_SCROLL_INTO_VIEW_JS = """
(el) => {
  const r = el.getBoundingClientRect();
  if (r.top < 0 || r.left < 0 || r.bottom > window.innerHeight || r.right > window.innerWidth)
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  return [window.scrollX, window.scrollY];
}
"""

_STILL_THERE_JS = """
(el) => el.isConnected && el.getClientRects().length > 0 && getComputedStyle(el).visibility === 'visible'
"""

# The reads of one enumerated target (stage 1's `__genuiProbeTargets[index]`) run in the harness world: FN(el, arg),
# or null where the target is gone (a new document has none).
_ON_TARGET_JS = """([index, arg]) => {
  const el = (globalThis.__genuiProbeTargets || [])[index];
  return el ? (%s)(el, arg) : null;
}"""

# Where the target is now (its XPath) while it is still attached and visible; else null.
_TARGET_PATH_JS = _ON_TARGET_JS % ("(el) => (" + _STILL_THERE_JS.strip() + ")(el) ? (" + _XPATH_OF_JS + ")(el) : null")

# A target re-found by its css path (after a reload, or once detached): the node now there, if it is attached,
# visible, and the same kind of control with the same label; it becomes target `index`. Its XPath, else null.
_REFIND_JS = """([index, selector, tag, label]) => {
  const el = selector ? document.querySelector(selector) : null;
  if (!el || !(""" + _STILL_THERE_JS.strip() + """)(el)) return null;
  if (el.tagName.toLowerCase() !== tag || (""" + _LABEL_JS.strip() + """)(el) !== label) return null;
  (globalThis.__genuiProbeTargets = globalThis.__genuiProbeTargets || [])[index] = el;
  return (""" + _XPATH_OF_JS + """)(el);
}"""

# Native value setter + input/change events: React's value tracker sees the change (PLATFORM.md).
_SET_RANGE_JS = """
(el, [position, fallback]) => {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const min = el.min !== '' && !isNaN(Number(el.min)) ? Number(el.min) : 0;
  const max = el.max !== '' && !isNaN(Number(el.max)) ? Number(el.max) : 100;
  const before = el.value;
  let used = position;
  setter.call(el, String(min + (max - min) * position));  // the browser snaps it to step
  if (el.value === before) { used = fallback; setter.call(el, String(min + (max - min) * fallback)); }
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return { from: before, to: el.value, position: used };
}
"""

# The published probe's input handling: plain assignment, then events (React's value tracker misses it).
_ASSIGN_VALUE_JS = """
(el, value) => {
  const before = el.value;
  el.value = value;
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return { from: before, to: el.value };
}
"""

_ASSIGN_RANGE_JS = """
(el, position) => {
  const min = el.min !== '' && !isNaN(Number(el.min)) ? Number(el.min) : 0;
  const max = el.max !== '' && !isNaN(Number(el.max)) ? Number(el.max) : 100;
  const before = el.value;
  el.value = String(min + (max - min) * position);
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return { from: before, to: el.value, position };
}
"""

_ARIA_VALUES_JS = """
(el) => ['aria-valuenow', 'aria-valuemin', 'aria-valuemax'].map((a) => {
  const v = el.getAttribute(a); return v === null || v === '' || isNaN(Number(v)) ? null : Number(v); })
"""

_SELECT_OPTIONS_JS = """
(el) => Array.from(el.options).map((o) => ({ value: o.value, label: o.label, disabled: o.disabled,
                                              selected: o.selected }))
"""

# Canonical values for inputs whose format the browser enforces.
_SPECIAL_VALUES = {
    "date": "2024-06-15",
    "time": "12:30",
    "datetime-local": "2024-06-15T12:30",
    "month": "2024-06",
    "week": "2024-W24",
    "color": "#3366cc",
}

_MAX_ARIA_SLIDER_KEYS = 50


class _StepFailure(Exception):
    """The element could not be acted on; the step is recorded with ok=False."""


class _Skipped(_StepFailure):
    """The probe deliberately does not act (external link, file input): never part of A_p."""


@dataclass
class _Views:
    """The probe's last viewport capture, per probe run (actors are shared by concurrent episodes)."""

    static: bool  # the page showed no mutations while idle
    last: Path | None = None
    scroll: tuple[int, int] = (0, 0)

    async def shoot(self, session: "PageSession", path: Path, scroll: tuple[float, float] | None = None) -> None:
        """A viewport screenshot, or a copy of the last one when nothing can have changed since.
        `scroll`: the window's scroll position, when the caller has just read it."""
        if scroll is None:
            scroll = tuple(await session.observe("() => [window.scrollX, window.scrollY]"))
        if self.last is not None and scroll == self.scroll and self.last.exists():
            shutil.copyfile(self.last, path)
        else:
            await session.screenshot(path)
        self.last = path if self.static else None
        self.scroll = scroll


class ProbeActor:
    """Deterministic Interaction Probe: one canonical action per visible interactive element."""

    name = "probe"

    def __init__(self, settings: ProbeSettings | None = None) -> None:
        self.settings = settings or ProbeSettings()

    async def aclose(self) -> None:
        return None

    async def act(self, session: "PageSession", context: ActorContext) -> Trace:
        return await self.probe(session, context.out_dir, page_as_loaded=context.page_as_loaded)

    @property
    def _benchmark(self) -> bool:
        return self.settings.mode == "benchmark"

    async def probe(self, session: "PageSession", out_dir: Path, *, page_as_loaded: bool = False) -> Trace:
        """Run the probe on the session's page; write step screenshots and trace.json into out_dir.
        `page_as_loaded`: nothing but reads ran on the page since its load (ActorContext.page_as_loaded)."""
        counted_text, viewport = session.character_data, session.page.viewport_size
        session.character_data = self.settings.observe_character_data
        try:
            if self._benchmark:
                await session.page.set_viewport_size(BENCHMARK_VIEWPORT)
            # A resized view may re-render the page: then the time since load is no idle window.
            return await self._probe(session, out_dir, page_as_loaded=page_as_loaded and not self._benchmark)
        finally:
            session.character_data = counted_text
            if self._benchmark and viewport is not None:
                try:
                    await session.page.set_viewport_size(viewport)
                except PlaywrightError:
                    pass  # the page is gone; nothing is captured after this

    def _probe_info(self) -> dict[str, Any]:
        """Which probe produced this IR: reported beside it in the trace and the record."""
        return {"probe_mode": self.settings.mode, "observer": ["childList", "subtree", "attributes"]
                + (["characterData"] if self.settings.observe_character_data else [])}

    async def _probe(self, session: "PageSession", out_dir: Path, *, page_as_loaded: bool) -> Trace:
        s = self.settings
        max_elements = BENCHMARK_MAX_ELEMENTS if self._benchmark else s.max_elements
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        trace = Trace(actor=self.name)
        started = time.monotonic()
        errors_before = len(session.page_errors)

        try:
            loaded_here = s.reload_first or session.page.url in ("", "about:blank")
            if loaded_here:
                await session.goto()
            background = await self._background_mutations(session, since_load=page_as_loaded or loaded_here)
            found = await session.observe(_ENUMERATE_JS, [_SELECTOR, max_elements, self._benchmark])
            paths: list[str | None] = list(found["paths"])
            handles = await asyncio.wait_for(self._target_handles(session, paths), timeout=s.step_timeout_ms / 1000)
        except (PlaywrightError, asyncio.TimeoutError) as exc:
            trace.finished = False
            reason = _first_line(exc) if isinstance(exc, PlaywrightError) else "page unresponsive"
            trace.summary = self._summary([], found=0, extra={"probe_error": reason, **self._probe_info()})
            trace.save(out_dir / EvidenceFolder.TRACE)
            return trace

        reloaded = False  # after a navigation the original nodes are gone; re-find them by css path
        aborted = ""
        # On a page that does not change by itself, the view after one action is the view before the next
        # (unless something scrolls or reloads): reuse that capture instead of shooting the same pixels again.
        # The evidence's viewport shot is the first such view, unless the probe loaded the page itself.
        views = _Views(static=background == 0 and s.reuse_views)
        if views.static and not loaded_here:
            views.last = out_dir / EvidenceFolder.SCREENSHOT_VIEWPORT
        for index, element in enumerate(found["elements"]):
            step = TraceStep(index=index, action={"kind": element["kind"], "element": element})
            step_started = time.monotonic()
            target = _Target(index, handles[index], paths[index]) if not reloaded else _Target(index, None, None)
            try:
                navigated = await asyncio.wait_for(
                    self._step(session, target, element, step, out_dir, views), timeout=s.step_timeout_ms / 1000
                )
                reloaded = reloaded or navigated
            except _Skipped as exc:
                step.ok, step.error = False, str(exc)
                step.action["skipped"] = True
            except _StepFailure as exc:
                step.ok, step.error = False, str(exc)
            except PlaywrightError as exc:
                step.ok, step.error = False, _first_line(exc)
                recovered, usable = await self._recover(session)
                reloaded = reloaded or recovered
                if not usable:
                    aborted = f"page unusable after step {index}: {step.error}"
            except asyncio.TimeoutError:
                # The renderer is stuck (e.g. an endless loop in a handler): nothing after this can run, and the
                # visit is the page's runtime failure, as a hang in any other stage is (capture.note_visit_failure).
                step.ok, step.error = False, f"step timed out after {s.step_timeout_ms} ms (page unresponsive)"
                session.note_unresponsive(f"a probe step did not finish within {s.step_timeout_ms} ms")
                aborted = step.error
            step.duration_s = round(time.monotonic() - step_started, 4)
            trace.steps.append(step)
            if aborted:
                trace.finished = False
                break

        extra = {
            "visible_interactive": found["visible"],
            "disabled_skipped": found["disabled"],
            "duplicates_merged": found["duplicates"],
            "capped": max(0, found["eligible"] - len(found["elements"])),
            "background_mutations": background,
            "page_errors_during_probe": len(session.page_errors) - errors_before,
            "duration_s": round(time.monotonic() - started, 3),
            **self._probe_info(),
        }
        if aborted:
            extra["aborted"] = aborted
        trace.summary = self._summary(trace.steps, found=found["eligible"], extra=extra)
        trace.save(out_dir / EvidenceFolder.TRACE)
        return trace

    # ---- stage 1 helpers ---------------------------------------------------------------------------------

    async def _background_mutations(self, session: "PageSession", *, since_load: bool) -> int:
        """Mutations in one idle window of at least settle_ms: a page that mutates on its own (clocks,
        polling) makes every action look responsive. Reported as a diagnostic (and it decides whether views
        can be reused); IR itself follows the seed unchanged.

        `since_load`: the page was only read since its load, so the counter the load zeroed has watched an
        idle window already (the stillness before the load's reset, then the evidence capture's time); it is
        only topped up to settle_ms. That saves a settle window per turn (docs/performance.md)."""
        counted = session.idle_window_s() if since_load else None
        if counted is None:
            await session.reset_mutations()
            counted = 0.0
        await session.settle(max(0, round(self.settings.settle_ms - counted * 1000)))
        return await session.mutation_count()

    async def _target_handles(self, session: "PageSession", paths: list[str | None]) -> list[ElementHandle | None]:
        """ElementHandles (page world) of the nodes the harness world enumerated, found at their XPaths by
        Playwright's own query: all in one round trip, one by one where the page changed in between."""
        if not paths:
            return []
        handles = await session.page.locator("xpath=" + " | ".join(p for p in paths if p)).element_handles()
        if len(handles) == len(paths):  # document order, as enumerated
            return list(handles)
        for handle in handles:
            await handle.dispose()
        return [await _handle_at(session, path) for path in paths]

    async def _step(
        self,
        session: "PageSession",
        target: "_Target",
        element: dict[str, Any],
        step: TraceStep,
        out_dir: Path,
        views: "_Views",
    ) -> bool:
        step.action["reresolved"] = await self._resolve(session, target, element)
        return await self._exercise(session, target, element, step, out_dir, views)

    async def _resolve(self, session: "PageSession", target: "_Target", element: dict[str, Any]) -> bool:
        """Aim `target` at the enumerated node if it is still attached and visible; else at the node now at its
        css path, if it is the same kind of control with the same label (e.g. re-rendered by the framework).
        Both are judged in the harness world. Returns whether it was re-found."""
        if target.handle is not None:
            path = await session.observe(_TARGET_PATH_JS, [target.index, None])
            if path is not None:
                if path != target.path:  # moved since its handle was found
                    target.handle, target.path = await _handle_at(session, path), path
                if target.handle is not None:
                    return False
        path = await session.observe(_REFIND_JS, [target.index, element["selector"], element["tag"], element["label"]])
        handle = await _handle_at(session, path) if path is not None else None
        if handle is None:
            raise _StepFailure("element detached or no longer visible")
        target.handle, target.path = handle, path
        return True

    # ---- stages 2 and 3 ----------------------------------------------------------------------------------

    async def _exercise(
        self,
        session: "PageSession",
        target: "_Target",
        element: dict[str, Any],
        step: TraceStep,
        out_dir: Path,
        views: "_Views",
    ) -> bool:
        """Apply the canonical action and observe mutations. Returns True if the page navigated (and was
        reloaded, so later elements must be re-found)."""
        s = self.settings
        page = session.page
        if element["kind"] == "file":
            raise _Skipped("file inputs are not exercised (no canonical file)")
        if element["kind"] == "click" and element["tag"] == "a" and not self._link_is_local(session, element):
            raise _Skipped(f"external link not followed: {element['href']}")

        index = target.index
        scroll: tuple[float, float] | None = None
        try:
            scrolled = await session.observe(_on_target(_SCROLL_INTO_VIEW_JS), [index, None])
            scroll = tuple(scrolled) if scrolled is not None else None
        except PlaywrightError:
            pass  # click/fill scroll themselves and report the real problem
        if s.screenshots:
            step.screenshot_before = f"step_{index:02d}_before.png"
            await views.shoot(session, out_dir / step.screenshot_before, scroll)

        url_before = page.url
        popups_before = len(session.popups)
        dialogs_before = len(session.dialogs)
        state_before = await read_page_state(session)  # reads only: never a mutation
        document_before = state_before.document if state_before is not None else \
            await session.observe("() => performance.timeOrigin")
        await session.reset_mutations()
        await self._apply(session, target, element, step)
        views.last = None  # the action may have changed what is shown
        if self._benchmark:
            await session.settle(BENCHMARK_SETTLE_MS)
        elif s.early_settle:
            await session.settle_until_mutation(s.settle_ms)
        else:
            await session.settle(s.settle_ms)

        navigated = False
        state_after = await read_page_state(session)  # None: no answer (e.g. a navigation in flight)
        after_scroll = state_after.scroll if state_after is not None else None
        if state_after is not None and state_after.document is not None:
            same_document = state_after.document == document_before
        else:
            try:
                same_document = await session.observe("() => performance.timeOrigin") == document_before
            except PlaywrightError:  # the context was destroyed by a navigation in flight
                same_document = False
        if same_document:
            step.mutations = await session.mutation_count()
            step.dom_changed = step.mutations > 0
            notes_change = describe_change(state_before, state_after)
        else:
            after_scroll = None
            # A new document replaced the whole DOM: an observable response. Restore the artifact's
            # start page so every element is probed from the same place.
            navigated = True
            await page.wait_for_load_state("load", timeout=session.nav_timeout_ms)
            step.mutations = await session.mutation_count()
            step.dom_changed = True
            notes_change = "a new document was loaded"

        notes = [notes_change]
        if page.url != url_before:
            notes.append(f"url changed to {page.url}")
        if len(session.popups) > popups_before:
            notes.append(f"opened {len(session.popups) - popups_before} popup(s)")
        if len(session.dialogs) > dialogs_before:
            notes.append(f"dialog: {session.dialogs[-1]['message'][:80]}")
        step.observation = "; ".join([f"{step.mutations} DOM mutation(s)"] + notes)

        if s.screenshots:
            step.screenshot_after = f"step_{index:02d}_after.png"
            await views.shoot(session, out_dir / step.screenshot_after, after_scroll)
        if navigated:
            await session.goto()
            views.last = None
        return navigated

    async def _apply(self, session: "PageSession", target: "_Target", element: dict[str, Any],
                     step: TraceStep) -> None:
        """The canonical action for the element's HTML semantics (B.1 stage 2). Acts through the page's own
        world (its events are the page's to handle); what decides an action is read in the harness world."""
        s = self.settings
        handle = target.handle
        assert handle is not None
        timeout = s.action_timeout_ms
        kind = element["kind"]
        if kind == "click":
            step.action["kind"] = "click"
            await handle.click(timeout=timeout)
        elif kind == "toggle":
            step.action["kind"] = "toggle"
            try:
                await handle.click(timeout=timeout)
            except PlaywrightError:
                if element["tag"] != "input":
                    raise
                # Custom-styled checkboxes hide the native input under a label; a DOM click toggles it
                # and fires the same click/input/change events a user's click on the label would.
                await handle.evaluate("(el) => el.click()")
                step.action["fallback"] = "dom_click"
        elif kind in ("text", "number", "special"):
            if kind == "special":
                value = _SPECIAL_VALUES.get(element["type"], s.text_value)
            else:
                value = s.number_value if kind == "number" else s.text_value
            current = await handle.input_value(timeout=timeout)
            if current == value:  # refilling the same value is no action: change it
                value = str(int(value) + 1) if kind == "number" and value.lstrip("-").isdigit() else value + "!"
            if self._benchmark:
                step.action.update(kind="assign_value", **await handle.evaluate(_ASSIGN_VALUE_JS, value), value=value)
            else:
                step.action.update(kind="fill", value=value)
                await handle.fill(value, timeout=timeout)
        elif kind == "select":
            options = await session.observe(_on_target(_SELECT_OPTIONS_JS), [target.index, None]) or []
            choice = next((o for o in options if not o["disabled"] and not o["selected"]), None)
            if choice is None:
                raise _StepFailure("select has no other enabled option")
            step.action.update(kind="select", value=choice["value"], label=choice["label"])
            await handle.select_option(value=choice["value"], timeout=timeout)
        elif kind == "range" and self._benchmark:
            step.action.update(kind="assign_range", **await handle.evaluate(_ASSIGN_RANGE_JS, BENCHMARK_SLIDER_POSITION))
        elif kind == "range":
            result = await handle.evaluate(_SET_RANGE_JS, [s.slider_position, s.slider_fallback_position])
            step.action.update(kind="set_range", **result)
        elif kind == "aria_slider":
            step.action.update(kind="set_slider_keys", **await self._move_aria_slider(session, target))
        elif kind == "editable":
            step.action.update(kind="type", value=s.text_value)
            await handle.click(timeout=timeout)
            await handle.press("End", timeout=timeout)
            await handle.type(s.text_value, timeout=timeout)
        else:
            raise _StepFailure(f"no canonical action for kind {kind!r}")

    async def _move_aria_slider(self, session: "PageSession", slider: "_Target") -> dict[str, Any]:
        """Keyboard towards slider_position of [aria-valuemin, aria-valuemax] (WAI-ARIA slider keys)."""
        timeout = self.settings.action_timeout_ms
        handle = slider.handle
        assert handle is not None

        async def values() -> list[float | None]:
            return await session.observe(_on_target(_ARIA_VALUES_JS), [slider.index, None]) or [None, None, None]

        now, low, high = await values()
        await handle.focus()
        if now is None or low is None or high is None or high <= low:
            await handle.press("ArrowRight", timeout=timeout)
            return {"keys": 1, "from": now}
        target = low + (high - low) * self.settings.slider_position
        if abs(now - target) < 1e-9:
            target = low + (high - low) * self.settings.slider_fallback_position
        key = "ArrowRight" if target > now else "ArrowLeft"
        start, presses = now, 0
        while presses < _MAX_ARIA_SLIDER_KEYS:
            await handle.press(key, timeout=timeout)
            presses += 1
            value = (await values())[0]
            if value is None or value == now or (value - target) * (1 if key == "ArrowRight" else -1) >= 0:
                now = value if value is not None else now
                break
            now = value
        return {"keys": presses, "key": key, "from": start, "to": now, "target": target}

    # ---- helpers -----------------------------------------------------------------------------------------

    def _link_is_local(self, session: "PageSession", element: dict[str, Any]) -> bool:
        href = (element.get("href") or "").strip()
        if href.lower().startswith("javascript:") or href.startswith("#") or not href:
            return True
        return session.is_allowed(urljoin(session.page.url, href))

    async def _recover(self, session: "PageSession") -> tuple[bool, bool]:
        """After an action error, make sure the page answers for the next element.
        Returns (reloaded, usable): a page that neither answers nor reloads ends the probe."""
        try:
            await session.observe("() => 1")
            return False, True
        except PlaywrightError:
            pass
        try:
            await session.goto()
            return True, True
        except PlaywrightError:
            return True, False

    def _summary(self, steps: list[TraceStep], *, found: int, extra: dict[str, Any]) -> dict[str, Any]:
        executed = [st for st in steps if st.ok]
        skipped = [st for st in steps if st.action.get("skipped")]
        failed = [st for st in steps if not st.ok and not st.action.get("skipped")]
        exercised = len(executed) + (len(failed) if self.settings.count_failed_actions else 0)
        responsive = sum(1 for st in executed if st.dom_changed)
        return {
            "elements_found": found,
            "elements_exercised": exercised,
            "elements_responsive": responsive,
            "interaction_rate": responsive / exercised if exercised else 0.0,
            "errors": len(failed),
            "skipped": len(skipped),
            **extra,
        }


@dataclass
class _Target:
    """One enumerated element: its index among the harness world's targets, its ElementHandle (page world) for
    the actions, and the XPath that handle was found at."""

    index: int
    handle: ElementHandle | None
    path: str | None


def _on_target(function: str) -> str:
    """`function(el, arg)` as a harness-world read of target `index`: call it with [index, arg]."""
    return _ON_TARGET_JS % function.strip()


async def _handle_at(session: "PageSession", path: str | None) -> ElementHandle | None:
    """The page's node at `path` (an XPath from _XPATH_OF_JS), found by Playwright's own query."""
    return await session.page.query_selector("xpath=" + path) if path else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
