"""A built answer looked at once: served from the sandbox (without the suite's tool bridge: a preview must not
touch the turn's tool state or logs) and loaded in one of the run's browsers, which captures it as the slot's
evidence capture would, into a scratch folder. An agent's `view_page` (runner/agents/builtin_tools.py)."""

from __future__ import annotations

import shutil

from runner.browser.capture import capture_evidence
from runner.browser.launch import BrowserPools
from runner.sandbox.base import BuildResult, Sandbox
from runner.sandbox.scratch import scratch_dir
from runner.turns.evidence_folder import EvidenceFolder
from runner.turns.generation import PagePreview

__all__ = ["preview_build"]

CAPTURE_TIMEOUT_S = 20.0


async def preview_build(sandbox: Sandbox, browsers: BrowserPools, build: BuildResult) -> PagePreview:
    """The page of a successful build, as rendered; a failed load is reported in the preview, never raised."""
    if build.dist_dir is None:
        return PagePreview(screenshot_png=None, load_error="the build produced no page to look at")
    scratch = scratch_dir("preview")
    try:
        async with browsers.checkout() as pool:
            async with sandbox.serve(build.dist_dir, tool_bridge=None, network=pool.network_namespace) as served:
                async with pool.session(served.url) as session:
                    evidence = await capture_evidence(session, scratch, capture_timeout_s=CAPTURE_TIMEOUT_S)
        shot = scratch / EvidenceFolder.SCREENSHOT_VIEWPORT
        errors = [str(entry.get("text", "")) for entry in evidence.console
                  if isinstance(entry, dict) and entry.get("type") == "error"]
        return PagePreview(screenshot_png=shot.read_bytes() if shot.is_file() else None,
                           visible_text=evidence.visible_text, console_errors=errors,
                           page_errors=list(evidence.page_errors), load_error=evidence.load_error)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
