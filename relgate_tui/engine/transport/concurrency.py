"""How many requests to keep in flight at one endpoint (issue 23 §9): an adaptive limit, so that a local server with
one slot (llama.cpp's default, Ollama) is never sent more than it can serve before the timeout.

:class:`AdaptiveLimit` is an AIMD limiter with a latency signal, in the manner of TCP congestion control (Jacobson
1988) and of the gradient limiters used for service concurrency (Netflix ``concurrency-limits``):

* it starts at the server's advertised parallelism when it has one (llama.cpp's ``GET /props`` → ``total_slots``;
  1 for llama-cpp-python's server, which serves one request at a time; :func:`advertised_slots`), which is then also its ceiling, else at :data:`START` requests — never at the
  configured maximum, which a one-slot server would queue until the timeout;
* each answered request is a latency sample ``rtt``; the floor ``rtt_min`` is the smallest seen. A request that took
  longer than ``QUEUE_FACTOR · rtt_min + QUEUE_SLACK_S`` waited in the server's queue: latency grows with
  concurrency, so the limit goes down by one (at most once per ``rtt_min``, so one burst of queued answers is one
  decrease per round trip, not eight at once). Otherwise the limit goes up: by one per answer that did not queue
  until the first sign of queueing (*slow start*: it doubles every round trip, so a server that keeps up — a vLLM or
  a cloud endpoint at concurrency 64 — reaches the configured maximum within a few round trips), and after that by
  one after ``limit`` answers in a row that did not queue (one per round trip: additive increase);
* a request that timed out while other requests were being answered is queueing at a busy server, not a server that
  is down: the limit is halved (multiplicative decrease) and the caller does not count it towards "endpoint down".

The limit never exceeds the configured concurrency and never goes below one. ``max_in_flight`` records the most
requests that were ever in flight together (what the tests assert).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any

START = 4
QUEUE_FACTOR = 1.5
QUEUE_SLACK_S = 0.05
PROPS_TIMEOUT_S = 2.0
PROPS_MAX_BYTES = 64 * 1024


class AdaptiveLimit:
    """The number of requests allowed in flight: :meth:`acquire` before a request, :meth:`release` after it."""

    def __init__(self, maximum: int, slots: int | None = None) -> None:
        if maximum < 1:
            raise ValueError("the concurrency must be at least 1")
        self.maximum = min(maximum, slots) if slots is not None else maximum  # a server's slots are its ceiling
        self.limit = float(max(1, min(self.maximum, slots if slots is not None else START)))
        self.in_flight = 0
        self.max_in_flight = 0
        self.rtt_min = math.inf
        self.decreases = 0
        self._unqueued = 0  # answers in a row that did not wait in the server's queue
        self._slow_start = slots is None  # an advertised slot count is already the right limit
        self._last_decrease = -math.inf
        self._last_answer = -math.inf
        self._changed = asyncio.Event()

    @property
    def allowed(self) -> int:
        return max(1, int(self.limit))

    async def acquire(self) -> float:
        """Wait for a free slot; returns the monotonic start time of the request. (One event loop: nothing runs
        between the check and the count.)"""
        while self.in_flight >= self.allowed:
            self._changed.clear()
            await self._changed.wait()
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return time.monotonic()

    def release(self, started: float, outcome: str) -> None:
        """After a request: ``outcome`` is ``"ok"`` (answered), ``"busy"`` (timed out at a server that answers
        others) or ``"other"`` (any other failure, or cancelled: no latency signal). Never waits."""
        now = time.monotonic()
        self.in_flight -= 1
        if outcome == "ok":
            self._answered(now - started, now)
        elif outcome == "busy":
            self._decrease(now, halve=True)
        self._changed.set()

    def busy_not_down(self, started: float) -> bool:
        """Did another request get an answer while this one (started at ``started``) waited? Then its timeout is
        queueing at a busy server, not the endpoint being down."""
        return self._last_answer > started

    def _answered(self, rtt: float, now: float) -> None:
        self._last_answer = now
        self.rtt_min = min(self.rtt_min, rtt)
        if rtt > QUEUE_FACTOR * self.rtt_min + QUEUE_SLACK_S:
            self._unqueued = 0
            if now - self._last_decrease >= self.rtt_min:
                self._decrease(now, halve=False)
            return
        self._unqueued += 1
        if self._slow_start:
            self._unqueued = 0
            self.limit = min(float(self.maximum), self.limit + 1.0)
        elif self._unqueued >= self.allowed:
            self._unqueued = 0
            self.limit = min(float(self.maximum), self.limit + 1.0)

    def _decrease(self, now: float, *, halve: bool) -> None:
        self._slow_start = False
        self._unqueued = 0
        self._last_decrease = now
        self.decreases += 1
        self.limit = max(1.0, math.floor(self.limit / 2) if halve else math.floor(self.limit) - 1.0)


def _root(base_url: str) -> str:
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def props_url(base_url: str) -> str:
    """llama.cpp serves ``/props`` at the server's root: the base URL without a trailing ``/v1``."""
    return _root(base_url) + "/props"


LLAMA_CPP_PYTHON_TITLE = "llama.cpp Python API"
"""The title of llama-cpp-python's server in its OpenAPI document (``GET /openapi.json``, FastAPI's)."""


async def _get_json(client: Any, url: str, headers: dict[str, str]) -> tuple[int | None, Any]:
    """(HTTP status, the JSON body or None) of a small GET; status None when no answer came within
    :data:`PROPS_TIMEOUT_S` (or the connection failed). A body over :data:`PROPS_MAX_BYTES` or not JSON is None."""
    import httpx

    try:
        async with asyncio.timeout(PROPS_TIMEOUT_S):
            async with client.stream("GET", url, headers={**headers, "Accept-Encoding": "identity"}) as resp:
                if resp.status_code != 200:
                    return resp.status_code, None
                body = bytearray()
                async for chunk in resp.aiter_raw():
                    body += chunk
                    if len(body) > PROPS_MAX_BYTES:
                        return resp.status_code, None
    except (httpx.HTTPError, TimeoutError, OSError, ValueError):
        return None, None
    try:
        return 200, json.loads(bytes(body))
    except (ValueError, RecursionError):
        return 200, None


async def advertised_slots(client: Any, base_url: str, headers: dict[str, str]) -> int | None:
    """The server's parallelism, or None when it does not say (any doubt is None):

    * llama.cpp's server: ``GET /props`` → ``total_slots``, an integer in 1..1024;
    * llama-cpp-python's server (no ``/props``; recognised by the title of its OpenAPI document, asked only when
      ``/props`` was answered with an error status): 1 — it serves one request at a time behind one lock, and
      advertises nothing.

    A slow answer (over :data:`PROPS_TIMEOUT_S`), a large one (over :data:`PROPS_MAX_BYTES`) or anything not shaped
    as expected is None."""
    status, doc = await _get_json(client, props_url(base_url), headers)
    if status == 200:
        slots = doc.get("total_slots") if isinstance(doc, dict) else None
        if isinstance(slots, int) and not isinstance(slots, bool) and 1 <= slots <= 1024:
            return slots
        return None
    if status is None:  # no answer at all: asking more would only wait longer
        return None
    _, api = await _get_json(client, _root(base_url) + "/openapi.json", headers)
    info = api.get("info") if isinstance(api, dict) else None
    title = info.get("title") if isinstance(info, dict) else None
    if isinstance(title, str) and LLAMA_CPP_PYTHON_TITLE in title:
        return 1
    return None
