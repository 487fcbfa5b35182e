"""The Chromium launcher: feature switches merged into one, the runner's disabled features among them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from runner.browser.launch import BrowserPool, BrowserSettings
from runner.browser.launcher import (DEFAULT_DISABLED_FEATURES, FULL_CHROMIUM, HEADLESS_SHELL, launcher_script,
                                     write_launcher)
from tests.support.components import skip_missing
from tests.support.processes import browser_pids


def _echo_args(tmp_path: Path) -> str:
    """A stand-in for Chromium that prints its arguments one per line."""
    script = tmp_path / "echo-args"
    script.write_text('#!/bin/sh\nfor arg do printf "%s\\n" "$arg"; done\n')
    script.chmod(0o755)
    return str(script)


def test_every_feature_switch_becomes_one_and_other_arguments_pass_unchanged(tmp_path) -> None:
    launcher = write_launcher(tmp_path / "chromium", _echo_args(tmp_path))
    out = subprocess.run(
        [launcher, "--disable-features=A,B", "--headless", "--enable-features=X", "two words", "$HOME",
         "--disable-features=C", "--enable-features=Y", "--lang=en", "--disable-features=Ours,Second"],
        capture_output=True, text=True, check=True, timeout=10,
    ).stdout.splitlines()
    assert out[:4] == ["--headless", "two words", "$HOME", "--lang=en"]  # in order, spaces and $ kept
    assert out[4:] == ["--enable-features=X,Y", "--disable-features=A,B,C,Ours,Second"]


def test_without_switches_nothing_is_added(tmp_path) -> None:
    launcher = write_launcher(tmp_path / "chromium", _echo_args(tmp_path))
    out = subprocess.run([launcher, "--a"], capture_output=True, text=True, check=True, timeout=10).stdout
    assert out.splitlines() == ["--a"]


def test_a_launch_reads_the_whole_script_while_another_launch_rewrites_it(tmp_path) -> None:
    """Browsers of one pool launch at once through one launcher path: each rewrite replaces the file whole, so no
    shell reads a truncated script (which runs nothing and exits 0, a browser that never started)."""
    echo = _echo_args(tmp_path)
    launcher = write_launcher(tmp_path / "chromium", echo)
    stop = threading.Event()

    def rewrite() -> None:
        while not stop.is_set():
            write_launcher(tmp_path / "chromium", echo)

    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        outputs = [subprocess.run([launcher, "--x"], capture_output=True, text=True, timeout=10).stdout
                   for _ in range(300)]
    finally:
        stop.set()
        writer.join()
    assert outputs == ["--x\n"] * len(outputs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chromium", "echo-args"]  # no staged file left behind


def test_the_script_holds_no_feature_list_of_its_own() -> None:
    """The same script for every browser (the docker image ships it): the runner's list travels as an argument."""
    script = launcher_script("/usr/bin/chromium")
    assert "disabled=\n" in script and not any(name in script for name in DEFAULT_DISABLED_FEATURES)
    assert script == launcher_script("/usr/bin/chromium"), "deterministic: the browser image's tag hashes it"


def test_settings_pass_the_runners_features_as_one_argument() -> None:
    default = BrowserSettings()
    assert default.args()[-1] == "--disable-features=" + ",".join(DEFAULT_DISABLED_FEATURES)
    assert sum(a.startswith("--disable-features=") for a in default.args()) == 1
    assert not any(a.startswith("--disable-features=") for a in BrowserSettings(disable_features=[]).args())
    assert BrowserSettings(disable_features=["One"], extra_args=["--x"]).args()[-2:] == [
        "--disable-features=One", "--x"]  # extra_args stay last


def test_a_feature_name_that_is_no_name_is_refused() -> None:
    with pytest.raises(ValidationError, match="disable_features"):
        BrowserSettings(disable_features=["$(x)"])
    with pytest.raises(ValidationError, match="not a Chromium feature name"):
        BrowserSettings(disable_features=["A,B"])  # a comma would smuggle in a second list
    assert BrowserSettings().disable_features == list(DEFAULT_DISABLED_FEATURES)


def _feature_switches(pid: int) -> dict[str, list[list[str]]]:
    argv = [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    found: dict[str, list[list[str]]] = {"--disable-features=": [], "--enable-features=": []}
    for arg in argv:
        for prefix, lists in found.items():
            if arg.startswith(prefix):
                lists.append(arg[len(prefix):].split(","))
    return found


@pytest.mark.browser
@pytest.mark.parametrize(("executable", "program"), [(HEADLESS_SHELL, "chromium-headless-shell"),
                                                     (FULL_CHROMIUM, "chromium")], ids=["headless-shell", "full-browser"])
def test_a_launched_browser_keeps_playwrights_features_and_adds_the_runners(site, browser_settings, executable: str,
                                                                             program: str) -> None:
    """Either build the runner knows: the default headless shell, and the full browser, whose omnibox popup page and
    spare renderer the runner's list turns off."""
    if not Path(executable).exists():
        skip_missing("chromium", f"no Chromium at {executable} (scripts/setup.sh installs both)")
    url = site.add("/", "<p>one page</p>")
    browser_settings = browser_settings.model_copy(update={"executable_path": executable})

    async def launch(settings: BrowserSettings) -> tuple[dict[str, list[list[str]]], list[str], int]:
        async with BrowserPool(settings) as pool:
            (pid,) = browser_pids(os.getpid())
            assert Path(f"/proc/{pid}/exe").resolve().name == program, "the browser is that build, not a wrapper"
            switches = _feature_switches(pid)
            async with pool.session(url) as session:
                await session.goto()
                assert pool.browser is not None
                cdp = await pool.browser.new_browser_cdp_session()
                targets = (await cdp.send("Target.getTargets"))["targetInfos"]
                await cdp.detach()
                renderers = sum(1 for child in _descendants(pid)
                                if b"--type=renderer" in _cmdline(child))
            return switches, [t["type"] for t in targets], renderers

    playwrights, _, _ = asyncio.run(launch(browser_settings.model_copy(update={"disable_features": []})))
    # Without the runner's own prepared next page, which is a context (and renderer) of its own.
    ours, target_types, renderers = asyncio.run(launch(browser_settings.model_copy(update={"spare_page": False})))
    # One switch each (Chromium keeps only the last one), Playwright's list kept whole, the runner's added.
    assert [len(playwrights[k]) for k in playwrights] == [1, 1] and [len(ours[k]) for k in ours] == [1, 1]
    assert set(ours["--disable-features="][0]) == set(playwrights["--disable-features="][0]) | set(
        DEFAULT_DISABLED_FEATURES)
    assert ours["--enable-features="] == playwrights["--enable-features="]
    # The context's window has no omnibox popup page, and its one page runs in one renderer.
    assert "browser_ui" not in target_types, target_types
    assert renderers == 1


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found
