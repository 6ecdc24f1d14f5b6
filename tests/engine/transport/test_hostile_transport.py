"""Faults that stalled or aborted a run (issue 10 §2), each against the hostile raw-socket server of
``tests/engine/hostile.py``: resets, malformed bodies, endless bodies, gzip bombs, redirects, Retry-After."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from relgate_tui.core.canon import get_canonicalizer
from relgate_tui.core.certification.stopping import get_stopping_rule
from relgate_tui.engine.records import TaskItem
from relgate_tui.engine.transport.cache import SampleCache
from relgate_tui.engine.transport.discovery import discover, list_models
from relgate_tui.engine.transport.endpoints import Completion, EndpointConfig, RequestFailed, complete
from relgate_tui.engine.transport.http11 import LeanHTTPTransport
from relgate_tui.engine.transport.httpread import status_of_sync
from relgate_tui.engine.transport.sampler import (
    ItemDone,
    RetryPolicy,
    SampleDone,
    SampleFailed,
    Sampler,
    SamplingJob,
    _answers,
    run_sampling,
)
from tests.engine.hostile import ENDLESS_CHUNKED, OK, RST, HostileServer, chat, gzip_bomb, response

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.002)
NUMERIC = get_canonicalizer("numeric")


def items(n: int) -> list[TaskItem]:
    return [TaskItem(f"q{i}", f"what is {i}?", ("42",)) for i in range(n)]


def sample(server: HostileServer, n_items: int = 1, k: int = 1, cache: SampleCache | None = None,
           retry: RetryPolicy = FAST, transport: httpx.AsyncBaseTransport | None = None, concurrency: int = 1):
    events: list = []
    job = SamplingJob(items(n_items), NUMERIC, get_stopping_rule("none"), k)
    sampler = Sampler(EndpointConfig(server.base_url, "m", timeout_s=10), concurrency=concurrency, cache=cache,
                      retry=retry, transport=transport, pause_after=1000)
    totals = run_sampling(sampler, job, events.append)
    return totals, events


def failures(events: list) -> list[SampleFailed]:
    return [e for e in events if isinstance(e, SampleFailed)]


def test_connection_resets_after_the_request_was_read_are_retried_and_every_item_completes() -> None:
    # a quarter of the requests is read and answered by a TCP RST (SO_LINGER 0): the 2026 stall
    with HostileServer(cycle=[OK, OK, OK, RST]) as server:
        totals, events = sample(server, n_items=40, k=3, concurrency=8, retry=RetryPolicy(max_attempts=8,
                                                                                          base_delay_s=0.001))
    done = [e for e in events if isinstance(e, ItemDone)]
    assert len(done) == 40 and not any(e.failed for e in done) and totals.failed == 0
    assert totals.made == 40 * 3 == sum(isinstance(e, SampleDone) for e in events)
    assert server.requests - totals.made >= 30  # the resets really happened (a quarter of all requests)
    assert all(f.error_kind == "connection" for f in failures(events))


MALFORMED = {
    "deeply nested JSON": response(200, "[" * 200_000 + "]" * 200_000),
    "usage 1e999": chat("42", '{"prompt_tokens": 1e999, "completion_tokens": 1e999}'),
    "usage of 5,000 digits": chat("42", '{"prompt_tokens": ' + "9" * 5000 + ', "completion_tokens": 2}'),
    "negative Content-Length": b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n",
    "signed Content-Length": b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}",
    "negative chunk size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
    "chunk size line without end": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"f" * 100_000,
    "lone surrogate in content": chat("\\ud800 is 42"),
    "not JSON": response(200, "<html>42</html>"),
    "invalid UTF-8": response(200, b'{"choices": [{"message": {"content": "\xff\xfe"}}]}'),
    "no choices": response(200, '{"choices": []}'),
    "choice without content": response(200, '{"choices": [{"message": {"content": 42}}]}'),
}


@pytest.mark.parametrize("bad", list(MALFORMED), ids=list(MALFORMED))
def test_a_malformed_response_is_a_counted_retried_failure_and_never_cached(bad: str, tmp_path: Path) -> None:
    with HostileServer(script=[MALFORMED[bad]]) as server, SampleCache(tmp_path / "cache") as cache:
        totals, events = sample(server, cache=cache)
        assert totals.made == 1 and totals.retries == 1 and totals.failed == 0
        (failure,) = failures(events)
        assert failure.error_kind in ("malformed", "empty", "connection") and not failure.final
        assert len(cache) == 1  # only the good answer that followed
        (done,) = [e for e in events if isinstance(e, SampleDone)]
        assert done.text == "42"


def test_an_unpersistable_answer_never_enters_the_cache_so_a_rerun_cannot_abort(tmp_path: Path) -> None:
    with HostileServer(default=chat("\\udfff")) as server, SampleCache(tmp_path / "cache") as cache:
        totals, events = sample(server, cache=cache)
        assert totals.failed == 1 and len(cache) == 0 and len(failures(events)) == FAST.max_attempts
        # an entry left by an older version is read back as a miss, never returned
        cache._cache.set("fp", {"text": "\udfff", "prompt_tokens": 1e999, "completion_tokens": -3})
        assert cache.get("fp") is None
        cache.put("fp2", Completion("\ud800"))
        assert cache.get("fp2") is None and "fp2" not in cache._cache
    with HostileServer() as server, SampleCache(tmp_path / "cache") as cache:
        totals, events = sample(server, cache=cache)  # the rerun works
        assert totals.made == 1 and totals.failed == 0 and not failures(events)
        assert [e.text for e in events if isinstance(e, SampleDone)] == ["42"]


def test_a_never_ending_chunked_body_is_cut_at_the_cap_while_reading() -> None:
    with HostileServer(default=ENDLESS_CHUNKED) as server:
        totals, events = sample(server, retry=RetryPolicy(max_attempts=1))
    (failure,) = failures(events)
    assert failure.error_kind == "malformed" and "cap" in failure.message and failure.final
    assert totals.failed == 1
    assert server.sent_bytes < 64 * 1024 * 1024  # the client stopped reading at 8 MB (plus socket buffers)


def test_the_body_cap_holds_for_content_length_and_close_delimited_bodies_too() -> None:
    huge = b"HTTP/1.1 200 OK\r\nContent-Length: 9000000000\r\n\r\n"
    to_close = b"HTTP/1.0 200 OK\r\n\r\n" + b" " * (9 * 1024 * 1024)
    with HostileServer(script=[huge, to_close, OK]) as server:
        totals, events = sample(server)
    assert [f.error_kind for f in failures(events)] == ["malformed", "malformed"]
    assert all("cap" in f.message for f in failures(events)) and totals.made == 1


def test_an_oversized_answer_is_a_failure_not_stored_twice(tmp_path: Path) -> None:
    with HostileServer(script=[chat("4" * 1_000_001)]) as server, SampleCache(tmp_path / "c") as cache:
        totals, events = sample(server, cache=cache)
    (failure,) = failures(events)
    assert failure.error_kind == "malformed" and "1,000,000-character cap" in failure.message
    assert totals.made == 1 and len(cache) == 1


def test_a_gzip_bomb_is_refused_through_httpx_and_never_read_by_the_probes() -> None:
    bomb = gzip_bomb(40)  # 40 KB that inflate to 40 MB
    with HostileServer(default=bomb) as server:
        # the https path (any httpx transport): the inflated body is capped
        totals, events = sample(server, transport=httpx.AsyncHTTPTransport(), retry=RetryPolicy(max_attempts=1))
        assert totals.failed == 1 and failures(events)[0].error_kind == "malformed"
        assert "inflates to more than" in failures(events)[0].message
        # the reachability probes read the status line only
        endpoint = EndpointConfig(server.base_url, "m")

        async def probe() -> bool:
            async with httpx.AsyncClient(trust_env=False) as client:
                return await _answers(client, endpoint)

        assert asyncio.run(probe()) is True
        with httpx.Client(trust_env=False) as client:
            assert status_of_sync(client, server.base_url + "/models", None, 5) == 200
        # the model listing is capped: one line, no 40 MB
        with pytest.raises(ValueError, match="oversized body"):
            list_models(server.base_url)
        (found,) = discover(ports={"vLLM": server.port})
        assert found.models == () and "oversized" in found.error


def test_a_redirect_with_a_json_body_is_not_an_answer() -> None:
    redirect = response(302, '{"choices": [{"message": {"content": "42"}}]}',
                        ["Location: https://user:pw@elsewhere.example/v1?api_key=SECRET123"])
    with HostileServer(default=redirect) as server:
        totals, events = sample(server)
    (failure,) = failures(events)  # not retried: a redirect is a wrong URL
    assert failure.error_kind == "3xx" and failure.final and totals.made == 0 and totals.failed == 1
    assert "HTTP 302" in failure.message and "SECRET123" not in failure.message and "pw@" not in failure.message


def test_retry_after_is_capped_and_the_wait_is_said() -> None:
    limited = response(429, '{"error": {"message": "slow down"}}', ["Retry-After: 100000"])
    with HostileServer(script=[limited]) as server:
        totals, events = sample(server, retry=RetryPolicy(max_attempts=3, max_retry_after_s=0.01))
    (failure,) = failures(events)
    assert failure.wait_s == 0.01 and not failure.final and totals.made == 1
    assert "asked to retry after 100000 s" in failure.message and "(capped)" in failure.message


def test_lean_transport_errors_are_typed_and_the_connection_is_not_reused() -> None:
    async def go(server: HostileServer) -> list[str]:
        out = []
        lean = LeanHTTPTransport(max_body=1000)
        async with httpx.AsyncClient(transport=lean) as client:
            cfg = EndpointConfig(server.base_url, "m")
            for _ in range(3):
                try:
                    await complete(client, cfg, [{"role": "user", "content": "q"}], lean=lean)
                    out.append("ok")
                except RequestFailed as exc:
                    out.append(exc.kind)
        return out

    chunky = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"100\r\n" + b" " * 256 + b"XX"
    with HostileServer(script=[chat("1" * 2000), chunky]) as server:
        assert asyncio.run(go(server)) == ["malformed", "connection", "ok"]
