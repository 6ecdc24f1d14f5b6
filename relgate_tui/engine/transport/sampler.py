"""Frugal, fault-tolerant sampling (SPEC §3.7, §4.3).

Every item is sampled *sequentially* — sample 0, 1, 2, … — and after each sample its canonical answers go to the
sequential stopping rule (``should_stop(counts, n_samples)``: counts of the non-INVALID classes, all samples);
sampling stops when the rule certifies the leader or at ``k_max``. Concurrency is *across* items: ``concurrency``
workers each take the next item from a queue, so at most ``concurrency`` requests are in flight. With the ``none``
rule, once the queue is empty, idle workers help the unfinished items with their next indices (:mod:`.itemwork`).

Resume and cost: samples already in the run store are not requested again; a sample whose request fingerprint is in
the cache costs no call. Each item's answers are handed to ``persist`` (the run store) in index order as they come
back (its owner's answer before its next request; a helper's answer once the earlier indices are in). Samples are
keyed by index, with a per-index ``seed``, so the same run always asks the same questions.

Faults: timeouts, connection errors, 429 (honouring ``Retry-After``, seconds or HTTP date, up to a cap), 5xx,
malformed JSON and empty choices are retried with jittered exponential backoff; other 4xx are not retried and are
reported for the item. A failed item never aborts the run: it is reported and the others go on. After
``pause_after`` consecutive failed requests the endpoint is considered down: every worker waits (no item burns its
retries), an :class:`EndpointDown` event is emitted and the endpoint is probed with backoff until it answers
(:class:`EndpointUp`), or until ``max_down_s`` has passed, when :class:`EndpointUnreachable` is raised.

``n > 1``: with the ``none`` rule the remaining samples of an item are asked for in one request when the server
honours ``n``; a server that returns fewer choices (llama.cpp) is remembered and asked one sample at a time.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import http.cookiejar
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from relgate_tui.core.redact import public_url
from relgate_tui.core.types import INVALID
from relgate_tui.engine.records import StoredSample, canonical_prefix
from relgate_tui.engine.transport.cache import SampleCache
from relgate_tui.engine.transport.concurrency import AdaptiveLimit, advertised_slots
from relgate_tui.engine.transport.endpoints import (
    Completion,
    EndpointConfig,
    RequestFailed,
    body_encoder,
    complete,
    fingerprinter,
    sample_seed,
)
from relgate_tui.engine.transport.events import EndpointDown, EndpointUp, ItemDone, SampleFailed, _sample_done
from relgate_tui.engine.transport.events import SampleDone as SampleDone  # re-exported (the events live there)
from relgate_tui.engine.transport.events import SamplerEvent as SamplerEvent
from relgate_tui.engine.transport.http11 import LeanHTTPTransport
from relgate_tui.engine.transport.httpread import status_of
from relgate_tui.engine.transport.itemwork import ItemWork
from relgate_tui.engine.transport.jobs import RetryPolicy as RetryPolicy  # re-exported (the job and its accounting)
from relgate_tui.engine.transport.jobs import SamplingJob as SamplingJob
from relgate_tui.engine.transport.jobs import SamplingTotals as SamplingTotals
from relgate_tui.engine.transport.jobs import class_counts as class_counts
from relgate_tui.engine.transport.prompts import item_messages
from relgate_tui.engine.transport.tls import verify_for

_FINISHED: Any = object()  # end-of-run marker on the event queue
CACHE_BATCH = 64  # answers written to the request cache in one transaction
MAX_BUSY_RETRIES = 20  # timeouts at a busy server asked again for one request before they count as failures


class EndpointUnreachable(RuntimeError):
    """The endpoint stayed down longer than ``max_down_s``."""


# ------------------------------------------------------------------------------------------------------ sampler
class Sampler:
    """Samples a :class:`SamplingJob` against one endpoint. Use :meth:`run` (async iterator of events) or
    :func:`run_sampling` (blocking, with a callback)."""

    def __init__(
        self,
        endpoint: EndpointConfig,
        *,
        concurrency: int = 8,
        cache: SampleCache | None = None,
        persist: Callable[[StoredSample], None] | None = None,
        retry: RetryPolicy | None = None,
        pause_after: int = 8,
        probe_interval_s: float = 1.0,
        max_down_s: float | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        rng_seed: int = 0,
        discover_slots: bool = False,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.endpoint = endpoint
        self.concurrency = concurrency
        self.cache = cache
        self.persist = persist
        self.retry = retry or RetryPolicy()
        self.pause_after = pause_after
        self.probe_interval_s = probe_interval_s
        self.max_down_s = max_down_s
        self.totals = SamplingTotals()
        self._transport = transport
        self._rng = random.Random(rng_seed)
        self._honours_n: bool | None = None
        self._consecutive_failures = 0
        self._up = asyncio.Event()
        self._running = asyncio.Event()  # cleared while the user pauses
        self._down_since: float | None = None
        self._down_busy = False  # the last pause was timeouts while other requests were answered
        self._queue: asyncio.Queue[SamplerEvent] | None = None
        self._prober: asyncio.Task[None] | None = None
        self._fingerprinters: dict[str, tuple[list[dict], Callable[[int, int | None], str],
                                              Callable[[int | None, int], bytes]]] = {}
        self.discover_slots = discover_slots
        self.limit = AdaptiveLimit(concurrency)  # replaced at the start of each run (engine/transport/concurrency.py)
        self._slots_pending = False
        self._slots_lock: asyncio.Lock | None = None
        self._unsaved: list[tuple[str, Completion]] = []  # answers not in the cache yet (written CACHE_BATCH at once)
        self._writer: concurrent.futures.ThreadPoolExecutor | None = None
        self._shared: dict[str, ItemWork] = {}  # fixed-K items being sampled: idle workers may help (itemwork.py)
        self._early_slots: tuple[int | None] | None = None  # discover_slots_now()'s answer, for the next run
        self._undelivered: dict[int, ItemWork] = {}  # items with a delivery deferred to the loop's next turn
        self._deliver_error: BaseException | None = None  # a deferred delivery's error, raised by the next one

    def _save_cached(self, last: bool = False) -> None:
        """Write the answers not yet in the cache: in one transaction on a writer thread when the cache offers
        ``put_many`` (the event loop never waits for SQLite's commit), else one by one; ``last``: wait until every
        write is done (before the caller closes the cache). The run store already holds each answer, so a kill loses
        nothing but these cache entries."""
        unsaved, self._unsaved = self._unsaved, []
        put_many = getattr(self.cache, "put_many", None)
        if unsaved and put_many is not None:
            self._cache_thread().submit(put_many, unsaved)
        elif unsaved and self.cache is not None:
            for fingerprint, completion in unsaved:
                self.cache.put(fingerprint, completion)
        if last and self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None

    def _cache_thread(self) -> concurrent.futures.ThreadPoolExecutor:
        """The one thread that reads and writes the request cache for this sampler (created on first use)."""
        if self._writer is None:
            self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="relgate-cache")
        return self._writer

    async def _look_up_cached(self, job: SamplingJob, work: ItemWork) -> None:
        """A fixed-K item's cached answers, looked up for all its unclaimed indices at once on the cache thread (when
        the cache offers ``get_many``): with the ``none`` rule every index will be asked, so one hop replaces an
        SQLite query per request on the event loop (~30 µs each, a tenth of the loop's time at 4,800 calls, issue
        42 §7). The fingerprints are kept for the requests; an index found there is not looked up again."""
        get_many = getattr(self.cache, "get_many", None)
        if get_many is None or work.left() == 0:
            return
        fingerprints = {i: self._fingerprint(job, work.item, work.messages, i)
                        for i in range(work.next_index, work.k_max)}
        found = await asyncio.get_running_loop().run_in_executor(self._cache_thread(), get_many,
                                                                 list(fingerprints.values()))
        work.fingerprints = fingerprints
        work.cached = {i: found[fp] for i, fp in fingerprints.items() if fp in found}

    # -- user pause --------------------------------------------------------------------------------------------
    def pause(self) -> None:
        """Stop issuing new requests (in-flight ones complete)."""
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    @property
    def endpoint_down(self) -> bool:
        return not self._up.is_set()

    # -- main loop ---------------------------------------------------------------------------------------------
    async def run(self, job: SamplingJob) -> AsyncIterator[SamplerEvent]:
        """Sample every item of ``job``; yields events as they happen. Cancelling (or closing the iterator) stops the
        workers; samples already handed to ``persist`` stay."""
        self._up.set()
        self._running.set()
        queue: asyncio.Queue[SamplerEvent] = asyncio.Queue()
        self._queue = queue
        todo: asyncio.Queue[Any] = asyncio.Queue()
        for item in job.items:
            todo.put_nowait(item)
        # One client per worker (each worker has at most one request in flight). Plain http:// goes through the lean
        # keep-alive transport (engine/http11.py): httpcore's pool and h11 cost ~1-2 ms of client CPU per call on
        # loopback, the lean path a fraction of that (bench/throughput.py); https:// still uses httpcore.
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        n_workers = min(self.concurrency, len(job.items))
        self.limit = AdaptiveLimit(self.concurrency)
        early, self._early_slots = self._early_slots, None  # asked by discover_slots_now() for this run
        self._slots_pending = self.discover_slots and n_workers > 1 and early is None  # before the first request
        if early is not None and early[0] is not None and n_workers > 1:
            self.limit = AdaptiveLimit(self.concurrency, early[0])
        self._slots_lock = asyncio.Lock()
        self._shared = {}
        self._undelivered, self._deliver_error = {}, None
        async with contextlib.AsyncExitStack() as stack:
            channels = []
            for _ in range(n_workers):
                lean = None if self._transport is not None else LeanHTTPTransport()
                client = await stack.enter_async_context(
                    httpx.AsyncClient(limits=limits, transport=self._transport or lean, trust_env=False,
                                      verify=verify_for(self.endpoint.base_url), cookies=_IgnoredCookies())
                )
                channels.append(_Channel(client, lean))
            workers = [asyncio.create_task(self._worker(channel, job, todo)) for channel in channels]
            done = asyncio.gather(*workers)
            done.add_done_callback(functools.partial(_finished, queue))
            try:
                while True:
                    event = await queue.get()
                    if event is _FINISHED:
                        break
                    yield event
                done.result()  # re-raise a worker's exception (EndpointUnreachable)
            finally:
                await _cancel_until_done(workers)
                for work in list(self._undelivered.values()):  # answers fetched before a cancel are kept
                    self._undelivered.pop(id(work), None)
                    with contextlib.suppress(Exception):
                        self._deliver(job, work)
                self._save_cached(last=True)
                if self._prober is not None:
                    self._prober.cancel()
                    await asyncio.gather(self._prober, return_exceptions=True)
                    self._prober = None

    def _emit(self, event: SamplerEvent) -> None:
        assert self._queue is not None
        self._queue.put_nowait(event)

    async def _worker(self, channel: _Channel, job: SamplingJob, todo: asyncio.Queue[Any]) -> None:
        while True:
            try:
                item = todo.get_nowait()
            except asyncio.QueueEmpty:
                work = self._helpable()
                if work is None:
                    return
                await self._fill(channel, job, work)  # the run's tail: ask an unfinished item's next index
                continue
            await self._sample_item(channel, job, item)

    async def _sample_item(self, channel: _Channel, job: SamplingJob, item: Any) -> None:
        canonicals = canonical_prefix(job.existing.get(item.id, ()))  # indices 0..m-1 (asked again after a gap)
        fixed = job.rule.name == "none"  # every index is asked whatever the answers: others may help (itemwork.py)
        work = ItemWork(item, item_messages(item), canonicals, class_counts(canonicals), job.k_max, fixed)
        self.totals.cached += work.resumed
        self.totals.items += 1
        if fixed:
            self._shared[item.id] = work
            await self._look_up_cached(job, work)
        await self._fill(channel, job, work)

    def _helpable(self) -> ItemWork | None:
        """The unfinished fixed-K item with the most indices nobody has claimed (one sample per request only)."""
        if self._honours_n is not False:
            return None
        work = max(self._shared.values(), key=ItemWork.left, default=None)
        return work if work is not None and work.left() > 0 else None

    async def _fill(self, channel: _Channel, job: SamplingJob, work: ItemWork) -> None:
        """Claim and ask ``work``'s next index until it has none left (the ``none`` rule: by its owner and helpers)
        or its rule stops it (its owner only, one index at a time); deliver answers in index order; the caller that
        sees the item end reports it."""
        fixed = work.fixed
        while work.left() > 0 and (fixed or not job.rule.should_stop(list(work.counts.values()), len(work.canonicals))):
            want = work.left() if fixed and self._honours_n is not False else 1
            start = work.claim(want)
            got = await self._get_samples(channel, job, work, start, want)
            work.returned(start, want, got)
            if fixed and got is not None and work.left() > 0:
                self._deliver_soon(job, work)  # after this worker's next request is on its way
                continue
            self._deliver(job, work)
            if got is None:
                break
        self._deliver(job, work)  # anything a deferred delivery has not handed over yet
        if not work.finished and (work.done() or not fixed):
            self._finish_item(work)

    def _deliver_soon(self, job: SamplingJob, work: ItemWork) -> None:
        """:meth:`_deliver` at the event loop's next turn: with the ``none`` rule the next index does not depend on
        this answer, so the worker sends its next request first and the answer is persisted, counted and reported
        while that request is in flight (a burst of answers no longer delays every worker's next request by the
        whole burst's bookkeeping). Deliveries still happen in index order (:meth:`ItemWork.deliverable`); the
        worker delivers whatever is left before its item ends, and :meth:`run` before it returns. An error (a
        failed store write) is raised by the worker's next delivery."""
        if self._deliver_error is not None:
            raise self._deliver_error
        self._undelivered[id(work)] = work
        asyncio.get_running_loop().call_soon(self._deliver_later, job, work)

    def _deliver_later(self, job: SamplingJob, work: ItemWork) -> None:
        self._undelivered.pop(id(work), None)
        try:
            self._deliver(job, work)
        except Exception as exc:  # noqa: BLE001 - a callback's error would be lost: kept, raised by the worker
            self._deliver_error = exc

    def _deliver(self, job: SamplingJob, work: ItemWork) -> None:
        """Persist, count and report the answers that have come back for the item's next indices, in order."""
        if self._deliver_error is not None:
            error, self._deliver_error = self._deliver_error, None
            raise error
        item = work.item
        while (answer := work.deliverable()) is not None:
            completion, cached, fingerprint = answer
            index = len(work.canonicals)
            canonical = job.canonicalizer(completion.text, item.choices)
            usage = {"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens}
            sample = StoredSample.trusted(item.id, index, completion.text, canonical, usage, fingerprint)
            if self.persist is not None:
                self.persist(sample)
            work.canonicals.append(canonical)
            if canonical != INVALID:
                work.counts[canonical] = work.counts.get(canonical, 0) + 1
            self._emit(_sample_done(item.id, index, completion.text, canonical, cached, usage, completion.logprobs))

    def _finish_item(self, work: ItemWork) -> None:
        work.finished = True
        self._shared.pop(work.item.id, None)
        n = len(work.canonicals)
        stopped_early = n < work.k_max and not work.failed
        self.totals.samples_used += n
        self.totals.items_stopped_early += stopped_early
        self.totals.items_failed += work.failed
        self._fingerprinters.pop(work.item.id, None)
        self._emit(ItemDone(work.item.id, n, stopped_early, work.counts, work.failed, work.resumed))

    def _fingerprint(self, job: SamplingJob, item: Any, messages: list[dict], index: int,
                     seed: int | None = None) -> str:
        """:func:`request_fingerprint` of sample ``index`` (whose ``seed`` is :func:`sample_seed`, given when known),
        through a per-item :func:`fingerprinter` (kept while the item is sampled: the same ``messages`` object)."""
        return self._encoders(item.id, messages)[1](index, sample_seed(job.seed, item.id, index) if seed is None
                                                     else seed)

    def _encoders(self, item_id: str, messages: list[dict]) -> tuple[list[dict], Callable[[int, int | None], str],
                                                                       Callable[[int | None, int], bytes]]:
        """The item's (messages, fingerprinter, body encoder), built once per item (the same ``messages`` object)."""
        memo = self._fingerprinters.get(item_id)
        if memo is None or memo[0] is not messages:
            memo = self._fingerprinters[item_id] = (messages, fingerprinter(self.endpoint, messages),
                                                    body_encoder(self.endpoint, messages))
        return memo

    async def _get_samples(
        self, channel: _Channel, job: SamplingJob, work: ItemWork, index: int, want: int
    ) -> list[tuple[Completion, bool, str]] | None:
        """Samples ``index …`` (1, or ``want`` when asking with n) with their request fingerprints: from the cache
        (looked up with the item's other indices by :meth:`_look_up_cached`, else now), else from the endpoint."""
        item, messages = work.item, work.messages
        seed = sample_seed(job.seed, item.id, index)
        known = work.fingerprints.get(index)
        fingerprint = known or self._fingerprint(job, item, messages, index, seed)
        if known is not None:
            hit = work.cached.pop(index, None)
        else:
            hit = self.cache.get(fingerprint) if self.cache is not None else None
        if hit is not None:
            self.totals.cached += 1
            return [(hit, True, fingerprint)]
        n = want if (want > 1 and self.endpoint.kind == "openai") else 1
        completions = await self._request(channel, item.id, index, messages, seed, n)
        if completions is None:
            return None
        if n > 1:
            if len(completions) < n:
                self._honours_n = False  # llama.cpp: one choice whatever n says
            else:
                self._honours_n = True
        completions = completions[:want]
        out = []
        for i, c in enumerate(completions):
            fp = fingerprint if i == 0 else self._fingerprint(job, item, messages, index + i)
            if self.cache is not None:
                self._unsaved.append((fp, c))
                if len(self._unsaved) >= CACHE_BATCH:
                    self._save_cached()
            out.append((c, False, fp))
        self.totals.samples_new += len(out)
        return out

    async def _request(
        self, channel: _Channel, item_id: str, index: int, messages: list[dict], seed: int, n: int
    ) -> list[Completion] | None:
        attempt = busy = 0
        while True:
            if not self._running.is_set():  # paused by the user
                await self._running.wait()
            if not self._up.is_set():
                await self._wait_until_up()
            attempt += 1
            if self._slots_pending:
                await self._discover_slots()
            started = await self.limit.acquire()  # the adaptive limit (transport/concurrency.py)
            outcome = "other"
            try:
                try:
                    payload = self._encoders(item_id, messages)[2](seed, n)
                    completions = await complete(channel.client, self.endpoint, messages, seed=seed, n=n,
                                                 lean=channel.lean, payload=payload)
                    outcome = "ok"
                except RequestFailed as exc:
                    if exc.kind == "timeout" and self.limit.busy_not_down(started) and busy < MAX_BUSY_RETRIES:
                        outcome = "busy"
                    raise
                finally:
                    self.limit.release(started, outcome)
            except RequestFailed as exc:
                if outcome == "busy":
                    # others were answered meanwhile: this request queued at a busy server, which is not down and
                    # not this item's fault — fewer requests in flight, and ask again at once
                    busy += 1
                    attempt -= 1
                    self.totals.retries += 1
                    self._emit(SampleFailed(item_id, index, "busy", f"{exc} (the server is busy: fewer requests "
                                            f"in flight, now {self.limit.allowed})", False, attempt + 1, 0.0))
                    continue
                endpoint_fault = exc.kind in ("timeout", "connection", "5xx")
                if endpoint_fault:
                    self._consecutive_failures += 1
                    if self._consecutive_failures >= self.pause_after and self._up.is_set():
                        self._go_down(exc)
                final = not exc.retryable or attempt >= self.retry.max_attempts
                if self.endpoint_down and endpoint_fault and exc.retryable:
                    final = False  # while the endpoint is down, waiting is not this item's fault
                    attempt = min(attempt, self.retry.max_attempts - 1)
                wait = 0.0 if final or self.endpoint_down else self.retry.delay(attempt, exc.retry_after, self._rng)
                self._emit(SampleFailed(item_id, index, exc.kind, str(exc) + self.retry.wait_note(wait, exc.retry_after),
                                        final, attempt, wait))
                if final:
                    self.totals.failed += 1
                    return None
                self.totals.retries += 1
                if wait > 0:
                    await asyncio.sleep(wait)
                continue
            self._consecutive_failures = 0
            self.totals.made += 1
            for c in completions:
                self.totals.prompt_tokens += c.prompt_tokens
                self.totals.completion_tokens += c.completion_tokens
            return completions

    async def _discover_slots(self) -> None:
        """The server's advertised parallelism (llama.cpp ``/props``), asked once, by the first worker about to send
        a request (a run served from the store or the cache asks nothing); the others wait for it."""
        assert self._slots_lock is not None
        async with self._slots_lock:
            if not self._slots_pending:
                return
            slots = await self._advertised_slots()
            self.limit = AdaptiveLimit(self.concurrency, slots)
            self._slots_pending = False

    async def discover_slots_now(self, job: SamplingJob) -> None:
        """Ask the server's parallelism before :meth:`run` of ``job``, for a caller that knows requests will be sent
        and has a round trip of its own to make meanwhile (the pipeline's reachability check: the two answers are
        waited for together, not one after the other); that run starts its limit there and asks nothing more.
        Does nothing unless the sampler discovers slots and the run has more than one worker (as :meth:`run`)."""
        if self.discover_slots and min(self.concurrency, len(job.items)) > 1:
            self._early_slots = (await self._advertised_slots(),)

    async def _advertised_slots(self) -> int | None:
        async with httpx.AsyncClient(transport=self._transport or LeanHTTPTransport(), trust_env=False,
                                     verify=verify_for(self.endpoint.base_url)) as client:
            return await advertised_slots(client, self.endpoint.base_url, self.endpoint.headers())

    # -- endpoint down / up ------------------------------------------------------------------------------------
    def _busy(self, exc: RequestFailed) -> bool:
        """Timeouts while the same endpoint answers other requests: a server busy at this concurrency (one slot
        working through a queue), not an unreachable one (issue 24 §2)."""
        return exc.kind == "timeout" and self.totals.made > 0

    def _go_down(self, exc: RequestFailed) -> None:
        self._up.clear()
        self._down_since = time.monotonic()
        self._down_busy = self._busy(exc)
        if self._down_busy:
            self._emit(EndpointDown(
                f"the server is busy: {self._consecutive_failures} requests timed out after "
                f"{self.endpoint.timeout_s:g} s while others were answered — lower --concurrency (or raise "
                "--timeout); sampling paused, retrying"))
        else:
            self._emit(EndpointDown(f"endpoint unreachable after {self._consecutive_failures} failed requests "
                                    f"({exc.kind}: {exc}); sampling paused, retrying"))
        if self._prober is None or self._prober.done():
            self._prober = asyncio.create_task(self._probe_until_up())

    async def _wait_until_up(self) -> None:
        if self._up.is_set():
            return
        if self.max_down_s is None:
            await self._up.wait()
            return
        assert self._down_since is not None
        remaining = self.max_down_s - (time.monotonic() - self._down_since)
        try:
            await asyncio.wait_for(self._up.wait(), timeout=max(0.0, remaining))
        except TimeoutError:
            if self._down_busy:
                raise EndpointUnreachable(
                    f"the server at {public_url(self.endpoint.base_url)} is busy: its requests kept timing out after "
                    f"{self.endpoint.timeout_s:g} s while others were answered — lower --concurrency (or raise "
                    "--timeout); stopped (completed samples are kept: rerun to resume)"
                ) from None
            raise EndpointUnreachable(
                f"endpoint {public_url(self.endpoint.base_url)} unreachable for {self.max_down_s:g} s; stopped "
                "(completed samples are kept: rerun the same command to resume)"
            ) from None

    async def _probe_until_up(self) -> None:
        delay = self.probe_interval_s
        async with httpx.AsyncClient(transport=self._transport, trust_env=False, verify=verify_for(self.endpoint.base_url)) as client:
            while not self._up.is_set():
                await asyncio.sleep(delay)
                if await _answers(client, self.endpoint):
                    assert self._down_since is not None
                    down = time.monotonic() - self._down_since
                    self._consecutive_failures = 0
                    self._up.set()
                    self._emit(EndpointUp(down))
                    return
                delay = min(delay * 2, 10.0)


def _finished(queue: asyncio.Queue[Any], gathered: asyncio.Future[Any]) -> None:
    """End of the workers: mark the event queue, and retrieve the outcome now, so that workers cancelled by Ctrl-C
    do not log "exception was never retrieved" tracebacks (the run's own exception is re-raised by ``result()``)."""
    if not gathered.cancelled():
        gathered.exception()
    queue.put_nowait(_FINISHED)


async def _answers(client: httpx.AsyncClient, endpoint: EndpointConfig) -> bool:
    """Does the endpoint answer HTTP at all (any status below 500)? Cheap: ``GET /models`` or the base URL, status
    line only (the body is never read: a gzip bomb or an endless body costs nothing)."""
    url = endpoint.base_url.rstrip("/") + "/models" if endpoint.kind == "openai" else endpoint.base_url
    try:
        status = await status_of(client, url, endpoint.headers(), min(5.0, endpoint.timeout_s))
    except httpx.HTTPError:
        return False
    return status < 500


# ------------------------------------------------------------------------------------------------------ helpers
@dataclass(frozen=True)
class _Channel:
    """One worker's connection: its httpx client and, unless a transport was injected, the lean transport under it,
    which :func:`~relgate_tui.engine.transport.endpoints.complete` calls directly for plain-http endpoints."""

    client: httpx.AsyncClient
    lean: LeanHTTPTransport | None


class _IgnoredCookies(http.cookiejar.CookieJar):
    """A model API needs no cookies; httpx would otherwise parse every response's headers for them (about a tenth
    of the client's CPU per call on loopback, ``bench/throughput.py``)."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None


async def _cancel_until_done(tasks: Sequence[asyncio.Task[Any]], poll_s: float = 0.05) -> None:
    """Cancel ``tasks`` and wait until every one has ended. Cancelling once is not enough on Python 3.11:
    ``asyncio.wait_for`` returns the result instead of raising when the cancellation races with a response that has
    just arrived, and that worker would go on through the queue; so whatever is still running is cancelled again."""
    pending = {t for t in tasks if not t.done()}
    while pending:
        for t in pending:
            t.cancel()
        _, pending = await asyncio.wait(pending, timeout=poll_s)
    for t in tasks:  # retrieve every outcome (nobody else reads a cancelled worker's exception)
        if not t.cancelled():
            t.exception()


def run_sampling(
    sampler: Sampler, job: SamplingJob, on_event: Callable[[SamplerEvent], None] | None = None
) -> SamplingTotals:
    """Blocking wrapper (the CLI): run the sampler to completion, calling ``on_event`` for every event."""

    async def main() -> SamplingTotals:
        async for event in sampler.run(job):
            if on_event is not None:
                on_event(event)
        return sampler.totals

    return asyncio.run(main())
