"""RendererGroups: each renderer of a confined browser in a cpu cgroup of its own, for real (cgroups, Chromium)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.browser.confine import BrowserConfinement
from runner.browser.launch import BrowserPool, BrowserSettings
from runner.browser.renderer_groups import RendererGroups, cpu_cgroup_of, process_type
from runner.sandbox.local import LocalSandbox, LocalSandboxSettings

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")]

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]
JOIN_WAIT_S = 60


def _cpu_group(pid: int) -> str:
    return str(cpu_cgroup_of(pid))


def _wait_until_joined(cpu: Path, pids: set[int]) -> None:
    """Until each wrapper has written itself into the cpu cgroup: the shell's start can take seconds on a busy
    machine, and a process that has not joined yet reads as the root group."""
    deadline = time.monotonic() + JOIN_WAIT_S
    while not pids <= {int(pid) for pid in (cpu / "cgroup.procs").read_text().split()}:
        assert time.monotonic() < deadline, f"not in {cpu} after {JOIN_WAIT_S} s: {sorted(pids)}"
        time.sleep(0.02)


def test_the_process_type_is_read_from_either_form_of_command_line(tmp_path) -> None:
    """Chromium rewrites its command line as one space-separated string; an unrenamed child keeps NULs."""
    for pid, cmdline in {1: b"/usr/lib/chromium/chromium-headless-shell --type=renderer --lang=en-US\0",
                         2: b"/usr/lib/chromium/chromium-headless-shell\0--type=zygote\0--no-sandbox\0",
                         3: b"/usr/lib/chromium/chromium-headless-shell --no-sandbox --user-data-dir=/tmp/x\0",
                         4: b"chromium --flag=--type=renderer\0"}.items():
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(cmdline)
    assert [process_type(pid, tmp_path) for pid in (1, 2, 3, 4, 5)] == ["renderer", "zygote", "", "", None]


def test_a_renderer_gets_a_child_group_and_the_rest_stay_in_the_browsers() -> None:
    confined = BrowserConfinement(memory_mb=256, cpus=1.0, renderer_groups=False)
    confined.start()
    processes: list[subprocess.Popen] = []
    try:
        cpu = confined.cgroups.cpu if confined.cgroups else None
        if cpu is None:
            pytest.skip(f"no cgroup v1 cpu controller here: {confined.cgroups and confined.cgroups.warnings}")
        for argv in (SLEEPER + ["--type=renderer"], SLEEPER + ["--type=gpu-process"], SLEEPER):
            processes.append(subprocess.Popen([confined.wrapper(argv[0]), *argv[1:]]))
        renderer, gpu, browser = (p.pid for p in processes)
        _wait_until_joined(cpu, {renderer, gpu, browser})
        groups = RendererGroups(cpu)
        groups.sweep()
        assert groups.moved == 1
        assert _cpu_group(renderer).endswith(f"/{cpu.name}/renderer-{renderer}")
        assert _cpu_group(gpu).endswith(f"/{cpu.name}") and _cpu_group(browser).endswith(f"/{cpu.name}")
        assert int((cpu / "cpu.cfs_quota_us").read_text()) > 0  # the browser's cap still bounds the child
        processes[0].kill()
        processes[0].wait()
        deadline = time.monotonic() + 5
        while groups.group_of(renderer).exists() and time.monotonic() < deadline:
            groups.sweep()  # the child of an exited renderer goes
            time.sleep(0.02)
        assert not groups.group_of(renderer).exists()
        processes.append(subprocess.Popen([confined.wrapper(SLEEPER[0]), *SLEEPER[1:], "--type=renderer"]))
        deadline = time.monotonic() + JOIN_WAIT_S
        while groups.moved < 2 and time.monotonic() < deadline:
            groups.sweep()
            time.sleep(0.02)
        assert groups.group_of(processes[-1].pid).is_dir()
        groups.stop()  # a renderer still running goes back to the parent, and its child is removed
        assert not list(cpu.glob("renderer-*")) and _cpu_group(processes[-1].pid).endswith(f"/{cpu.name}")
    finally:
        for process in processes:
            process.kill()
            process.wait()
        confined.close()


def test_each_page_of_a_confined_browser_has_its_renderer_group_and_close_removes_them() -> None:
    """Two sessions on one confined Chromium: two renderers, each in a group of its own; the browser's own
    processes in the browser's group; the pool's close leaves no cgroup behind."""

    async def main() -> tuple[dict[int, str | None], dict[int, tuple[str | None, str]], Path]:
        settings = await LocalSandbox(LocalSandboxSettings()).browser_settings(BrowserSettings(memory_mb=1024))
        async with BrowserPool(settings) as pool:
            async with pool.session("about:blank") as first, pool.session("about:blank") as second:
                confinement = pool.confinement
                assert confinement is not None and confinement.groups is not None
                for session in (first, second):
                    await session.page.goto("about:blank")
                cpu = confinement.groups.cpu_cgroup
                deadline = time.monotonic() + 10
                while len(list(cpu.glob("renderer-*"))) < 2 and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                in_parent = {int(pid): process_type(int(pid)) for pid in (cpu / "cgroup.procs").read_text().split()}
                pids = [int(child.name.removeprefix("renderer-")) for child in cpu.glob("renderer-*")]
                renderers = {pid: (process_type(pid), _cpu_group(pid)) for pid in pids}
        return in_parent, renderers, cpu

    if not Path("/sys/fs/cgroup/cpu").is_dir():
        pytest.skip("no cgroup v1 cpu controller here")
    in_parent, renderers, cpu = asyncio.run(main())
    assert len(renderers) >= 2, renderers  # one per page (Chromium never shares one between contexts)
    assert all(kind == "renderer" and path.endswith(f"/renderer-{pid}") for pid, (kind, path) in renderers.items())
    kinds = set(in_parent.values()) - {None}
    assert "" in kinds and "renderer" not in kinds, in_parent  # the browser process stays; no renderer is left there
    assert not cpu.exists()


BUSY_PAGE = """<!doctype html><p>busy</p><script>
const spin = URL.createObjectURL(new Blob(['for (;;) {}'], { type: 'text/javascript' }));
window.busy = []; for (let i = 0; i < 500; i++) { try { window.busy.push(new Worker(spin)); } catch (e) {} }
</script>"""


def test_a_page_beside_one_of_500_busy_workers_loads_and_logs_its_requests(tmp_path) -> None:
    """The neighbour of a page that spins 500 web workers (the hostile corpus's "web-workers") loads within a
    6 s navigation timeout, each of three visits, with its own document in its network log. Its loads took 0.36 s
    a median so (0.22 s alone), and 9 s, some past the default 15 s timeout, with the spinning threads in the
    browser's one group (bench/neighbour_load.py, 2-core machine): a load past the timeout is the slot's
    runtime_error, a verdict on an innocent page."""
    from playwright.async_api import Error as PlaywrightError

    busy_site, plain_site = tmp_path / "busy", tmp_path / "plain"
    for folder, html in ((busy_site, BUSY_PAGE), (plain_site, "<!doctype html><title>plain</title><p>plain page</p>")):
        folder.mkdir()
        (folder / "index.html").write_text(html)

    async def main() -> list[list[str]]:
        sandbox = LocalSandbox(LocalSandboxSettings())
        settings = await sandbox.browser_settings(BrowserSettings(memory_mb=2048, spare_page=False,
                                                                  nav_timeout_ms=6000))
        logged = []
        async with BrowserPool(settings) as pool, sandbox.serve(busy_site, network=pool.network_namespace) as busy:
            async with pool.session(busy.url) as spinning:
                try:
                    await spinning.goto()
                except PlaywrightError:
                    pass  # its own load may not finish: it is busy
                await asyncio.sleep(8)  # its workers start and spin
                for _ in range(4):
                    async with sandbox.serve(plain_site, network=pool.network_namespace) as plain, \
                            pool.session(plain.url) as session:
                        await session.goto()  # raises past browser.nav_timeout_ms
                        assert "plain page" in await session.visible_text()
                        logged.append([entry.url for entry in session.network])
        return logged

    for urls in asyncio.run(main()):
        assert len(urls) == 1 and urls[0].endswith("/"), urls
