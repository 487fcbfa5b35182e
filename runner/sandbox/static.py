"""Static artifacts: pages that need no build (MT-Web2Code's HTML/CSS pages, golden pages).

The "build" of a static artifact only vets the paths and writes the files into dist/; it is served and
browsed exactly like a built one, under the same sandboxed server and CSP.
"""

from __future__ import annotations

import posixpath
import shutil
import time
from pathlib import Path

from runner.sandbox.base import BuildResult
from runner.sandbox.web_template import name_problems

STATIC_SUFFIXES = frozenset({".html", ".htm", ".css", ".js", ".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp",
                             ".ico", ".json", ".txt", ".woff", ".woff2"})


def validate_static_files(files: dict[str, str], *, max_files: int = 256, max_file_bytes: int = 2 * 1024 * 1024) -> list[str]:
    reasons: list[str] = []
    if "index.html" not in files:
        reasons.append("index.html: missing (a static artifact needs an index.html at its root)")
    if len(files) > max_files:
        reasons.append(f"{len(files)} files: more than the limit of {max_files}")
    reasons += name_problems(files)
    for path, content in files.items():
        normalised = posixpath.normpath(path)
        if "\x00" in path:
            reasons.append(f"{path!r}: NUL byte in path")
        elif path.startswith("/") or "\\" in path or normalised.startswith("..") or normalised != path.lstrip("./"):
            reasons.append(f"{path}: not a plain relative path inside the page folder")
        elif Path(path).suffix.lower() not in STATIC_SUFFIXES:
            reasons.append(f"{path}: file type {Path(path).suffix or '(none)'} is not allowed in a static page")
        if len(content.encode()) > max_file_bytes:
            reasons.append(f"{path}: {len(content.encode())} bytes, over the limit of {max_file_bytes}")
    return reasons


def build_static(files: dict[str, str], workspace: Path, *, assets_dir: Path | None = None) -> BuildResult:
    """Write the page into workspace/dist (plus read-only assets, e.g. a page's images)."""
    started = time.monotonic()
    reasons = validate_static_files(files)
    if reasons:
        return BuildResult("rejected", log="rejected:\n" + "\n".join(f"- {r}" for r in reasons), rejected=reasons,
                           duration_s=time.monotonic() - started)
    dist = Path(workspace) / "dist"
    if dist.exists():
        shutil.rmtree(dist)
    dist.mkdir(parents=True)
    if assets_dir is not None and assets_dir.is_dir():
        shutil.copytree(assets_dir, dist, dirs_exist_ok=True)
    for path, content in files.items():
        target = dist / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    return BuildResult("ok", log=f"static artifact: {len(files)} file(s) written", dist_dir=dist,
                       duration_s=time.monotonic() - started)
