"""Bounded reads of small HTTP responses (issue 10 §2): the reachability probes and the model lists.

httpx reads a whole body into memory and inflates any ``Content-Encoding`` it meets, so a hostile ``GET /models``
answering with a gzip bomb (a few MB that inflate to GBs) or a never-ending body would fill the memory of a mere
probe. Here a probe never reads the body at all (:func:`status_of`, :func:`status_of_sync`: the status line is the
answer), and a listing reads at most ``max_bytes`` raw bytes and inflates them to at most ``max_bytes``
(:func:`get_bounded`, :func:`get_bounded_sync`). Only ``identity``, ``gzip`` and ``deflate`` are asked for and
accepted; anything larger or otherwise encoded is a :class:`BodyTooLarge` / ``httpx.DecodingError``.

``timeout_s`` is one total deadline for the whole exchange (connect, headers, body), never a per-read timeout: a
server that sends one byte every second would otherwise hold a per-read timeout of 10 s off forever (issue 29 N9).
:func:`deadline` is that deadline for any other exchange (the sampler's https requests); the blocking variants run
the exchange on a helper thread and close the client when the deadline passes.
"""

from __future__ import annotations

import contextlib
import threading
import zlib
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

import httpx

T = TypeVar("T")

MAX_LISTING_BYTES = 1024 * 1024
"""Default cap for a model list, raw and inflated."""

_ACCEPT = {"Accept-Encoding": "gzip, deflate"}


class BodyTooLarge(httpx.DecodingError):
    """A response body over the cap (raw or inflated)."""


def inflate(raw: bytes, encoding: str, max_bytes: int) -> bytes:
    """``raw`` decoded per its ``Content-Encoding`` (identity, gzip, deflate), never to more than ``max_bytes``."""
    encodings = [e.strip().lower() for e in encoding.split(",") if e.strip() and e.strip().lower() != "identity"]
    data = raw
    for name in reversed(encodings):  # applied in order listed, so undone in reverse
        if name in ("gzip", "x-gzip"):
            decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif name == "deflate":
            decoder = zlib.decompressobj()
        else:
            raise httpx.DecodingError(f"unsupported Content-Encoding {name[:20]!r}")
        try:
            out = decoder.decompress(data, max_bytes + 1)
        except zlib.error as exc:
            raise httpx.DecodingError(f"bad {name} body: {exc}") from None
        if len(out) > max_bytes or decoder.unconsumed_tail:
            raise BodyTooLarge(f"the body inflates to more than {max_bytes:,} bytes")
        data = out
    return data


def _headers(headers: dict[str, str] | None) -> dict[str, str]:
    return {**(headers or {}), **_ACCEPT}


@contextlib.asynccontextmanager
async def deadline(timeout_s: float | None) -> AsyncIterator[None]:
    """One total deadline over the block: ``httpx.ReadTimeout`` when ``timeout_s`` seconds pass (None: none)."""
    import asyncio

    try:
        async with asyncio.timeout(timeout_s):
            yield
    except TimeoutError:
        raise httpx.ReadTimeout(f"no complete answer within {timeout_s:g} s") from None


def _within(client: httpx.Client, timeout_s: float, work: Callable[[], T]) -> T:
    """``work()`` (a blocking exchange on ``client``) within ``timeout_s`` seconds in total: it runs on a helper
    thread; past the deadline the client is closed (which ends the blocked read) and ``httpx.ReadTimeout`` raised."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="relgate-http-deadline")
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        with contextlib.suppress(Exception):
            client.close()
        raise httpx.ReadTimeout(f"no complete answer within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


async def status_of(client: httpx.AsyncClient, url: str, headers: dict[str, str] | None, timeout_s: float) -> int:
    """The HTTP status of ``GET url``; the body is not read. ``timeout_s``: one total deadline."""
    async with deadline(timeout_s), client.stream("GET", url, headers=_headers(headers), timeout=timeout_s) as response:
        return response.status_code


def status_of_sync(client: httpx.Client, url: str, headers: dict[str, str] | None, timeout_s: float) -> int:
    """Blocking :func:`status_of` (one total deadline; the client is closed when it passes)."""
    def work() -> int:
        with client.stream("GET", url, headers=_headers(headers), timeout=timeout_s) as response:
            return response.status_code

    return _within(client, timeout_s, work)


async def get_bounded(
    client: httpx.AsyncClient, url: str, headers: dict[str, str] | None, timeout_s: float,
    max_bytes: int = MAX_LISTING_BYTES,
) -> tuple[int, bytes]:
    """(status, body) of ``GET url`` with the body capped at ``max_bytes`` raw and inflated; ``timeout_s``: one
    total deadline."""
    async with deadline(timeout_s), client.stream("GET", url, headers=_headers(headers), timeout=timeout_s) as response:
        parts, total = [], 0
        async for chunk in response.aiter_raw():
            total += len(chunk)
            if total > max_bytes:
                raise BodyTooLarge(f"the body is over {max_bytes:,} bytes")
            parts.append(chunk)
        return response.status_code, inflate(b"".join(parts), response.headers.get("content-encoding", ""), max_bytes)


def get_bounded_sync(
    client: httpx.Client, url: str, headers: dict[str, str] | None, timeout_s: float, max_bytes: int = MAX_LISTING_BYTES
) -> tuple[int, bytes]:
    """Blocking :func:`get_bounded` (one total deadline; the client is closed when it passes)."""
    def work() -> tuple[int, bytes]:
        with client.stream("GET", url, headers=_headers(headers), timeout=timeout_s) as response:
            parts, total = [], 0
            for chunk in response.iter_raw():
                total += len(chunk)
                if total > max_bytes:
                    raise BodyTooLarge(f"the body is over {max_bytes:,} bytes")
                parts.append(chunk)
            return response.status_code, inflate(b"".join(parts), response.headers.get("content-encoding", ""),
                                                 max_bytes)

    return _within(client, timeout_s, work)
