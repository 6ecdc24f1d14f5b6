"""The lean HTTP/1.1 transport against a raw loopback server: body framings, keep-alive reuse, stale connections."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from relgate_tui.engine.http11 import LeanHTTPTransport


async def serve(responses: list[bytes], close_after: set[int] = frozenset()):
    """A raw server answering the n-th request (over any connection) with ``responses[n]``."""
    state = {"n": 0, "connections": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state["connections"] += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                n = state["n"]
                state["n"] += 1
                writer.write(responses[n])
                await writer.drain()
                if n in close_after:
                    writer.close()
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    state["url"] = url(server)
    return server, state


def url(server) -> str:
    return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/x"


OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"ok\": true}"


async def test_content_length_chunked_and_close_delimited_bodies() -> None:
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n2;x=1\r\n 1\r\n1\r\n}\r\n0\r\n\r\n"
    to_close = b"HTTP/1.0 200 OK\r\n\r\nuntil close"
    server, state = await serve([OK, chunked, to_close], close_after={2})
    async with server, httpx.AsyncClient(transport=LeanHTTPTransport()) as client:
        r1 = await client.post(state["url"], json={"q": 1})
        r2 = await client.post(state["url"], json={"q": 2})
        r3 = await client.get(state["url"])
        assert r1.json() == {"ok": True} and r2.json() == {"a": 1} and r3.text == "until close"
        assert state["connections"] == 1  # keep-alive reuse for the first three exchanges


async def test_a_stale_keep_alive_connection_is_retried_once_on_a_fresh_one() -> None:
    server, state = await serve([OK, OK], close_after={0})
    async with server, httpx.AsyncClient(transport=LeanHTTPTransport()) as client:
        assert (await client.post(state["url"], json={})).status_code == 200
        await asyncio.sleep(0.05)  # the server has closed the idle connection
        assert (await client.post(state["url"], json={})).status_code == 200
        assert state["connections"] == 2


async def test_errors_are_httpx_exception_types() -> None:
    server, state = await serve([b"NONSENSE\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort"], close_after={1})
    async with server, httpx.AsyncClient(transport=LeanHTTPTransport()) as client:
        with pytest.raises(httpx.RemoteProtocolError, match="bad status line"):
            await client.get(state["url"])
        with pytest.raises(httpx.RemoteProtocolError, match="mid-body"):
            await client.get(state["url"])
    async with httpx.AsyncClient(transport=LeanHTTPTransport()) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(state["url"])  # the server is closed now
    silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    async with silent, httpx.AsyncClient(transport=LeanHTTPTransport(), timeout=0.2) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.get(url(silent))
