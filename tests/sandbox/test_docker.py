"""DockerSandbox against a real Docker engine, real images (built offline if missing) and real Vite builds.

CI starts the engine (scripts/start-dockerd.sh) and builds the images (scripts/build-images.sh) first; the
fixture below builds whatever is still missing, so a cold engine only makes the first test slower.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from runner.sandbox.docker import LABEL_OWNER, LABEL_SANDBOX, DockerSandbox, DockerSandboxSettings, subnet_patterns
from runner.browser.launch import BrowserSettings
from runner.browser.version import executable_version
from runner.sandbox.images import IMAGE_CHROMIUM, IMAGE_CHROMIUM_PACKAGE, OFFLINE_BASE, ensure_images, image_versions
from runner.sandbox.build_node import build_node_version
from runner.suites.evogenui.suite import BRIDGE_RUNTIME
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.support.components import skip_missing

pytestmark = [pytest.mark.docker, pytest.mark.build]

APP = 'export default function App() { return <h1>Hello from docker</h1>; }\n'
FILES = {"src/App.jsx": APP}


def _engine():
    import docker
    from docker.errors import DockerException

    try:
        client = docker.from_env(timeout=30)
        client.ping()
        return client
    except DockerException as exc:
        skip_missing("docker", f"no Docker engine reachable ({exc}); start one with scripts/start-dockerd.sh")


@pytest.fixture(scope="module")
def engine():
    client = _engine()
    try:
        client.images.get(OFFLINE_BASE)
    except Exception:
        subprocess.run(["bash", str(REPO_ROOT / "images" / "bootstrap.sh")], check=True, timeout=900)
    ensure_images(client, base_image=OFFLINE_BASE)  # builds what is missing (minutes, once per engine)
    yield client
    client.close()


def _output(engine, image: str, command: list[str], **options) -> str:
    """A short container's stdout. `containers.run` sometimes hands back b'' for a container that already
    exited (the engine has not yet copied its log), so wait, then read the log until it holds something."""
    container = engine.containers.create(image, command, **options)
    try:
        container.start()
        container.wait(timeout=60)
        deadline = time.monotonic() + 5
        while not (output := container.logs(stdout=True, stderr=False)) and time.monotonic() < deadline:
            time.sleep(0.1)
        return output.decode()
    finally:
        container.remove(force=True)


@pytest.fixture
def label(engine):
    """A label of this test's own: afterwards no container or network with it may remain."""
    name = f"test-{uuid.uuid4().hex[:8]}"
    yield name
    flt = {"label": f"{LABEL_SANDBOX}={name}"}
    assert engine.containers.list(all=True, filters=flt) == [], "a container was left behind"
    assert engine.networks.list(filters=flt) == [], "a network was left behind"


def _sandbox(label: str, **settings) -> DockerSandbox:
    return DockerSandbox(DockerSandboxSettings(label=label, **settings))


def _command(tmp_path: Path, label: str, command: list[str], **settings):
    async def scenario():
        sandbox = _sandbox(label, browser_in_container=False, build_command=command, **settings)
        try:
            return await sandbox.build(FILES, tmp_path / "ws")
        finally:
            await sandbox.aclose()

    return asyncio.run(scenario())


@pytest.mark.browser
@pytest.mark.parametrize("in_container", [True, False], ids=["container-browser", "host-browser"])
def test_build_and_serve_in_containers(tmp_path: Path, label: str, in_container: bool) -> None:
    async def scenario():
        sandbox = _sandbox(label, browser_in_container=in_container)
        try:
            result = await sandbox.build(FILES, tmp_path / "ws")
            assert result.status == "ok", result.log
            assert (result.dist_dir / "index.html").is_file()
            assert os.stat(result.dist_dir).st_uid == os.getuid(), "the workspace is handed back to the caller"
            async with sandbox.serve(result.dist_dir) as served:
                from runner.browser.launch import BrowserPool, BrowserSettings

                settings = await sandbox.browser_settings(BrowserSettings())
                if in_container:
                    assert served.url.startswith("http://127.0.0.1:"), "the browser sees the artifact on its loopback"
                    assert settings.connect_url and settings.connect_url.startswith("ws://")
                else:
                    assert settings.connect_url is None
                async with BrowserPool(settings) as pool, pool.session(served.url) as session:
                    await session.goto()
                    assert "Hello from docker" in await session.visible_text()
                    agent = await session.page.evaluate("navigator.userAgent")
                    assert "Chrome/156" in agent
                    # The full-page capture (a CDP session) works through the container browser's connection too.
                    png = await session.full_page_png()
                    assert png.startswith(b"\x89PNG") and int.from_bytes(png[16:20], "big") == 1280
        finally:
            await sandbox.aclose()

    asyncio.run(scenario())


EVOGENUI_FILES = {
    "src/App.tsx": ("import { useState } from 'react'\n"
                    "export default function App() {\n"
                    "  const [count, setCount] = useState<number>(0)\n"
                    "  return <button onClick={() => setCount(count + 1)}>typed {count}</button>\n"
                    "}\n"),
}


def test_a_suite_template_builds_from_its_modules_volume(tmp_path: Path, label: str, engine) -> None:
    """The EvoGenUI-Bench template (React 18 + TS + Vite 7): its node_modules reach the build as an engine
    volume (filled once, marked complete), not as a bind mount of the runner's cache folder."""
    from runner.sandbox.module_volume import COMPLETE_MARKER, volume_name
    from runner.sandbox.web_template import template_hash

    name = volume_name("evogenui", template_hash("evogenui"))
    with contextlib.suppress(Exception):  # start cold, so the fill is what is tested
        engine.volumes.get(name).remove(force=True)

    async def scenario():
        sandbox = _sandbox(label, browser_in_container=False)
        try:
            return await sandbox.build(EVOGENUI_FILES, tmp_path / "ws", template="evogenui")
        finally:
            await sandbox.aclose()

    result = asyncio.run(scenario())
    assert result.status == "ok", result.log
    bundle = "".join(p.read_text() for p in (result.dist_dir / "assets").glob("*.js"))
    assert "typed " in bundle and "useState<number>" not in bundle, "TypeScript compiled away"
    volume = engine.volumes.get(name)
    assert volume.attrs["Labels"][LABEL_SANDBOX] == label
    listing = _output(engine, "genui-base:bookworm", ["ls", "-A", "/m"], network_mode="none",
                      volumes={name: {"bind": "/m", "mode": "ro"}}).split()
    assert COMPLETE_MARKER in listing and "vite" in listing and "react" in listing, listing


def test_floweval_template_builds_tailwind_and_fontawesome_in_the_container(tmp_path: Path, label: str) -> None:
    """FlowEval's template (React + TailwindCSS + FontAwesome) from its own modules volume: Tailwind finds its
    config and the sources under /app, and the icon package resolves from /node_modules."""
    from tests.support import floweval_app

    async def scenario():
        sandbox = _sandbox(label, browser_in_container=False)
        try:
            return await sandbox.build(floweval_app.FILES, tmp_path / "ws", template="floweval")
        finally:
            await sandbox.aclose()

    result = asyncio.run(scenario())
    assert result.status == "ok", result.log
    floweval_app.assert_tailwind_and_icon_built(result.dist_dir)


PORT_PROBE = (
    "import socket,sys\n"
    "for port in sys.argv[1:]:\n"
    "    s=socket.socket(); s.settimeout(2)\n"
    "    print(port, 'open' if s.connect_ex(('127.0.0.1', int(port))) == 0 else 'closed'); s.close()\n"
)


@pytest.mark.browser
def test_each_worker_has_its_own_browser_container_and_loopback(tmp_path: Path, label: str, engine) -> None:
    """Two workers serving at once: each page's loopback holds its own artifact server and not the other's."""
    from runner.browser.launch import BrowserPool, BrowserSettings

    async def scenario():
        sandbox = _sandbox(label)
        try:
            first, second = [await sandbox.browser_settings(BrowserSettings()) for _ in range(2)]
            assert first.serve_network and second.serve_network and first.serve_network != second.serve_network
            assert first.connect_url != second.connect_url
            dists = []
            for name in ("first", "second"):
                dist = tmp_path / name / "dist"
                dist.mkdir(parents=True)
                (dist / "index.html").write_text(f"<!doctype html><title>{name}</title><h1>served {name}</h1>")
                dists.append(dist)
            pools = [BrowserPool(first), BrowserPool(second)]
            async with sandbox.serve(dists[0], network=pools[0].network_namespace) as one, \
                    sandbox.serve(dists[1], network=pools[1].network_namespace) as two:
                ports = [one.url.rsplit(":", 1)[1].strip("/"), two.url.rsplit(":", 1)[1].strip("/")]
                assert ports[0] != ports[1], "distinct ports, so a closed one means another namespace"
                seen = {}
                for index, settings in enumerate((first, second)):
                    output = _output(engine, sandbox.images["build"].tag, ["python3", "-c", PORT_PROBE, *ports],
                                     network_mode=f"container:{settings.serve_network}", user="10001:10001")
                    seen[index] = dict(line.split() for line in output.splitlines())
                assert seen[0] == {ports[0]: "open", ports[1]: "closed"}, seen
                assert seen[1] == {ports[0]: "closed", ports[1]: "open"}, seen
                for pool, served, name in ((pools[0], one, "first"), (pools[1], two, "second")):
                    async with pool, pool.session(served.url) as session:
                        await session.goto()
                        assert f"served {name}" in await session.visible_text()
        finally:
            await sandbox.aclose()

    asyncio.run(scenario())


def test_a_browser_container_its_memory_cap_killed_in_is_the_pages_doing_a_kill_is_not(label: str, engine) -> None:
    """Sandbox.browser_killed_by_page reads the engine's oom events of the worker's browser container: a process
    filling its memory cap (as a page filling Chromium's memory) right before the loss is the page's doing, once;
    a container killed from outside (an engine restart, an operator) is not, nor is a loss seconds after an oom
    that left the browser running (one page's renderer killed: a later loss is not that page's)."""
    from runner.browser.launch import BrowserSettings
    from runner.sandbox.docker import OOM_BEFORE_LOSS_S

    filler = "const kept = []; for (;;) kept.push(Buffer.alloc(64 * 1024 * 1024, 1));"

    async def scenario() -> tuple[list[bool], bool, bool]:
        sandbox = _sandbox(label, browser_memory_mb=256)
        try:
            settings = await sandbox.browser_settings(BrowserSettings())
            container = engine.containers.get(settings.serve_network)

            async def fill() -> None:
                code, _ = await asyncio.to_thread(container.exec_run, ["/opt/playwright/node", "-e", filler],
                                                  user="10001:10001")
                assert code == 137, code  # the kernel's kill, inside the container's cap

            answers = [await sandbox.browser_killed_by_page(settings, lost_at=time.time())]  # nothing happened yet
            await fill()
            answers += [await sandbox.browser_killed_by_page(settings, lost_at=time.time()),
                        await sandbox.browser_killed_by_page(settings, lost_at=time.time())]  # read once
            await fill()
            answers.append(await sandbox.browser_killed_by_page(settings, lost_at=time.time() + OOM_BEFORE_LOSS_S + 2))
            running = await sandbox.browser_running(settings)
            await asyncio.to_thread(container.kill)
            answers.append(await sandbox.browser_killed_by_page(settings, lost_at=time.time()))
            return answers, running, await sandbox.browser_running(settings)
        finally:
            await sandbox.aclose()

    assert asyncio.run(scenario()) == ([False, True, False, False, False], True, False)


def _container_processes(container) -> list[list[str]]:
    """The argv of every process in a running container (the browser image has no ps: /proc, read by sh)."""
    script = 'for f in /proc/[0-9]*/cmdline; do cat "$f" 2>/dev/null; printf "\\n"; done'
    code, output = container.exec_run(["sh", "-c", script], user="10001:10001")
    assert code == 0, output
    return [line.rstrip("\0").split("\0") for line in output.decode(errors="replace").splitlines() if line]


@pytest.mark.browser
def test_the_container_browser_gets_one_feature_switch_with_the_runners_features(tmp_path: Path, label: str,
                                                                                 engine) -> None:
    """Connected as the runner connects (browser_settings, x-playwright-launch-options): the image's launcher
    merges Playwright's --disable-features= and the runner's into the one switch Chromium keeps, so a context
    with one page runs one renderer (not three) in the container too."""
    from runner.browser.launch import BrowserPool, BrowserSettings
    from runner.browser.launcher import DEFAULT_DISABLED_FEATURES

    async def scenario() -> list[list[str]]:
        sandbox = _sandbox(label)
        try:
            # Without the runner's own prepared next page, which is a context (and renderer) of its own.
            settings = await sandbox.browser_settings(BrowserSettings(spare_page=False))
            container = engine.containers.get(settings.serve_network)
            dist = tmp_path / "dist"
            dist.mkdir()
            (dist / "index.html").write_text("<!doctype html><title>one</title><p>one page</p>")
            pool = BrowserPool(settings)
            async with pool, sandbox.serve(dist, network=pool.network_namespace) as served:
                async with pool.session(served.url) as session:
                    await session.goto()
                    assert "one page" in await session.visible_text()
                    return await asyncio.to_thread(_container_processes, container)
        finally:
            await sandbox.aclose()

    processes = asyncio.run(scenario())
    # Chromium's children rewrite their title (one string: "/usr/lib/chromium/chromium-headless-shell --type=...").
    chromium = [argv for argv in processes if argv and argv[0].split(" ", 1)[0] == IMAGE_CHROMIUM]
    main = [argv for argv in chromium if "--type=" not in " ".join(argv)]
    assert len(main) == 1, processes
    switches = [a[len("--disable-features="):].split(",") for a in main[0] if a.startswith("--disable-features=")]
    assert len(switches) == 1, switches  # Chromium keeps only the last one
    # Playwright's own list (e.g. its paint holding switch) and the runner's, together.
    assert "PaintHolding" in switches[0] and set(DEFAULT_DISABLED_FEATURES) <= set(switches[0]), switches
    assert sum(a.startswith("--enable-features=") for a in main[0]) <= 1, main[0]
    renderers = [argv for argv in chromium if " --type=renderer " in " ".join(argv) + " "]
    assert len(renderers) == 1, renderers  # no omnibox popup page, no spare renderer


@pytest.mark.browser
def test_each_page_in_the_browser_container_has_its_renderer_group(tmp_path: Path, label: str, engine) -> None:
    """With the engine on this machine, each renderer in a browser container runs in a cpu cgroup of its own
    inside the container's (runner/browser/renderer_groups.py), the browser's own processes in the container's;
    without browser.renderer_cpu_groups the container's renderers stay in its one group."""
    from runner.browser.launch import BrowserPool, BrowserSettings
    from runner.browser.renderer_groups import cpu_cgroup_of, process_type

    async def scenario(groups: bool) -> tuple[Path | None, dict[int, str], dict[int, str]]:
        sandbox = _sandbox(label)
        try:
            settings = await sandbox.browser_settings(BrowserSettings(spare_page=False, renderer_cpu_groups=groups))
            container = engine.containers.get(settings.serve_network)
            directory = cpu_cgroup_of(int(container.attrs["State"]["Pid"]))
            if directory is None:
                pytest.skip("the engine's containers have no cgroup v1 cpu directory on this machine")
            dist = tmp_path / f"dist-{groups}"
            dist.mkdir()
            (dist / "index.html").write_text("<!doctype html><title>one</title><p>one page</p>")
            pool = BrowserPool(settings)
            async with pool, sandbox.serve(dist, network=pool.network_namespace) as served:
                async with pool.session(served.url) as first, pool.session(served.url) as second:
                    for session in (first, second):
                        await session.goto()
                    deadline = time.monotonic() + 10
                    while groups and len(list(directory.glob("renderer-*"))) < 2 and time.monotonic() < deadline:
                        await asyncio.sleep(0.05)
                    in_parent = {int(pid): process_type(int(pid))
                                 for pid in (directory / "cgroup.procs").read_text().split()}
                    pids = [int(child.name.removeprefix("renderer-")) for child in directory.glob("renderer-*")]
                    children = {pid: process_type(pid) for pid in pids}
                    return directory, in_parent, children
        finally:
            await sandbox.aclose()

    directory, in_parent, children = asyncio.run(scenario(True))
    assert len(children) >= 2 and set(children.values()) == {"renderer"}, children
    assert "renderer" not in in_parent.values() and "" in in_parent.values(), in_parent
    assert directory is not None and not directory.exists()  # the container went, and its cgroup with it
    _, in_parent, children = asyncio.run(scenario(False))
    assert children == {} and list(in_parent.values()).count("renderer") >= 2, in_parent


# Run in a browser container's namespace (uid 10001, no capabilities, like the page): a UDP datagram and a TCP
# connection to each address given; prints "<kind> <address> <outcome>" lines.
ESCAPE_PROBE = r"""
import socket, sys
port_udp, port_tcp, addresses = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
for address in addresses:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        udp.sendto(b"STUN-like probe", (address, port_udp))
        print("udp", address, "sent")
    except OSError as exc:
        print("udp", address, "errno%d" % exc.errno)
    tcp = socket.socket()
    tcp.settimeout(1.5)
    try:
        tcp.connect((address, port_tcp))
        print("tcp", address, "connected")
    except OSError as exc:
        print("tcp", address, "failed")
"""


def _host_addresses() -> list[str]:
    """The host's own IPv4 addresses on its other interfaces (its primary one among them), not the loopback."""
    output = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3].split("/")[0] for line in output.splitlines() if " lo " not in line]


@pytest.mark.browser
def test_the_browser_container_reaches_its_loopback_and_nothing_on_the_host(tmp_path: Path, label: str,
                                                                            engine) -> None:
    """Listeners on the host's 0.0.0.0 (so on the sandbox network's gateway and the host's primary address):
    from the browser container's namespace UDP is refused on the spot and TCP gets nowhere, while the runner
    still drives the browser, the page reaches its artifact server, and the namespace's own loopback works."""
    from runner.browser.launch import BrowserPool, BrowserSettings

    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tcp = socket.socket()
    udp.bind(("0.0.0.0", 0))
    tcp.bind(("0.0.0.0", 0))
    tcp.listen(8)
    udp.settimeout(0.2)
    tcp.settimeout(0.2)

    async def scenario() -> tuple[str, str, list[str]]:
        sandbox = _sandbox(label)
        try:
            settings = await sandbox.browser_settings(BrowserSettings())
            browser = engine.containers.get(settings.serve_network)
            assert browser.attrs["HostConfig"]["NanoCpus"] == int(sandbox.settings.browser_cpus * 1e9)  # its CPU share
            network = next(iter(browser.attrs["NetworkSettings"]["Networks"].values()))
            gateway = network["Gateway"]
            targets = [gateway, *_host_addresses(), "198.51.100.1", "127.0.0.1"]
            output = _output(engine, sandbox.images["build"].tag,
                             ["python3", "-c", ESCAPE_PROBE, str(udp.getsockname()[1]), str(tcp.getsockname()[1]),
                              *targets], network_mode=f"container:{browser.id}", user="10001:10001")
            dist = tmp_path / "dist"
            dist.mkdir()
            (dist / "index.html").write_text("<!doctype html><title>t</title><p>still served</p>")
            pool = BrowserPool(settings)
            async with pool, sandbox.serve(dist, network=pool.network_namespace) as served:
                async with pool.session(served.url) as session:
                    await session.goto()
                    text = await session.visible_text()
            return gateway, text, output.splitlines()
        finally:
            await sandbox.aclose()

    try:
        gateway, text, lines = asyncio.run(scenario())
        received = []
        for sock in (udp, tcp):
            with contextlib.suppress(OSError):
                received.append(sock.recvfrom(512) if sock is udp else sock.accept())
    finally:
        udp.close()
        tcp.close()
    assert "still served" in text
    assert received == [], received
    outcomes = dict(((kind, address), outcome) for kind, address, outcome in (line.split() for line in lines))
    for address in [gateway, *_host_addresses(), "198.51.100.1"]:
        assert outcomes[("udp", address)] == "errno1", lines  # EPERM: dropped before it left the namespace
        assert outcomes[("tcp", address)] == "failed", lines
    assert outcomes[("udp", "127.0.0.1")] == "sent", lines


def test_build_has_no_network(tmp_path: Path, label: str) -> None:
    probe = (
        "fetch('http://deb.debian.org/debian/').then(() => { console.log('REACHED'); process.exit(0); })"
        ".catch((e) => { console.log('BLOCKED', String(e.cause && e.cause.code)); process.exit(3); });"
        "const os = require('os'); console.log('IFACES', Object.keys(os.networkInterfaces()).join(','));"
    )
    result = _command(tmp_path, label, ["node", "-e", probe])
    assert result.status == "build_failed", result.log
    assert "BLOCKED" in result.log and "REACHED" not in result.log
    assert "IFACES lo" in result.log, "network none: only the loopback interface"


def test_memory_bomb_is_killed_and_the_sandbox_keeps_working(tmp_path: Path, label: str) -> None:
    bomb = "const a = []; for (;;) a.push(Buffer.alloc(16 << 20, 1));"

    async def scenario():
        sandbox = _sandbox(label, browser_in_container=False, memory_mb=256)
        try:
            sandbox.settings.build_command = ["node", "-e", bomb]
            bombed = await sandbox.build(FILES, tmp_path / "bomb")
            sandbox.settings.build_command = None
            after = await sandbox.build(FILES, tmp_path / "after")
            return bombed, after
        finally:
            await sandbox.aclose()

    bombed, after = asyncio.run(scenario())
    assert bombed.status == "build_failed", bombed.log
    assert "OOM" in bombed.log, bombed.log[-500:]
    assert after.status == "ok", after.log


def test_hanging_build_is_killed_at_the_timeout(tmp_path: Path, label: str) -> None:
    started = time.monotonic()
    result = _command(tmp_path, label, ["node", "-e", "setInterval(() => {}, 1000)"], build_timeout_s=3)
    elapsed = time.monotonic() - started
    assert result.status == "timeout", result.log
    assert "killed after 3.0s" in result.log
    assert elapsed < 20


def test_a_build_cancelled_while_its_container_is_made_leaves_no_container(tmp_path: Path, label: str,
                                                                           engine, monkeypatch) -> None:
    """The engine is slow to create the build container (a fault injected into the client) and the turn is
    cancelled meanwhile: the container the engine still makes is removed, never started, before the
    sandbox closes (an untracked one would outlive the run, and a started hanging build would run on)."""
    from docker.models.containers import ContainerCollection

    real_create = ContainerCollection.create
    creating = threading.Event()

    def slow_create(self, *args, **kwargs):
        if (kwargs.get("labels") or {}).get(LABEL_SANDBOX) == label:
            creating.set()
            time.sleep(1.5)
        return real_create(self, *args, **kwargs)

    monkeypatch.setattr(ContainerCollection, "create", slow_create)
    flt = {"label": f"{LABEL_SANDBOX}={label}"}

    async def scenario() -> list:
        sandbox = _sandbox(label, browser_in_container=False, build_command=["node", "-e", "setInterval(() => {}, 1000)"])
        try:
            build = asyncio.create_task(sandbox.build(FILES, tmp_path / "ws"))
            for _ in range(1200):  # the build's set-up first (images, modules volume), then the slow create
                if creating.is_set():
                    break
                await asyncio.sleep(0.05)
            assert creating.is_set()
            build.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await build
            await asyncio.sleep(3.0)  # the create returns meanwhile
            return engine.containers.list(all=True, filters=flt)
        finally:
            await sandbox.aclose()

    assert asyncio.run(scenario()) == []


def test_limits_and_hardening_are_applied(tmp_path: Path, label: str) -> None:
    script = (
        "const fs = require('fs');"
        "try { fs.writeFileSync('/etc/x', 'x'); console.log('ROOT-WRITABLE'); } catch { console.log('ROOT-RO'); }"
        "fs.writeFileSync('/app/ok.txt', 'x'); fs.writeFileSync('/tmp/ok.txt', 'x');"
        "console.log('UID', process.getuid());"
        "console.log(fs.readFileSync('/proc/self/status', 'utf8').split('\\n')"
        ".filter(l => /^(CapEff|NoNewPrivs)/.test(l)).join(' '));"
    )
    result = _command(tmp_path, label, ["node", "-e", script], pids=64)
    assert result.status == "ok", result.log
    assert "ROOT-RO" in result.log
    assert "UID 0" not in result.log
    assert "CapEff:\t0000000000000000" in result.log and "NoNewPrivs:\t1" in result.log
    assert (tmp_path / "ws" / "ok.txt").exists(), "the workspace is writable"


def test_stale_containers_of_a_dead_run_are_removed(engine, label: str) -> None:
    import socket

    from runner.sandbox.images import ensure_images as images

    tag = images(engine, names=["build"])["build"].tag
    dead = engine.containers.create(tag, command=["sleep", "60"], labels={
        LABEL_SANDBOX: label, LABEL_OWNER: f"{socket.gethostname()}:999999999"})
    alive = engine.containers.create(tag, command=["sleep", "60"], labels={
        LABEL_SANDBOX: label, LABEL_OWNER: f"{socket.gethostname()}:{os.getppid()}"})
    try:
        sandbox = _sandbox(label, browser_in_container=False)
        removed = sandbox.remove_stale()
        asyncio.run(sandbox.aclose())
        assert dead.name in removed and alive.name not in removed
    finally:
        alive.remove(force=True)


# ---- whole experiments through the CLI --------------------------------------------------------------

def _run(run_dir: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(runner_command(f"hydra.run.dir={run_dir}", *overrides), cwd=REPO_ROOT, env=cli_env(),
                          capture_output=True, text=True, timeout=600)


def _slots(run_dir: Path) -> dict[tuple[str, int], str]:
    records = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    return {(r["task_id"], r["turn"]): r["status"] for r in records}


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.sandbox
def test_smoke_experiment_matches_local_and_records_image_digests(tmp_path: Path, engine) -> None:
    flt = {"label": f"{LABEL_SANDBOX}=genui-runner"}
    before = {c.id for c in engine.containers.list(all=True, filters=flt)}
    networks_before = {n.id for n in engine.networks.list(filters=flt)}
    local = _run(tmp_path / "local", "sandbox=local", "tracking=off")
    assert local.returncode == 0, local.stderr[-3000:]
    tracking = [f"tracking.uri=sqlite:///{tmp_path}/mlflow.db", f"tracking.artifact_root={tmp_path}/artifacts"]
    docker = _run(tmp_path / "docker", "sandbox=docker", *tracking)
    assert docker.returncode == 0, docker.stderr[-3000:]

    local_summary = json.loads((tmp_path / "local" / "summary.json").read_text())
    docker_summary = json.loads((tmp_path / "docker" / "summary.json").read_text())
    assert docker_summary["turn_pass"] == local_summary["turn_pass"] == 1.0
    assert _slots(tmp_path / "docker") == _slots(tmp_path / "local")
    assert docker_summary["run"]["sandbox"] == "docker"

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path}/mlflow.db")
    experiment = client.get_experiment_by_name("genui-runner")
    job = next(r for r in client.search_runs([experiment.experiment_id]) if "mlflow.parentRunId" not in r.data.tags)
    tags = job.data.tags
    lineage = json.loads((tmp_path / "docker" / "lineage.json").read_text())
    for name in ("build", "browser"):
        image = engine.images.get(tags[f"sandbox.image.{name}"])
        assert tags[f"sandbox.image.{name}.digest"] == image.id
        assert tags[f"sandbox.image.{name}"].startswith(f"genui-{name}:")
        assert lineage["image_digests"][tags[f"sandbox.image.{name}"]] == image.id, "lineage: tag -> digest"
        assert lineage["image_versions"][name] == image_versions(image)
    chromium = image_versions(engine.images.get(tags["sandbox.image.browser"]))[IMAGE_CHROMIUM_PACKAGE]
    assert tags[f"sandbox.image.browser.{IMAGE_CHROMIUM_PACKAGE}"] == chromium and chromium.startswith("156.")
    assert tags["sandbox.image.build.node"] == build_node_version()
    browsers = lineage["browser_versions"]
    assert browsers["used"] == "image" and chromium.startswith(browsers["image"] + "-")
    assert lineage["browser"] == f"image {browsers['image']}"
    assert browsers["host"] == executable_version(BrowserSettings().executable_path), "the host's browser is recorded too"
    assert json.loads(tags["genui.lineage.browser_versions"]) == browsers
    local_lineage = json.loads((tmp_path / "local" / "lineage.json").read_text())
    assert local_lineage["image_digests"] == {} and local_lineage["browser_versions"]["used"] == "host"
    after = {c.id for c in engine.containers.list(all=True, filters=flt)}
    assert after <= before, "the run left containers behind"
    assert {n.id for n in engine.networks.list(filters=flt)} <= networks_before, "the run left a network behind"


def test_tool_bridge_is_served_from_the_container(tmp_path: Path, label: str) -> None:
    from runner.sandbox.base import ToolBridge

    backends = tmp_path / "backends"
    backends.mkdir()
    (backends / "counter.py").write_text(
        "TOOL_SCHEMAS = {'bump': {'inputSchema': {'type': 'object', 'properties': {'by': {'type': 'integer'}}}}}\n"
        "def invoke(tool, arguments, state):\n"
        "    state['n'] = state.get('n', 0) + arguments.get('by', 1)\n"
        "    return {'n': state['n']}\n"
    )
    io = tmp_path / "io"
    io.mkdir()
    (io / "state_in.json").write_text('{"n": 40}')
    bridge = ToolBridge(backends_path=backends, fixture_ids={"bump": "counter"}, state_in=io / "state_in.json",
                        log_out=io / "tools.jsonl", state_out=io / "state_out.json", runtime=BRIDGE_RUNTIME)

    async def scenario():
        sandbox = _sandbox(label, browser_in_container=False)
        try:
            built = await sandbox.build(FILES, tmp_path / "ws")
            assert built.ok, built.log
            async with sandbox.serve(built.dist_dir, tool_bridge=bridge) as served:
                async with httpx.AsyncClient(trust_env=False, timeout=5) as client:
                    reply = await client.post(served.url + "__tools/call", json={"tool": "bump", "arguments": {"by": 2}})
                    assert reply.status_code == 200 and reply.json() == {"result": {"n": 42}}
        finally:
            await sandbox.aclose()

    asyncio.run(scenario())
    assert json.loads((io / "state_out.json").read_text()) == {"n": 42}
    assert json.loads((io / "tools.jsonl").read_text().splitlines()[0])["ok"] is True
    assert os.stat(io / "state_out.json").st_uid == os.getuid()


def test_images_hold_what_the_sources_serve_and_a_refresh_of_unchanged_sources_builds_nothing(engine) -> None:
    from runner.sandbox.images import APT_SET_LABEL, apt_set_hash, image_specs, resolve_packages

    # The first refresh brings the images up to what the sources serve today (it builds when the mirror moved
    # since the last build: measured here within one hour); a second one finds the sources unchanged.
    present = ensure_images(engine, base_image=OFFLINE_BASE, refresh=True)
    refreshed = ensure_images(engine, base_image=OFFLINE_BASE, refresh=True)  # resolves again, in the base image
    for name in ("build", "browser"):
        assert not refreshed[name].built and refreshed[name].tag == present[name].tag
        image = engine.images.get(present[name].tag)
        resolved = resolve_packages(engine, OFFLINE_BASE, image_specs()[name].apt_packages)
        assert image.labels[APT_SET_LABEL] == apt_set_hash(resolved)
        for package, version in image_versions(image).items():
            if package in resolved:
                assert resolved[package] == version
    installed = _output(engine, present["browser"].tag, ["-W", "-f", "${Version}", IMAGE_CHROMIUM_PACKAGE],
                        entrypoint=["dpkg-query"])
    assert installed == present["browser"].versions[IMAGE_CHROMIUM_PACKAGE], "the label is what dpkg installed"


def test_the_host_browser_resolves_exactly_the_sandbox_network() -> None:
    # Docker hands out /16 and /20 networks: a /20 ends mid-octet, and its addresses past the first /24 (a server at
    # 192.168.216.0 on 192.168.208.0/20) must resolve for the host's browser too.
    assert subnet_patterns("172.23.0.0/16") == ["172.23.*"]
    assert subnet_patterns("192.168.208.0/20") == [f"192.168.{n}.*" for n in range(208, 224)]
    assert subnet_patterns("192.168.1.0/24") == ["192.168.1.*"]
    assert subnet_patterns("10.1.2.4/30") == ["10.1.2.4", "10.1.2.5", "10.1.2.6", "10.1.2.7"]
