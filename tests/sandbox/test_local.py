"""LocalSandbox with real bubblewrap, real cgroups and real Vite builds."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import time
from pathlib import Path

import httpx
import pytest

from runner.sandbox import limits, local
from runner.sandbox.limits import CgroupSet, ResourceLimits
from runner.sandbox.local import LocalSandbox, LocalSandboxSettings
from runner.sandbox.server import CSP
from tests.support.components import missing

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason=missing("bubblewrap", "bubblewrap is not installed")),
]

COUNTER_APP = """import { useState } from "react";
import { label } from "./label.js";

export default function App() {
  const [count, setCount] = useState(0);
  return <button onClick={() => setCount(count + 1)}>{label}: {count}</button>;
}
"""
FILES = {"src/App.jsx": COUNTER_APP, "src/label.js": 'export const label = "Clicks";\n'}


def _build(files, workspace: Path, **settings):
    return asyncio.run(LocalSandbox(LocalSandboxSettings(**settings)).build(files, workspace))


def _run_command(tmp_path: Path, command: list[str], **settings):
    """Run a test-only command in the build sandbox instead of vite (the build_command hook)."""
    return _build(FILES, tmp_path / "ws", build_command=command, **settings)


@pytest.fixture
def created_cgroups(monkeypatch):
    """Records the cgroups this test's sandboxes create (other runs may share the machine)."""
    created: list[CgroupSet] = []

    def recording(*args, **kwargs):
        cgroups = limits.create_cgroups(*args, **kwargs)
        created.append(cgroups)
        return cgroups

    monkeypatch.setattr(local, "create_cgroups", recording)
    return created


def _leftover(created: list[CgroupSet]) -> list[Path]:
    assert created, "no cgroups were created"
    return [d for c in created for d in (c.memory, c.pids) if d is not None and d.exists()]


@pytest.mark.build
def test_good_app_builds_and_is_served(tmp_path, created_cgroups):
    async def scenario():
        sandbox = LocalSandbox(LocalSandboxSettings())
        result = await sandbox.build(FILES, tmp_path / "ws")
        assert result.status == "ok", result.log
        assert result.dist_dir == (tmp_path / "ws" / "dist").resolve()
        assert "built in" in result.log
        started = time.monotonic()
        async with sandbox.serve(result.dist_dir) as served:
            serve_start = time.monotonic() - started
            assert served.url.startswith("http://127.0.0.1:") and served.url.endswith("/")
            async with httpx.AsyncClient(trust_env=False, timeout=5) as client:
                index = await client.get(served.url)
                assert index.status_code == 200
                assert index.headers["content-security-policy"] == CSP
                assert index.headers["x-content-type-options"] == "nosniff"
                assert index.headers["content-type"].startswith("text/html")
                script = index.text.split('src="./', 1)[1].split('"', 1)[0]
                asset = await client.get(served.url + script)
                assert asset.status_code == 200
                assert asset.headers["content-type"].startswith("text/javascript")
                assert asset.headers["content-security-policy"] == CSP
                assert "Clicks" in asset.text
        await sandbox.aclose()
        print(f"build {result.duration_s:.2f}s, serve start {serve_start:.2f}s")
        with pytest.raises(httpx.HTTPError):  # the server is gone after the context exits
            httpx.get(served.url, timeout=2, trust_env=False)

    asyncio.run(scenario())
    assert _leftover(created_cgroups) == []


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ({"src/App.jsx": COUNTER_APP, "styles/x.css": ""}, "under src/"),
        ({"src/App.jsx": COUNTER_APP, "src/main.jsx": "alert(1)"}, "reserved"),
        ({"src/App.jsx": COUNTER_APP, "vite.config.js": "export default {}"}, "reserved"),
        ({"src/../../etc/x.js": ""}, "'..'"),
        ({"src/App.jsx": 'import axios from "axios";\nexport default () => null;'}, "does not provide"),
    ],
)
def test_bad_file_sets_are_rejected(tmp_path, files, fragment):
    result = _build(files, tmp_path / "ws")
    assert result.status == "rejected"
    assert any(fragment in reason for reason in result.rejected), result.rejected
    assert fragment in result.log
    assert not (tmp_path / "ws").exists()  # nothing was written or built


@pytest.mark.build
def test_compile_error_is_build_failed_with_log(tmp_path):
    files = {"src/App.jsx": 'import { x } from "./missing.js";\nexport default function App() { return <p>{x}</p>; }'}
    result = _build(files, tmp_path / "ws")
    assert result.status == "build_failed"
    assert "missing.js" in result.log
    assert result.dist_dir is None


def test_hanging_build_times_out_quickly(tmp_path, created_cgroups):
    started = time.monotonic()
    result = _run_command(tmp_path, ["node", "-e", "while (true) {}"], build_timeout_s=1.0)
    elapsed = time.monotonic() - started
    assert result.status == "timeout", result.log
    assert elapsed < 6, elapsed
    assert "timeout" in result.log
    assert _leftover(created_cgroups) == []


def test_memory_hog_is_killed_by_memory_limit(tmp_path):
    hog = "const a = []; for (;;) { a.push(Buffer.alloc(16 * 1024 * 1024, 1)); }"
    result = _run_command(tmp_path, ["node", "-e", hog], limits=ResourceLimits(memory_mb=256))
    assert result.status in ("build_failed", "infra"), result.log
    assert "OOM" in result.log, result.log


def test_process_count_is_limited(tmp_path, created_cgroups):
    script = (
        "const cp = require('child_process'); let ok = 0, failed = 0;"
        "for (let i = 0; i < 80; i++) { try { const c = cp.spawn('sleep', ['5']); c.on('error', () => {}); ok++; }"
        " catch (e) { failed++; } }"
        "setTimeout(() => { console.log('spawned', ok, failed); process.exit(0); }, 300);"
    )
    result = _run_command(tmp_path, ["node", "-e", script], limits=ResourceLimits(max_processes=32))
    # pids.max refuses the forks (EAGAIN); the sandbox still finishes and leaves nothing behind.
    assert result.status in ("ok", "build_failed"), result.log
    assert "EAGAIN" in result.log or "spawned" in result.log
    assert _leftover(created_cgroups) == []


def test_output_size_is_limited(tmp_path):
    script = "require('fs').writeFileSync('big.bin', Buffer.alloc(3 * 1024 * 1024))"
    result = _run_command(tmp_path, ["node", "-e", script], limits=ResourceLimits(max_output_mb=2))
    assert result.status == "build_failed"
    assert "EFBIG" in result.log


def test_no_network_inside_sandbox(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    script = (
        f"const s = require('net').connect({port}, '127.0.0.1');"
        "s.on('connect', () => { console.log('CONNECTED'); process.exit(3); });"
        "s.on('error', (e) => { console.log('NETERR', e.code); process.exit(0); });"
    )
    try:
        result = _run_command(tmp_path, ["node", "-e", script])
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    assert result.status == "ok", result.log
    assert "NETERR" in result.log and "CONNECTED" not in result.log


def test_host_folders_are_not_visible(tmp_path):
    script = """
const fs = require('fs');
const seen = {};
for (const p of ['/root', '/work', '/home', '/etc/passwd', '/app/package.json', '/node_modules/vite', '/usr/bin']) {
  seen[p] = fs.existsSync(p);
}
for (const p of ['/usr/pwned', '/node_modules/pwned', '/app/src/main.jsx']) {
  try { fs.writeFileSync(p, 'x'); seen['write:' + p] = 'ok'; } catch (e) { seen['write:' + p] = e.code; }
}
seen.env = Object.keys(process.env).sort();
console.log('SEEN' + JSON.stringify(seen));
"""
    result = _run_command(tmp_path, ["node", "-e", script])
    assert result.status == "ok", result.log
    seen = json.loads(result.log.split("SEEN", 1)[1].splitlines()[0])
    assert seen["/root"] is False and seen["/work"] is False and seen["/home"] is False
    assert seen["/etc/passwd"] is False
    assert seen["/app/package.json"] and seen["/node_modules/vite"] and seen["/usr/bin"]
    assert seen["write:/usr/pwned"] == "EROFS" and seen["write:/node_modules/pwned"] == "EROFS"
    assert seen["write:/app/src/main.jsx"] == "ok"  # the workspace itself is writable
    assert set(seen["env"]) <= {"PATH", "HOME", "LANG", "NODE_ENV", "NO_COLOR", "PWD"}


def test_missing_bwrap_is_infra(tmp_path):
    result = _build(FILES, tmp_path / "ws", bwrap="/nonexistent/bwrap")
    assert result.status == "infra"
    assert "bubblewrap" in result.log


@pytest.mark.build
def test_concurrent_builds_in_one_loop(tmp_path):
    async def scenario():
        sandbox = LocalSandbox(LocalSandboxSettings())
        other = {"src/App.jsx": "export default function App() { return <h2>Other</h2>; }"}
        return await asyncio.gather(sandbox.build(FILES, tmp_path / "a"), sandbox.build(other, tmp_path / "b"))

    first, second = asyncio.run(scenario())
    assert first.status == "ok" and second.status == "ok", first.log + second.log
    assert first.dist_dir != second.dist_dir
