"""Node's module compile cache for builds: warmed once per template install and Node, then read-only.

Vite turns on Node's compile cache (V8 code cache for the modules it loads), but in a sandbox its default
folder is under the build's own fresh /tmp, so every build compiled Vite, Rolldown's JavaScript and the
plugins from source again: about 40 ms of a 0.33 s smoke build on the 2-core machine
(docs/performance.md). Here one build of the template's own sources, with nothing of a model's in it, fills
a cache folder; every later build sees that folder read-only through NODE_COMPILE_CACHE, so no build can
write into what the next one loads. Node checks each entry against the source it was made from, so an entry
that no longer fits is compiled afresh, never trusted.

The folder is keyed by the template install and the Node binary (its path, size and time), and appears
under its final name only once warmed (a rename), so concurrent runs never read a half-written cache.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

CACHE_FOLDER = "node-compile-cache"
NODE_COMPILE_CACHE_ENV = "NODE_COMPILE_CACHE"


def compile_cache_dir(cache_root: Path, node_modules: Path, node: Path) -> Path:
    """Where the compile cache of builds of this template install run by this Node lives (maybe not yet)."""
    node = node.resolve()
    stat = node.stat()
    key = f"{node_modules.resolve()}\0{node}\0{stat.st_size}\0{stat.st_mtime_ns}"
    return Path(cache_root) / CACHE_FOLDER / hashlib.sha256(key.encode()).hexdigest()[:16]


def is_warm(folder: Path) -> bool:
    return folder.is_dir()


def new_warming_folder(folder: Path) -> Path:
    """A private folder beside `folder` to warm into (then `publish`)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".warming-", dir=folder.parent))


def publish(warmed: Path, folder: Path) -> bool:
    """Move a warmed cache into place; False when it holds nothing (the warm-up compiled nothing)."""
    if not any(warmed.rglob("*")):
        return False
    try:
        os.rename(warmed, folder)
    except OSError:  # another run published it first: theirs is as good
        if not is_warm(folder):
            raise
        shutil.rmtree(warmed, ignore_errors=True)
    return True
