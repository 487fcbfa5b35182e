"""LocalSandbox with real bubblewrap, real cgroups and real Vite builds."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import time
from pathlib import Path

import httpx
import pytest

from runner.sandbox import local, pipeline
from runner.sandbox.limits import ResourceLimits
from runner.sandbox.local import LocalSandbox, LocalSandboxSettings
from runner.sandbox.server import CSP
from tests.support.cgroups import leftover_cgroups
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
    assert leftover_cgroups(created_cgroups) == []


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ({"src/App.jsx": COUNTER_APP, "styles/x.css": ""}, "under src/"),
        ({"src/App.jsx": COUNTER_APP, "src/main.jsx": "alert(1)"}, "reserved"),
        ({"src/App.jsx": COUNTER_APP, "vite.config.js": "export default {}"}, "reserved"),
        ({"src/../../etc/x.js": ""}, "'..'"),
        ({"src/App.jsx": 'import axios from "axios";\nexport default () => null;'}, "does not provide"),
        ({"src/App.jsx": "import e from '../../../proc/1/environ?raw';"}, "outside the workspace"),
        ({"src/App.jsx": "import.meta.glob('../../../proc/*/environ');"}, "outside the workspace"),
        ({"src/App.jsx": COUNTER_APP, "src/x\x00.js": ""}, "NUL"),
        ({"src/App.jsx": COUNTER_APP, "src/" + "n" * 256 + ".js": ""}, "over 255 bytes"),
        ({"src/App.jsx": COUNTER_APP, "src/lib": "", "src/lib/a.js": ""}, "also the folder"),
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
    assert leftover_cgroups(created_cgroups) == []


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
    assert leftover_cgroups(created_cgroups) == []


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
for (const p of ['/usr/pwned', '/node_modules/pwned', '/opt/node-compile-cache/pwned', '/app/src/main.jsx']) {
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
    # The compile cache every build loads Vite from is read-only: no build can plant code for the next one.
    assert seen["write:/opt/node-compile-cache/pwned"] == "EROFS"
    assert seen["write:/app/src/main.jsx"] == "ok"  # the workspace itself is writable
    assert set(seen["env"]) <= {"PATH", "HOME", "LANG", "NODE_ENV", "NO_COLOR", "PWD", "NODE_COMPILE_CACHE"}


_COMPILE_CACHE_SEEN = """
const fs = require('fs');
const dir = process.env.NODE_COMPILE_CACHE;
console.log('CACHE' + JSON.stringify({ dir: dir || null, entries: dir ? fs.readdirSync(dir).length : 0 }));
"""


def _seen_cache(result) -> dict:
    assert result.status == "ok", result.log
    return json.loads(result.log.split("CACHE", 1)[1].splitlines()[0])


@pytest.mark.build
def test_builds_load_vite_from_a_compile_cache_warmed_once(tmp_path, monkeypatch):
    """The first build warms the cache with the template's own sources (a real vite build), later builds
    get it read-only at NODE_COMPILE_CACHE; `compile_cache: false` turns it off."""
    folder = tmp_path / "cache" / "key"
    monkeypatch.setattr(local, "compile_cache_dir", lambda *args: folder)
    seen = _seen_cache(_run_command(tmp_path / "a", ["node", "-e", _COMPILE_CACHE_SEEN]))
    assert seen["dir"] == "/opt/node-compile-cache" and seen["entries"] >= 1
    assert any(path.is_file() and path.stat().st_size > 0 for path in folder.rglob("*"))
    assert [p.name for p in folder.parent.iterdir()] == ["key"]  # the warming folder is gone
    warmed = {path: path.stat().st_mtime_ns for path in folder.rglob("*")}
    result = _build(FILES, tmp_path / "b" / "ws")
    assert result.ok, result.log
    assert {path: path.stat().st_mtime_ns for path in folder.rglob("*")} == warmed  # read, never rewritten
    off = _seen_cache(_run_command(tmp_path / "c", ["node", "-e", _COMPILE_CACHE_SEEN], compile_cache=False))
    assert off == {"dir": None, "entries": 0}


@pytest.mark.build
def test_a_cache_that_cannot_be_warmed_leaves_builds_working(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache's parent folder would go")
    monkeypatch.setattr(local, "compile_cache_dir", lambda *args: blocker / "key")
    seen = _seen_cache(_run_command(tmp_path, ["node", "-e", _COMPILE_CACHE_SEEN]))
    assert seen == {"dir": None, "entries": 0}
    result = _build(FILES, tmp_path / "vite" / "ws")
    assert result.ok, result.log


_READ_PROC = """
for f in /proc/1/environ /proc/self/environ /proc/self/mountinfo; do
  echo "== $f"; (tr '\\0' '\\n' < "$f") 2>&1 || echo "unreadable: $f"
done
"""


@pytest.mark.parametrize("mount_proc", [False, True], ids=["no-proc", "fresh-proc"])
def test_the_runners_environment_is_invisible_inside_the_sandbox(tmp_path, monkeypatch, mount_proc):
    # bubblewrap is pid 1 inside: its own environment must be the scrubbed one, not the runner's.
    secret = "sk-genui-in-the-runners-env-0123456789"
    monkeypatch.setenv("GENUI_TEST_SECRET", secret)
    result = _run_command(tmp_path, ["/bin/sh", "-c", _READ_PROC], mount_proc=mount_proc)
    assert result.status == "ok", result.log
    assert "== /proc/self/mountinfo" in result.log
    assert secret not in result.log and "GENUI_TEST_SECRET" not in result.log
    if mount_proc:  # opt-in: pid 1's environment is readable, and it is the scrubbed one
        environ_of_pid1 = result.log.split("== /proc/1/environ", 1)[1].split("== ", 1)[0]
        assert "PATH=/usr/bin:/bin" in environ_of_pid1
    else:  # the default: no /proc at all, so no environment and no host path (mountinfo) to read
        assert "unreadable: /proc/1/environ" in result.log and "unreadable: /proc/self/mountinfo" in result.log
        assert str(tmp_path) not in result.log


@pytest.mark.build
@pytest.mark.parametrize(("name", "files"), [
    ("raw-import", {"src/App.jsx": "import e from '../../usr/lib/os-release?raw';\nexport default () => e;\n"}),
    ("glob", {"src/App.jsx": "const m = import.meta.glob('../../usr/lib/os-rel*', { query: '?raw', eager: true });\n"
                             "export default () => JSON.stringify(m);\n"}),
    ("css-url", {"src/App.jsx": "import './x.css';\nexport default () => null;\n",
                 "src/x.css": "body { background: url(../../usr/share/common-licenses/GPL-3); }\n"}),
])
def test_vite_guard_fails_builds_that_reach_outside_the_workspace(tmp_path, monkeypatch, name, files):
    # The static check would refuse these; with it out of the way, the build-time guard still must.
    monkeypatch.setattr(pipeline, "rejection", lambda *args, **kwargs: None)
    result = _build(files, tmp_path / "ws")
    assert result.status == "build_failed", result.log
    assert "genui-workspace-guard" in result.log and "outside the workspace" in result.log


@pytest.mark.build
def test_vite_guard_lets_workspace_files_through(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "rejection", lambda *args, **kwargs: None)
    files = {"src/App.jsx": "import page from '../index.html?raw';\nimport './x.css';\n"
                            "export default () => <pre>{page.length}</pre>;\n",
             "src/x.css": "body { color: red; }\n"}
    result = _build(files, tmp_path / "ws")
    assert result.status == "ok", result.log


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


# --- FlowEval's template (Appendix A: React JSX + TailwindCSS + FontAwesome) ------------------------

def _build_in(template: str, files, workspace: Path):
    return asyncio.run(LocalSandbox(LocalSandboxSettings()).build(files, workspace, template=template))


@pytest.mark.build
def test_floweval_app_builds_with_tailwind_and_fontawesome(tmp_path):
    from tests.support import floweval_app

    result = _build_in("floweval", floweval_app.FILES, tmp_path / "ws")
    assert result.status == "ok", result.log
    floweval_app.assert_tailwind_and_icon_built(result.dist_dir)


@pytest.mark.parametrize("reserved", ["tailwind.config.js", "vite.config.js", "index.html", "src/main.jsx",
                                      "src/index.css"])
def test_floweval_reserved_files_cannot_be_overwritten(tmp_path, reserved):
    from tests.support import floweval_app

    files = {**floweval_app.FILES, reserved: "export default { content: ['/**/*'] };\n"}
    result = _build_in("floweval", files, tmp_path / "ws")
    assert result.status == "rejected"
    assert any(reserved in reason and "reserved" in reason for reason in result.rejected), result.rejected
    assert not (tmp_path / "ws").exists()


@pytest.mark.build
def test_floweval_workspace_guard_still_applies(tmp_path, monkeypatch):
    # With the static check out of the way, the template's vite config still loads the build-time guard.
    monkeypatch.setattr(pipeline, "rejection", lambda *args, **kwargs: None)
    files = {"src/App.jsx": "import e from '../../usr/lib/os-release?raw';\nexport default () => e;\n"}
    result = _build_in("floweval", files, tmp_path / "ws")
    assert result.status == "build_failed", result.log
    assert "genui-workspace-guard" in result.log and "outside the workspace" in result.log


@pytest.mark.parametrize("configured", [None, "node"], ids=["pinned", "host"])
def test_builds_run_the_pinned_build_node_unless_another_is_named(configured):
    """The default build Node is the project's pin (runner/sandbox/build_node.py), mounted read-only; naming a
    Node (here the host's) runs that one instead."""
    import subprocess

    from runner.sandbox.build_node import build_node_version

    isolation = local.BubblewrapIsolation(LocalSandboxSettings(node=configured))

    async def version() -> str:
        tools = await isolation.build_tools(None)
        outcome = await isolation.run([tools.node, "--version"], tools.mounts, cwd="/", env={}, timeout_s=30)
        assert outcome.exit_code == 0, outcome.output
        return outcome.output.strip()

    seen = asyncio.run(version())
    if configured is None:
        assert seen == f"v{build_node_version()}"
    else:
        assert seen == subprocess.run([shutil.which("node"), "--version"], capture_output=True, text=True).stdout.strip()


def test_a_run_started_ahead_waits_niced_and_builds_at_a_cold_builds_priority(tmp_path, created_cgroups):
    """start_waiting: the command starts now in its own sandbox and cgroups, at SPARE_NICE while it waits (as root),
    gets its go line on stdin from finish(), at niceness 0 from then on; discard() stops one never used."""
    script = "nice; read line; echo \"got $line\"; nice"

    async def scenario():
        isolation = LocalSandbox(LocalSandboxSettings()).isolation
        mounts = [local.Mount(tmp_path, "/app", writable=True)]
        waiting = await isolation.start_waiting(["/bin/sh", "-c", script], mounts, cwd="/app", env={})
        unused = await isolation.start_waiting(["/bin/sh", "-c", "read line; echo ran"], mounts, cwd="/app", env={})
        await asyncio.sleep(0.3)
        alive = waiting.alive() and unused.alive()
        outcome = await waiting.finish(5.0)
        await unused.discard()
        return alive, outcome, unused

    alive, outcome, unused = asyncio.run(scenario())
    assert alive and outcome.exit_code == 0, outcome.output
    niced = local.SPARE_NICE if os.geteuid() == 0 else 0
    assert outcome.output.split() == [str(niced), "got", "go", "0"]
    assert not unused.alive() and "ran" not in unused.sink.text()
    assert leftover_cgroups(created_cgroups) == []
