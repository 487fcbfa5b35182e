"""The rendered page's background colour, captured for the §5 theme analysis (I-WebGenBench §5: light or dark
from the page as rendered, never from class names).

The colour the canvas is painted with is the root element's background, or the body's when the root's is
transparent (CSS Backgrounds 3, §2.11.2 "The Canvas Background and the HTML <body> Element"); when both are
transparent the browser's own white canvas shows, which `classify_theme` composites under a transparent colour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runner.suites.iwebgen.structure import parse_css_rgb

if TYPE_CHECKING:
    from runner.browser.session import PageSession

_COMPUTED_BACKGROUNDS_JS = """() => ({
  root: getComputedStyle(document.documentElement).backgroundColor,
  body: document.body ? getComputedStyle(document.body).backgroundColor : "",
})"""


def canvas_background(root: str, body: str) -> str:
    """The computed colour that paints the canvas: the root's unless it is fully transparent, then the body's."""
    if root and parse_css_rgb(root)[3] > 0:
        return root
    return body or root


async def capture_background(session: "PageSession") -> str:
    """The page's canvas colour as getComputedStyle gives it ("rgb(...)" / "rgba(...)")."""
    colours = await session.observe(_COMPUTED_BACKGROUNDS_JS)
    return canvas_background(str(colours.get("root") or ""), str(colours.get("body") or ""))
