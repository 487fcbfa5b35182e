"""capture_evidence: load an artifact once and write what it shows (screenshots, DOM, logs) to disk;
capture_final_state: the same page again after the actor, without reloading it; write_visit_logs: the
console, network log, page errors, dialogs and popups of the whole visit, once it is over."""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError

from runner.browser.session import MAX_FULL_PAGE_HEIGHT, PageSession, PageSnapshot
from runner.turns.evidence import Evidence
from runner.turns.evidence_folder import EvidenceFolder

log = logging.getLogger(__name__)

MAX_VISIBLE_TEXT = 20000  # enough for any judge prompt; keeps records small
TOOL_CALLS_WAIT_S = 1.0  # how long the final capture waits for the page's tool calls to come back

async def capture_evidence(session: PageSession, out_dir: Path, *, capture_timeout_s: float = 30.0,
                           page_files: bool = True) -> Evidence:
    """Load `session.url`, write evidence files into `out_dir`, return an Evidence (paths relative to out_dir).

    Never raises for a broken artifact: a failed navigation or capture sets `load_error` instead.
    `capture_timeout_s` bounds the capture after load: a page stuck in a JS loop answers no evaluate.
    `page_files` False: no screenshots and no DOM file, for a slot whose judge, suite and actor read none
    (the reward service's lean evidence); the visible text and whether the page is blank are read all the same.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    evidence = Evidence(url=session.url)
    started = time.monotonic()
    try:
        evidence.load_s = await session.goto()
        if session.response_status is not None and session.response_status >= 400:
            evidence.load_error = f"HTTP {session.response_status} for {session.url}"
    except PlaywrightError as exc:
        evidence.load_s = time.monotonic() - started
        evidence.load_error = f"navigation failed: {_first_line(exc)}"

    if not evidence.load_error or session.response_status is not None:
        # Shoot whatever rendered, also for an HTTP error page, so a judge can see it.
        try:
            capture = _capture_page(session, out_dir, evidence) if page_files else _read_page(session, evidence)
            await asyncio.wait_for(capture, timeout=capture_timeout_s)
        except asyncio.TimeoutError:
            session.note_unresponsive(f"the evidence capture did not finish within {capture_timeout_s:g} s")
            if not evidence.load_error:
                evidence.load_error = f"capture timed out after {capture_timeout_s:g} s (page unresponsive)"

    if not evidence.dom_path and (out_dir / EvidenceFolder.DOM).is_file():  # kept though a screenshot failed
        evidence.dom_path = EvidenceFolder.DOM
    note_visit_failure(session, evidence)
    _take_logs(session, evidence)
    return evidence


LEFT_ARTIFACT = "the page navigated away from the artifact"
STOPPED_ANSWERING = "the page stopped answering"


def note_visit_failure(session: PageSession, evidence: Evidence) -> bool:
    """Put into `evidence.load_error` what makes the whole visit the page's runtime failure, whenever in the visit
    it happened (load, capture, actor, the live checks' reloads): the page left its artifact (or tried to: a
    refused navigation, a form posted elsewhere), or it stopped answering the harness. Decided over the whole visit,
    not at the load capture, so the bucket does not depend on which stage a page's timer or slowness hit, which
    differs between sandboxes, machines and the reward service. Called after the load capture and again once the
    visit is over; True when it added something."""
    added = False
    if session.left_origin and LEFT_ARTIFACT not in evidence.load_error:
        # A page that leaves did not run as an artifact: its own failure says more than what followed.
        left = f"{LEFT_ARTIFACT} (to {session.left_origin[0][:200]})"
        evidence.load_error = f"{left}; {evidence.load_error}" if evidence.load_error else left
        added = True
    if session.unresponsive and not evidence.load_error:
        evidence.load_error = f"{STOPPED_ANSWERING}: {session.unresponsive[0]}"
        added = True
    return added


def _take_logs(session: PageSession, evidence: Evidence) -> None:
    evidence.console = list(session.console)
    evidence.console_dropped = session.console_dropped
    evidence.page_errors = list(session.page_errors)
    evidence.network = list(session.network)
    _take_dialogs(session, evidence)


def _take_dialogs(session: PageSession, evidence: Evidence) -> None:
    evidence.dialogs = list(session.dialogs)
    evidence.popups = list(session.popups)
    evidence.downloads = list(session.downloads)
    evidence.unload_traps = list(session.unload_traps)


async def write_visit_logs(session: PageSession, out_dir: Path, evidence: Evidence, *,
                           answers_wait_s: float = 1.0, replace: bool = False) -> None:
    """Write console.json, network.json, page_errors.json and dialogs.json once the visit is over (after the
    actor and the final capture, when there are any), each once.

    Written at load they would miss what arrives later: a request's response, a popup's own browser event,
    what the actor's steps log, open or call. Requests still unanswered get `answers_wait_s` to finish, so a
    status is not reported missing for a response that was a few milliseconds away; past it they are
    written as they are (status null); so do windows the page opened whose page has not arrived yet. Tool calls the page chains get as long to finish first (the state
    the visit leaves is read after this). `evidence` gets the visit's dialogs and popups; its console, network
    and page errors stay the load-time copy the judge reads (it gets the later page errors on its own).
    `replace`: written again, over the first copy (a visit found failed later, once its first load's watch
    ended: what the page did meanwhile is its evidence)."""
    await session.tool_calls_settled(answers_wait_s)
    await session.requests_answered(answers_wait_s)
    await session.popups_arrived(answers_wait_s)
    _take_dialogs(session, evidence)
    console = list(session.console)
    if session.console_dropped:
        console.append({"type": "genui", "text": f"{session.console_dropped} more console messages dropped "
                        "(capture cap)", "location": {}})
    folder = EvidenceFolder(out_dir)
    folder.write_json(folder.CONSOLE, console, replace=replace)
    folder.write_json(folder.PAGE_ERRORS, list(session.page_errors), replace=replace)
    folder.write_json(folder.NETWORK, [asdict(n) for n in session.network], replace=replace)
    folder.write_json(folder.DIALOGS, {"dialogs": evidence.dialogs, "popups": evidence.popups,
                                       "downloads": evidence.downloads, "unload_traps": evidence.unload_traps},
                      replace=replace)


async def _capture(session: PageSession, viewport: Path, full: Path, dom: str, *,
                   reuse_unchanged: bool = False) -> tuple[PageSnapshot, str]:
    """A viewport and a full-page screenshot and the DOM; returns the snapshot and, for a page taller than the
    capture height, what the full-page shot leaves out (else ""). When the whole page is in view the full-page
    shot would be the same pixels, so the viewport capture is copied instead of taken twice. The DOM is written
    before the full-page shot, so a page whose shot fails still leaves it. `reuse_unchanged`: see
    PageSession.screenshot."""
    await session.screenshot(viewport, full_page=False, reuse_unchanged=reuse_unchanged)
    snapshot = await session.snapshot()
    EvidenceFolder(viewport.parent).write_text(dom, snapshot.html)
    if snapshot.fits_viewport:
        shutil.copyfile(viewport, full)
        return snapshot, ""
    await session.screenshot(full, full_page=True)
    clipped = session.full_page_clipped
    if clipped is None:
        return snapshot, ""
    return snapshot, (f"the page is {clipped[0]} px tall; the full-page screenshot shows its top {clipped[1]} px "
                      f"(the capture height, {MAX_FULL_PAGE_HEIGHT} px)")


async def _capture_page(session: PageSession, out_dir: Path, evidence: Evidence) -> None:
    try:
        snapshot, evidence.screenshot_full_clipped = await _capture(
            session, out_dir / EvidenceFolder.SCREENSHOT_VIEWPORT, out_dir / EvidenceFolder.SCREENSHOT_FULL,
            EvidenceFolder.DOM)
        evidence.screenshot_viewport = EvidenceFolder.SCREENSHOT_VIEWPORT
        evidence.screenshot_full = EvidenceFolder.SCREENSHOT_FULL
        evidence.dom_path = EvidenceFolder.DOM
        evidence.visible_text = snapshot.text[:MAX_VISIBLE_TEXT]
        evidence.blank = not snapshot.visible
    except PlaywrightError as exc:  # page crashed or navigated away mid-capture
        log.warning("evidence capture failed for %s: %s", session.url, exc)
        if not evidence.load_error:
            evidence.load_error = f"capture failed: {_first_line(exc)}"


async def _read_page(session: PageSession, evidence: Evidence) -> None:
    """What a judge that reads no page files decides from: the page's text and whether anything shows."""
    try:
        snapshot = await session.snapshot()
        evidence.visible_text = snapshot.text[:MAX_VISIBLE_TEXT]
        evidence.blank = not snapshot.visible
    except PlaywrightError as exc:  # page crashed or navigated away mid-read
        log.warning("evidence read failed for %s: %s", session.url, exc)
        if not evidence.load_error:
            evidence.load_error = f"capture failed: {_first_line(exc)}"


async def capture_final_state(session: PageSession, out_dir: Path, evidence: Evidence, *,
                              capture_timeout_s: float = 30.0) -> Evidence:
    """Capture the page as it is now, without reloading it: the final DOM, a full-page and a viewport
    screenshot and the visible text after the actor ran (EvoGenUI-Bench §4.2, §5.2), into the `final_*`
    fields of `evidence` and FINAL_* files beside the load-time capture. Writes evidence.json with both.
    Never raises: a failed capture sets `final_error` and leaves the load-time capture as it was."""
    out_dir = Path(out_dir)

    async def capture() -> None:
        snapshot, evidence.final_screenshot_full_clipped = await _capture(
            session, out_dir / EvidenceFolder.FINAL_SCREENSHOT_VIEWPORT, out_dir / EvidenceFolder.FINAL_SCREENSHOT_FULL,
            EvidenceFolder.FINAL_DOM, reuse_unchanged=True)  # e.g. the actor's last view, taken moments ago
        evidence.final_screenshot_viewport = EvidenceFolder.FINAL_SCREENSHOT_VIEWPORT
        evidence.final_screenshot_full = EvidenceFolder.FINAL_SCREENSHOT_FULL
        evidence.final_dom_path = EvidenceFolder.FINAL_DOM
        evidence.final_visible_text = snapshot.text[:MAX_VISIBLE_TEXT]

    _take_dialogs(session, evidence)  # evidence.json holds the dialogs the actor's steps opened too
    try:
        # The page as a person would leave it: the tool calls it was making have come back and been shown.
        await asyncio.wait_for(session.tool_calls_settled(TOOL_CALLS_WAIT_S), timeout=capture_timeout_s)
        await asyncio.wait_for(capture(), timeout=capture_timeout_s)
    except asyncio.TimeoutError:
        session.note_unresponsive(f"the final capture did not finish within {capture_timeout_s:g} s")
        evidence.final_error = f"final capture timed out after {capture_timeout_s:g} s (page unresponsive)"
    except PlaywrightError as exc:  # the actor left a crashed or navigating page
        evidence.final_error = f"final capture failed: {_first_line(exc)}"
    EvidenceFolder(out_dir).write_json(EvidenceFolder.EVIDENCE, evidence_summary(evidence))
    return evidence


def evidence_summary(evidence: Evidence) -> dict[str, Any]:
    """evidence.json: the Evidence without the logs that have files of their own."""
    return {key: value for key, value in evidence.to_json().items() if key not in ("console", "network", "page_errors")}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
