"""The state text of a flow trace without chosen page regions (e.g. footers): an option of the flow-trace
convention (runner/suites/floweval/flows.py), off by default.

A flow actor given CSS selectors in `ActorContext.extra[EXCLUDE_REGIONS_KEY]` records, beside each state's
visible text (`TraceStep.observation`, then `summary["final_text"]`), the visible text of the elements those
selectors match, in `summary[EXCLUDED_TEXT_KEY]` (one list per state, in state order). The observation itself
stays the page's whole visible text (the paper's reading); a scorer that leaves the regions out takes them out
with `without_regions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

if TYPE_CHECKING:
    from runner.browser.session import PageSession

EXCLUDE_REGIONS_KEY = "exclude_regions"
EXCLUDED_TEXT_KEY = "excluded_text"


async def region_texts(session: "PageSession", selectors: Sequence[str]) -> list[str]:
    """The rendered text of every element the selectors match (Playwright reads it in its own isolated world),
    outermost first per selector; elements with no text are left out."""
    texts: list[str] = []
    for selector in selectors:
        try:
            found = await session.page.locator(selector).all_inner_texts()
        except PlaywrightError:  # a selector this page cannot take, or a page mid-navigation: nothing to leave out
            continue
        texts += [text for text in found if text.strip()]
    return texts


def without_regions(text: str, regions: Sequence[str]) -> str:
    """`text` with each region's text taken out once: the whole block where it occurs as one, else each of its
    lines that occurs. A region not shown in the text (a hidden element's) takes nothing out."""
    for region in regions:
        block = region.strip()
        if not block:
            continue
        if block in text:
            text = text.replace(block, "", 1)
            continue
        for line in (part.strip() for part in block.splitlines()):
            if line and line in text:
                text = text.replace(line, "", 1)
    return "\n".join(line for line in text.splitlines() if line.strip())
