"""The proxy's HTTP/1.1 over a Unix socket (h11): keep-alive, chunked bodies both ways, and what it refuses."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from runner.agents import http11
from runner.agents.http11 import HttpRequest, HttpResponse, UnixHttpServer, json_response


async def _handler(request: HttpRequest) -> HttpResponse:
    if request.target == "/boom":
        raise RuntimeError("handler bug")
    if request.target == "/stream":
        async def chunks():
            for part in (b"data: 1\n\n", b"data: 2\n\n"):
                yield part
        return HttpResponse(200, content_type="text/event-stream", stream=chunks())
    return json_response(200, {"method": request.method, "target": request.target, "body": request.body.decode()})


async def _exchange(path: Path, raw: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(raw)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(65536), 5)
    collected = data
    while data:  # until the server closes or nothing more comes quickly
        try:
            data = await asyncio.wait_for(reader.read(65536), 0.3)
        except TimeoutError:
            break
        collected += data
    writer.close()
    return collected


def _serve(tmp_path: Path, scenario) -> None:
    async def main() -> None:
        server = UnixHttpServer(tmp_path / "s.sock", _handler)
        await server.start()
        try:
            await scenario(server.path)
        finally:
            await server.close()
        assert not (tmp_path / "s.sock").exists()

    asyncio.run(main())


def test_two_requests_on_one_connection_and_a_chunked_body(tmp_path: Path) -> None:
    async def scenario(path: Path) -> None:
        raw = (b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"
               b"POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        answer = await _exchange(path, raw)
        bodies = [json.loads(part.split(b"\r\n\r\n", 1)[1].split(b"HTTP/1.1")[0]) for part in
                  answer.split(b"HTTP/1.1 200")[1:]]
        assert [(b["target"], b["body"]) for b in bodies] == [("/a", "hi"), ("/b", "abc")]

    _serve(tmp_path, scenario)


def test_a_stream_is_sent_chunked_and_whole(tmp_path: Path) -> None:
    async def scenario(path: Path) -> None:
        answer = await _exchange(path, b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        head, body = answer.split(b"\r\n\r\n", 1)
        assert b"transfer-encoding: chunked" in head.lower() and b"text/event-stream" in head
        assert b"data: 1\n\n" in body and b"data: 2\n\n" in body and body.endswith(b"0\r\n\r\n")

    _serve(tmp_path, scenario)


def test_malformed_oversized_and_failing_requests_are_answered_and_the_server_stays_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http11, "MAX_BODY_BYTES", 10)

    async def scenario(path: Path) -> None:
        assert (await _exchange(path, b"NOT HTTP AT ALL\r\n\r\n")).startswith(b"HTTP/1.1 400")
        big = await _exchange(path, b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n" + b"y" * 20)
        assert big.startswith(b"HTTP/1.1 413")
        failed = await _exchange(path, b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\n")
        assert failed.startswith(b"HTTP/1.1 500") and b"handler bug" not in failed
        assert (await _exchange(path, b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")).startswith(b"HTTP/1.1 200")

    _serve(tmp_path, scenario)
