"""DockerSandbox: the sandbox pipeline (pipeline.py) in pinned containers of the Docker engine (DockerIsolation).

- build: a throw-away container of the build image with the workspace bind-mounted at /app; the template's
  node_modules live in the image at /node_modules (Node and Vite find them by walking up from /app).
  No network, read-only root (tmpfs /tmp), all capabilities dropped, no-new-privileges, memory/cpu/pids
  limits, an init process, and a wall-clock timeout enforced here (wait with timeout, then kill + remove).
- serve: the same artifact server as the local sandbox (runner/sandbox/server.py, mounted read-only) in a
  container of the build image, with the dist folder mounted read-only.
- browser: with `browser_in_container`, Chromium runs in the browser image behind a Playwright server, one
  container per browser worker (each `browser_settings` call hands out its own). An artifact server joins
  the network namespace of the browser container that opens it, so the page is http://127.0.0.1:PORT/ for
  the browser, exactly as with the local sandbox, and a worker serves one artifact at a time: no page
  shares a loopback with another episode's server. Those namespaces sit on an `internal` Docker network:
  the host reaches them, nothing outside does.
Every container and network carries labels naming this process; stale ones of a crashed run are removed
at start, and aclose removes everything this sandbox created.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from runner.errors import UserError
from runner.browser.launch import BrowserSettings
from runner.browser.renderer_groups import RendererGroups, cpu_cgroup_of
from runner.processes import pid_alive
from runner.sandbox.browser_firewall import (
    HELPER_SCRIPT as FIREWALL_HELPER_SCRIPT,
    IPV6_RULES,
    FirewallCheckFailed,
    check_report,
    ipv4_rules,
)
from runner.sandbox.images import (
    IMAGE_LAUNCHER,
    OFFLINE_BASE,
    ImageInfo,
    ensure_images,
    logs_after_exit,
    tracking_tags,
)
from runner.sandbox.isolation import (
    IN_MODULES,
    BuildTools,
    Mount,
    PipelineRules,
    RunOutcome,
    SandboxSetupError,
)
from runner.sandbox.limits import ResourceLimits
from runner.sandbox.module_volume import ensure_module_volume, volume_name
from runner.sandbox.pipeline import LogCap, PipelineSandbox
from runner.sandbox.web_template import (
    ALLOWED_PACKAGES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_TEMPLATE,
    ensure_template_modules,
    template_hash,
)

log = logging.getLogger(__name__)

LABEL_SANDBOX = "org.genui.sandbox"  # value: settings.label
LABEL_OWNER = "org.genui.owner"  # value: host:pid of the runner process that created it
LABEL_ROLE = "org.genui.role"  # build | serve | browser
IMAGE_USER = "10001:10001"  # the non-root user of the build and browser images
PLAYWRIGHT_PORT = 3000
FIRST_SERVE_PORT = 8100
OOM_EVENT_SETTLE_S = 0.5  # how long after a browser is lost its container's oom event may still be on its way
OOM_BEFORE_LOSS_S = 5.0  # how long before a browser's connection closed a kill by its memory cap explains the loss
# Binds the listening socket, then execs server.py with it (server.py itself only binds 127.0.0.1 or
# takes an inherited descriptor; here the browser reaches it from another container's view).
LISTEN_SHIM = (
    "import os,socket,sys\n"
    "s=socket.socket(socket.AF_INET,socket.SOCK_STREAM)\n"
    "s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
    "s.bind((sys.argv[1],int(sys.argv[2])));s.listen(128);s.set_inheritable(True)\n"
    "os.execv(sys.executable,[sys.executable,'-B','-s',*sys.argv[3:],'--fd',str(s.fileno())])\n"
)


class DockerSandboxSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    images: dict[str, str] = Field(default_factory=dict)  # "build"/"browser" -> explicit tag (else content tag)
    base_image: str = OFFLINE_BASE  # BASE_IMAGE build argument when a missing image is built
    build_missing_images: bool = True
    cpus: float = Field(2.0, gt=0)
    memory_mb: int = Field(2048, gt=0)
    pids: int = Field(256, gt=0)
    build_timeout_s: float = Field(120, gt=0)
    max_output_mb: int = Field(64, gt=0)
    server_memory_mb: int = Field(512, gt=0)
    server_pids: int = Field(64, gt=0)
    server_start_timeout_s: float = Field(20, gt=0)
    browser_memory_mb: int = Field(4096, gt=0)
    # Each browser container's CPU share (cores): one page's busy workers cannot take the other slots' cores.
    browser_cpus: float = Field(1.0, gt=0)
    browser_pids: int = Field(2048, gt=0)
    browser_start_timeout_s: float = Field(60, gt=0)
    user: str | None = None  # None: the image's non-root user (root hosts) or the caller's uid:gid
    network: Literal["none"] = "none"  # builds never get a network
    browser_in_container: bool = True
    label: str = "genui-runner"
    docker_timeout_s: float = Field(120, gt=0)  # docker API calls
    # An engine that stops answering (restarted mid-run): how long a build or a server waits for it to return.
    engine_wait_s: float = Field(120, ge=0)
    max_files: int = DEFAULT_MAX_FILES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    allowed_packages: list[str] = Field(default_factory=lambda: list(ALLOWED_PACKAGES))
    max_log_bytes: int = 1024 * 1024
    # Test-only hook: run this argv in the build container (cwd /app) instead of `vite build`.
    build_command: list[str] | None = None


class DockerSetupError(SandboxSetupError, UserError):
    """The engine, an image or a container could not be set up (status infra, not the artifact's fault)."""


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid, follow_symlinks=False)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, gid, follow_symlinks=False)


def _volumes(mounts: list[Mount]) -> dict[str, dict[str, str]]:
    return {str(m.source): {"bind": m.target, "mode": "rw" if m.writable else "ro"} for m in mounts}


class _ContainerServer:
    """The artifact server in a container (isolation.RunningServer)."""

    probe_namespace = None

    def __init__(self, url: str, probe_url: str, container: Any):
        self.url, self.probe_url, self.container = url, probe_url, container

    async def running(self) -> bool:
        await asyncio.to_thread(self.container.reload)
        return self.container.status in ("created", "running")

    async def failure(self) -> SandboxSetupError:
        logs = (await asyncio.to_thread(self.container.logs)).decode(errors="replace")[-4000:]
        return DockerSetupError(f"artifact server container did not become ready ({self.container.status}):\n{logs}")


def subnet_patterns(subnet: str) -> list[str]:
    """Host-resolver patterns (whole octets and `*`) that cover exactly an IPv4 subnet: "192.168.208.0/20" is
    192.168.208.* to 192.168.223.* (Docker's default pools hand out /16 and /20 networks)."""
    network = ipaddress.ip_network(subnet, strict=False)
    if network.version != 4:
        raise ValueError(f"not an IPv4 subnet: {subnet}")
    whole, rest = divmod(network.prefixlen, 8)
    octets = str(network.network_address).split(".")
    if whole == 4:
        return [str(network.network_address)]
    if rest == 0:
        return [".".join([*octets[:whole], "*"])]
    first = int(octets[whole])
    values = range(first, first + 2 ** (8 - rest))
    if whole == 3:  # within the last octet: the addresses themselves
        return [".".join([*octets[:3], str(value)]) for value in values]
    return [".".join([*octets[:whole], str(value), "*"]) for value in values]


class DockerIsolation:
    """Builds and the artifact server in hardened containers, browsers in containers of their own
    (isolation.Isolation)."""

    name = "docker"

    def __init__(self, settings: DockerSandboxSettings | None = None, *, cache_root: Path | None = None):
        self.settings = settings or DockerSandboxSettings()
        self.cache_root = cache_root
        self.owner = _owner()
        self.images: dict[str, ImageInfo] = {}
        self._client: Any = None
        self._started = False
        self._start_lock = asyncio.Lock()
        self._created: dict[str, str] = {}  # container id -> role, removed at aclose
        self._created_lock = threading.Lock()
        self._network: Any = None
        self._browser_hosts = 0  # static addresses handed to browser containers (they keep them across restarts)
        self._browsers: list[tuple[Any, str]] = []  # (container, address on the internal network); [0] is the default
        self._renderer_groups: dict[str, RendererGroups] = {}  # by browser container id (local engine only)
        self._handed_browsers = 0  # how many of them browser_settings gave to a worker
        self._started_at = time.time()  # the first moment a browser container's oom events can be from
        self._oom_seen: dict[str, int] = {}  # browser container id -> the time (ns) of its last oom event read
        self._oom_lock = threading.Lock()
        self._next_port = FIRST_SERVE_PORT
        self._module_volumes: dict[str, str] = {}  # template -> its node_modules volume
        self._module_lock = asyncio.Lock()

    # ---- set-up ----------------------------------------------------------------------------------
    def client(self) -> Any:
        if self._client is None:
            import docker
            from docker.errors import DockerException

            try:
                self._client = docker.from_env(timeout=int(self.settings.docker_timeout_s))
                self._client.ping()
            except DockerException as exc:
                self._client = None
                raise DockerSetupError(f"no Docker engine reachable: {exc}") from exc
        return self._client

    def ensure_images(self) -> dict[str, ImageInfo]:
        """Content-tagged images (built if missing); blocking. Their digests go into the run's tags."""
        if not self.images:
            names = ["build", "browser"] if self.settings.browser_in_container else ["build"]
            try:
                self.images = ensure_images(
                    self.client(), base_image=self.settings.base_image, names=names, overrides=self.settings.images,
                    cache_root=self.cache_root, build_missing=self.settings.build_missing_images,
                )
            except (RuntimeError, OSError) as exc:
                raise DockerSetupError(str(exc)) from exc
        return self.images

    def tracking_tags(self) -> dict[str, str]:
        return {"sandbox.kind": "docker", **tracking_tags(self.ensure_images())}

    def _labels(self, role: str) -> dict[str, str]:
        return {LABEL_SANDBOX: self.settings.label, LABEL_OWNER: self.owner, LABEL_ROLE: role}

    def remove_stale(self) -> list[str]:
        """Remove labelled containers and networks whose owning runner process on this host is gone."""
        client = self.client()
        host = socket.gethostname()
        removed: list[str] = []

        def stale(labels: dict[str, str]) -> bool:
            owner_host, _, pid = (labels.get(LABEL_OWNER) or "").rpartition(":")
            return owner_host == host and pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid))

        from docker.errors import NotFound

        for container in client.containers.list(all=True, filters={"label": f"{LABEL_SANDBOX}={self.settings.label}"}):
            if stale(container.labels):
                with contextlib.suppress(NotFound):
                    container.remove(force=True)
                removed.append(container.name)
        for network in client.networks.list(filters={"label": f"{LABEL_SANDBOX}={self.settings.label}"}):
            if stale(network.attrs.get("Labels") or {}):
                with contextlib.suppress(NotFound):
                    network.remove()
                removed.append(network.name)
        if removed:
            log.warning("removed %d stale sandbox container(s)/network(s): %s", len(removed), ", ".join(removed))
        return removed

    async def start(self) -> None:
        """Engine check, images, stale clean-up and (when configured) the browser container. Idempotent."""
        async with self._start_lock:
            if self._started:
                return
            await asyncio.to_thread(self.ensure_images)
            await asyncio.to_thread(self.remove_stale)
            if self.settings.browser_in_container:
                await asyncio.to_thread(self._start_browser)
            self._started = True

    def _track(self, container: Any, role: str) -> None:
        with self._created_lock:
            self._created[container.id] = role

    def _remove(self, container: Any) -> None:
        from docker.errors import APIError, NotFound

        try:
            container.remove(force=True)
        except NotFound:
            pass
        except APIError as exc:  # "removal already in progress" and the like
            log.debug("removing %s: %s", container.id[:12], exc)
        except Exception as exc:  # the engine is gone (restarting): aclose removes it once it is back
            log.warning("could not remove container %s: %s", container.id[:12], exc)
            return
        with self._created_lock:
            self._created.pop(container.id, None)

    async def _launch(self, role: str, image: str | None = None, **options: Any) -> Any:
        """Create and start a container of the build image (or `image`) for `role` in a worker thread; return it
        started.

        A turn cancelled meanwhile (its timeout, a stopped run) cannot stop the thread's engine calls, and a
        container they make after it gave up would be nobody's: never removed, and once started a build that
        runs on. So the thread removes, unstarted, what it creates after the cancellation, and the cancelled
        coroutine removes what was created before it. A container whose start fails is removed too."""
        gave_up = False
        made: list[Any] = []
        lock = threading.Lock()

        def launch() -> Any:
            container = self._with_engine(self.client().containers.create, image or self.images["build"].tag,
                                          labels=self._labels(role), **options)
            self._track(container, role)
            with lock:
                made.append(container)
                abandoned = gave_up
            if abandoned:
                self._remove(container)
                return container
            try:
                self._with_engine(container.start)
            except BaseException:
                self._remove(container)
                raise
            return container

        try:
            return await asyncio.to_thread(launch)
        except asyncio.CancelledError:
            with lock:
                gave_up = True
                leftovers = list(made)
            for container in leftovers:
                self._remove(container)
            raise

    def _with_engine(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        """`call(...)`, repeated while the engine is unreachable (restarting), for at most `engine_wait_s`."""
        deadline = time.monotonic() + self.settings.engine_wait_s
        warned = False
        while True:
            try:
                return call(*args, **kwargs)
            except Exception as exc:
                if not _engine_lost(exc) or time.monotonic() >= deadline:
                    raise
                if not warned:
                    log.warning("the Docker engine went away (%s); retrying for up to %g s", exc,
                                self.settings.engine_wait_s)
                    warned = True
                time.sleep(1.0)

    def _ensure_network(self) -> Any:
        if self._network is None:
            self._network = self._create_network(f"genui-{self.settings.label}-{os.getpid()}-{uuid.uuid4().hex[:6]}")
        return self._network

    def _create_network(self, name: str) -> Any:
        """An internal bridge network (no route out of the host; the host reaches the containers on it) whose
        subnet is pinned: the engine picks a free one, which is then declared explicitly, so that browser
        containers can keep a static address in its lower half when they are started again after an engine
        restart (their Playwright endpoint stays the same). Other containers draw from the upper half."""
        from docker.errors import APIError
        from docker.types import IPAMConfig, IPAMPool

        client = self.client()
        common = {"driver": "bridge", "internal": True, "labels": self._labels("network"), "check_duplicate": True}
        for attempt in range(3):
            picked = client.networks.create(name, **common)
            picked.reload()
            config = (picked.attrs.get("IPAM", {}).get("Config") or [{}])[0]
            picked.remove()
            if "Subnet" not in config:
                return client.networks.create(name, **common)  # an engine that reports no subnet: no pinning
            subnet = ipaddress.ip_network(config["Subnet"])
            pool = IPAMPool(subnet=str(subnet), gateway=config.get("Gateway"), iprange=str(list(subnet.subnets(1))[1]))
            try:
                return client.networks.create(name, ipam=IPAMConfig(pool_configs=[pool]), **common)
            except APIError:  # another network took the subnet in between
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _browser_address(self, network: Any) -> str | None:
        """The next static address for a browser container (None: the network's subnet is not pinned)."""
        network.reload()
        pools = network.attrs.get("IPAM", {}).get("Config") or []
        if not pools or not pools[0].get("IPRange"):
            return None
        self._browser_hosts += 1
        return str(ipaddress.ip_network(pools[0]["Subnet"]).network_address + 1 + self._browser_hosts)

    def _hardening(self, memory_mb: int, pids: int, cpus: float | None = None) -> dict[str, Any]:
        return {
            "read_only": True,
            "tmpfs": {"/tmp": "rw,nosuid,nodev,size=512m,mode=1777"},
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "mem_limit": f"{memory_mb}m",
            "memswap_limit": f"{memory_mb}m",  # no swap: the limit is the limit
            "nano_cpus": int((self.settings.cpus if cpus is None else cpus) * 1e9),
            "pids_limit": pids,
            "init": True,
        }

    def _start_browser(self) -> tuple[Any, str]:
        settings = self.settings
        network = self._ensure_network()
        hardening = self._hardening(settings.browser_memory_mb, settings.browser_pids, settings.browser_cpus)
        hardening["tmpfs"] = {"/tmp": "rw,nosuid,nodev,size=1g,mode=1777",
                              "/home/genui": "rw,nosuid,nodev,size=512m,uid=10001,gid=10001,mode=0700"}
        static = self._browser_address(network)
        endpoint = {network.name: self.client().api.create_endpoint_config(ipv4_address=static)} if static else None
        container = self.client().containers.create(
            self.images["browser"].tag, name=f"genui-browser-{os.getpid()}-{uuid.uuid4().hex[:6]}",
            # Appended to the image's `playwright run-server` entrypoint: accept the client's executablePath and
            # args (the runner's Chromium flags). Only the runner reaches this server (internal network).
            command=["--unsafe"], network=network.name, networking_config=endpoint,
            labels=self._labels("browser"), shm_size="512m", detach=True, **hardening,
        )
        self._track(container, "browser")
        container.start()
        self._install_firewall(container)
        address = container.attrs["NetworkSettings"]["Networks"][network.name]["IPAddress"]
        self._wait_for_playwright(container, address)
        self._browsers.append((container, address))
        return container, address

    def _install_firewall(self, browser: Any) -> None:
        """Install and check the rules of a started browser container's namespace (runner/sandbox/browser_firewall.py):
        its loopback and the runner's TCP connections from the gateway pass, nothing else. Before any page loads."""
        browser.reload()
        gateway = browser.attrs["NetworkSettings"]["Networks"][self._network.name].get("Gateway")
        if not gateway:
            raise DockerSetupError(f"browser container {browser.name} has no gateway on {self._network.name}: "
                                   "its firewall cannot be written")
        helper = self.client().containers.create(
            self.images["build"].tag, command=["python3", "-B", "-s", "-c", FIREWALL_HELPER_SCRIPT, gateway],
            user="0:0", network_mode=f"container:{browser.id}", cap_drop=["ALL"], cap_add=["NET_ADMIN"],
            security_opt=["no-new-privileges"], read_only=True,
            tmpfs={"/run": "rw,nosuid,nodev,size=1m", "/tmp": "rw,nosuid,nodev,size=1m"},
            environment={"GENUI_RULES_V4": ipv4_rules(gateway), "GENUI_RULES_V6": IPV6_RULES},
            labels=self._labels("firewall"), mem_limit="128m", pids_limit=32, detach=True,
        )
        self._track(helper, "firewall")
        try:
            helper.start()
            helper.wait(timeout=self.settings.docker_timeout_s)
            report = helper.logs(stdout=True, stderr=True).decode(errors="replace")
        finally:
            self._remove(helper)
        try:
            check_report(report, gateway)
        except (FirewallCheckFailed, ValueError, KeyError) as exc:
            raise DockerSetupError(f"browser container {browser.name}: its firewall is not in place: {exc}") from exc

    def _wait_for_playwright(self, container: Any, address: str) -> None:
        deadline = time.monotonic() + self.settings.browser_start_timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection((address, PLAYWRIGHT_PORT), 1):
                return
            container.reload()
            if container.status not in ("created", "running"):
                break
            time.sleep(0.1)
        logs = container.logs().decode(errors="replace")[-4000:]
        raise DockerSetupError(f"browser container did not start its Playwright server:\n{logs}")

    def _revive_browser(self, container: Any, address: str) -> None:
        """Start a worker's browser container again if it stopped (an engine restart stops every container).

        It keeps its static address, so the worker's browser reconnects to the same Playwright endpoint."""
        self._with_engine(container.reload)
        if container.status == "running":
            return
        log.warning("browser container %s is %s (the engine restarted?); starting it again",
                    container.name, container.status)
        self._with_engine(container.start)
        self._install_firewall(container)  # a new namespace: the rules of the last one are gone
        now = container.attrs["NetworkSettings"]["Networks"][self._network.name]["IPAddress"]
        if now != address:
            raise DockerSetupError(f"browser container {container.name} came back at {now}, not {address}: its "
                                   "worker cannot reconnect (the sandbox network has no pinned subnet)")
        self._wait_for_playwright(container, address)

    @property
    def browser_ws_endpoint(self) -> str | None:
        """The default browser container's Playwright server (the one serve() uses when given no browser)."""
        return f"ws://{self._browsers[0][1]}:{PLAYWRIGHT_PORT}/" if self._browsers else None

    def _browser_for(self, network: str | None) -> Any:
        """The browser container an artifact server must join: the one named by `network`, else the default."""
        for container, _ in self._browsers:
            if network is not None and container.id == network:
                return container
        if network is not None and not network.startswith("/"):  # a namespace path is a local browser's
            raise DockerSetupError(f"no browser container {network[:12]} of this sandbox")
        return self._browsers[0][0]

    async def browser_settings(self, base: BrowserSettings) -> BrowserSettings:
        """The browser settings of one worker: connect to a browser container of its own (when configured).

        Each call hands out another container (the first is the one start() made), and `serve_network`
        names it, so the worker's artifact servers join its namespace and no other's.
        """
        await self.start()
        if self.settings.browser_in_container:
            async with self._start_lock:
                if self._handed_browsers >= len(self._browsers):
                    await asyncio.to_thread(self._start_browser)
                container, address = self._browsers[self._handed_browsers]
                self._handed_browsers += 1
            if base.renderer_cpu_groups:
                await asyncio.to_thread(self._keep_renderer_groups, container)
            # The image's launcher, not its Chromium: it merges Playwright's and the runner's feature lists.
            return base.model_copy(update={"connect_url": f"ws://{address}:{PLAYWRIGHT_PORT}/",
                                           "serve_network": container.id, "executable_path": IMAGE_LAUNCHER,
                                           "network_boundary": "container"})
        # The host's browser reaches the artifact servers by their addresses on the internal network; the
        # resolver lockdown (runner/browser/launch.py) maps IP literals too, so let that subnet through.
        network = await asyncio.to_thread(self._ensure_network)
        network.reload()
        subnet = network.attrs["IPAM"]["Config"][0]["Subnet"]  # e.g. 172.23.0.0/16
        excluded = "".join(f", EXCLUDE {pattern}" for pattern in subnet_patterns(subnet))
        args = [f"{a}{excluded}" if a.startswith("--host-resolver-rules=") else a for a in base.launch_args]
        return base.model_copy(update={"launch_args": args})

    def _keep_renderer_groups(self, container: Any) -> None:
        """Give each renderer of the browser container a CPU group of its own inside the container's, as a confined
        local browser's have (runner/browser/renderer_groups.py): the pages that share the container then share its
        `browser_cpus` page by page. Done from this side, in the container's cpu cgroup, which only an engine on
        this machine (its processes in this machine's /proc) lets the runner reach; elsewhere the container's
        pages share its cores thread by thread, and the log says so."""
        if container.id in self._renderer_groups:
            return
        container.reload()
        pid = int(container.attrs.get("State", {}).get("Pid") or 0)
        directory = cpu_cgroup_of(pid) if pid > 0 else None
        if directory is None or container.id not in directory.name:  # a remote engine's pid is not this machine's
            log.info("browser container %s: its cpu cgroup is not on this machine; its pages share its CPU thread "
                     "by thread (browser.renderer_cpu_groups needs a local engine)", container.name)
            return
        groups = RendererGroups(directory)
        groups.start()
        self._renderer_groups[container.id] = groups

    def _browser_container(self, settings: BrowserSettings) -> Any | None:
        """The browser container of a worker's `settings` (None: not one of this sandbox's)."""
        return next((c for c, _ in self._browsers if c.id == settings.serve_network), None)

    async def browser_killed_by_page(self, settings: BrowserSettings, *, lost_at: float) -> bool:
        """Whether the memory cap of the browser container of a worker's `settings` killed a process in it, in an
        `oom` event of the engine's from just before the browser's connection closed at `lost_at` and not reported
        by an earlier call: a page that fills the browser's memory ends its own browser, while an engine stopping
        or a killed container is the harness's loss. The kernel may pick Chromium and leave the container running,
        so the event is read, not the container's exit state; an earlier event (a page's renderer killed, the
        browser left running) is that page's, never a later loss's. An engine that does not answer: False."""
        container = self._browser_container(settings)
        if container is None:
            return False
        # The connection drops as Chromium dies; the engine's event is out by then, give it a moment all the same.
        await asyncio.sleep(OOM_EVENT_SETTLE_S)
        earliest = (lost_at - OOM_BEFORE_LOSS_S) * 1e9

        def fresh_oom() -> bool:
            # One reader at a time: visits that lost the same browser ask at once, and one event is one page's.
            with self._oom_lock:
                seen = self._oom_seen.get(container.id, 0)  # the engine's timeNano of the last oom event read
                events = self.client().events(since=int(self._started_at), until=int(time.time()) + 1, decode=True,
                                              filters={"container": container.id, "event": "oom"})
                times = [int(event.get("timeNano", 0)) for event in events]
                if times:  # every event read is spent, whichever loss it explains
                    self._oom_seen[container.id] = max(seen, *times)
                return any(moment > seen and moment >= earliest for moment in times)

        try:
            return await asyncio.to_thread(fresh_oom)
        except Exception as exc:  # the engine went away: not the page's doing
            log.warning("could not read browser container %s's events: %s", container.name, exc)
            return False

    async def browser_running(self, settings: BrowserSettings) -> bool:
        """Whether the browser container of a worker's `settings` still runs; an engine that does not answer
        has stopped its containers (no live restore here), so no."""
        container = self._browser_container(settings)
        if container is None:
            return True  # not a container of this sandbox's: nothing to say against it
        try:
            await asyncio.to_thread(container.reload)
        except Exception as exc:
            log.warning("could not read browser container %s's state: %s", container.name, exc)
            return False
        return container.status == "running"

    # ---- build -----------------------------------------------------------------------------------
    def _run_user(self) -> tuple[str, tuple[int, int] | None]:
        """The container user, and the uid/gid the workspace must be handed to (root hosts only)."""
        if self.settings.user:
            return self.settings.user, None
        if os.geteuid() == 0:
            uid, gid = (int(x) for x in IMAGE_USER.split(":"))
            return IMAGE_USER, (uid, gid)
        return f"{os.getuid()}:{os.getgid()}", None

    def rules(self) -> PipelineRules:
        settings = self.settings
        return PipelineRules(
            allowed_packages=settings.allowed_packages, max_files=settings.max_files,
            max_file_bytes=settings.max_file_bytes, max_output_mb=settings.max_output_mb,
            build_timeout_s=settings.build_timeout_s, server_start_timeout_s=settings.server_start_timeout_s,
            build_command=settings.build_command)

    async def build_tools(self, template: str | None) -> BuildTools:
        """The default template's node_modules are in the build image; any other template's pinned install
        (content-hashed cache folder, copied once into a volume of the engine: runner/sandbox/module_volume.py)
        is mounted read-only over them. The workspace's link resolves inside the container."""
        await self.start()
        mounts: list[Mount] = []
        if template is not None and template != DEFAULT_TEMPLATE:
            mounts.append(Mount(await self._template_volume(template), IN_MODULES))
        return BuildTools(node="node", link=Path(IN_MODULES), mounts=mounts)

    async def _template_volume(self, template: str) -> str:
        """The engine volume with `template`'s node_modules (installed on this side first if needed)."""
        async with self._module_lock:
            if template not in self._module_volumes:
                modules = await asyncio.to_thread(ensure_template_modules, self.cache_root, template)
                name = volume_name(template, template_hash(template))
                self._module_volumes[template] = await asyncio.to_thread(
                    ensure_module_volume, self.client(), self.images["build"].tag, modules, name,
                    self._labels("modules"))
            return self._module_volumes[template]

    def _hand_over(self, mounts: list[Mount], owner: tuple[int, int]) -> None:
        """Give the writable folders to the container's user (root hosts), or back to ours."""
        for mount in mounts:
            if mount.writable and isinstance(mount.source, Path):
                _chown_tree(mount.source, *owner)

    async def run(self, command: list[str], mounts: list[Mount], *, cwd: str, env: dict[str, str],
                  timeout_s: float, image: str | None = None, limits: ResourceLimits | None = None) -> RunOutcome:
        """Run command in a throw-away build container (or one of `image`): no network, hardened, killed at the
        wall clock; `limits`' memory and processes instead of the build's."""
        settings = self.settings
        memory_mb = limits.memory_mb if limits is not None else settings.memory_mb
        pids = limits.max_processes if limits is not None else settings.pids
        user, chown_to = self._run_user()
        ours = (os.getuid(), os.getgid())
        container = None
        try:
            if chown_to is not None:
                await asyncio.to_thread(self._hand_over, mounts, chown_to)
            container = await self._launch(
                "build", image=image, command=command, user=user,
                working_dir=cwd, network_mode=settings.network,
                volumes=_volumes(mounts), environment={"HOME": "/tmp", **env},
                ulimits=[_ulimit("nofile", 1024), _ulimit("core", 0)], log_config=_capped_log(settings.max_log_bytes),
                detach=True, **self._hardening(memory_mb, pids),
            )
        except Exception as exc:  # docker errors: the sandbox failed, not the artifact
            return RunOutcome(None, "", setup_error=f"could not start the build container: {exc}")
        timed_out = False
        started = time.monotonic()
        try:
            try:
                outcome = await asyncio.to_thread(container.wait, timeout=timeout_s)
                exit_code = int(outcome.get("StatusCode", -1))
                if exit_code in (137, 143) and not await asyncio.to_thread(self._engine_answers):
                    # Killed as the engine shut down (it stops every container), not by the artifact.
                    return RunOutcome(None, "", setup_error="the Docker engine stopped during the build "
                                                            f"(the build container exited with {exit_code})")
            except asyncio.CancelledError:
                self._remove(container)  # the turn was cancelled: never leave the build running
                raise
            except Exception as exc:  # requests' ReadTimeout (the wall clock ran out) or the engine went away
                if time.monotonic() - started < timeout_s - 1 and not await asyncio.to_thread(self._engine_answers):
                    return RunOutcome(None, "", setup_error=f"the Docker engine stopped during the build: {exc}")
                timed_out = True
                exit_code = -1
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(container.kill)
            try:
                # At most max-size: the engine rotates the build's log in place (_capped_log).
                output = await asyncio.to_thread(logs_after_exit, container, settle_s=2.0)
                await asyncio.to_thread(container.reload)
            except Exception as exc:  # the engine stopped (and killed the build) as it ended
                if not _engine_lost(exc) and await asyncio.to_thread(self._engine_answers):
                    raise
                return RunOutcome(None, "", setup_error=f"the Docker engine stopped during the build: {exc}")
            oom = bool(container.attrs.get("State", {}).get("OOMKilled"))
        finally:
            await asyncio.to_thread(self._remove, container)
            if chown_to is not None:
                with contextlib.suppress(OSError):
                    await asyncio.to_thread(self._hand_over, mounts, ours)
        sink = LogCap(settings.max_log_bytes)
        sink.feed(output)
        notes = [f"[sandbox] docker image={image or self.images['build'].tag} exit={exit_code}"]
        if oom:
            notes.append(f"[sandbox] OOM: killed by the memory limit ({memory_mb} MB)")
        return RunOutcome(exit_code, sink.text(), timed_out=timed_out, timeout_s=timeout_s, oom=oom, notes=notes)

    def _engine_answers(self) -> bool:
        try:
            self.client().ping()
            return True
        except Exception:
            return False

    # ---- serve -----------------------------------------------------------------------------------
    def _serve_port(self) -> int:
        port = self._next_port
        self._next_port = FIRST_SERVE_PORT + (self._next_port - FIRST_SERVE_PORT + 1) % 20000
        return port

    def scratch_dir(self, dist_dir: Path) -> Path:
        # Beside dist (inside the run directory), not in /tmp: bind-mount sources are host paths, and when the
        # runner itself runs in a container only its mounted run directory is visible to the engine as such.
        return Path(tempfile.mkdtemp(prefix=".genui-serve-", dir=dist_dir.resolve().parent))

    @contextlib.asynccontextmanager
    async def serve_folder(self, command: list[str], mounts: list[Mount], *, scratch: Path,
                           network: str | None) -> AsyncIterator[_ContainerServer]:
        """The server in a container of the build image, in the namespace of the browser that opens it.

        `network`: the browser container (a worker's `serve_network`) whose namespace the server joins; None,
        or a local browser's namespace path, means the default browser container.
        """
        await self.start()
        settings = self.settings
        container = None
        user, chown_to = self._run_user()
        try:
            if chown_to is not None:
                await asyncio.to_thread(self._hand_over, mounts, chown_to)
            if settings.browser_in_container:
                port = self._serve_port()
                browser = self._browser_for(network)
                browser_ip = next(ip for c, ip in self._browsers if c is browser)
                await asyncio.to_thread(self._revive_browser, browser, browser_ip)
                network_args: dict[str, Any] = {"network_mode": f"container:{browser.id}"}
            else:
                port = 8000
                network_args = {"network": (await asyncio.to_thread(self._ensure_network)).name}
            container = await self._launch(
                "serve", command=["python3", "-B", "-s", "-c", LISTEN_SHIM, "0.0.0.0", str(port), *command],
                user=user, working_dir="/tmp", volumes=_volumes(mounts),
                environment={"PYTHONUTF8": "1", "HOME": "/tmp"}, detach=True, **network_args,
                **self._hardening(settings.server_memory_mb, settings.server_pids),
            )
            if settings.browser_in_container:
                probe_url, url = f"http://{browser_ip}:{port}/", f"http://127.0.0.1:{port}/"
            else:
                await asyncio.to_thread(container.reload)
                ip = container.attrs["NetworkSettings"]["Networks"][network_args["network"]]["IPAddress"]
                probe_url = url = f"http://{ip}:{port}/"
            yield _ContainerServer(url, probe_url, container)
        finally:
            if container is not None:
                await asyncio.to_thread(self._remove, container)
            if chown_to is not None:
                with contextlib.suppress(OSError):
                    await asyncio.to_thread(self._hand_over, mounts, (os.getuid(), os.getgid()))

    # ---- tear-down -------------------------------------------------------------------------------
    def _close_sync(self) -> None:
        if self._client is None:
            return
        from docker.errors import APIError, NotFound

        for groups in self._renderer_groups.values():  # before their containers go (the engine removes the cgroups)
            groups.stop()
        self._renderer_groups = {}
        with self._created_lock:
            leftovers = list(self._created)
        # Also what the engine made for this process that it never heard of: a create the engine carried out
        # while its answer was lost (the engine restarting; `_with_engine` then creates again).
        with contextlib.suppress(Exception):
            owned = self._client.containers.list(all=True, filters={"label": [
                f"{LABEL_SANDBOX}={self.settings.label}", f"{LABEL_OWNER}={self.owner}"]})
            leftovers += [container.id for container in owned if container.id not in leftovers]
        for container_id in leftovers:
            try:
                self._client.containers.get(container_id).remove(force=True)
            except (NotFound, APIError):
                pass
            except Exception as exc:  # the engine is gone: the next run's stale clean-up removes them
                log.warning("could not remove container %s: %s", container_id[:12], exc)
                if _engine_lost(exc):
                    break
            with self._created_lock:
                self._created.pop(container_id, None)
        if self._network is not None:
            with contextlib.suppress(Exception):  # in use, gone, or the engine is: the stale clean-up's job then
                self._network.remove()
            self._network = None
        self._browsers = []
        self._handed_browsers = 0
        self._client.close()
        self._client = None
        self._started = False

    async def aclose(self) -> None:
        """Remove every container and network this sandbox created."""
        await asyncio.to_thread(self._close_sync)


class DockerSandbox(PipelineSandbox):
    """The sandbox pipeline in containers of the Docker engine."""

    name = "docker"
    isolation: DockerIsolation

    def __init__(self, settings: DockerSandboxSettings | None = None, *, cache_root: Path | None = None):
        super().__init__(DockerIsolation(settings, cache_root=cache_root))
        self.settings = self.isolation.settings

    @property
    def images(self) -> dict[str, ImageInfo]:
        return self.isolation.images

    def ensure_images(self) -> dict[str, ImageInfo]:
        return self.isolation.ensure_images()

    def tracking_tags(self) -> dict[str, str]:
        return self.isolation.tracking_tags()

    def remove_stale(self) -> list[str]:
        return self.isolation.remove_stale()


def present_images(settings: DockerSandboxSettings, *, cache_root: Path | None = None) -> dict[str, ImageInfo]:
    """The images a run with these sandbox settings uses, as present on the engine; builds nothing.
    Raises DockerSetupError when the engine or an image is missing."""
    isolation = DockerIsolation(settings.model_copy(update={"build_missing_images": False}), cache_root=cache_root)
    try:
        return isolation.ensure_images()
    finally:
        if isolation._client is not None:
            isolation._client.close()


def _engine_lost(error: Exception) -> bool:
    """An error of the engine's connection (refused, reset), as the docker client raises it, or the engine's
    own answer while it shuts down."""
    import requests
    from docker.errors import APIError

    if isinstance(error, requests.exceptions.ConnectionError):
        return True
    return isinstance(error, APIError) and "shutting down" in str(error).lower()


def _ulimit(name: str, value: int) -> Any:
    from docker.types import Ulimit

    return Ulimit(name=name, soft=value, hard=value)


def _capped_log(max_bytes: int) -> Any:
    """The engine's log of a build container, rotated in place at `max_bytes`: a build that prints gigabytes
    fills neither the engine's disk nor, when read back, the runner's memory. What is kept is the output since
    the last rotation (the engine does not say how much went before it)."""
    from docker.types import LogConfig

    return LogConfig(type=LogConfig.types.JSON, config={"max-size": str(max_bytes), "max-file": "1"})
