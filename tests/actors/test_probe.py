"""The Interaction Probe (I-WebGenBench §3.2/§4.1/B.1) against real Chromium: actions, mutations and IR."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from runner.actors.base import ActorContext
from runner.actors.probe import ProbeActor, ProbeSettings
from runner.browser.launch import BrowserPool, BrowserSettings
from runner.turns.evidence import Evidence, Trace
from runner.turns.tasks import Task, TurnSpec
from tests.support.components import skip_missing

pytestmark = pytest.mark.browser

# The HTTP test server lives with the browser tests; load it by path (tests/ is not a package).
_spec = importlib.util.spec_from_file_location(
    "browser_support", Path(__file__).parents[1] / "browser" / "browser_support.py"
)
browser_support = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser_support)


@pytest.fixture
def site() -> Iterator["browser_support.StaticSite"]:
    if not shutil.which(BrowserSettings().executable_path or ""):
        skip_missing("chromium", "system Chromium's headless shell not installed (scripts/setup.sh installs it)")
    s = browser_support.StaticSite().start()
    try:
        yield s
    finally:
        s.stop()


# Six controls: five wired, one dead. The slider mimics React's value tracker (it ignores an 'input'
# event unless the value changed behind the instance setter), so only the native-setter path works.
SIX_CONTROLS = """<!doctype html><html><body>
<button id=add>Add</button> <span id=count>0</span>
<button id=dead>Does nothing</button>
<input id=speed type=range min=0 max=10 value=2> <label id=speed-label>2</label>
<input id=ctl type=text> <p id=ctl-out></p>
<select id=unit><option value=m>metres</option><option value=ft>feet</option></select> <p id=unit-out>m</p>
<label><input id=agree type=checkbox> agree</label> <p id=agree-out>no</p>
<input type=hidden name=secret value=1>
<button style="display:none">invisible</button>
<script>
  const $ = (id) => document.getElementById(id);
  $('add').addEventListener('click', () => { $('count').textContent = Number($('count').textContent) + 1; });
  // React-like controlled slider
  const proto = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
  const slider = $('speed'); let tracked = slider.value;
  Object.defineProperty(slider, 'value', { configurable: true,
    get() { return proto.get.call(this); }, set(v) { tracked = String(v); proto.set.call(this, v); } });
  slider.addEventListener('input', () => {
    const v = proto.get.call(slider); if (v === tracked) return; tracked = v; $('speed-label').textContent = v; });
  // React-like controlled text input: state is the source of truth, the DOM is re-rendered from it
  let state = '';
  $('ctl').addEventListener('input', (e) => { state = e.target.value.toUpperCase(); $('ctl').value = state;
    $('ctl-out').textContent = state; });
  $('unit').addEventListener('change', (e) => { $('unit-out').textContent = e.target.value; });
  $('agree').addEventListener('change', (e) => { $('agree-out').textContent = e.target.checked ? 'yes' : 'no'; });
</script></body></html>"""


def _context(out_dir: Path) -> ActorContext:
    task = Task(id="t", suite="test", turns=[TurnSpec(index=1, prompt="p")])
    return ActorContext(task=task, turn=task.turns[0], evidence=Evidence(url=""), out_dir=out_dir)


def _run_probe(url: str, out_dir: Path, settings: ProbeSettings | None = None) -> tuple[Trace, float, dict]:
    async def main():
        async with BrowserPool(BrowserSettings(settle_ms=100)) as pool:
            async with pool.session(url) as session:
                await session.goto()
                actor = ProbeActor(settings)
                started = time.monotonic()
                trace = await actor.act(session, _context(out_dir))
                elapsed = time.monotonic() - started
                state = await session.page.evaluate(
                    "() => Object.fromEntries([...document.querySelectorAll('[id]')].map(e => [e.id, e.textContent]))"
                )
                await actor.aclose()
                return trace, elapsed, state

    return asyncio.run(main())


def test_probe_six_controls_ir_counts_the_dead_button(site, tmp_path) -> None:
    url = site.add("/", SIX_CONTROLS)
    trace, elapsed, state = _run_probe(url, tmp_path)
    print(f"probe on 6 elements: {elapsed:.2f} s")

    kinds = [(s.action["kind"], s.action["element"]["label"]) for s in trace.steps]
    assert kinds == [
        ("click", "Add"),
        ("click", "Does nothing"),
        ("set_range", "speed"),
        ("fill", "ctl"),
        ("select", "metres feet"),
        ("toggle", "agree"),
    ]  # document order; hidden input and display:none button are not enumerated
    responsive = {s.action["element"]["label"]: s.dom_changed for s in trace.steps}
    assert responsive == {
        "Add": True,
        "Does nothing": False,
        "speed": True,
        "ctl": True,
        "metres feet": True,
        "agree": True,
    }
    assert all(s.ok for s in trace.steps)
    assert trace.summary["elements_found"] == 6
    assert trace.summary["elements_exercised"] == 6
    assert trace.summary["elements_responsive"] == 5
    assert trace.summary["interaction_rate"] == pytest.approx(5 / 6)
    assert trace.summary["errors"] == 0

    # the actions really happened with the canonical values (B.1: sliders to their midpoint)
    slider = trace.steps[2].action
    assert (slider["from"], slider["to"], slider["position"]) == ("2", "5", 0.5)
    assert state["speed-label"] == "5" and state["ctl-out"] == "TEST INPUT 42"
    assert state["unit-out"] == "ft" and state["agree-out"] == "yes" and state["count"] == "1"

    # evidence on disk: before/after shots per step, relative paths, and trace.json
    for i, step in enumerate(trace.steps):
        assert step.screenshot_before == f"step_{i:02d}_before.png"
        assert (tmp_path / step.screenshot_before).exists() and (tmp_path / step.screenshot_after).exists()
        assert step.action["element"]["bbox"]["width"] > 0
    saved = json.loads((tmp_path / "trace.json").read_text())
    assert saved["actor"] == "probe" and saved["summary"]["interaction_rate"] == pytest.approx(5 / 6)


DETACHING_TABS = """<!doctype html><body>
<div role=tablist><button role=tab id=t1>One</button><button role=tab id=t2>Two</button></div>
<div id=panel><button id=inner>Inner</button></div>
<script>
  const panel = document.getElementById('panel');
  document.getElementById('t1').onclick = () => { panel.innerHTML = '<p>panel one</p>'; };
  document.getElementById('t2').onclick = () => { panel.innerHTML = '<p>panel two</p>'; };
  document.getElementById('inner').onclick = () => { document.body.append('inner'); };
</script></body>"""


def test_detached_element_is_a_failed_step_outside_ir_by_default(site, tmp_path) -> None:
    url = site.add("/", DETACHING_TABS)
    trace, _, _ = _run_probe(url, tmp_path / "default", ProbeSettings(screenshots=False))
    assert [s.ok for s in trace.steps] == [True, True, False]
    assert "detached" in trace.steps[2].error
    assert trace.steps[2].screenshot_before == ""  # screenshots=False
    assert trace.summary["elements_exercised"] == 2 and trace.summary["elements_responsive"] == 2
    assert trace.summary["interaction_rate"] == 1.0 and trace.summary["errors"] == 1

    counted, _, _ = _run_probe(url, tmp_path / "counted", ProbeSettings(screenshots=False, count_failed_actions=True))
    assert counted.summary["elements_exercised"] == 3
    assert counted.summary["interaction_rate"] == pytest.approx(2 / 3)


LINKS_AND_MORE = """<!doctype html><body>
<a id=ext href="http://example.invalid/away">external</a>
<a id=int href="/second">internal</a>
<button id=after onclick="document.body.append('after')">After</button>
<input id=at-mid type=range min=0 max=100 value=50 oninput="document.getElementById('mid-out').textContent = this.value">
<span id=mid-out>50</span>
<div id=knob role=slider tabindex=0 aria-valuemin=0 aria-valuemax=10 aria-valuenow=0>knob</div>
<div id=notes contenteditable=true>notes</div>
<input id=n type=number>
<button id=b2>Extra 1</button><button id=b3>Extra 2</button>
<script>
  const knob = document.getElementById('knob');
  knob.addEventListener('keydown', (e) => {
    const now = Number(knob.getAttribute('aria-valuenow'));
    if (e.key === 'ArrowRight') knob.setAttribute('aria-valuenow', String(Math.min(10, now + 1)));
  });
</script></body>"""


def test_links_sliders_editables_and_cap(site, tmp_path) -> None:
    site.add("/second", "<p>second page</p>")
    url = site.add("/", LINKS_AND_MORE)
    trace, _, state = _run_probe(url, tmp_path, ProbeSettings(max_elements=7, screenshots=False))
    steps = {s.action["element"]["label"]: s for s in trace.steps}
    assert len(trace.steps) == 7 and trace.summary["capped"] == 2

    ext = steps["external"]
    assert not ext.ok and ext.action["skipped"] and "external link" in ext.error
    internal = steps["internal"]  # a new document is a response; the probe then restores the start page
    assert internal.ok and internal.dom_changed and "/second" in internal.observation
    assert steps["After"].ok and steps["After"].dom_changed  # re-found after the reload
    mid = steps["at-mid"].action  # already at the midpoint: moved to the fallback position instead
    assert (mid["from"], mid["to"], mid["position"]) == ("50", "75", 0.75)
    knob = steps["knob"].action
    assert knob["kind"] == "set_slider_keys" and knob["to"] == 5 and steps["knob"].dom_changed
    # Typing extends the editable's text node in place: a characterData record only, which B.1's
    # observer (child lists, subtrees, attributes) does not see.
    assert steps["notes"].action["kind"] == "type" and not steps["notes"].dom_changed
    assert steps["n"].action == {**steps["n"].action, "kind": "fill", "value": "7"}
    assert not steps["n"].dom_changed  # nothing listens to it
    assert state["mid-out"] == "75"

    s = trace.summary
    assert s["skipped"] == 1 and s["elements_exercised"] == 6
    assert s["elements_responsive"] == 4 and s["interaction_rate"] == pytest.approx(4 / 6)


def test_page_without_controls_has_ir_zero(site, tmp_path) -> None:
    url = site.add("/", "<h1>Just a poster</h1><p>No controls at all.</p>")
    trace, _, _ = _run_probe(url, tmp_path)
    assert trace.steps == []
    assert trace.summary["elements_found"] == 0 and trace.summary["interaction_rate"] == 0.0
    assert (tmp_path / "trace.json").exists()


def test_background_mutations_are_reported(site, tmp_path) -> None:
    url = site.add(
        "/",
        "<span id=clock></span><button>Noop</button>"
        "<script>setInterval(() => { clock.textContent = String(Date.now()); }, 20)</script>",
    )
    trace, _, _ = _run_probe(url, tmp_path, ProbeSettings(screenshots=False))
    assert trace.summary["background_mutations"] > 0  # so this button's "response" is not trustworthy


def test_a_page_only_read_since_its_load_is_watched_from_the_load(site, tmp_path) -> None:
    """With page_as_loaded the idle window is the time since the load (the evidence capture's reads), so a
    page that changes once in that time is seen changing by itself, and no new window is waited; without
    it, or when the counter was zeroed since the load, the probe waits a window of its own."""
    url = site.add(
        "/",
        "<p id=late>waiting</p><button>Noop</button>"
        "<script>addEventListener('load', () => setTimeout(() => { late.textContent = 'late'; }, 250))</script>",
    )

    async def main() -> list[int]:
        counts = []
        async with BrowserPool(BrowserSettings(settle_ms=100)) as pool:
            for as_loaded, zeroed_since in ((True, False), (False, False), (True, True)):
                async with pool.session(url) as session:
                    await session.goto()
                    assert session.idle_window_s() is not None
                    await asyncio.sleep(1.0)  # the capture's time; the page changes once in it
                    if zeroed_since:
                        await session.reset_mutations()
                        assert session.idle_window_s() is None
                    context = replace(_context(tmp_path / str(len(counts))), page_as_loaded=as_loaded)
                    trace = await ProbeActor(ProbeSettings(screenshots=False)).act(session, context)
                    counts.append(trace.summary["background_mutations"])
        return counts

    since_load, own_window, zeroed_since_load = asyncio.run(main())
    assert since_load > 0
    assert own_window == 0 and zeroed_since_load == 0


def test_hung_page_aborts_the_probe_within_bounds(site, tmp_path) -> None:
    url = site.add(
        "/",
        "<button id=ok onclick=\"document.body.append('ok')\">Fine</button>"
        "<button id=hang onclick='while (true) {}'>Hang</button><button>Never reached</button>",
    )
    started = time.monotonic()
    trace, noted, after = _run_probe_no_state(url, tmp_path, ProbeSettings(step_timeout_ms=2000, screenshots=False))
    assert time.monotonic() - started < 30
    assert noted == ["a probe step did not finish within 2000 ms"]  # the visit is the page's runtime failure
    assert after == "FineHangNever reached"  # the same browser serves the next artifact normally
    assert [s.ok for s in trace.steps] == [True, False]
    assert "timed out" in trace.steps[1].error and not trace.finished
    assert trace.summary["aborted"] and trace.summary["interaction_rate"] == 1.0


def _run_probe_no_state(url: str, out_dir: Path, settings: ProbeSettings) -> tuple[Trace, list[str], str]:
    """Like _run_probe, but reads the page afterwards in a new session (a hung page answers no evaluate); also
    what the probe's session noted about the page not answering."""

    async def main():
        async with BrowserPool(BrowserSettings(settle_ms=100)) as pool:
            async with pool.session(url) as session:
                await session.goto()
                trace = await ProbeActor(settings).act(session, _context(out_dir))
                noted = list(session.unresponsive)
            async with pool.session(url) as session:
                await session.goto()
                return trace, noted, await session.visible_text()

    return asyncio.run(main())


def test_reused_before_shots_match_a_fresh_capture(site, tmp_path) -> None:
    """On a static page the probe copies the previous 'after' view as the next 'before' view; the copy must
    be the same picture a fresh capture gives, and the dead button must still count as unresponsive with
    the early settle (it waits the whole window when nothing changes)."""
    import numpy as np
    from PIL import Image

    url = site.add("/", SIX_CONTROLS)
    fast, _, _ = _run_probe(url, tmp_path / "fast")
    slow, _, _ = _run_probe(url, tmp_path / "slow", ProbeSettings(early_settle=False, reuse_views=False))
    assert [s.dom_changed for s in fast.steps] == [s.dom_changed for s in slow.steps]
    assert fast.summary["interaction_rate"] == slow.summary["interaction_rate"] == pytest.approx(5 / 6)
    assert fast.summary["background_mutations"] == 0
    for previous, step in zip(fast.steps, fast.steps[1:]):
        copied = tmp_path / "fast" / step.screenshot_before
        assert copied.read_bytes() == (tmp_path / "fast" / previous.screenshot_after).read_bytes()
    # The copied 'before' of the dead button's step equals what a fresh capture showed in the slow run.
    fresh = np.asarray(Image.open(tmp_path / "slow" / slow.steps[1].screenshot_before).convert("RGB"))
    reused = np.asarray(Image.open(tmp_path / "fast" / fast.steps[1].screenshot_before).convert("RGB"))
    assert fresh.shape == reused.shape and np.array_equal(fresh, reused)


def test_each_before_view_shows_its_element(site, tmp_path) -> None:
    """An element below the fold is scrolled into view for its 'before' shot; one already wholly in view
    leaves the view where it is."""
    import numpy as np
    from PIL import Image

    url = site.add("/", """<!doctype html><body style="margin:0">
<button id=top style="width:200px;height:80px;background:#0000ff;border:0">Top</button>
<div style="height:3000px"></div>
<button id=low style="width:200px;height:80px;background:#ff0000;border:0"
        onclick="this.textContent = 'pressed'; this.dataset.hit = '1'">Low</button>
</body>""")
    trace, _, _ = _run_probe(url, tmp_path)
    top, low = trace.steps

    def shows(step, rgb: tuple[int, int, int]) -> bool:
        pixels = np.asarray(Image.open(tmp_path / step.screenshot_before).convert("RGB"))
        return bool((pixels == rgb).all(axis=-1).sum() > 1000)

    assert shows(top, (0, 0, 255)) and not shows(top, (255, 0, 0))
    assert shows(low, (255, 0, 0)) and not shows(low, (0, 0, 255))
    assert low.dom_changed and "pressed" in low.observation


# Four buttons: one appends a node (childList), one rewrites a text node in place (characterData only,
# the way React updates `{count}`), two do nothing.
TEXT_NODE_BUTTONS = """<!doctype html><body>
<button id=append>Append</button> <button id=rewrite>Rewrite</button> <span id=out>0</span>
<button id=dead1>Dead one</button> <button id=dead2>Dead two</button>
<script>
  document.getElementById('append').onclick = () => document.body.append(document.createElement('hr'));
  const text = document.getElementById('out').firstChild;
  document.getElementById('rewrite').onclick = () => { text.data = String(Number(text.data) + 1); };
</script></body>"""


def test_observer_follows_b1_and_character_data_is_an_option(site, tmp_path) -> None:
    """I-WebGenBench App. B.1: child lists, subtrees and attributes. IR 1/4 = 0.25; counting text-node
    rewrites too gives 2/4 = 0.5."""
    url = site.add("/", TEXT_NODE_BUTTONS)
    paper, _, _ = _run_probe(url, tmp_path / "paper")
    assert paper.summary["interaction_rate"] == pytest.approx(0.25)
    assert paper.summary["probe_mode"] == "paper"
    assert paper.summary["observer"] == ["childList", "subtree", "attributes"]
    with_text, _, state = _run_probe(url, tmp_path / "text", ProbeSettings(observe_character_data=True))
    assert with_text.summary["interaction_rate"] == pytest.approx(0.5)
    assert state["out"] == "1", "the rewrite really happened"


# A React-like controlled text input and slider (they ignore a value assigned through the element's own
# setter, like React's value tracker), a wired button, and a wired button far below a 1024 x 768 view.
CONTROLLED_AND_FAR = """<!doctype html><body style="margin:0">
<input id=name type=text> <p id=name-out></p>
<input id=level type=range min=0 max=100 value=10> <p id=level-out>10</p>
<button id=add>Add</button>
<div style="height:2000px"></div><button id=far>Far</button>
<script>
  const $ = (id) => document.getElementById(id);
  const proto = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
  for (const [id, out] of [['name', 'name-out'], ['level', 'level-out']]) {
    const el = $(id); let tracked = el.value;
    Object.defineProperty(el, 'value', { configurable: true,
      get() { return proto.get.call(this); }, set(v) { tracked = String(v); proto.set.call(this, v); } });
    el.addEventListener('input', () => {
      const v = proto.get.call(el); if (v === tracked) return; tracked = v; $(out).textContent = v; });
  }
  $('add').onclick = () => document.body.append(document.createElement('hr'));
  $('far').onclick = () => document.body.append(document.createElement('hr'));
</script></body>"""


def test_benchmark_mode_reproduces_the_published_probe(site, tmp_path) -> None:
    """paper: all four controls respond (IR 1.0, slider at the midpoint 50). benchmark: 'Far' lies outside
    the 1024 x 768 view and is not acted on; the assigned values miss the controlled inputs; slider at 65:
    IR 1/3."""
    url = site.add("/", CONTROLLED_AND_FAR)
    paper, _, state = _run_probe(url, tmp_path / "paper")
    assert [s.action["element"]["label"] for s in paper.steps] == ["name", "level", "Add", "Far"]
    assert paper.summary["interaction_rate"] == pytest.approx(1.0)
    assert state["level-out"] == "50"
    bench, _, state = _run_probe(url, tmp_path / "bench", ProbeSettings(mode="benchmark"))
    assert [s.action["element"]["label"] for s in bench.steps] == ["name", "level", "Add"]
    assert [s.action["kind"] for s in bench.steps] == ["assign_value", "assign_range", "click"]
    assert bench.steps[1].action["to"] == "65"
    assert bench.summary["interaction_rate"] == pytest.approx(1 / 3)
    assert bench.summary["probe_mode"] == "benchmark"
    assert state["level-out"] == "10" and state["name-out"] == ""


# A live and a dead button, and a page that tries every way it has to raise its IR: it hides the dead button from
# the getters an enumeration in its world would use, replaces the mutation readers a harness could have put on
# window, and fakes MutationObserver's records. The probe reads in the harness world: both buttons, IR 1/2.
FORGING_PROBE_PAGE = """<!doctype html><html><body>
<button id=live>Live</button> <span id=out>0</span> <button id=dead>Dead</button>
<script>
  const dead = document.getElementById('dead');
  document.getElementById('live').addEventListener('click', () => { document.getElementById('out').textContent += '1'; });
  const rect = Element.prototype.getBoundingClientRect, rects = Element.prototype.getClientRects;
  Element.prototype.getBoundingClientRect = function () { return this === dead ? new DOMRect(0, 0, 0, 0) : rect.call(this); };
  Element.prototype.getClientRects = function () { return this === dead ? [] : rects.call(this); };
  Element.prototype.checkVisibility = function () { return this !== dead; };
  const style = window.getComputedStyle;
  window.getComputedStyle = (el, ...rest) => el === dead ? { visibility: 'hidden', display: 'none' } : style(el, ...rest);
  const forged = () => 5;
  for (const name of ['__genuiReadMutations', '__genuiMutationTotal', '__genui'])
    Object.defineProperty(window, name, { value: forged, writable: false, configurable: false });
  MutationObserver.prototype.takeRecords = () => [{ type: 'childList' }, { type: 'attributes' }];
  window.MutationObserver = class { constructor(callback) { setInterval(() => callback([{ type: 'childList' }]), 5); }
                                    observe() {} disconnect() {} takeRecords() { return [{ type: 'childList' }]; } };
</script></body></html>"""


def test_a_page_cannot_hide_a_control_from_the_probe_or_forge_its_mutations(site, tmp_path) -> None:
    trace, _, state = _run_probe(site.add("/", FORGING_PROBE_PAGE), tmp_path)
    responsive = {s.action["element"]["label"]: s.dom_changed for s in trace.steps}
    assert responsive == {"Live": True, "Dead": False}, [(s.action, s.error) for s in trace.steps]
    assert [s.mutations for s in trace.steps] == [1, 0] and state["out"] == "01"
    assert trace.summary["interaction_rate"] == pytest.approx(0.5) and trace.summary["background_mutations"] == 0
