"""The artifact server, run inside bubblewrap by LocalSandbox.serve: static files, CSP, tool bridge."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.async_api import expect

from runner.sandbox.base import ToolBridge
from runner.sandbox.local import LocalSandbox, LocalSandboxSettings
from runner.sandbox.server import CSP
from runner.suites.evogenui.suite import BRIDGE_RUNTIME
from tests.support.components import missing

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason=missing("bubblewrap", "bubblewrap is not installed")),
]

BACKEND = '''
TOOL_SCHEMAS = {
    "add_item": {
        "description": "Add an item to the cart",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}},
            "required": ["name", "qty"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        },
    },
    "broken": {
        "description": "Returns a result that violates its schema",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "required": ["count"]},
    },
}


def invoke(tool, args, state):
    if tool == "add_item":
        state.setdefault("cart", []).append({"name": args["name"], "qty": args["qty"]})
        return {"count": len(state["cart"])}
    return {"oops": True}
'''


def _make_dist(root: Path) -> Path:
    dist = root / "dist"
    (dist / "assets" / "fonts").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>t</title><p>hello</p>")
    (dist / "assets" / "app.js").write_text("console.log(1)")
    (dist / "assets" / "app.css").write_text("p{}")
    (dist / "assets" / "logo.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (dist / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (dist / "assets" / "fonts" / "f.woff2").write_bytes(b"wOF2")
    (root / "secret.txt").write_text("outside the dist folder")
    return dist


def _raw_get(url: str, path: str) -> tuple[int, bytes]:
    """A GET with the path sent verbatim (httpx would normalise `..`)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as conn:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data.split(b"\r\n\r\n", 1)[1]


def test_static_files_mime_csp_and_404s(tmp_path):
    dist = _make_dist(tmp_path)

    async def scenario():
        sandbox = LocalSandbox(LocalSandboxSettings())
        async with sandbox.serve(dist) as served:
            async with httpx.AsyncClient(trust_env=False, timeout=5, base_url=served.url) as client:
                expected = {
                    "/": "text/html",
                    "/index.html": "text/html",
                    "/assets/app.js": "text/javascript",
                    "/assets/app.css": "text/css",
                    "/assets/logo.svg": "image/svg+xml",
                    "/assets/logo.png": "image/png",
                    "/assets/fonts/f.woff2": "font/woff2",
                    "/assets/app.js?v=1": "text/javascript",
                }
                for path, mime in expected.items():
                    response = await client.get(path)
                    assert response.status_code == 200, path
                    assert response.headers["content-type"].startswith(mime), path
                    assert response.headers["content-security-policy"] == CSP
                    assert response.headers["x-content-type-options"] == "nosniff"
                for path in ("/missing.js", "/assets/", "/assets", "/__tools/list"):
                    response = await client.get(path)
                    assert response.status_code == 404, path  # no listing; no bridge configured
                    assert response.headers["content-security-policy"] == CSP
                assert (await client.post("/__tools/call", json={"tool": "x"})).status_code == 404
                unsupported = await client.put("/index.html", content=b"x")  # stdlib error page
                assert unsupported.status_code == 501
                assert unsupported.headers["content-security-policy"] == CSP
                head = await client.head("/assets/app.js")
                assert head.status_code == 200 and head.content == b""
            for path in ("/../secret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt"):
                status, body = await asyncio.to_thread(_raw_get, served.url, path)
                assert status == 404 and b"outside" not in body, path

    asyncio.run(scenario())


def test_tool_bridge_calls_validation_log_and_state(tmp_path):
    dist = _make_dist(tmp_path)
    backends = tmp_path / "backends"
    backends.mkdir()
    (backends / "shop.py").write_text(BACKEND)
    run_dir = tmp_path / "turn"
    run_dir.mkdir()
    (tmp_path / "state_in.json").write_text(json.dumps({"cart": [{"name": "pen", "qty": 1}]}))
    bridge = ToolBridge(
        backends_path=backends,
        fixture_ids={"add_item": "shop", "broken": "shop"},
        state_in=tmp_path / "state_in.json",
        log_out=run_dir / "tools.jsonl",
        state_out=run_dir / "state.json",
        runtime=BRIDGE_RUNTIME,
    )

    async def scenario():
        sandbox = LocalSandbox(LocalSandboxSettings())
        async with sandbox.serve(dist, tool_bridge=bridge) as served:
            async with httpx.AsyncClient(trust_env=False, timeout=5, base_url=served.url) as client:
                listed = (await client.get("/__tools/list")).json()["tools"]
                assert [t["name"] for t in listed] == ["add_item", "broken"]
                assert listed[0]["description"] == "Add an item to the cart"
                assert listed[0]["inputSchema"]["required"] == ["name", "qty"]
                assert "outputSchema" in listed[0]

                ok = await client.post("/__tools/call", json={"tool": "add_item", "arguments": {"name": "ink", "qty": 2}})
                assert ok.status_code == 200 and ok.json() == {"result": {"count": 2}}
                assert ok.headers["content-security-policy"] == CSP
                # State carries over from state_in and between calls.
                again = await client.post("/__tools/call", json={"tool": "add_item", "arguments": {"name": "nib", "qty": 1}})
                assert again.json() == {"result": {"count": 3}}

                bad = await client.post("/__tools/call", json={"tool": "add_item", "arguments": {"name": "x", "qty": 0}})
                assert bad.status_code == 400 and "minimum" in bad.json()["error"]
                extra = await client.post("/__tools/call", json={"tool": "add_item", "arguments": {"name": "x", "qty": 1, "z": 1}})
                assert extra.status_code == 400

                unknown = await client.post("/__tools/call", json={"tool": "delete_everything", "arguments": {}})
                assert unknown.status_code == 404 and "unknown tool" in unknown.json()["error"]

                broken = await client.post("/__tools/call", json={"tool": "broken", "arguments": {}})
                assert broken.status_code == 200 and broken.json() == {"result": {"oops": True}}

                garbage = await client.post("/__tools/call", content=b"not json")
                assert garbage.status_code == 400
            state_now = json.loads(bridge.state_out.read_text())
            assert [item["name"] for item in state_now["cart"]] == ["pen", "ink", "nib"]

    asyncio.run(scenario())

    lines = [json.loads(line) for line in bridge.log_out.read_text().splitlines()]
    assert [entry["seq"] for entry in lines] == [1, 2, 3, 4, 5, 6]
    assert [entry["tool"] for entry in lines] == ["add_item", "add_item", "add_item", "add_item", "delete_everything", "broken"]
    assert [entry["ok"] for entry in lines] == [True, True, False, False, False, False]
    first = lines[0]
    assert first["arguments"] == {"name": "ink", "qty": 2} and first["result"] == {"count": 2}
    assert first["state_before"] == {"cart": [{"name": "pen", "qty": 1}]}
    assert first["state_after"]["cart"][-1] == {"name": "ink", "qty": 2}
    assert lines[1]["state_before"] == first["state_after"]
    assert first["state_delta"] == {"cart": first["state_after"]["cart"]}  # the top-level keys that changed
    assert lines[2]["state_delta"] == {}
    assert "error" in lines[2] and "result" not in lines[2]
    assert lines[2]["state_before"] == lines[2]["state_after"]  # a rejected call changes nothing
    assert "unknown tool" in lines[4]["error"]
    assert "outputSchema" in lines[5]["error"] and lines[5]["result"] == {"oops": True}
    assert all(isinstance(entry["time"], float) for entry in lines)
    assert json.loads((tmp_path / "state_in.json").read_text()) == {"cart": [{"name": "pen", "qty": 1}]}


CHECKOUT = Path(__file__).resolve().parents[1] / "suites" / "evogenui" / "fixtures" / "evogenui_bench"


def test_benchmark_layout_runs_the_checkouts_backend_with_its_semantics(tmp_path):
    """EvoGenUI-Bench's convention in the sandboxed server: its `runtime` package mounted read-only,
    invoke(*, tool=ToolDefinition, args, state), scenario states, writes / tool_trace, HTTP 400 errors."""
    from runner.suites.base import EpisodeState
    from runner.suites.evogenui.suite import EvoGenUISuite, EvoGenUISuiteSettings

    suite = EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui", benchmark_path=str(CHECKOUT),
                                                task_ids=["tg_pantry_restock_ledger"]), project_root=Path.cwd())
    (task,) = asyncio.run(suite.load_tasks())
    turn_dir = tmp_path / "turn"
    turn_dir.mkdir()
    bridge = suite.tool_bridge(task, task.turns[2], EpisodeState(), turn_dir)
    dist = _make_dist(tmp_path)
    ledger = {"ledger_id": "pantry_ledger_12"}

    async def scenario():
        sandbox = LocalSandbox(LocalSandboxSettings())
        async with sandbox.serve(dist, tool_bridge=bridge) as served:
            async with httpx.AsyncClient(trust_env=False, timeout=5, base_url=served.url) as client:
                async def call(tool, arguments, **extra):
                    return await client.post("/__tools/call", json={"tool": tool, "arguments": arguments, **extra})

                listed = (await client.get("/__tools/list")).json()["tools"]
                assert listed == suite.public_contract(task)["tools"]
                write = await call("pantry_restock", {**ledger, "sku": "rice", "count": 3})
                assert write.status_code == 200, write.text
                assert write.json() == {"result": {"success": True, "item": {"sku": "rice", "count": 3}}}
                read = await call("pantry_get_stock", ledger)
                assert [i["sku"] for i in read.json()["result"]["items"]] == ["PRIVATE-SEED-OATS", "rice"]
                bad_args = await call("pantry_restock", {**ledger, "sku": "rice", "count": 0})
                assert bad_args.status_code == 400 and "minimum" in bad_args.json()["error"]
                rejected = await call("pantry_get_stock", {"ledger_id": "pantry_ledger_12", "extra": 1})
                assert rejected.status_code == 400
                unknown = await call("pantry_delete", ledger)
                assert unknown.status_code == 400 and unknown.json()["error"] == "Unknown tool: pantry_delete"
                for sku in ("tea", "salt"):
                    assert (await call("pantry_restock", {**ledger, "sku": sku, "count": 1})).status_code == 200
                # 4 entries > the schema's maximum 3: an error for the page, the trace still records the call
                audit = await call("pantry_audit", ledger)
                assert audit.status_code == 400 and "outputSchema" in audit.json()["error"]
                scenario_missing = await call("pantry_get_stock", ledger, scenario="storm")
                assert scenario_missing.status_code == 400
                assert "Missing scenario fixture for scenario storm" in scenario_missing.json()["error"]

    asyncio.run(scenario())
    log = [json.loads(line) for line in bridge.log_out.read_text().splitlines()]
    assert [entry["tool"] for entry in log] == ["pantry_restock", "pantry_get_stock", "pantry_restock",
                                                "pantry_get_stock", "pantry_delete", "pantry_restock",
                                                "pantry_restock", "pantry_audit", "pantry_get_stock"]
    assert [entry["ok"] for entry in log] == [True, True, False, False, False, True, True, False, False]
    first = log[0]
    assert first["turn"] == 3 and first["scenario"] == "default"
    assert first["state_before"] == {"pantry_ledger_v1": {"items": [{"sku": "PRIVATE-SEED-OATS", "count": 2}]}}
    write_record = {"tool": "pantry_restock", "args": {**ledger, "sku": "rice", "count": 3},
                    "result": {"success": True, "item": {"sku": "rice", "count": 3}}}
    assert first["state_after"]["writes"] == [write_record]
    assert first["state_after"]["tool_trace"] == [{"turn": 3, **write_record}]
    assert set(first["state_delta"]) == {"pantry_ledger_v1", "writes", "tool_trace"}
    assert first["relevant_final_state"]["writes"] == [write_record]
    assert "writes" not in log[1]["state_delta"] and "tool_trace" in log[1]["state_delta"]  # a read: traced only
    assert log[2]["state_before"] == log[2]["state_after"] and "state_delta" in log[2]  # invalid arguments
    audit = log[7]
    assert audit["result"] == {"entries": 4} and audit["state_after"]["tool_trace"][-1]["tool"] == "pantry_audit"
    state = json.loads(bridge.state_out.read_text())
    assert list(state) == ["scenarios"] and state["scenarios"]["default"]["tool_trace"][-1]["tool"] == "pantry_audit"
    runtime_logs = json.loads((turn_dir / "runtime_logs.json").read_text())
    default = runtime_logs["scenarios"]["default"]
    assert default["initial_state"] == {"pantry_ledger_v1": {"items": [{"sku": "PRIVATE-SEED-OATS", "count": 2}]}}
    assert default["state"] == state["scenarios"]["default"]


def test_server_without_network_or_host_files(tmp_path):
    """The server process sees neither the host's /root or /work nor any network but its socket."""
    dist = _make_dist(tmp_path)
    backends = tmp_path / "backends"
    backends.mkdir()
    (backends / "probe.py").write_text(
        '''
import os, socket
TOOL_SCHEMAS = {"probe": {"description": "", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}}

def invoke(tool, args, state):
    try:
        socket.create_connection(("127.0.0.1", args["port"]), timeout=1).close()
        net = "connected"
    except OSError as exc:
        net = type(exc).__name__
    return {"net": net, "root": os.path.exists("/root"), "work": os.path.exists("/work"),
            "home": os.path.exists("/home"), "writable_backends": os.access("/srv/backends", os.W_OK)}
'''
    )
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    bridge = ToolBridge(
        backends_path=backends,
        fixture_ids={"probe": "probe"},
        state_in=tmp_path / "none.json",
        log_out=tmp_path / "out" / "log.jsonl",
        state_out=tmp_path / "out" / "state.json",
        runtime=BRIDGE_RUNTIME,
    )

    async def scenario():
        async with LocalSandbox(LocalSandboxSettings()).serve(dist, tool_bridge=bridge) as served:
            async with httpx.AsyncClient(trust_env=False, timeout=10, base_url=served.url) as client:
                response = await client.post("/__tools/call", json={"tool": "probe", "arguments": {"port": port}})
                return response.json()["result"]

    try:
        result = asyncio.run(scenario())
    finally:
        listener.close()
    assert result["net"] != "connected"
    assert result == {**result, "root": False, "work": False, "home": False, "writable_backends": False}


def test_resource_bridge_serves_public_resources_and_logs_every_read(tmp_path):
    """EvoGenUI-Bench §4.2: resource reads are execution evidence, logged like tool calls (failed ones too)."""
    dist = _make_dist(tmp_path)
    run_dir = tmp_path / "turn"
    run_dir.mkdir()
    rates = {"uri": "data://rates", "name": "Rates", "mime_type": "application/json", "description": "Fee table",
             "contents": {"standard": 12, "member": 9}}
    empty = {"uri": "data://empty", "name": "Empty", "mime_type": "text/plain", "description": "No contents"}
    bridge = ToolBridge(backends_path=tmp_path, fixture_ids={}, state_in=tmp_path / "missing.json",
                        log_out=run_dir / "tool_log.jsonl", state_out=run_dir / "state.json", runtime=BRIDGE_RUNTIME,
                        extra={"resources": {"data://rates": rates, "data://empty": empty}})

    async def scenario():
        sandbox = LocalSandbox(LocalSandboxSettings())
        async with sandbox.serve(dist, tool_bridge=bridge) as served:
            async with httpx.AsyncClient(trust_env=False, timeout=5, base_url=served.url) as client:
                listed = (await client.get("/__resources/list")).json()["resources"]
                assert listed == [{k: v for k, v in empty.items()},
                                  {k: v for k, v in rates.items() if k != "contents"}]  # contracts, sorted by uri
                read = await client.post("/__resources/read", json={"uri": "data://rates"})
                assert read.status_code == 200
                assert read.json() == {"resource": {"uri": "data://rates", "mime_type": "application/json",
                                                    "contents": {"standard": 12, "member": 9}}}
                missing = await client.post("/__resources/read", json={"uri": "data://nope"})
                assert missing.status_code == 404 and "unknown resource" in missing.json()["error"]
                hollow = await client.post("/__resources/read", json={"uri": "data://empty"})
                assert hollow.status_code == 404 and "no contents" in hollow.json()["error"]

    asyncio.run(scenario())
    lines = [json.loads(line) for line in (run_dir / "resource_log.jsonl").read_text().splitlines()]
    assert [(e["seq"], e["uri"], e["ok"]) for e in lines] == [
        (1, "data://rates", True), (2, "data://nope", False), (3, "data://empty", False)]
    assert lines[0]["contents"] == {"standard": 12, "member": 9} and "error" in lines[1]
    assert not (run_dir / "tool_log.jsonl").exists() or (run_dir / "tool_log.jsonl").read_text() == ""


@pytest.mark.browser
def test_the_templates_resource_client_reads_through_the_bridge_in_chromium(tmp_path):
    """src/toolClient.js's readResource / listResources, as a generated app calls them, in real Chromium."""
    from runner.browser.launch import BrowserPool, BrowserSettings
    from runner.sandbox.web_template import TEMPLATE_DIR

    dist = tmp_path / "dist"
    dist.mkdir()
    shutil.copyfile(TEMPLATE_DIR / "src" / "toolClient.js", dist / "toolClient.js")
    (dist / "index.html").write_text(
        "<!doctype html><body><p id=out>loading</p><script type=module>"
        "import { readResource, listResources } from './toolClient.js';"
        "const listed = await listResources(); const rates = await readResource('data://rates');"
        "let missing = ''; try { await readResource('data://nope'); } catch (e) { missing = e.message; }"
        "document.getElementById('out').textContent = JSON.stringify({listed: listed.length, rates, missing});"
        "</script></body>")
    run_dir = tmp_path / "turn"
    run_dir.mkdir()
    rates = {"uri": "data://rates", "name": "Rates", "mime_type": "application/json", "description": "Fees",
             "contents": {"standard": 12}}
    bridge = ToolBridge(backends_path=tmp_path, fixture_ids={}, state_in=tmp_path / "missing.json",
                        log_out=run_dir / "tool_log.jsonl", state_out=run_dir / "state.json", runtime=BRIDGE_RUNTIME,
                        extra={"resources": {"data://rates": rates}})

    async def scenario() -> str:
        sandbox = LocalSandbox(LocalSandboxSettings())
        async with sandbox.serve(dist, tool_bridge=bridge) as served:
            async with BrowserPool(BrowserSettings()) as pool:
                async with pool.session(served.url) as session:
                    await session.goto()
                    # Playwright's own assertion polls from its utility world: a string predicate polled in the
                    # page is eval, which the artifact server's CSP refuses once the first check is early.
                    await expect(session.page.locator("#out")).not_to_have_text("loading", timeout=15_000)
                    return await session.page.inner_text("#out")

    shown = json.loads(asyncio.run(scenario()))
    assert shown["listed"] == 1 and shown["rates"] == {"standard": 12} and "unknown resource" in shown["missing"]
    lines = [json.loads(line) for line in (run_dir / "resource_log.jsonl").read_text().splitlines()]
    assert [(e["uri"], e["ok"]) for e in lines] == [("data://rates", True), ("data://nope", False)]
