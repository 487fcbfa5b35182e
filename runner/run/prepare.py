"""`python -m runner.prepare`: one-time preparation and a self-check of the offline default.

Installs the pinned build Node and every web template's node_modules into the cache (shared read-only by every
build; the default template, the EvoGenUI-Bench scaffold and FlowEval's, each under its lockfile's content
hash) and checks that Chromium and bubblewrap are usable, so a broken machine fails here with a clear message
rather than halfway through an experiment.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from runner.browser.launcher import HEADLESS_SHELL, HEADLESS_SHELL_PACKAGE
from runner.sandbox.build_node import build_node_version, ensure_build_node
from runner.sandbox.web_template import DEFAULT_CACHE_ROOT, TEMPLATES, ensure_template_modules


def check_bubblewrap(bwrap: str = "bwrap") -> str:
    if shutil.which(bwrap) is None:
        return f"{bwrap} not found: install bubblewrap (apt-get install -y bubblewrap)"
    probe = subprocess.run(
        [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
         "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev",
         "/usr/bin/true"],
        capture_output=True, text=True, timeout=30,
    )
    return "" if probe.returncode == 0 else f"bubblewrap cannot create a sandbox here: {probe.stderr.strip()}"


def check_chromium(executable: str | None) -> str:
    if executable and not Path(executable).exists():
        return f"Chromium not found at {executable}: install it (apt-get install -y {HEADLESS_SHELL_PACKAGE}) or set browser.executable_path"
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache-root", type=Path, default=DEFAULT_CACHE_ROOT)
    parser.add_argument("--chromium", default=HEADLESS_SHELL)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    node = ensure_build_node(args.cache_root)
    print(f"prepare: build Node {build_node_version()} at {node} ({time.perf_counter() - started:.1f}s)")
    for template in TEMPLATES:
        started = time.perf_counter()
        modules = ensure_template_modules(args.cache_root, template)
        print(f"prepare: web template {template!r} node_modules at {modules} ({time.perf_counter() - started:.1f}s)")
    problems = [p for p in (check_bubblewrap(), check_chromium(args.chromium)) if p]
    for problem in problems:
        print(f"prepare: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
