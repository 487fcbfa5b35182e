"""How an evidence file leaves the viewer: as a raster image, a download or text, never as anything a browser runs.

Evidence is model output (a saved page, the answer's sources, an SVG or XML file the build emitted). Served, the
app names its type (`served_media_type`); exported to disk, the file's name is what a browser goes by when the
folder is opened from file://, so every name outside a short list of inert lower-case suffixes gets ".txt"
appended (`exported_name`): "evil.SVG", "evil.xhtml" and "evil.Htm" are written as "evil.SVG.txt", ...
An allow-list, not a deny-list: a type no one thought of is text too. Lower case only: a browser may look an
upper-case suffix up differently, or not at all, and then sniff the content, which for a file holding markup
could make it a page.
"""

from __future__ import annotations

from pathlib import PurePosixPath

# Suffix -> the type they are served with. Raster images render as pixels only; an archive is offered as a
# download; text/plain is never sniffed into a page.
INERT_TYPES: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
    ".zip": "application/zip",
    ".txt": "text/plain; charset=utf-8",
}
TEXT = "text/plain; charset=utf-8"


def served_media_type(name: str) -> str:
    """The Content-Type an evidence file is served with (the app also sends nosniff and a policy that runs
    nothing): its inert type, else plain text."""
    return INERT_TYPES.get(PurePosixPath(name).suffix.lower(), TEXT)


def exported_name(name: str) -> str:
    """The file name an evidence file is exported under: its own where its suffix is an inert one in lower case,
    else with ".txt" appended, so that opened from disk it shows as an image, a download or text."""
    return name if PurePosixPath(name).suffix in INERT_TYPES else name + ".txt"


__all__ = ["INERT_TYPES", "exported_name", "served_media_type"]
