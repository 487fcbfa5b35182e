"""Freezing a golden page that runs scripts into a static DOM (MT-Web2Code §3.2: collected pages are
"rendered in a local environment").

The trajectory engine needs a static H0: its serialized states are rendered again and again, and scripts
would run on each render (twice over what they already built). So a page with executable scripts is
rendered once, its scripts are let settle (the DOM stays unchanged for QUIET_MS), and the resulting DOM is
snapshotted with every executable script, inline event handler and `javascript:` URL removed. Inert data
blocks stay; `application/ld+json` is kept or dropped by `json_ld`. The snapshot is the golden page.

A page that cannot be frozen raises FreezeError with the reason: its scripts throw, its DOM never settles,
or the snapshot does not render like the live page (script effects that live outside the DOM: CSSOM rules,
canvas drawings, form values set as properties), measured as more than eq. 7's visibility threshold of
changed pixels.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal

from runner.browser.session import PageSession
from runner.suites.web2code.image import load_rgb, pixel_distance
from runner.suites.web2code.render import screenshot_png

ENTRY = "index.html"
QUIET_MS = 500  # the DOM must stay unchanged this long to count as settled
MAX_SETTLE_MS = 8000  # a page still changing after this cannot be frozen
POLL_MS = 100

JsonLd = Literal["keep", "drop"]
PageOpener = Callable[[Mapping[str, str]], AbstractAsyncContextManager[PageSession]]

# A <script> executes when its type is empty, "module" or a JavaScript MIME type (HTML spec); anything else
# is an inert data block.
_SCRIPT_KINDS_JS = r"""
(() => {
  const JS = new Set(['', 'module', 'text/javascript', 'application/javascript', 'text/ecmascript',
    'application/ecmascript', 'application/x-javascript', 'text/jscript', 'text/livescript', 'text/x-javascript',
    'text/x-ecmascript', 'application/x-ecmascript', 'text/javascript1.0', 'text/javascript1.1',
    'text/javascript1.2', 'text/javascript1.3', 'text/javascript1.4', 'text/javascript1.5']);
  const kind = (s) => {
    const t = (s.getAttribute('type') || '').trim().toLowerCase().split(';')[0].trim();
    if (JS.has(t)) return 'executable';
    return t === 'application/ld+json' ? 'json_ld' : 'data';
  };
  const isHandler = (a) => /^on/i.test(a.name);
  const isJsUrl = (a) => ['href', 'src', 'action', 'formaction', 'xlink:href'].includes(a.name.toLowerCase())
    && /^\s*javascript:/i.test(a.value);
  return {kind, isHandler, isJsUrl};
})()
"""

_COUNT_JS = """() => { const K = %s;
  const out = {executable: 0, json_ld: 0, data: 0, handlers: 0};
  for (const s of document.querySelectorAll('script')) out[K.kind(s)] += 1;
  for (const el of document.querySelectorAll('*')) for (const a of el.attributes) {
    if (K.isHandler(a) || K.isJsUrl(a)) out.handlers += 1; }
  return out; }""" % _SCRIPT_KINDS_JS

_SNAPSHOT_JS = """(keepJsonLd) => { const K = %s;
  const root = document.documentElement.cloneNode(true);
  const removed = {executable: 0, json_ld: 0, handlers: 0};
  for (const s of Array.from(root.querySelectorAll('script'))) {
    const kind = K.kind(s);
    if (kind === 'executable' || (kind === 'json_ld' && !keepJsonLd)) { s.remove(); removed[kind] += 1; }
  }
  for (const el of [root, ...root.querySelectorAll('*')]) {
    for (const a of Array.from(el.attributes)) {
      if (K.isHandler(a) || K.isJsUrl(a)) { el.removeAttribute(a.name); removed.handlers += 1; }
    }
  }
  // Live form state is a property, not markup: write it back so the snapshot shows what the page showed.
  const live = document.documentElement.querySelectorAll('input, textarea, select, option');
  const copies = root.querySelectorAll('input, textarea, select, option');
  live.forEach((el, i) => {
    const c = copies[i];
    if (!c || c.tagName !== el.tagName) return;
    if (el.tagName === 'INPUT') {
      if (el.type === 'checkbox' || el.type === 'radio') { if (el.checked) c.setAttribute('checked', ''); else c.removeAttribute('checked'); }
      else if (el.type !== 'file' && el.type !== 'password') c.setAttribute('value', el.value);
    } else if (el.tagName === 'TEXTAREA') c.textContent = el.value;
    else if (el.tagName === 'OPTION') { if (el.selected) c.setAttribute('selected', ''); else c.removeAttribute('selected'); }
  });
  const dt = document.doctype;
  let head = '';
  if (dt) head = '<!DOCTYPE ' + dt.name + (dt.publicId ? ' PUBLIC "' + dt.publicId + '"' : '') +
                 (dt.systemId ? (dt.publicId ? '' : ' SYSTEM') + ' "' + dt.systemId + '"' : '') + '>\\n';
  return {html: head + root.outerHTML + '\\n', removed};
}""" % _SCRIPT_KINDS_JS


class FreezeError(RuntimeError):
    """The page runs scripts and cannot be frozen into a static DOM; the message says why."""


@dataclass
class FrozenPage:
    files: dict[str, str]  # the state files with index.html replaced by the snapshot (unchanged if not frozen)
    report: dict[str, Any] = field(default_factory=dict)  # recorded in trajectory.json

    @property
    def frozen(self) -> bool:
        return bool(self.report.get("frozen"))


async def count_scripts(session: PageSession) -> dict[str, int]:
    """Executable scripts, JSON-LD blocks, other data blocks and inline handlers / javascript: URLs."""
    return dict(await session.page.evaluate(_COUNT_JS))


async def _settle(session: PageSession) -> int:
    """Wait until the DOM has not changed for QUIET_MS; returns ms waited. FreezeError if it never does."""
    started = time.monotonic()
    quiet_since = time.monotonic()
    await session.reset_mutations()
    while True:
        await asyncio.sleep(POLL_MS / 1000)
        if await session.mutation_count(character_data=True):
            await session.reset_mutations()
            quiet_since = time.monotonic()
        now = time.monotonic()
        if (now - quiet_since) * 1000 >= QUIET_MS:
            return int((now - started) * 1000)
        if (now - started) * 1000 >= MAX_SETTLE_MS:
            raise FreezeError(f"its scripts keep changing the DOM after {MAX_SETTLE_MS / 1000:g} s "
                              "(an animation loop, a clock or polling): no settled state to snapshot")


async def freeze_page(open_page: PageOpener, files: Mapping[str, str], *, json_ld: JsonLd = "keep",
                      max_changed_px: int = 100, diff_tau: int = 0) -> FrozenPage:
    """Freeze `files` (entry index.html) if its page runs scripts (or holds JSON-LD to drop); else return
    them unchanged. `max_changed_px`: how many pixels the snapshot may render differently from the live
    page (eq. 7's tau_vis: fewer are not visible). Raises FreezeError with the reason."""
    files = dict(files)
    async with open_page(files) as session:
        counts = await count_scripts(session)
        dropping = json_ld == "drop" and counts["json_ld"] > 0
        if not counts["executable"] and not counts["handlers"] and not dropping:
            return FrozenPage(files, {"frozen": False, "scripts": counts})
        if session.page_errors:
            raise FreezeError(f"its scripts throw while rendering: {session.page_errors[0][:200]}")
        settle_ms = await _settle(session)
        if session.page_errors:
            raise FreezeError(f"its scripts throw while settling: {session.page_errors[0][:200]}")
        live = load_rgb(await screenshot_png(session))
        snapshot = await session.page.evaluate(_SNAPSHOT_JS, json_ld == "keep")
    frozen = {**files, ENTRY: snapshot["html"]}
    async with open_page(frozen) as session:
        remaining = await count_scripts(session)
        still = load_rgb(await screenshot_png(session))
    if remaining["executable"] or remaining["handlers"]:
        raise FreezeError(f"the snapshot still holds scripts ({remaining})")
    changed = _changed(live, still, diff_tau)
    if changed > max_changed_px:
        raise FreezeError(
            f"the snapshot renders {changed} px differently from the live page (more than {max_changed_px}): "
            "the scripts' effect is not all in the DOM (CSSOM rules, canvas, shadow roots or similar)")
    return FrozenPage(frozen, {"frozen": True, "scripts": counts, "removed": snapshot["removed"],
                               "json_ld": json_ld, "settle_ms": settle_ms, "render_diff_px": changed})


def _changed(a: Any, b: Any, diff_tau: int) -> int:
    """Pixels that differ by more than diff_tau; where the renders differ in size, the uncovered area counts."""
    h, w = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    uncovered = max(a.shape[0] * a.shape[1], b.shape[0] * b.shape[1]) - h * w
    return int((pixel_distance(a[:h, :w], b[:h, :w]) > diff_tau).sum()) + uncovered
