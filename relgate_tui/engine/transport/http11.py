"""A lean HTTP/1.1 keep-alive transport for httpx, used for plain ``http://`` endpoints (local model servers).

Why: on loopback, httpcore's connection pool and h11 state machine cost about 1 ms of client CPU per request, which
capped sampling at ~500 calls/s on two cores (``bench/throughput.py``); this transport costs a fraction of that. It
speaks the subset of HTTP/1.1 a JSON API needs: one request at a time per connection, ``Content-Length`` or
``chunked`` response bodies or read-to-close, keep-alive with reuse, ``Connection: close``. ``https://`` requests
(and anything unusual, such as ``Expect`` or streaming uploads) are handed to httpx's standard transport, so TLS,
proxies and HTTP/2 behave exactly as in httpx.

Timeouts: the read timeout of each exchange is a deadline watched by one lazily re-armed timer per transport
(:class:`_Deadlines`: a timer fires only when the earliest deadline in flight passes, so a call schedules no timer of
its own — ``asyncio.timeout`` costs a timer-heap push and a cancelled handle per call, a seventh of the client's CPU
on loopback); a passed deadline cancels the exchange's task and is raised as ``ReadTimeout``, with asyncio.timeout's
rule for a cancellation from elsewhere at the same moment (that one wins). Connect and write timeouts (rare: a new
connection, a request larger than the socket buffer) use ``asyncio.timeout`` (no extra task per request, unlike
``asyncio.wait_for`` on Python 3.11, which also could swallow a cancellation that raced with a response).

Errors are httpx's own exception types (``ConnectError``, ``ConnectTimeout``, ``ReadTimeout``, ``WriteTimeout``,
``ReadError``, ``RemoteProtocolError``), so callers cannot tell the transports apart. A request that fails on a
*reused* idle connection before any byte of the response arrived is retried once on a fresh connection (the server
closed the idle connection: the usual keep-alive race).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Mapping

import httpx

_MAX_HEAD = 64 * 1024
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""Default cap on a response body, enforced while reading (a never-ending chunked body cannot fill the memory)."""
_DIGITS = re.compile(rb"[0-9]+")
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class LeanHTTPTransport(httpx.AsyncBaseTransport):
    """Keep-alive HTTP/1.1 over asyncio streams for ``http://``; ``https://`` goes to :class:`httpx.AsyncHTTPTransport`."""

    def __init__(self, max_idle_per_origin: int = 4, fallback: httpx.AsyncBaseTransport | None = None,
                 max_body: int = MAX_RESPONSE_BYTES):
        self.max_body = max_body
        self._heads: dict[tuple[httpx.URL, tuple[tuple[str, str], ...]], tuple[bytes, tuple[str, int]]] = {}
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._max_idle = max_idle_per_origin
        self._fallback = fallback
        self._closed = False
        self._deadlines = _Deadlines()
        self._last_head: tuple[httpx.URL, dict[str, str], tuple[bytes, tuple[str, int]]] | None = None
        self._last_timeouts: dict[str, float | None] | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "http" or "expect" in request.headers:
            if self._fallback is None:
                self._fallback = httpx.AsyncHTTPTransport()
            return await self._fallback.handle_async_request(request)
        body = await request.aread()
        timeouts = request.extensions.get("timeout", {})
        origin = (request.url.host, request.url.port or 80)
        head = _request_head(request, len(body))
        status, headers, content = await self._roundtrip(origin, head + body, timeouts, request.method, request)
        return httpx.Response(status, headers=headers, stream=httpx.ByteStream(content), request=request,
                              extensions={"http_version": b"HTTP/1.1"})

    async def post(self, url: httpx.URL, body: bytes, headers: dict[str, str],
                   timeout_s: float | None) -> tuple[int, Mapping[str, str], bytes]:
        """POST ``body`` to a plain-http ``url`` without building httpx Request/Response objects (most of the client's
        CPU per call on loopback); returns (status, headers with lower-case names — decoded on first use: an answer
        never reads them —, body). Same connections, timeouts and httpx exception types as
        :meth:`handle_async_request`; no content decoding (no Accept-Encoding is sent)."""
        last = self._last_head
        if last is not None and last[0] is url and last[1] == headers:  # the usual case: the previous call's head
            prepared = last[2]
        else:
            prepared = self._head(url, headers)
            self._last_head = (url, dict(headers), prepared)
        head, origin = prepared
        payload = b"%s%d\r\n\r\n%s" % (head, len(body), body)
        status, raw, content = await self._roundtrip(origin, payload, self._timeouts(timeout_s), "POST", None)
        return status, _Headers(raw), content

    def _timeouts(self, timeout_s: float | None) -> dict[str, float | None]:
        t = self._last_timeouts
        if t is None or t["read"] != timeout_s:
            t = self._last_timeouts = {"connect": timeout_s, "read": timeout_s, "write": timeout_s}
        return t

    def _head(self, url: httpx.URL, headers: dict[str, str]) -> tuple[bytes, tuple[str, int]]:
        key = (url, tuple(headers.items()))
        prepared = self._heads.get(key)
        if prepared is None:  # the request line and headers of an endpoint are the same for every call: built once
            if url.scheme != "http":
                raise ValueError("LeanHTTPTransport.post speaks plain http only")
            lines = [f"POST {url.raw_path.decode('ascii')} HTTP/1.1", f"Host: {url.netloc.decode('ascii')}",
                     *(f"{name}: {value}" for name, value in headers.items()), "Content-Length: "]
            if len(self._heads) >= 64:
                self._heads.clear()
            prepared = self._heads[key] = ("\r\n".join(lines).encode("latin-1"), (url.host, url.port or 80))
        return prepared

    async def _roundtrip(self, origin: tuple[str, int], payload: bytes, timeouts: dict, method: str,
                         request: httpx.Request | None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Send one request on an idle (or new) connection and read its response; a reused connection that died
        before answering is retried once on a fresh one."""
        for attempt in (0, 1):
            conn, reused = await self._connection(origin, timeouts.get("connect"))
            try:
                status, headers, content, keep = await self._exchange(conn, payload, timeouts, method, request)
            except _StaleConnection:
                _close(conn)
                if reused and attempt == 0:
                    continue
                raise httpx.RemoteProtocolError("server closed the connection without a response", request=request) from None
            except BaseException:
                _close(conn)
                raise
            if keep and not self._closed and len(self._idle.setdefault(origin, [])) < self._max_idle:
                self._idle[origin].append(conn)
            else:
                _close(conn)
            return status, headers, content
        raise AssertionError("unreachable")  # pragma: no cover

    async def _connection(self, origin: tuple[str, int], timeout_s: float | None) -> tuple[_Conn, bool]:
        idle = self._idle.get(origin, [])
        while idle:
            reader, writer = idle.pop()
            if not reader.at_eof() and not writer.is_closing():
                return (reader, writer), True
            _close((reader, writer))
        try:
            async with asyncio.timeout(timeout_s):
                conn = await asyncio.open_connection(*origin)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"connecting to {origin[0]}:{origin[1]} timed out") from None
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {origin[0]}:{origin[1]}: {exc.strerror or exc}") from None
        return conn, False

    async def _exchange(
        self, conn: _Conn, payload: bytes, timeouts: dict, method: str, request: httpx.Request | None
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
        reader, writer = conn
        try:
            writer.write(payload)
            if writer.transport.get_write_buffer_size():  # not all sent at once: wait (a lost connection shows
                async with asyncio.timeout(timeouts.get("write")):  # up in the read below otherwise)
                    await writer.drain()
        except TimeoutError:
            raise httpx.WriteTimeout("sending the request timed out", request=request) from None
        except (ConnectionError, OSError):
            raise _StaleConnection from None
        read_timeout = timeouts.get("read")
        task = asyncio.current_task() if read_timeout is not None else None
        if task is None or read_timeout is None:
            return await _read_response(reader, method, request, self.max_body)
        watch = self._deadlines.watch(task, read_timeout)
        try:
            return await _read_response(reader, method, request, self.max_body)
        except asyncio.CancelledError:
            if watch.expired and task.uncancel() <= watch.cancelling:
                raise httpx.ReadTimeout("no response within the read timeout", request=request) from None
            raise
        finally:
            self._deadlines.unwatch(watch)

    async def aclose(self) -> None:
        self._closed = True
        self._deadlines.stop()
        for conns in self._idle.values():
            for conn in conns:
                _close(conn)
        self._idle.clear()
        if self._fallback is not None:
            await self._fallback.aclose()


class _Headers(Mapping[str, str]):
    """Response headers as ``{lower-case name: value}``, decoded (latin-1) on first use; a repeated name keeps its
    last value."""

    __slots__ = ("_raw", "_map")

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._raw = raw
        self._map: dict[str, str] | None = None

    def _decoded(self) -> dict[str, str]:
        if self._map is None:
            self._map = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in self._raw}
        return self._map

    def __getitem__(self, name: str) -> str:
        return self._decoded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())


class _Watch:
    """One exchange's read deadline: the task to cancel, and its ``cancelling()`` count when the watch began."""

    __slots__ = ("deadline", "task", "cancelling", "expired")

    def __init__(self, deadline: float, task: asyncio.Task[object]) -> None:
        self.deadline = deadline
        self.task = task
        self.cancelling = task.cancelling()
        self.expired = False


class _Deadlines:
    """The read deadlines of the exchanges in flight on one transport, and one timer for all of them, re-armed only
    when it fires (then at the earliest deadline still watched): starting and ending a watch costs no timer."""

    def __init__(self) -> None:
        self._watches: dict[_Watch, None] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, task: asyncio.Task[object], timeout_s: float) -> _Watch:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a transport used under a new event loop: the old timer died with its loop
            self._loop, self._timer = loop, None
            self._watches.clear()
        w = _Watch(loop.time() + timeout_s, task)
        self._watches[w] = None
        if self._timer is None or self._timer.when() > w.deadline:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = loop.call_at(w.deadline, self._fire)
        return w

    def unwatch(self, w: _Watch) -> None:
        self._watches.pop(w, None)

    def _fire(self) -> None:
        self._timer = None
        if self._loop is None:
            return
        now = self._loop.time()
        earliest: float | None = None
        for w in list(self._watches):
            if w.deadline <= now:
                if not w.expired:
                    w.expired = True
                    w.task.cancel()
            elif earliest is None or w.deadline < earliest:
                earliest = w.deadline
        if earliest is not None:
            self._timer = self._loop.call_at(earliest, self._fire)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._watches.clear()


class ResponseTooLarge(httpx.RemoteProtocolError):
    """The response body is over the transport's cap (``max_body``); the connection is dropped."""


class _StaleConnection(Exception):
    """The connection died before any byte of a response arrived."""


def _close(conn: _Conn) -> None:
    try:
        conn[1].close()
    except (OSError, RuntimeError):  # already closed / loop gone
        pass


def _request_head(request: httpx.Request, length: int) -> bytes:
    target = request.url.raw_path.decode("ascii")
    lines = [f"{request.method} {target} HTTP/1.1"]
    names = set()
    for name, value in request.headers.multi_items():
        lower = name.lower()
        if lower in ("content-length", "transfer-encoding"):
            continue
        names.add(lower)
        lines.append(f"{name}: {value}")
    if "host" not in names:
        lines.append(f"Host: {request.url.netloc.decode('ascii')}")
    if length or request.method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _read_response(
    reader: asyncio.StreamReader, method: str, request: httpx.Request | None, max_body: int = MAX_RESPONSE_BYTES
) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise _StaleConnection from None
        raise httpx.RemoteProtocolError("incomplete response head", request=request) from None
    except asyncio.LimitOverrunError:
        raise httpx.RemoteProtocolError("response head too large", request=request) from None
    except (ConnectionError, OSError):
        raise _StaleConnection from None
    if len(head) > _MAX_HEAD:
        raise httpx.RemoteProtocolError("response head too large", request=request)
    status_line, *header_lines = head[:-4].split(b"\r\n")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not _DIGITS.fullmatch(parts[1]):
        raise httpx.RemoteProtocolError(f"bad status line {status_line[:40]!r}", request=request)
    version, status = parts[0], int(parts[1])
    headers: list[tuple[bytes, bytes]] = []
    fields: dict[bytes, bytes] = {}
    for line in header_lines:  # one pass: the headers as sent, and by lower-case name (the last one wins)
        name, sep, value = line.partition(b":")
        name = name.strip()
        if not sep or not name:
            raise httpx.RemoteProtocolError(f"bad header line {line[:40]!r}", request=request)
        value = value.strip()
        headers.append((name, value))
        fields[name.lower()] = value
    keep = version == b"HTTP/1.1" and fields.get(b"connection", b"").lower() != b"close"
    try:
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            body = b""
        elif b"chunked" in fields.get(b"transfer-encoding", b"").lower():
            body = await _read_chunked(reader, request, max_body)
        elif b"content-length" in fields:
            value = fields[b"content-length"]
            if not _DIGITS.fullmatch(value) or len(value) > 18:  # no sign, no "1_0", no 5,000 digits
                raise httpx.RemoteProtocolError(f"bad Content-Length {value[:20]!r}", request=request)
            length = int(value)
            if length > max_body:
                raise ResponseTooLarge(f"response body of {length:,} bytes is over the {max_body:,}-byte cap",
                                       request=request)
            body = await reader.readexactly(length)
        else:
            body, keep = await _read_to_close(reader, request, max_body), False
    except asyncio.IncompleteReadError:
        raise httpx.RemoteProtocolError("the server closed the connection mid-body", request=request) from None
    except asyncio.LimitOverrunError:
        raise httpx.RemoteProtocolError("a chunk-size line is too long", request=request) from None
    except (ConnectionError, OSError) as exc:
        raise httpx.ReadError(f"connection lost while reading the response: {exc}", request=request) from None
    return status, headers, body, keep


async def _read_to_close(reader: asyncio.StreamReader, request: httpx.Request | None, max_body: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while chunk := await reader.read(65536):
        total += len(chunk)
        if total > max_body:
            raise ResponseTooLarge(f"response body over the {max_body:,}-byte cap", request=request)
        parts.append(chunk)
    return b"".join(parts)


async def _read_chunked(reader: asyncio.StreamReader, request: httpx.Request | None, max_body: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size_text = size_line.split(b";", 1)[0].strip()
        if not _HEX.fullmatch(size_text) or len(size_text) > 15:  # no sign, no "0x", no absurd length
            raise httpx.RemoteProtocolError(f"bad chunk size {size_text[:20]!r}", request=request)
        size = int(size_text, 16)
        total += size
        if total > max_body:
            raise ResponseTooLarge(f"response body over the {max_body:,}-byte cap", request=request)
        if size == 0:
            trailers = 0
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                trailers += 1
                if trailers > 100:
                    raise httpx.RemoteProtocolError("too many trailer lines", request=request)
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise httpx.RemoteProtocolError("a chunk does not end with CRLF", request=request)
