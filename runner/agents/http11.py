"""HTTP/1.1 for the model proxy: one asyncio server on a Unix socket, requests parsed and answers framed by h11.

The proxy is a runner-side server that agents reach through a socket file (bind-mounted into their sandbox), so
it listens on no network address at all. Answers are whole JSON bodies or a stream (server-sent events, sent
chunked); connections are kept alive between requests, as the agents' HTTP clients expect.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h11

log = logging.getLogger(__name__)

__all__ = ["HttpRequest", "HttpResponse", "UnixHttpServer", "json_response"]

MAX_BODY_BYTES = 64 * 1024 * 1024  # an agent's request with screenshots inline; more is refused (413)
READ_CHUNK = 65536


@dataclass
class HttpRequest:
    method: str
    target: str  # path and query, as sent
    headers: dict[str, str]  # lower-cased names
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class HttpResponse:
    status: int
    body: bytes = b""
    content_type: str = "application/json"
    stream: AsyncIterator[bytes] | None = None  # a streamed body (sent chunked); `body` is then unused
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, payload: Any) -> HttpResponse:
    return HttpResponse(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"))


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]


class UnixHttpServer:
    """Serves `handler` on a Unix socket at `path` (mode 0666 inside a folder only the runner can enter: the
    container user of a docker sandbox must be able to connect to the file bind-mounted into it)."""

    def __init__(self, path: Path, handler: Handler) -> None:
        self.path = Path(path)
        self.handler = handler
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path))
        os.chmod(self.path, 0o666)

    async def close(self) -> None:
        """Stop listening, close every open connection, remove the socket file."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._connections):
            writer.close()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        connection = h11.Connection(h11.SERVER)
        try:
            while True:
                request = await _read_request(connection, reader)
                if request is None:
                    return
                if isinstance(request, HttpResponse):  # malformed or too large: answered, then closed
                    await _send(connection, writer, request, keep_alive=False)
                    return
                try:
                    response = await self.handler(request)
                except Exception as error:  # the handler's own failure: answered as one, the server stays up
                    log.exception("model proxy: %s %s failed", request.method, request.target)
                    response = json_response(500, {"error": {"message": f"proxy error: {type(error).__name__}",
                                                             "type": "proxy_error"}})
                await _send(connection, writer, response, keep_alive=True)
                if connection.our_state is h11.MUST_CLOSE or connection.their_state is h11.MUST_CLOSE:
                    return
                connection.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.IncompleteReadError):
            return
        finally:
            self._connections.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


async def _read_request(connection: h11.Connection, reader: asyncio.StreamReader) -> HttpRequest | HttpResponse | None:
    """The next whole request; an error response for a malformed or oversized one; None at a clean end."""
    head: h11.Request | None = None
    body = bytearray()
    while True:
        try:
            event = connection.next_event()
        except h11.RemoteProtocolError as error:
            return json_response(400, {"error": {"message": f"malformed request: {error}", "type": "invalid_request"}})
        if event is h11.NEED_DATA:
            data = await reader.read(READ_CHUNK)
            connection.receive_data(data)
            if not data and head is None:
                return None
            continue
        if isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_BODY_BYTES:
                return json_response(413, {"error": {"message": f"request body over {MAX_BODY_BYTES} bytes",
                                                     "type": "invalid_request"}})
        elif isinstance(event, h11.EndOfMessage) and head is not None:
            headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in head.headers}
            return HttpRequest(head.method.decode("ascii"), head.target.decode("latin-1"), headers, bytes(body))
        elif isinstance(event, h11.ConnectionClosed):
            return None


async def _send(connection: h11.Connection, writer: asyncio.StreamWriter, response: HttpResponse, *,
                keep_alive: bool) -> None:
    headers = [("content-type", response.content_type), *response.headers.items()]
    if response.stream is None:
        headers.append(("content-length", str(len(response.body))))
    else:
        headers.append(("cache-control", "no-cache"))
    if not keep_alive:
        headers.append(("connection", "close"))
    writer.write(connection.send(h11.Response(status_code=response.status, headers=headers)))
    if response.stream is None:
        if response.body:
            writer.write(connection.send(h11.Data(data=response.body)))
    else:
        async for chunk in response.stream:
            writer.write(connection.send(h11.Data(data=chunk)))
            await writer.drain()
    writer.write(connection.send(h11.EndOfMessage()))
    await writer.drain()
