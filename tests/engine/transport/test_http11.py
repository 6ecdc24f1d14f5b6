"""The lean HTTP/1.1 transport against a raw loopback server: body framings, keep-alive reuse, stale connections."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from relgate_tui.engine.transport.http11 import LeanHTTPTransport


async def serve(responses: list[bytes], close_after: set[int] = frozenset()):
    """A raw server answering the n-th request (over any connection) with ``responses[n]``."""
    state: dict = {"n": 0, "connections": 0, "closed": asyncio.Event()}

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
                    await writer.wait_closed()
                    state["closed"].set()  # the server's side is closed: the client's connection is now stale
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
        await asyncio.wait_for(state["closed"].wait(), 60)  # the server has closed the idle connection
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


class _Arrivals:
    """How many requests the held server has read; :meth:`reached` waits for the n-th (no polling, no clock)."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = asyncio.Condition()

    async def add(self) -> int:
        async with self._changed:
            n, self.count = self.count, self.count + 1
            self._changed.notify_all()
            return n

    async def reached(self, n: int) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self.count >= n)


async def _held_server():
    """A raw server that answers each request only when the test sets that request's event (by arrival order)."""
    gates: list[asyncio.Event] = [asyncio.Event() for _ in range(8)]
    arrived = _Arrivals()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                n = await arrived.add()
                await gates[n].wait()
                writer.write(OK)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, gates, arrived


async def test_read_deadlines_of_exchanges_in_flight_on_one_transport_are_their_own() -> None:
    """One transport, two exchanges in flight: the short deadline times out (ReadTimeout), the long one is answered
    after that (released by the test, not by a clock); a later exchange still gets its own deadline. Two idle
    connections are opened first, so each short exchange reuses one and its deadline can only be the read's (a
    connect under a loaded machine could otherwise take the short deadline's 50 ms: ConnectTimeout)."""
    server, gates, arrived = await _held_server()
    lean = LeanHTTPTransport()
    target = httpx.URL(url(server))
    async with server:
        warm = [asyncio.ensure_future(lean.post(target, b"{}", {"X": "1"}, 30.0)) for _ in range(2)]
        await arrived.reached(2)
        gates[0].set()
        gates[1].set()
        assert [(await w)[0] for w in warm] == [200, 200]  # two connections, both idle now
        long = asyncio.ensure_future(lean.post(target, b"{}", {"X": "1"}, 30.0))
        await arrived.reached(3)
        with pytest.raises(httpx.ReadTimeout):
            await lean.post(target, b"{}", {"X": "1"}, 0.05)
        assert not long.done()
        gates[2].set()
        status, _, body = await long
        assert (status, body) == (200, b'{"ok": true}')
        gates[4].set()
        assert (await lean.post(target, b"{}", {"X": "1"}, 30.0))[0] == 200
        with pytest.raises(httpx.ReadTimeout):  # nothing releases request 5: its own deadline fires
            await lean.post(target, b"{}", {"X": "1"}, 0.05)
        await lean.aclose()


async def test_quick_exchanges_schedule_no_timer_each_and_a_cancel_from_outside_stays_a_cancel() -> None:
    server, gates, arrived = await _held_server()
    for g in gates[:6]:
        g.set()
    lean = LeanHTTPTransport()
    target = httpx.URL(url(server))
    loop = asyncio.get_running_loop()
    scheduled: list[float] = []
    real_call_at = loop.call_at

    def counting_call_at(when, callback, *args, **kwargs):
        scheduled.append(when)
        return real_call_at(when, callback, *args, **kwargs)

    async with server:
        assert (await lean.post(target, b"{}", {}, 30.0))[0] == 200  # connects; arms the transport's deadline timer
        loop.call_at = counting_call_at  # type: ignore[method-assign]
        try:
            for _ in range(5):
                assert (await lean.post(target, b"{}", {}, 30.0))[0] == 200
        finally:
            del loop.call_at
        assert scheduled == []  # the one timer armed by the first exchange serves them all: nothing per call
        pending = asyncio.ensure_future(lean.post(target, b"{}", {}, 30.0))  # request 6: held
        await arrived.reached(7)
        pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
        await lean.aclose()
