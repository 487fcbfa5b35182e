"""What the harness's isolated world costs: a load, and a read, with it and without it, in one run.

    .venv/bin/python bench/harness_world.py [--loads 40] [--reads 200]

Every read a verdict depends on runs in the harness's own world of the page (runner/browser/harness_world.py): a
DevTools isolated world the page cannot reach, made in every document by the page's own DevTools session. This
bench serves the smoke counter's reference page (plain HTML with its React bundle would need a build; a page of
the same shape: a heading, a paragraph, a button and a script that renders them) and measures, alternating so
that the machine's load falls on both alike:

- a load (PageSession.goto minus its settle window) in a session whose harness world is made in every new
  document (as the runner does) and in one whose DevTools session neither turns the Page domain on nor adds the
  world's script (the world is then made on the load's first read instead: what the per-document script and the
  Page domain's events cost);
- a read (the mutation count) through the harness world (`observe`) and through Playwright's page.evaluate in
  the page's world, as the harness read before.

Prints the medians and their ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner.browser.harness_world import HarnessWorld  # noqa: E402
from runner.browser.launch import BrowserPool, BrowserSettings  # noqa: E402

PAGE = b"""<!doctype html><html><head><title>Counter</title></head><body><div id=root></div><script>
const root = document.getElementById('root');
let count = 0;
const render = () => { root.innerHTML = '<main><h1>Counter</h1><p>Count: ' + count + '</p>'
  + '<button id=inc>Increment</button></main>';
  document.getElementById('inc').onclick = () => { count += 1; render(); }; };
render();
</script></body></html>"""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


async def _bare_world(context, page):  # noqa: ANN001, ANN202 (HarnessWorld.install's signature)
    return HarnessWorld(await context.new_cdp_session(page))


async def _loads(pool: BrowserPool, url: str, *, world: bool, count: int) -> list[float]:
    seconds = []
    patch = mock.patch.object(HarnessWorld, "install", _bare_world) if not world else mock.patch.object(
        HarnessWorld, "install", HarnessWorld.install)
    with patch:
        async with pool.session(url) as session:
            for _ in range(count):
                took = await session.goto()
                seconds.append(took - session.settle_ms / 1000)
    return seconds


async def main(loads: int, reads: int) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    with_world: list[float] = []
    without: list[float] = []
    async with BrowserPool(BrowserSettings(spare_page=False)) as pool:
        for _ in range(4):  # alternate, so that the machine's load falls on both alike
            with_world += await _loads(pool, url, world=True, count=loads // 4)
            without += await _loads(pool, url, world=False, count=loads // 4)
        observed: list[float] = []
        in_page: list[float] = []
        async with pool.session(url) as session:
            await session.goto()
            for _ in range(reads):
                started = time.perf_counter()
                await session.mutation_count()
                observed.append(time.perf_counter() - started)
                started = time.perf_counter()
                await session.page.evaluate("(t) => document.body.childNodes.length + (t ? 1 : 0)", True)
                in_page.append(time.perf_counter() - started)
    server.shutdown()
    load_with, load_without = statistics.median(with_world), statistics.median(without)
    read_world, read_page = statistics.median(observed), statistics.median(in_page)
    print(f"load (goto minus settle), median of {len(with_world)}: with the harness world {load_with * 1000:.1f} ms, "
          f"made on first read {load_without * 1000:.1f} ms: x{load_with / load_without:.2f} "
          f"({(load_with - load_without) * 1000:+.1f} ms a load)")
    print(f"read, median of {reads}: harness world (observe) {read_world * 1000:.2f} ms, page world "
          f"(page.evaluate) {read_page * 1000:.2f} ms: x{read_world / read_page:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=40)
    parser.add_argument("--reads", type=int, default=200)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.loads, arguments.reads))
