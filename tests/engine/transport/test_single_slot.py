"""Issue 23 §9: a local server with one slot (llama.cpp's default) must not melt down at the default concurrency.

A loopback server that works on one request at a time, first come first served, and keeps working on a request
whose client gave up (as llama.cpp does). Its service time is such that 8 queued requests pass the client's timeout.
The judge-asking layer at concurrency 8 must finish with no timeout at all, no request asked twice (so no work is
wasted: the run takes the sequential time), and never more than the server can hold in flight."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from relgate_tui.engine.judging.ask import AskFailed, Judge, Request, ask

SERVICE_S = 0.25
TIMEOUT_S = 1.75  # 8 queued requests need 8 × 0.25 = 2 s > 1.75 s
N_REQUESTS = 12


class OneSlotServer:
    """Serves chat completions one at a time (a worker thread, FIFO). ``advertise``: answer ``GET /props`` with
    ``total_slots: 1`` as llama.cpp does; otherwise 404 (as Ollama)."""

    def __init__(self, advertise: bool, service_s: float = SERVICE_S) -> None:
        self.service_s = service_s
        self.work: queue.Queue[tuple[threading.Event, list[bytes]]] = queue.Queue()
        self.served = 0
        self.waiting = 0
        self.max_waiting = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/props" and advertise:
                    self._send(200, json.dumps({"total_slots": 1, "build_info": "test"}).encode())
                elif self.path.endswith("/models"):
                    self._send(200, b'{"data": [{"id": "one-slot"}]}')
                else:
                    self._send(404, b'{"error": "not found"}')

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                done, out = threading.Event(), []
                with outer.lock:
                    outer.waiting += 1
                    outer.max_waiting = max(outer.max_waiting, outer.waiting)
                outer.work.put((done, out))
                done.wait()
                self._send(200, out[0])

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True

    def _serve_one_at_a_time(self) -> None:
        while True:
            item = self.work.get()
            if item is None:
                return
            done, out = item
            time.sleep(self.service_s)  # the one slot is busy; a request whose client left is still worked on
            with self.lock:
                self.served += 1
                self.waiting -= 1
            out.append(json.dumps({"choices": [{"message": {"role": "assistant", "content": "3"},
                                                "finish_reason": "stop"}],
                                   "usage": {"prompt_tokens": 5, "completion_tokens": 1}}).encode())
            done.set()

    def __enter__(self) -> OneSlotServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.worker = threading.Thread(target=self._serve_one_at_a_time, daemon=True)
        self.worker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.work.put(None)  # type: ignore[arg-type]
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


async def _ask_all(server: OneSlotServer, timeout_s: float = TIMEOUT_S, n: int = N_REQUESTS) -> tuple[list[Any], Any]:
    judge = Judge(server.base_url, "one-slot", timeout_s=timeout_s, max_tokens=4)
    requests = [Request(("direct", f"q{i}"), ({"role": "user", "content": f"Rate text {i} from 1 to 5."},))
                for i in range(n)]
    samplers: list[Any] = []
    events = [e async for e in ask(judge, requests, reps=1, concurrency=8, on_sampler=samplers.append)]
    return events, samplers[0]


@pytest.mark.parametrize("advertise", [True, False], ids=["llama.cpp-props", "no-props"])
def test_a_one_slot_server_at_concurrency_8_has_no_timeout(advertise: bool) -> None:
    n = 8 if advertise else N_REQUESTS  # eight at once would pass the timeout; AIMD's probing needs the twelve
    with OneSlotServer(advertise) as server:
        events, sampler = asyncio.run(_ask_all(server, n=n))
    failed = [e for e in events if isinstance(e, AskFailed)]
    answers = [e for e in events if not isinstance(e, AskFailed) and hasattr(e, "text")]
    assert failed == [] and sampler.totals.failed == 0 and sampler.totals.retries == 0
    assert len(answers) == n and sampler.totals.made == n
    assert server.served == n  # no request asked twice: no work wasted, the sequential time
    if advertise:  # started from total_slots: one request in flight, ever
        assert sampler.limit.max_in_flight == 1 and server.max_waiting == 1
    else:  # started at four, one more after the first (unqueued) answer of slow start: the second answer has queued,
        # so the limit comes down before anything nears the timeout
        assert server.max_waiting * SERVICE_S < TIMEOUT_S and sampler.limit.max_in_flight <= 5
        assert sampler.limit.allowed <= 2 and sampler.limit.decreases >= 2  # probing 1 ↔ 2 (AIMD)


def test_timeouts_while_others_are_answered_are_a_busy_server_not_a_server_down() -> None:
    """A slower server (0.5 s a request) and a 1.2 s timeout: the first requests in flight pass the timeout while
    others are being answered. Those timeouts halve the limit and are asked again; none counts towards "endpoint
    down" (no pause, no failed request), and every request gets its answer. Six requests: the four that start at
    once (slow start) already queue past the timeout."""
    n = 6
    with OneSlotServer(advertise=False, service_s=0.5) as server:
        events, sampler = asyncio.run(_ask_all(server, timeout_s=1.2, n=n))
    busy = [e for e in events if isinstance(e, AskFailed) and e.kind == "busy"]
    down = [e for e in events if getattr(e, "down", False)]
    answers = [e for e in events if not isinstance(e, AskFailed) and hasattr(e, "text")]
    assert busy and down == [] and sampler.totals.failed == 0 and not sampler.endpoint_down
    assert len(answers) == n and sampler.limit.allowed <= 2


def test_slow_start_reaches_the_configured_maximum_within_a_few_round_trips_and_ends_at_the_first_queueing() -> None:
    """Without advertised slots the limit starts at four and doubles every round trip of answers that did not queue
    (a server that keeps up reaches concurrency 64 in four round trips); the first queued answer ends slow start, and
    from then on the limit grows by one per round trip."""
    from relgate_tui.engine.transport.concurrency import START, AdaptiveLimit

    limit, now, rounds = AdaptiveLimit(128), 0.0, 0
    assert limit.allowed == START == 4
    while limit.allowed < 64:
        for _ in range(limit.allowed):
            limit._answered(0.02, now)
        now, rounds = now + 0.02, rounds + 1
    assert rounds == 4 and limit.allowed == 64
    limit._answered(0.2, now + 0.1)  # queued: 0.2 s > 1.5 × 0.02 + 0.05
    assert limit.allowed == 63 and limit.decreases == 1
    for _ in range(63):
        limit._answered(0.02, now + 0.2)
    assert limit.allowed == 64  # one per round trip after slow start, not one per answer (that would be 126)
