"""BrowserPool: one Playwright driver and one Chromium per worker, a fresh context per artifact."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import time
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal, Protocol

from playwright.async_api import Browser, BrowserContext, Playwright, async_playwright
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from runner.browser.confine import BrowserConfinement
from runner.browser.launcher import (DEFAULT_DISABLED_FEATURES, FEATURE_NAME, FULL_CHROMIUM, HEADLESS_SHELL,
                                     HEADLESS_SHELL_PACKAGE, write_launcher)
from runner.browser.session import PageSession
from runner.sandbox.scratch import scratch_dir

log = logging.getLogger(__name__)
# How long a remote browser that stopped answering may take to disconnect before it counts as busy rather
# than gone: Docker stops a container within 10 s of being told (its stop timeout), dockerd's shutdown 15 s.
STOP_GRACE_S = 20.0

# PLATFORM.md "Browser": the flags the system Chromium needs on these machines.
PLATFORM_ARGS: list[str] = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
# Rendering flags that keep screenshots byte-stable across runs and machines.
DETERMINISM_ARGS: list[str] = [
    "--font-render-hinting=none",
    "--disable-lcd-text",
    "--disable-font-subpixel-positioning",
    "--force-color-profile=srgb",
    "--hide-scrollbars",
    # Measured: with several raster threads, antialiased edges of a focus ring differed between runs.
    "--num-raster-threads=1",
    "--disable-partial-raster",
]
# Defence in depth under the per-request origin filter of PageSession: no proxy and no DNS, so even
# preconnects or requests the route layer cannot see (e.g. <link rel=dns-prefetch>) stay local.
# These do not stop WebRTC (measured: STUN datagrams still reached a UDP listener on 127.0.0.1, also with
# --force-webrtc-ip-handling-policy) nor speculative requests to other loopback ports: that takes the
# confined browser's own network namespace (runner/browser/confine.py).
NETWORK_LOCKDOWN_ARGS: list[str] = [
    "--no-proxy-server",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
]


class BrowserSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Chromium's headless shell (Debian's chromium-headless-shell, the build Playwright itself runs headless): the
    # same Blink and the same screenshots as the full browser (byte for byte, measured), without the full
    # browser's window, UI and extra processes per context, so a visit costs about half the browser CPU
    # (docs/performance.md). `/usr/bin/chromium` (the full browser) to watch a run with headless=false;
    # None: Playwright's own downloaded browser.
    executable_path: str | None = HEADLESS_SHELL
    headless: bool = True
    viewport_width: int = Field(1280, gt=0)
    viewport_height: int = Field(800, gt=0)
    device_scale_factor: float = Field(1.0, gt=0)
    nav_timeout_ms: int = Field(15000, gt=0)
    settle_ms: int = Field(150, ge=0)
    # The least time a visit watches its first load of the page before moving on to the live checks' reloads
    # (PageSession.watch_first_load): a page that leaves its artifact or hangs within this long after its load is
    # seen doing it wherever it runs, however quickly the capture and the actor went (docs/threat-model.md).
    watch_ms: int = Field(500, ge=0)
    launch_args: list[str] = Field(
        default_factory=lambda: PLATFORM_ARGS + DETERMINISM_ARGS + NETWORK_LOCKDOWN_ARGS
    )
    extra_args: list[str] = Field(default_factory=list)
    launch_timeout_ms: int = Field(30000, gt=0)
    # Connect to a Playwright server (e.g. the docker sandbox's browser container) instead of launching
    # locally; the server launches Chromium with these same settings (executable_path, headless, args).
    connect_url: str | None = None
    # Set by a sandbox that runs the browser itself (docker: its browser container): where this browser's
    # artifact servers must listen, passed to the sandbox's serve() as `network`.
    serve_network: str | None = None
    # Launch the local browser in its own network namespace (only loopback, where the artifact server of the
    # session is bound) and a memory cgroup (runner/browser/confine.py). The local sandbox turns this on.
    confine: bool = False
    # What stops the browser's own traffic (WebRTC, speculative loads) below the request filter, as the network
    # log states it: "namespace" (a confined local browser: only loopback), "container" (the docker sandbox's
    # browser container: its firewall passes only its loopback and the runner), "none" (nothing: the host's
    # network). A confined browser is "namespace" whatever this says.
    network_boundary: Literal["none", "namespace", "container"] = "none"
    memory_mb: int = Field(4096, gt=0)  # the confined browser's memory cap (the docker browser's default)
    # The confined browser's CPU share in cores (a cpu cgroup quota; the docker sandbox caps its browser container
    # with sandbox.options.browser_cpus): one page's busy workers cannot take the cores the other slots need.
    cpus: float = Field(1.0, gt=0)
    # Within that share each renderer (one session's page) has a CPU group of its own, so the pages sharing a
    # confined browser share its cores page by page, not thread by thread: a page of 500 busy web workers cannot
    # starve its neighbours' loads (runner/browser/renderer_groups.py). False: one group for the whole browser.
    renderer_cpu_groups: bool = True
    # Keep the next session's context and blank page prepared (init script, listeners, request filter): a turn
    # then skips the context and page creation (0.11 s of its serve stage on the 2-core machine,
    # docs/performance.md). The preparation starts once a session's page has loaded, while it settles (a wait
    # the browser spends idle), or when a session that never loaded closes; so it costs neither the next build
    # nor the next model call CPU. Never shared: each prepared context serves one session and is closed with it.
    spare_page: bool = True
    # Chromium features turned off in every browser (local, confined or in the docker browser container): one
    # `--disable-features=` argument of args(), merged with Playwright's own list by the launcher every browser
    # starts through (runner/browser/launcher.py: the full browser's omnibox popup WebUI and spare renderer, which
    # start two renderer processes per context that no page uses; the headless shell has neither). [] keeps them.
    disable_features: list[str] = Field(default_factory=lambda: list(DEFAULT_DISABLED_FEATURES))
    # Record Playwright's own trace of each slot's visit (load, actor, live checks: screenshots and DOM snapshots
    # of every action) into the slot's evidence folder as trace.zip, replayed with `playwright show-trace`.
    # Off by default: it cost +16% and +25% of a turn in two runs of bench/browser_trace.py (medians 1.89 -> 2.19 s
    # and 1.83 -> 2.29 s a smoke turn, oracle model, probe actor, on the shared, loaded 2-core machine; 57 KiB a trace).
    record_trace: bool = False

    @field_validator("executable_path")
    @classmethod
    def _empty_is_none(cls, value: str | None) -> str | None:
        return value or None

    @model_validator(mode="after")
    def _a_window_needs_the_full_browser(self) -> "BrowserSettings":
        if not self.headless and self.executable_path and Path(self.executable_path).name == HEADLESS_SHELL_PACKAGE:
            raise ValueError(f"browser.headless=false: executable_path {self.executable_path} is Chromium's headless "
                             f"shell, which cannot show a window; set browser.executable_path={FULL_CHROMIUM}")
        return self

    @field_validator("disable_features")
    @classmethod
    def _feature_names(cls, value: list[str]) -> list[str]:
        bad = [name for name in value if not FEATURE_NAME.match(name)]
        if bad:
            raise ValueError(f"not a Chromium feature name (letters, digits, _): {', '.join(map(repr, bad))}")
        return value

    def args(self) -> list[str]:
        """The launch arguments; `extra_args` last, so they can still override any of the others."""
        features = [f"--disable-features={','.join(self.disable_features)}"] if self.disable_features else []
        return [*self.launch_args, *features, *self.extra_args]


@dataclass(frozen=True)
class Viewport:
    """The coordinate system of one browser context."""

    width: int
    height: int
    device_scale_factor: float = 1.0


class BrowserWitness(Protocol):
    """What the sandbox that runs a remote browser (its container) knows of why it went away (Sandbox's)."""

    async def browser_killed_by_page(self, settings: BrowserSettings, *, lost_at: float) -> bool:
        """Whether the browser of `settings`, whose connection closed at `lost_at` (wall-clock seconds), was
        stopped by its memory cap, which its page filled."""
        ...

    async def browser_running(self, settings: BrowserSettings) -> bool:
        """Whether the browser of `settings` is still running (False: stopped, or its engine does not answer)."""
        ...


class BrowserLost(RuntimeError):
    """The browser process died or disconnected under a turn (killed, crashed): the harness failed, not the
    artifact, so the slot is `infra` (the next session relaunches the browser)."""


class BrowserPool:
    """Owns one browser; `session(url)` yields a PageSession in a fresh, isolated context.

    Safe for concurrent sessions within one event loop. A crashed or disconnected browser is
    relaunched on the next `session()` call, so one bad artifact cannot poison the rest of a worker.
    """

    # Every launch (or connect) of any pool in this process: a run's count is at most concurrency.browsers.
    launched_in_process: ClassVar[int] = 0

    def __init__(self, settings: BrowserSettings | None = None, *,
                 witness: BrowserWitness | None = None) -> None:
        self.settings = settings or BrowserSettings()
        # Asks the sandbox whether a remote browser that went away was stopped by its page (its memory cap), and
        # whether one that stopped answering still runs. None: every loss of a remote browser is the harness's.
        self._witness = witness
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._lock = asyncio.Lock()
        self.launches = 0  # how many times a browser was (re)launched; useful in logs and tests
        self.confinement: BrowserConfinement | None = None
        self._spare: asyncio.Task[PageSession] | None = None  # the next default-viewport session, being prepared
        self.spares_used = 0  # sessions that started on a prepared page (tests, benches)
        self._closing: set[asyncio.Task[None]] = set()  # contexts of ended sessions, closing in the background
        self._launcher_dir: Path | None = None  # an unconfined browser's launcher (runner/browser/launcher.py)
        self._hung = False  # a page left the browser too busy to answer: replace it before the next session
        # Sessions open on each browser: a hung browser that other visits are still on is retired, not closed
        # under them (their pages are theirs to finish or fail), and closed when its last session ends.
        self._open_sessions: dict[Browser, int] = {}
        self._retired: set[Browser] = set()
        self._replaced_busy: weakref.WeakSet[Browser] = weakref.WeakSet()  # replaced because a page kept it busy
        self._disconnected_at: float | None = None  # wall-clock time the current browser's connection closed

    def _count_launch(self) -> None:
        self.launches += 1
        BrowserPool.launched_in_process += 1

    @property
    def network_namespace(self) -> str | None:
        """Where an artifact server must listen for this pool's browser to reach it (None: the host's)."""
        return self.confinement.netns if self.confinement is not None else self.settings.serve_network

    @property
    def network_boundary(self) -> str:
        """What keeps this pool's browser's own traffic in (BrowserSettings.network_boundary)."""
        return "namespace" if self.settings.confine else self.settings.network_boundary

    @property
    def browser(self) -> Browser | None:
        return self._browser

    def lost(self, browser: Browser | None = None) -> bool:
        """Whether the launched browser (or `browser`, one of this pool's) is gone (process killed or crashed,
        connection dropped). A kill by the confined browser's own memory cap is the page's doing (a memory bomb:
        runtime_error), not a loss."""
        browser = browser or self._browser
        if browser is None:
            return False
        if self.confinement is not None and self.confinement.oom_killed():
            return False
        return not browser.is_connected() or (self.confinement is not None and not self.confinement.alive())

    async def lost_after_round_trip(self, browser: Browser | None = None) -> bool:
        """`lost()`, confirmed by a round trip for a remote browser (connect_url): a browser container that was
        stopped closes its pages before its connection says so. `browser`: the one a visit ran on (default: the
        pool's current one); a browser replaced because a page kept it too busy was the page's doing."""
        browser = browser or self._browser
        if browser is not None and browser in self._replaced_busy:
            return False
        if self.lost(browser):
            return not await self._stopped_by_its_page()
        if browser is None or not self.settings.connect_url:
            return False
        if browser is not self._browser:  # replaced after it disconnected: lost() said so above
            return False
        try:
            cdp = await asyncio.wait_for(browser.new_browser_cdp_session(), timeout=5)
            await cdp.detach()
        except asyncio.TimeoutError:
            # No answer: a container being stopped (an engine shutting down gives its containers seconds to
            # stop) has closed its pages, and its connection closes once it is gone; give it that time.
            # A page filling the container's memory ends the same way, by its own doing.
            # An engine stopped under it may leave the connection open for minutes (its network went with it, no
            # reset ever comes): a browser container that no longer runs is gone whatever the connection says.
            if (not await self._still_running() or await self._disconnects_within(STOP_GRACE_S)
                    or not await self._still_running()):
                return not await self._stopped_by_its_page()
            # Connected but too busy to answer: a page flooding the browser process (history entries, hash
            # changes) does this, and so would a local browser's page, which is never asked. The page's
            # failure, not the harness's: its capture already timed out. The next session gets a new browser.
            log.warning("the browser is connected but did not answer in 5 s; it is replaced before the next page")
            self._hung = True
            return False
        except Exception:
            return True
        return False

    async def _stopped_by_its_page(self) -> bool:
        """A remote browser that went away: whether its sandbox says its page's memory stopped it. The next
        session relaunches (reconnects to) the browser either way."""
        if not self.settings.connect_url or self._witness is None:
            return False
        try:
            killed = await self._witness.browser_killed_by_page(self.settings,
                                                                lost_at=self._disconnected_at or time.time())
        except Exception:  # no answer from the sandbox: the harness's loss
            log.exception("could not ask the sandbox why the browser went away")
            return False
        if killed:
            log.warning("the memory cap of the browser's container killed it: its page filled the memory")
        return killed

    async def _still_running(self) -> bool:
        """Whether the sandbox says the remote browser still runs (no witness: it is taken to)."""
        if self._witness is None:
            return True
        try:
            return await asyncio.wait_for(self._witness.browser_running(self.settings), timeout=STOP_GRACE_S)
        except Exception:  # an engine that cannot say within the grace is down: its containers with it
            log.warning("could not ask the sandbox whether the browser still runs", exc_info=True)
            return False

    async def _disconnects_within(self, seconds: float) -> bool:
        """Whether the remote browser's connection closes within `seconds`."""
        assert self._browser is not None
        deadline = asyncio.get_running_loop().time() + seconds
        while self._browser.is_connected():
            if asyncio.get_running_loop().time() >= deadline:
                return False
            await asyncio.sleep(0.2)
        return True

    async def start(self) -> None:
        async with self._lock:
            await self._ensure_browser()
        self._prepare_spare()

    async def aclose(self) -> None:
        await self._drop_spare()
        await self.closed_sessions()
        for retired in list(self._retired):  # sessions cancelled before their end closed nothing
            await _close_browser(retired)
        self._retired.clear()
        async with self._lock:
            browser, self._browser = self._browser, None
            if browser is not None:
                await _close_browser(browser)
            playwright, self._playwright = self._playwright, None
            if playwright is not None:
                await playwright.stop()
            confinement, self.confinement = self.confinement, None
            if confinement is not None:
                await asyncio.to_thread(confinement.close)
            launcher_dir, self._launcher_dir = self._launcher_dir, None
            if launcher_dir is not None:
                shutil.rmtree(launcher_dir, ignore_errors=True)

    async def __aenter__(self) -> "BrowserPool":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _ensure_browser(self) -> Browser:
        """Return a connected browser, launching (or relaunching) one if needed. Caller holds the lock."""
        gone = self.confinement is not None and not self.confinement.alive()  # e.g. OOM-killed, unnoticed
        hung, self._hung = self._hung, False
        if self._browser is not None and self._browser.is_connected() and not gone and not hung:
            return self._browser
        if self._browser is not None:
            log.warning("browser %s; relaunching", "hung by a page" if hung else "disconnected")
            old, self._browser = self._browser, None
            if hung:
                self._replaced_busy.add(old)
            if self._open_sessions.get(old, 0) > 0 and old.is_connected():
                self._retired.add(old)  # closed as its last session ends (_end_session)
            else:
                await _close_browser(old)
        self._disconnected_at = None
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        s = self.settings
        if s.connect_url:
            # playwright run-server reads the launch options of each connection from this header; the docker
            # sandbox's executable_path is the image's launcher (/opt/genui/chromium), which merges the switches.
            options = {"headless": s.headless, "args": s.args()}
            if s.executable_path:
                options["executablePath"] = s.executable_path
            self._browser = await self._playwright.chromium.connect(
                s.connect_url, timeout=s.launch_timeout_ms,
                headers={"x-playwright-launch-options": json.dumps(options)},
            )
            self._watch_disconnect(self._browser)
            self._count_launch()
            return self._browser
        chromium = s.executable_path or self._playwright.chromium.executable_path
        if s.confine:
            if self.confinement is None:
                confinement = BrowserConfinement(memory_mb=s.memory_mb, cpus=s.cpus,
                                                 renderer_groups=s.renderer_cpu_groups)
                await asyncio.to_thread(confinement.start)
                self.confinement = confinement
            executable = self.confinement.wrapper(chromium)
        else:
            self._launcher_dir = self._launcher_dir or scratch_dir("chromium")
            executable = write_launcher(self._launcher_dir / "chromium", chromium)
        self._browser = await self._playwright.chromium.launch(
            executable_path=executable,
            headless=s.headless,
            args=s.args(),
            timeout=s.launch_timeout_ms,
        )
        self._watch_disconnect(self._browser)
        self._count_launch()
        return self._browser

    def _watch_disconnect(self, browser: Browser) -> None:
        """Note when `browser`'s connection closes: a sandbox's memory-cap event counts for a loss only when it
        came right before it (Sandbox.browser_killed_by_page `lost_at`), never an earlier page's."""
        def disconnected(_: Browser) -> None:
            if browser is self._browser:
                self._disconnected_at = time.time()
        browser.on("disconnected", disconnected)

    async def _new_context(self, viewport: Viewport | None = None, *, relaunch: bool = True) -> BrowserContext:
        """A fresh context; with `relaunch`, on a (re)launched browser when this one is gone, else on this
        one only (a background preparation never relaunches: losing the browser is the turn's to notice)."""
        s = self.settings
        viewport = viewport or Viewport(s.viewport_width, s.viewport_height, s.device_scale_factor)
        options = dict(
            viewport={"width": viewport.width, "height": viewport.height},
            device_scale_factor=viewport.device_scale_factor,
            reduced_motion="reduce",
            locale="en-US",
            timezone_id="UTC",
            color_scheme="light",
            service_workers="block",  # a SW could fetch outside context.route
            accept_downloads=False,
        )
        async with self._lock:
            if not relaunch:
                if self._browser is None or self._browser_gone():
                    raise BrowserLost("no running browser to prepare a page on")
                return await self._browser.new_context(**options)
            for attempt in range(2):  # a browser can die between the liveness check and new_context
                browser = await self._ensure_browser()
                try:  # bounded: a browser wedged by a crashed page may never answer
                    return await asyncio.wait_for(browser.new_context(**options),
                                                  timeout=self.settings.nav_timeout_ms / 1000)
                except Exception:
                    if attempt == 1:
                        raise
                    log.warning("new_context failed; relaunching browser", exc_info=True)
                    await _close_browser(browser)
                    self._browser = None
        raise AssertionError("unreachable")

    def _browser_gone(self) -> bool:
        return self._browser is None or self._hung or not self._browser.is_connected() or (
            self.confinement is not None and not self.confinement.alive())

    @asynccontextmanager
    async def session(
        self, url: str, *, extra_origins: Sequence[str] = (), viewport: Viewport | None = None,
        trace_path: Path | None = None, trace_title: str | None = None,
    ) -> AsyncIterator[PageSession]:
        """A PageSession on `url` in a fresh context; requests to other origins are blocked.

        `extra_origins` (e.g. "http://127.0.0.1:9000") are also allowed, for a tool server on another port.
        `viewport`: this context's coordinate system instead of the pool's (a suite's fixed render size).
        `trace_path`: where the session's Playwright trace goes when the pool records traces (`record_trace`).
        The page is not loaded yet: call `await session.goto()`.
        """
        session = await self._take_spare() if viewport is None else None
        if session is None:
            session = await self._prepared_session(viewport)
        browser = session.context.browser
        if browser is not None:
            self._open_sessions[browser] = self._open_sessions.get(browser, 0) + 1
        tracing = trace_path is not None and self.settings.record_trace and await _start_trace(session, trace_title)
        try:
            session.aim(url, extra_origins)
            if viewport is None:
                session.on_first_load = self._prepare_spare
            yield session
        finally:
            try:
                if tracing and trace_path is not None:
                    await self._stop_trace(session, trace_path)
            finally:  # the context is closed even when the turn is cancelled while the trace is written
                # Closing a context takes the browser about 15 ms; the turn need not wait for it (nothing reaches
                # the page's logs once its session has ended, and the pool waits for every close before it ends).
                closing = asyncio.get_running_loop().create_task(self._end_session(session.context, browser))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
                if viewport is None:
                    self._prepare_spare()  # the page never loaded (or the spare was taken meanwhile)

    async def _end_session(self, context: BrowserContext, browser: Browser | None) -> None:
        """Close a session's context; the last session on a retired browser closes that browser too."""
        if browser is not None:
            left = self._open_sessions.get(browser, 1) - 1
            if left > 0:
                self._open_sessions[browser] = left
            else:
                self._open_sessions.pop(browser, None)
            if left <= 0 and browser in self._retired:
                self._retired.discard(browser)
                await _close_browser(browser)  # the context goes with it
                return
        await _close(context)

    async def _stop_trace(self, session: PageSession, path: Path) -> None:
        """Stop the session's trace into `path` (bounded: a wedged browser may never answer); warn on failure."""
        if self._browser_gone():  # nothing to save, and waiting on a dead browser would only delay the turn
            log.warning("the browser is gone: no trace written to %s", path)
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            await asyncio.wait_for(session.context.tracing.stop(path=str(path)),
                                   timeout=self.settings.nav_timeout_ms / 1000 + 10)
        except Exception as error:  # a trace is for a person replaying the visit: never the slot's failure
            log.warning("could not write the browser trace %s: %s: %s", path, type(error).__name__, error)

    async def closed_sessions(self) -> None:
        """Wait until the contexts of the sessions that have ended are closed."""
        while self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    async def _prepared_session(self, viewport: Viewport | None, *, relaunch: bool = True) -> PageSession:
        context = await self._new_context(viewport, relaunch=relaunch)
        try:
            return await PageSession.prepare(context, nav_timeout_ms=self.settings.nav_timeout_ms,
                                             settle_ms=self.settings.settle_ms, watch_ms=self.settings.watch_ms,
                                             network_boundary=self.network_boundary)
        except BaseException:
            await _close(context)
            raise

    def _prepare_spare(self) -> None:
        """Start preparing the next default-viewport session in the background, unless one is on its way."""
        if not self.settings.spare_page or self._spare is not None or self._browser is None:
            return
        self._spare = asyncio.get_running_loop().create_task(self._prepared_session(None, relaunch=False))

    async def _take_spare(self) -> PageSession | None:
        """The prepared session, if it was made in this event loop on the browser that is still running."""
        if self._hung:  # its preparation may wait on the busy browser for ever: dropped with it
            await self._drop_spare()
            return None
        task, self._spare = self._spare, None
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            return None
        try:  # bounded: a spare begun on a browser that then crashed can wait on it for ever
            session = await asyncio.wait_for(task, timeout=self.settings.nav_timeout_ms / 1000)
        except Exception:  # preparing failed or stalled (the browser died meanwhile): a fresh one relaunches it
            log.debug("the prepared page is unusable; opening a fresh one", exc_info=True)
            return None
        if self._browser_gone() or session.context.browser is not self._browser:
            await _close(session.context)
            return None
        self.spares_used += 1
        return session

    async def _drop_spare(self) -> None:
        task, self._spare = self._spare, None
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            return
        task.cancel()
        (result,) = await asyncio.gather(task, return_exceptions=True)
        if isinstance(result, PageSession):
            await _close(result.context)


async def _start_trace(session: PageSession, title: str | None) -> bool:
    """Start Playwright's tracing on the session's context; False (and a warning) when it cannot."""
    try:
        await session.context.tracing.start(screenshots=True, snapshots=True, title=title)
    except Exception as error:  # a trace is for a person replaying the visit: never the slot's failure
        log.warning("could not start the browser trace: %s: %s", type(error).__name__, error)
        return False
    return True


async def _close_browser(browser: Browser) -> None:
    try:  # bounded: a browser a page left too busy to answer may never confirm
        await asyncio.wait_for(browser.close(), timeout=10)
    except Exception:  # already dead: nothing left to close
        pass


async def _close(context: BrowserContext) -> None:
    try:
        await asyncio.wait_for(context.close(), timeout=10)
    except Exception:  # the browser may have crashed under us; the next session relaunches it
        pass


class BrowserPools:
    """The run's browsers, `concurrency.browsers` of them, and its visits, `concurrency.visits` at once.

    A visit (`checkout()`) gets a browser for as long as it lasts: the one with the fewest visits on it, a launched
    one before one that has not launched yet. Each visit opens its own context and page on it (PageSession), so
    many visits share one browser process: a visit that waits on a model (an actor's step, UI-TARS) holds a
    context, a renderer and its artifact server, never a browser of its own (docs/performance.md "Visits that
    wait"). The first browser launches at start, each other one when a visit first needs it, so a run launches
    no more browsers than it has visits at once. The engine's workers and a suite's own rendering (MT-Web2Code)
    share this one set, so a run never launches a browser outside it.
    """

    def __init__(self, pools: Sequence[BrowserPool], *, visits: int | None = None) -> None:
        self._pools = list(pools)
        # None: one visit per browser at a time (a caller that sets no limit gets browsers as workers).
        self.visits = visits if visits is not None else max(1, len(self._pools))
        if self.visits < 1:
            raise ValueError(f"visits = {visits}: at least one visit at a time")
        self._slots: asyncio.Semaphore | None = None  # made in the event loop that checks out
        self._slots_loop: asyncio.AbstractEventLoop | None = None
        self._active = [0] * len(self._pools)  # visits on each browser now
        self.in_flight = 0  # visits now, all browsers together
        self.peak_in_flight = 0  # the most visits at once (benches, tests)
        self.peak_per_browser = 0  # the most visits one browser held at once

    @classmethod
    async def start(cls, settings: Sequence[BrowserSettings], *, visits: int | None = None,
                    witness: BrowserWitness | None = None) -> "BrowserPools":
        """One pool per settings (docker: each its own browser container), the first one started; `visits`: how
        many visits at once over all of them (None: one per browser); `witness`: the sandbox (BrowserWitness)."""
        pools = cls([BrowserPool(item, witness=witness) for item in settings], visits=visits)
        try:
            if pools._pools:
                await pools._pools[0].start()
        except BaseException:
            await pools.aclose()
            raise
        return pools

    def __iter__(self) -> Iterator[BrowserPool]:
        return iter(self._pools)

    def __len__(self) -> int:
        return len(self._pools)

    @property
    def launches(self) -> int:
        """Browser launches of all pools together (relaunches included)."""
        return sum(pool.launches for pool in self._pools)

    def _least_busy(self) -> int:
        """The browser for the next visit: fewest visits on it, then one already launched, then the first."""
        return min(range(len(self._pools)),
                   key=lambda i: (self._active[i], self._pools[i].launches == 0, i))

    @asynccontextmanager
    async def checkout(self) -> AsyncIterator[BrowserPool]:
        """A browser for one visit until the block ends (shared with other visits, each in its own context);
        waits while `visits` visits are under way."""
        if not self._pools:
            raise RuntimeError("no browser to visit with: the run has none")
        loop = asyncio.get_running_loop()
        if self._slots is None or (self._slots_loop is not loop and self.in_flight == 0):
            self._slots, self._slots_loop = asyncio.Semaphore(self.visits), loop  # a pool set may outlive a loop
        async with self._slots:
            index = self._least_busy()
            self._active[index] += 1
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self.peak_per_browser = max(self.peak_per_browser, self._active[index])
            try:
                pool = self._pools[index]
                if pool.launches == 0:  # launched now: a confined browser's namespace, where servers listen, with it
                    await pool.start()
                yield pool
            finally:
                self._active[index] -= 1
                self.in_flight -= 1

    async def aclose(self) -> None:
        for pool in self._pools:
            await pool.aclose()
