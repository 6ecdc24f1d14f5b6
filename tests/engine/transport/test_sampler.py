"""The sampler over real loopback sockets against the demo endpoint (SPEC §4.3, §7; issue 5 acceptance)."""

from __future__ import annotations

import asyncio
import email.utils
import threading
import time
from pathlib import Path

import pytest

from relgate_tui.core.canon import get_canonicalizer
from relgate_tui.core.certification.stopping import get_stopping_rule
from relgate_tui.demo import DemoServer, FaultPlan
from relgate_tui.engine.certification.tasks import load_task
from relgate_tui.engine.transport.cache import SampleCache
from relgate_tui.engine.transport.discovery import discover, discover_local_servers, list_models
from relgate_tui.engine.transport.endpoints import (
    Completion,
    EndpointConfig,
    parse_retry_after,
    request_fingerprint,
    sample_seed,
)
from relgate_tui.engine.transport.sampler import (
    EndpointDown,
    EndpointUnreachable,
    EndpointUp,
    ItemDone,
    RetryPolicy,
    SampleDone,
    SampleFailed,
    Sampler,
    SamplingJob,
    run_sampling,
)

ITEMS = load_task("bigbench-3digit-addition").items
NUMERIC = get_canonicalizer("numeric")
FAST_RETRY = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.05)


def job(n_items: int = 6, rule: str = "anytime", k_max: int = 20, **kw) -> SamplingJob:
    return SamplingJob(ITEMS[:n_items], NUMERIC, get_stopping_rule(rule), k_max, **kw)


@pytest.fixture
def server():
    with DemoServer() as srv:
        yield srv


def test_samples_sequentially_with_stopping_and_persists_before_the_next_request(server: DemoServer) -> None:
    stored = []
    sampler = Sampler(EndpointConfig(server.base_url, "sim-strong"), concurrency=4, persist=stored.append)
    events = []
    totals = run_sampling(sampler, job(8), events.append)
    done = [e for e in events if isinstance(e, ItemDone)]
    assert len(done) == 8 and totals.items == 8
    assert totals.made == len(server.chat_requests) == len(stored) == totals.samples_used
    # sequential per item: indices 0..n-1, each sample persisted
    for d in done:
        indices = [s.index for s in stored if s.item == d.item_id]
        assert indices == list(range(d.n_samples))
        assert d.n_samples <= 20
    assert totals.items_stopped_early >= 4  # the strong model's easy items stop at k = 6 (the floor, core/stopping.unanimous_floor)
    assert any(d.n_samples == 6 for d in done)
    # each request carries a distinct per-index seed
    seeds = {r.sample_seed for r in server.chat_requests}
    assert len(seeds) == len(server.chat_requests)


def test_rerun_from_cache_and_from_stored_samples_costs_zero_calls(server: DemoServer, tmp_path: Path) -> None:
    cfg = EndpointConfig(server.base_url, "sim-mid")
    stored = []
    first = run_sampling(Sampler(cfg, cache=SampleCache(tmp_path / "c"), persist=stored.append), job(5))
    n_calls = len(server.chat_requests)
    again = run_sampling(Sampler(cfg, cache=SampleCache(tmp_path / "c")), job(5))
    assert again.made == 0 and again.cached == first.samples_used and len(server.chat_requests) == n_calls
    by_item: dict[str, list] = {}
    for s in stored:
        by_item.setdefault(s.item, []).append(s)
    resumed = run_sampling(Sampler(cfg), job(5, existing=by_item))
    assert resumed.made == 0 and resumed.samples_used == first.samples_used
    assert len(server.chat_requests) == n_calls


class _CountingCache(SampleCache):
    """A real on-disk request cache that counts its lookups by kind and the thread they ran on."""

    def __init__(self, path) -> None:
        super().__init__(path)
        self.single: list[str] = []
        self.many: list[tuple[int, str]] = []
        self._in_many = False

    def get(self, fingerprint):
        if not self._in_many:
            self.single.append(threading.current_thread().name)
        return super().get(fingerprint)

    def get_many(self, fingerprints):
        self.many.append((len(fingerprints), threading.current_thread().name))
        self._in_many = True
        try:
            return super().get_many(fingerprints)
        finally:
            self._in_many = False


def test_fixed_k_items_look_the_cache_up_once_each_off_the_event_loop(server: DemoServer, tmp_path: Path) -> None:
    """With the ``none`` rule every index is asked, so an item's cached answers are looked up in one call on the
    cache thread, not one query per request on the event loop; what the cache holds is used, the rest is asked."""
    cfg = EndpointConfig(server.base_url, "sim-mid")
    first = _CountingCache(tmp_path / "c")
    run_sampling(Sampler(cfg, concurrency=3, cache=first), job(4, rule="none", k_max=3))  # 12 answers cached
    assert sorted(n for n, _ in first.many) == [3, 3, 3, 3] and first.single == []
    assert {name for _, name in first.many} == {"relgate-cache_0"}
    calls = len(server.chat_requests)
    again = _CountingCache(tmp_path / "c")
    totals = run_sampling(Sampler(cfg, concurrency=3, cache=again), job(6, rule="none", k_max=5))
    assert sorted(n for n, _ in again.many) == [5] * 6 and again.single == []
    assert totals.cached == 12 and totals.samples_new == 6 * 5 - 12 and totals.made == len(server.chat_requests) - calls
    adaptive = _CountingCache(tmp_path / "c")  # an adaptive rule asks one index at a time: one lookup per request
    totals = run_sampling(Sampler(cfg, concurrency=3, cache=adaptive), job(2, rule="anytime", k_max=5))
    assert adaptive.many == [] and len(adaptive.single) == totals.cached + totals.made


def test_resume_requests_only_missing_indices(server: DemoServer) -> None:
    cfg = EndpointConfig(server.base_url, "sim-weak")
    stored = []
    run_sampling(Sampler(cfg, persist=stored.append), job(3, rule="none", k_max=6))
    keep = {}
    for s in stored:
        if s.index < 2:
            keep.setdefault(s.item, []).append(s)
    server.clear_requests()
    totals = run_sampling(Sampler(cfg), job(3, rule="none", k_max=6, existing=keep))
    assert totals.cached == 6
    assert totals.samples_used == 18


@pytest.mark.parametrize(
    ("fault", "kind", "extra"),
    [
        ("429", "429", {"retry_after": "seconds"}),
        ("429", "429", {"retry_after": "date"}),
        ("500", "5xx", {}),
        ("malformed", "malformed", {}),
        ("empty", "empty", {}),
        ("reset", "connection", {}),
        ("slow", "timeout", {"slow_ms": 1500}),
    ],
)
def test_every_retryable_fault_is_counted_and_the_run_completes(server: DemoServer, fault, kind, extra) -> None:
    server.faults = FaultPlan(script=(fault, fault), retry_after_s=0, **extra)
    cfg = EndpointConfig(server.base_url, "sim-strong", timeout_s=0.5)
    events = []
    totals = run_sampling(Sampler(cfg, concurrency=1, retry=FAST_RETRY), job(2, rule="none", k_max=2), events.append)
    failures = [e for e in events if isinstance(e, SampleFailed)]
    assert [f.error_kind for f in failures] == [kind, kind] and not any(f.final for f in failures)
    assert totals.retries == 2 and totals.failed == 0 and totals.items_failed == 0
    assert totals.samples_used == 4


def test_retry_after_http_date_is_honoured(server: DemoServer) -> None:
    server.faults = FaultPlan(script=("429",), retry_after="date", retry_after_s=2)
    cfg = EndpointConfig(server.base_url, "sim-strong")
    started = time.monotonic()
    totals = run_sampling(Sampler(cfg, concurrency=1, retry=FAST_RETRY), job(1, rule="none", k_max=1))
    assert totals.samples_used == 1 and totals.retries == 1
    assert time.monotonic() - started >= 0.9  # waited for the date (1 s resolution), not the 10 ms backoff


def test_parse_retry_after_both_forms() -> None:
    now = time.time()
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_client_error_is_not_retried_and_reported_for_the_item_only(server: DemoServer) -> None:
    server.faults = FaultPlan(script=("400",))
    events = []
    totals = run_sampling(
        Sampler(EndpointConfig(server.base_url, "sim-strong"), concurrency=1, retry=FAST_RETRY),
        job(3, rule="none", k_max=2),
        events.append,
    )
    failures = [e for e in events if isinstance(e, SampleFailed)]
    assert len(failures) == 1 and failures[0].error_kind == "4xx" and failures[0].final
    assert "400" in failures[0].message
    assert totals.failed == 1 and totals.items_failed == 1 and totals.samples_used == 4  # the other items finish


def test_retries_are_bounded_then_the_item_fails(server: DemoServer) -> None:
    server.faults = FaultPlan(script=("500",) * 4)
    events = []
    totals = run_sampling(
        Sampler(EndpointConfig(server.base_url, "sim-strong"), concurrency=1, retry=FAST_RETRY, pause_after=100),
        job(2, rule="none", k_max=1),
        events.append,
    )
    assert totals.failed == 1 and totals.items_failed == 1 and totals.samples_used == 1
    assert [e.final for e in events if isinstance(e, SampleFailed)] == [False, False, False, True]


def test_server_ignoring_n_falls_back_to_single_requests() -> None:
    with DemoServer(honour_n=False) as srv:
        totals = run_sampling(Sampler(EndpointConfig(srv.base_url, "sim-mid"), concurrency=2), job(3, rule="none", k_max=5))
        assert totals.samples_used == 15
        assert len(srv.chat_requests) >= 14  # one n=5 request answered with 1 choice, then one request per sample
    with DemoServer(honour_n=True) as srv:
        totals = run_sampling(Sampler(EndpointConfig(srv.base_url, "sim-mid"), concurrency=2), job(3, rule="none", k_max=5))
        assert totals.samples_used == 15 and len(srv.chat_requests) == 3


class _CountingSampler(Sampler):
    """Records, per item, the most requests that were ever out at once (helpers in the run's tail)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.out: dict[str, int] = {}
        self.most: dict[str, int] = {}

    async def _get_samples(self, channel, job, work, index, want):
        item = work.item
        self.out[item.id] = self.out.get(item.id, 0) + 1
        self.most[item.id] = max(self.most.get(item.id, 0), self.out[item.id])
        try:
            return await super()._get_samples(channel, job, work, index, want)
        finally:
            self.out[item.id] -= 1


def test_idle_workers_help_the_last_fixed_k_items_and_samples_stay_in_index_order() -> None:
    """The ``none`` rule at a one-choice server: once the queue is empty, idle workers ask the unfinished items' next
    indices (engine/transport/itemwork.py); every item's samples are still persisted and reported in index order,
    and they are the samples a one-worker run asks (same seeds, same answers, same number of requests)."""
    with DemoServer(honour_n=False, latency_ms=2) as srv:
        stored, events = [], []
        sampler = _CountingSampler(EndpointConfig(srv.base_url, "sim-mid"), concurrency=4, persist=stored.append)
        totals = run_sampling(sampler, job(5, rule="none", k_max=8), events.append)
        helped = len(srv.chat_requests)
    assert max(sampler.most.values()) >= 2  # an item had two requests out at once: a helper joined its owner
    assert totals.samples_used == len(stored) == 40 and totals.failed == 0 and totals.items == 5
    for item in ITEMS[:5]:
        assert [s.index for s in stored if s.item == item.id] == list(range(8))
        mine = [e for e in events if getattr(e, "item_id", None) == item.id]
        assert [e.index for e in mine if isinstance(e, SampleDone)] == list(range(8))
        assert isinstance(mine[-1], ItemDone) and mine[-1].n_samples == 8 and not mine[-1].stopped_early
    with DemoServer(honour_n=False) as srv:
        alone = []
        run_sampling(Sampler(EndpointConfig(srv.base_url, "sim-mid"), concurrency=1, persist=alone.append),
                     job(5, rule="none", k_max=8))
        assert len(srv.chat_requests) == 40  # one sample per request (the first asks n=8 and gets one choice)
    assert helped == 40  # helping asks nothing twice
    assert sorted((s.item, s.index, s.text) for s in stored) == sorted((s.item, s.index, s.text) for s in alone)


def test_generic_http_template_and_response_path(server: DemoServer) -> None:
    template = '{"model": "sim-strong", "messages": [{"role": "user", "content": "{{question}}"}]}'
    cfg = EndpointConfig(
        server.base_url + "/chat/completions", kind="http", request_template=template,
        response_path="choices.0.message.content",
    )
    stored = []
    totals = run_sampling(Sampler(cfg, persist=stored.append), job(3, rule="none", k_max=2))
    assert totals.samples_used == 6 and totals.failed == 0
    assert sum(s.canonical == NUMERIC(ITEMS[0].answers[0]) for s in stored if s.item == ITEMS[0].id) >= 1


def test_pauses_when_the_endpoint_goes_down_and_resumes_when_it_returns() -> None:
    srv = DemoServer(latency_ms=20, honour_n=False).start()
    try:
        cfg = EndpointConfig(srv.base_url, "sim-weak", timeout_s=0.5)
        sampler = Sampler(cfg, concurrency=3, retry=FAST_RETRY, pause_after=3, probe_interval_s=0.05)
        events: list = []

        async def main() -> None:
            async def outage() -> None:
                while not any(isinstance(e, SampleDone) for e in events):
                    await asyncio.sleep(0.01)
                await asyncio.to_thread(srv.stop)
                while not any(isinstance(e, EndpointDown) for e in events):
                    await asyncio.sleep(0.01)
                await asyncio.to_thread(srv.start)

            task = asyncio.create_task(asyncio.wait_for(outage(), timeout=20))
            async for e in sampler.run(job(12, rule="none", k_max=4)):
                events.append(e)
            await task

        asyncio.run(asyncio.wait_for(main(), timeout=30))
        assert any(isinstance(e, EndpointDown) for e in events) and any(isinstance(e, EndpointUp) for e in events)
        assert sampler.totals.items_failed == 0 and sampler.totals.samples_used == 48  # nothing burnt while down
    finally:
        srv.stop()


def test_endpoint_that_never_returns_stops_with_a_clear_error(tmp_path: Path) -> None:
    with DemoServer() as srv:
        url = srv.base_url
    cfg = EndpointConfig(url, "sim-weak", timeout_s=0.2)
    sampler = Sampler(cfg, concurrency=2, retry=FAST_RETRY, pause_after=2, probe_interval_s=0.05, max_down_s=0.5)
    with pytest.raises(EndpointUnreachable, match="unreachable"):
        run_sampling(sampler, job(4, rule="none", k_max=2))
    assert sampler.totals.items_failed == 0  # paused, not burnt through


def test_cancelling_keeps_persisted_samples(server: DemoServer) -> None:
    slow = DemoServer(latency_ms=30, honour_n=False).start()
    try:
        stored = []
        first = threading.Event()

        def persist(sample) -> None:
            stored.append(sample)
            first.set()

        sampler = Sampler(EndpointConfig(slow.base_url, "sim-mid"), concurrency=2, persist=persist)

        async def main() -> None:
            async def consume() -> None:
                async for _ in sampler.run(job(10, rule="none", k_max=20)):
                    pass

            task = asyncio.create_task(consume())
            # cancel once a sample is stored (the event, not a clock: on a loaded machine 0.3 s held none)
            assert await asyncio.to_thread(first.wait, 120), "no sample was ever stored"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(main())
        assert 0 < len(stored) < 200
        assert len(stored) <= len(slow.chat_requests)
    finally:
        slow.stop()


def test_user_pause_stops_new_requests(server: DemoServer) -> None:
    sampler = Sampler(EndpointConfig(server.base_url, "sim-strong"), concurrency=1)

    async def main() -> int:
        seen = 0
        async for e in sampler.run(job(2, rule="none", k_max=3)):
            if isinstance(e, SampleDone):
                seen += 1
                if seen == 1:
                    sampler.pause()
                    while sampler.limit.in_flight:  # requests already in flight complete (the event, not a clock)
                        await asyncio.sleep(0.005)
                    before = len(server.chat_requests)
                    for _ in range(200):  # every worker gets many turns: one not paused would send a request
                        await asyncio.sleep(0)
                    assert sampler.limit.in_flight == 0 and len(server.chat_requests) == before
                    sampler.resume()
        return seen

    assert asyncio.run(main()) == 6


# ---- fingerprints and cache ------------------------------------------------------------------------------------
BASE = EndpointConfig("http://127.0.0.1:9/v1", "m", temperature=0.7, max_tokens=64, top_p=0.9)
MSGS = [{"role": "user", "content": "What is 2+2?"}]


@pytest.mark.parametrize(
    "changed",
    [
        dict(model="m2"),
        dict(base_url="http://127.0.0.1:10/v1"),
        dict(temperature=0.8),
        dict(max_tokens=65),
        dict(top_p=0.8),
        dict(system="Be brief."),
        dict(logprobs=True),
    ],
)
def test_fingerprint_changes_with_every_request_parameter(changed) -> None:
    from dataclasses import replace

    assert request_fingerprint(replace(BASE, **changed), MSGS, 0) != request_fingerprint(BASE, MSGS, 0)


def test_fingerprint_covers_template_path_index_and_messages_but_not_the_key(monkeypatch) -> None:
    t1 = EndpointConfig("http://h/x", kind="http", request_template='{"q": "{{question}}"}', response_path="a")
    t2 = EndpointConfig("http://h/x", kind="http", request_template='{"q": "{{question}}", "v": 2}', response_path="a")
    t3 = EndpointConfig("http://h/x", kind="http", request_template='{"q": "{{question}}"}', response_path="b")
    assert len({request_fingerprint(t, MSGS, 0) for t in (t1, t2, t3)}) == 3
    assert request_fingerprint(BASE, MSGS, 0) != request_fingerprint(BASE, MSGS, 1)
    assert request_fingerprint(BASE, MSGS, 0) != request_fingerprint(BASE, [{"role": "user", "content": "x"}], 0)
    keyed = EndpointConfig(BASE.base_url, "m", temperature=0.7, max_tokens=64, top_p=0.9, api_key_env="RELGATE_K")
    monkeypatch.setenv("RELGATE_K", "one")
    fp1 = request_fingerprint(keyed, MSGS, 0)
    monkeypatch.setenv("RELGATE_K", "two")
    assert request_fingerprint(keyed, MSGS, 0) == fp1


def test_sample_seeds_are_stable_and_distinct() -> None:
    assert sample_seed(0, "a", 1) == sample_seed(0, "a", 1)
    assert len({sample_seed(0, "a", i) for i in range(100)}) == 100
    assert sample_seed(0, "a", 0) != sample_seed(1, "a", 0) != sample_seed(0, "b", 0)


def test_cache_round_trip_and_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    cache = SampleCache(tmp_path)
    cache.put("k", Completion("42", 3, 1, "stop"))
    assert cache.get("k") == Completion("42", 3, 1, "stop")
    cache._cache.set("bad", b"\x00garbage")
    assert cache.get("bad") is None and cache.get("absent") is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(base_url="ftp://x", model="m"), "must start with http"),
        (dict(base_url="http://x/v1"), "needs a model"),
        (dict(base_url="http://x", kind="http", request_template="{}", response_path="a"), "must contain"),
        (dict(base_url="http://x", kind="http", request_template='{"q": {{question}}}', response_path="a"), "not valid JSON"),
        (dict(base_url="http://x/v1", model="m", api_key_env="sk-123 secret"), "NAME"),
    ],
)
def test_bad_endpoint_configs_give_one_line_errors(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message) as err:
        EndpointConfig(**kwargs)
    assert "\n" not in str(err.value)


# ---- discovery -------------------------------------------------------------------------------------------------
def test_discovery_finds_a_running_server_and_skips_closed_ports(server: DemoServer) -> None:
    with DemoServer() as gone:
        closed = gone.port
    found = discover(ports={"llama.cpp": server.port, "Ollama": closed})
    assert [s.name for s in found] == ["llama.cpp"]
    assert found[0].base_url == server.base_url and "sim-strong" in found[0].models
    assert asyncio.run(discover_local_servers(ports={"vLLM": closed})) == []
    assert "sim-mid" in list_models(server.base_url)
    with pytest.raises(ValueError, match="cannot connect"):
        list_models(f"http://127.0.0.1:{closed}/v1", timeout=0.5)
