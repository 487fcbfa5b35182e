"""The shell launcher every Chromium the runner starts goes through: it merges feature switches, then execs.

Chromium keeps only the last `--disable-features=` (and `--enable-features=`) switch of its command line.
Playwright passes its own list (features it turns off so automation works: paint holding, HTTPS upgrades,
background requests to Google, ...), and the runner passes its own list as an ordinary launch argument
(`BrowserSettings.args()` adds `--disable-features=` of `BrowserSettings.disable_features`), so one of the two
would silently turn the other back on. The launcher joins every occurrence into one switch and execs Chromium.
It is one mechanism for every browser: written next to a locally launched Chromium (confined or not), and
shipped in the docker sandbox's browser image as /opt/genui/chromium (images/browser/Dockerfile), the
executablePath the runner sends to its Playwright server.

The runner's default list (measured on the 2-core machine, docs/performance.md): the full browser
(`/usr/bin/chromium`, also in its headless mode) opens a window for every new context and preloads that window's
omnibox popup, a WebUI page in a renderer process of its own (`WebUIOmniboxPopup`, `WebUIOmniboxAimPopup`), and
keeps a spare renderer started for the next tab (`SpareRendererForSitePerProcess`), which a context that opens one
page never uses. Each context then started three renderers for one page; without them it starts one, and a
context with one page load costs about half the CPU (0.25 instead of 0.5 s). None of them takes part in
rendering a page. The headless shell the runner launches by default (BrowserSettings.executable_path) has no
window and none of them; the list costs it nothing.
"""

from __future__ import annotations

import os
import re
import shlex
import threading
from collections.abc import Sequence
from pathlib import Path

# The Chromium builds the runner knows: the headless shell renders every run (BrowserSettings.executable_path),
# the full browser is for watching one (headless=false). The shell from Debian's chromium-headless-shell package is
# named by its binary: the package's /usr/bin/chromium-headless-shell script runs it as a child instead of exec'ing
# it, so the browser's pid would be a shell's (a kill of it, or a crash the pool watches for, would reach only that).
HEADLESS_SHELL_PACKAGE = "chromium-headless-shell"
HEADLESS_SHELL = f"/usr/lib/chromium/{HEADLESS_SHELL_PACKAGE}"
FULL_CHROMIUM = "/usr/bin/chromium"

# Chromium's own feature names (base::Feature): letters, digits and _, so a list is one plain argument.
FEATURE_NAME = re.compile(r"^[A-Za-z0-9_]+$")

# Not used by a page the runner loads; see the module docstring.
DEFAULT_DISABLED_FEATURES: tuple[str, ...] = (
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
    "SpareRendererForSitePerProcess",
)


def launcher_script(chromium: str, *, preamble: str = "", exec_prefix: Sequence[str] = ()) -> str:
    """A POSIX sh script that runs `preamble`, then execs `exec_prefix + [chromium]` with its own arguments,
    every `--disable-features=` among them merged into one (and every `--enable-features=` into one)."""
    command = " ".join(shlex.quote(part) for part in [*exec_prefix, chromium])
    return (
        "#!/bin/sh\n"
        f"{preamble}"
        "disabled=\n"
        "enabled=\n"
        "for arg do\n"
        "  shift\n"
        "  case $arg in\n"
        '    --disable-features=*) disabled="${disabled:+$disabled,}${arg#--disable-features=}" ;;\n'
        '    --enable-features=*) enabled="${enabled:+$enabled,}${arg#--enable-features=}" ;;\n'
        '    *) set -- "$@" "$arg" ;;\n'
        "  esac\n"
        "done\n"
        '[ -n "$enabled" ] && set -- "$@" "--enable-features=$enabled"\n'
        '[ -n "$disabled" ] && set -- "$@" "--disable-features=$disabled"\n'
        f'exec {command} "$@"\n'
    )


def write_launcher(path: Path, chromium: str, *, preamble: str = "", exec_prefix: Sequence[str] = ()) -> str:
    """Write `launcher_script(...)` to `path` as an executable; return its path.

    The file is replaced whole (a new inode renamed over the old): a shell reads its script as it runs, so one
    truncated and rewritten in place while a launch is still reading it would run a part of it, or nothing.
    """
    staged = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    staged.write_text(launcher_script(chromium, preamble=preamble, exec_prefix=exec_prefix))
    staged.chmod(0o755)
    os.replace(staged, path)
    return str(path)
