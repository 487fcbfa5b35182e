"""Small vanilla-JS pages served by a threaded stdlib http.server on 127.0.0.1, plus a real Chromium.

The server also answers `POST /tool` ({"tool", "arguments"}) like a tool bridge: it appends
{"tool", "arguments", "ok"} to `Site.tool_log` and, when `Site.log_path` is set, to that JSONL file.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

import pytest

from runner.browser.launch import BrowserPool, BrowserSettings
from runner.browser.session import PageSession
from tests.support.components import skip_missing


@dataclass
class Site:
    root: Path
    base_url: str
    tool_log: list[dict[str, Any]] = field(default_factory=list)
    log_path: Path | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def page(self, name: str, html: str) -> str:
        (self.root / name).write_text(html)
        return f"{self.base_url}/{name}"

    def record_call(self, call: dict[str, Any]) -> None:
        with self.lock:
            self.tool_log.append(call)
            if self.log_path is not None:
                with self.log_path.open("a") as handle:
                    handle.write(json.dumps(call) + "\n")


class _Handler(SimpleHTTPRequestHandler):
    site: Site

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        if self.path not in ("/tool", "/__tools/call"):  # the second is the artifact server's bridge path
            self.send_error(404)
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        time.sleep(float(body.get("delay_ms") or 0) / 1000)  # a slow tool backend
        call = {"tool": body.get("tool"), "arguments": body.get("arguments") or {}, "ok": not body.get("fail")}
        self.site.record_call(call)
        payload = json.dumps({"ok": call["ok"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    root = tmp_path / "site"
    root.mkdir()
    holder = Site(root=root, base_url="")
    handler = type("Handler", (_Handler,), {"site": holder})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
    server.daemon_threads = True
    holder.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield holder
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def on_page(url: str, body: Callable[[PageSession], Awaitable[Any]], *, load: bool = True) -> Any:
    """Run `body(session)` on a freshly loaded page of a real Chromium; returns its result."""

    async def main() -> Any:
        async with BrowserPool(BrowserSettings(settle_ms=50)) as pool:
            async with pool.session(url) as session:
                if load:
                    await session.goto()
                return await asyncio.wait_for(body(session), timeout=60)

    return asyncio.run(main())


TODO_PAGE = """<!doctype html><html><body>
<h1>Todos</h1>
<label for="task">Task</label><input id="task" data-testid="task-input">
<button id="add">Add</button>
<ul id="list"></ul>
<script>
  document.getElementById('add').addEventListener('click', () => {
    const input = document.getElementById('task');
    if (!input.value.trim()) return;
    const li = document.createElement('li');
    li.className = 'todo';
    li.dataset.state = 'open';
    li.textContent = input.value;
    document.getElementById('list').appendChild(li);
    input.value = '';
    %(on_add)s
  });
</script>
</body></html>"""


def todo_page(on_add: str = "") -> str:
    return TODO_PAGE % {"on_add": on_add}


DEAD_PAGE = """<!doctype html><html><body>
<h1>Todos</h1>
<label for="task">Task</label><input id="task" data-testid="task-input">
<button id="add">Add</button>
<ul id="list"></ul>
</body></html>"""

TOOL_PAGE = """<!doctype html><html><body>
<label for="title">Title</label><input id="title">
<button id="save">Save</button>
<p id="status"></p>
<script>
  document.getElementById('save').addEventListener('click', async () => {
    const title = document.getElementById('title').value;
    const response = await fetch('/tool', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({tool: 'create_note', arguments: {title, tags: ['a', 'b'], priority: 2}})});
    const data = await response.json();
    document.getElementById('status').textContent = data.ok ? 'Saved ' + title : 'Failed';
  });
</script>
</body></html>"""


@pytest.fixture
def browse() -> Callable[..., Any]:
    """`browse(url, body)`: run an async body on a freshly loaded page (see on_page)."""
    if not Path(BrowserSettings().executable_path or "").exists():
        skip_missing("chromium", "system Chromium not installed (scripts/setup.sh installs it)")
    return on_page


@pytest.fixture
def pages() -> Any:
    """The HTML of the test pages: todo(on_add=""), dead, tool."""
    from types import SimpleNamespace

    return SimpleNamespace(todo=todo_page, dead=DEAD_PAGE, tool=TOOL_PAGE)
