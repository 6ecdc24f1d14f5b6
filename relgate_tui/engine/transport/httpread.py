"""Bounded reads of small HTTP responses (issue 10 §2): the reachability probes and the model lists.

httpx reads a whole body into memory and inflates any ``Content-Encoding`` it meets, so a hostile ``GET /models``
answering with a gzip bomb (a few MB that inflate to GBs) or a never-ending body would fill the memory of a mere
probe. Here a probe never reads the body at all (:func:`status_of`, :func:`status_of_sync`: the status line is the
answer), and a listing reads at most ``max_bytes`` raw bytes and inflates them to at most ``max_bytes``
(:func:`get_bounded`, :func:`get_bounded_sync`). Only ``identity``, ``gzip`` and ``deflate`` are asked for and
accepted; anything larger or otherwise encoded is a :class:`BodyTooLarge` / ``httpx.DecodingError``.
"""

from __future__ import annotations

import zlib

import httpx

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


async def status_of(client: httpx.AsyncClient, url: str, headers: dict[str, str] | None, timeout_s: float) -> int:
    """The HTTP status of ``GET url``; the body is not read."""
    async with client.stream("GET", url, headers=_headers(headers), timeout=timeout_s) as response:
        return response.status_code


def status_of_sync(client: httpx.Client, url: str, headers: dict[str, str] | None, timeout_s: float) -> int:
    """Blocking :func:`status_of`."""
    with client.stream("GET", url, headers=_headers(headers), timeout=timeout_s) as response:
        return response.status_code


async def get_bounded(
    client: httpx.AsyncClient, url: str, headers: dict[str, str] | None, timeout_s: float,
    max_bytes: int = MAX_LISTING_BYTES,
) -> tuple[int, bytes]:
    """(status, body) of ``GET url`` with the body capped at ``max_bytes`` raw and inflated."""
    async with client.stream("GET", url, headers=_headers(headers), timeout=timeout_s) as response:
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
    """Blocking :func:`get_bounded`."""
    with client.stream("GET", url, headers=_headers(headers), timeout=timeout_s) as response:
        parts, total = [], 0
        for chunk in response.iter_raw():
            total += len(chunk)
            if total > max_bytes:
                raise BodyTooLarge(f"the body is over {max_bytes:,} bytes")
            parts.append(chunk)
        return response.status_code, inflate(b"".join(parts), response.headers.get("content-encoding", ""), max_bytes)
