"""HarnessWorld: the harness's own JavaScript world in a page, where everything a verdict reads is read.

A page's scripts run in the page's main world and can redefine anything in it: the readers a harness would
install there, MutationObserver itself, the DOM getters (`outerHTML`, `innerText`, `getBoundingClientRect`),
timers and `requestAnimationFrame`. A DevTools isolated world (the mechanism behind extension content scripts)
shares the page's DOM but has its own globals and its own copies of every built-in and DOM prototype: nothing the
page defines, patches or deletes in its world exists in this one, and nothing of this one is reachable from the
page (no global, no property, no event carries a reference across).

The world is made by this page's own DevTools session: `Page.addScriptToEvaluateOnNewDocument` with a world name
runs WORLD_JS in that world of every new document before any of the page's scripts, so the MutationObserver it
installs sees the document from its first node on. `evaluate` finds the current document's world by name
(`Page.createIsolatedWorld` returns the one the script made; asked as soon as the main frame commits a new
document, so a read after a load finds the answer waiting) and runs a function there with `Runtime.evaluate`;
results come back by value. The session lives as long as the page (its scripts go with it).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from playwright.async_api import BrowserContext, CDPSession, Error as PlaywrightError, Page

WORLD_NAME = "__genui_harness__"
_MISSING = "__genui_harness_missing__"  # what a read answers in a world WORLD_JS did not run in

# Runs in the harness world of every document of the page; only the top document keeps a watch. Records are
# counted per type, so a reader chooses I-WebGenBench App. B.1's configuration ("child lists, subtrees, and
# attributes") or adds text-node (characterData) changes; takeRecords() makes reset and read exact even when
# records are still queued.
WORLD_JS = """
(() => {
  if (globalThis.__genui || window.top !== window) return;
  const counts = { childList: 0, attributes: 0, characterData: 0 };
  // When records of each kind were last seen, from the observer's start on: a reset also says how long the
  // page had been still, which counts toward the probe's idle window (PageSession.idle_window_s).
  const watchedFrom = performance.now();
  const last = { structure: watchedFrom, text: watchedFrom };
  let total = 0;  // records of every kind since the document began, never reset
  const add = (records) => {
    if (!records.length) return;
    total += records.length;
    const now = performance.now();
    for (const r of records) {
      counts[r.type] += 1;
      if (r.type === 'characterData') last.text = now; else last.structure = now;
    }
  };
  const observer = new MutationObserver(add);
  observer.observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
  const take = () => add(observer.takeRecords());
  const mark = () => { take(); return [performance.timeOrigin, total]; };
  // Stores a reload would start from, read asynchronously where this browser has them: [name, read, count].
  const stores = [];
  const size = (value) => value.length;
  if (window.indexedDB && indexedDB.databases) stores.push(['indexedDB', () => indexedDB.databases(), size]);
  if (window.caches) stores.push(['caches', () => caches.keys(), size]);
  if (navigator.storage && navigator.storage.estimate)
    stores.push(['storage', () => navigator.storage.estimate(), (value) => value.usage]);
  if (navigator.storageBuckets) stores.push(['storageBuckets', () => navigator.storageBuckets.keys(), size]);
  globalThis.__genui = {
    reset() {
      take();
      const now = performance.now();
      counts.childList = counts.attributes = counts.characterData = 0;
      return [now - last.structure, now - Math.max(last.structure, last.text)];  // still for, in ms
    },
    count(withText) { take(); return counts.childList + counts.attributes + (withText ? counts.characterData : 0); },
    total() { take(); return total; },
    mark,
    // mark() and the kinds of state found (comma-separated): storage the page wrote, its window name, its
    // history state (PageSession.reload_would_match).
    async carried() {
      let found = '';
      const note = (name) => { found += (found ? ',' : '') + name; };
      const sync = [['window.name', () => window.name !== ''], ['history.state', () => history.state !== null],
                    ['localStorage', () => localStorage.length > 0], ['sessionStorage', () => sessionStorage.length > 0]];
      for (const [name, read] of sync) { try { if (read()) note(name); } catch (e) { note(name + '?'); } }
      await Promise.all(stores.map(async ([name, read, count]) => {
        try { if (count(await read()) > 0) note(name); } catch (e) { note(name + '?'); }
      }));
      return [...mark(), found];
    },
  };
})();
"""


class HarnessWorld:
    """The harness world of one page, over that page's DevTools session (also used for fast screenshots)."""

    def __init__(self, cdp: CDPSession, frame_id: str | None = None) -> None:
        self.cdp = cdp
        self._frame_id = frame_id  # the page's main frame (the same for the page's life)
        self._context_id: int | None = None  # the current document's harness world, once looked up
        self._looking_up: asyncio.Future[int] | None = None  # its lookup, begun when the document committed
        cdp.on("Page.frameNavigated", self._on_navigated)

    @classmethod
    async def install(cls, context: BrowserContext, page: Page) -> "HarnessWorld":
        """Open `page`'s DevTools session and have WORLD_JS run in the harness world of each of its documents.
        Call before the page loads anything: a document loaded earlier is watched only from its first read on."""
        cdp = await context.new_cdp_session(page)
        await cdp.send("Page.enable")  # scripts for new documents run only while the domain is on
        await cdp.send("Page.addScriptToEvaluateOnNewDocument", {"source": WORLD_JS, "worldName": WORLD_NAME})
        tree = await cdp.send("Page.getFrameTree")
        return cls(cdp, tree["frameTree"]["frame"]["id"])

    def _on_navigated(self, event: dict[str, Any]) -> None:
        frame = event.get("frame") or {}
        if frame.get("parentId") or (self._frame_id is not None and frame.get("id") != self._frame_id):
            return  # a child frame's document: the harness reads the top one only
        self._context_id = None
        self._looking_up = asyncio.ensure_future(self._create())
        self._looking_up.add_done_callback(lambda done: done.cancelled() or done.exception())  # awaited or not

    async def evaluate(self, function: str, arg: Any = None) -> Any:
        """`function(arg)` run in the current document's harness world; its result by value (a promise is
        awaited). `arg` must be JSON. A thrown error, a crashed or closed page: Playwright's Error."""
        call = f"(globalThis.__genui ? ({function})({json.dumps(arg)}) : {json.dumps(_MISSING)})"
        for attempt in range(3):
            try:
                reply = await self.cdp.send("Runtime.evaluate", {
                    "expression": call, "contextId": await self._context(), "returnByValue": True,
                    "awaitPromise": True, "silent": True})
            except PlaywrightError as error:
                # The document went (a navigation, a reload): its world with it. Look up the new one once more.
                if attempt < 2 and ("Cannot find context" in str(error) or "No frame" in str(error)):
                    self._context_id = None
                    self._frame_id = None if "No frame" in str(error) else self._frame_id
                    continue
                raise
            value = _value(reply)
            if value == _MISSING and attempt < 2:  # a document made before the script was added: watch it now
                await self.cdp.send("Runtime.evaluate", {"expression": WORLD_JS, "contextId": await self._context(),
                                                         "silent": True})
                continue
            return value
        raise PlaywrightError("the harness world could not be reached in the page's current document")

    async def _context(self) -> int:
        if self._context_id is None:
            looking_up, self._looking_up = self._looking_up, None
            try:
                self._context_id = await looking_up if looking_up is not None else await self._create()
            except PlaywrightError:  # the lookup begun at the commit met a document already gone: once more
                self._context_id = await self._create()
        return self._context_id

    async def _create(self) -> int:
        if self._frame_id is None:
            tree = await self.cdp.send("Page.getFrameTree")
            self._frame_id = tree["frameTree"]["frame"]["id"]
        world = await self.cdp.send("Page.createIsolatedWorld", {"frameId": self._frame_id, "worldName": WORLD_NAME})
        return int(world["executionContextId"])


def _value(reply: dict[str, Any]) -> Any:
    """The value of a Runtime.evaluate reply; its exception as Playwright's Error."""
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        exception = details.get("exception") or {}
        raise PlaywrightError(f"harness read failed: {exception.get('description') or details.get('text', '')}")
    result = reply.get("result") or {}
    if "unserializableValue" in result:  # NaN, Infinity, -0, bigints
        try:
            return float(result["unserializableValue"])
        except ValueError:
            return None
    return result.get("value")
