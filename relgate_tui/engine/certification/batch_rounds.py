r"""Sampling through a Batch API in rounds, with the sequential stopping rule between rounds (issue 32 §1–2).

:class:`BatchSampler` has the direct :class:`~relgate_tui.engine.transport.sampler.Sampler`'s face — ``run(job)``
yields the same :class:`SampleDone` / :class:`SampleFailed` / :class:`ItemDone` events (plus :class:`BatchProgress`)
and keeps :class:`SamplingTotals` — so the pipeline swaps one for the other.

**Rounds.** An item with ``n`` samples (the contiguous prefix 0..n−1) and class counts ``c`` is *settled* when
``n = K_max`` or ``rule.should_stop(c, n)``. Each round asks, for every unsettled item, samples ``n … n+m−1`` with

    d(c, n) = min{ j ≥ 1 : rule.should_stop(c + j·e_leader, n + j) }   (capped at K_max − n)
    m = max(k₀, d) in round 1,  m = max(d, ⌈g·n⌉) later,  m = K_max − n in round ``max_rounds``,

``d`` being the fewest further samples after which the rule *could* stop (all of them for the leader), so a round never
asks for samples the direct path would certainly need no fewer of, and ``g`` (default ¼) bounds the overshoot past the
direct path's stopping point by a quarter of an item's samples while reaching K_max within ``max_rounds`` rounds. The
rule's validity does not depend on how rounds are sized: it reads only the samples (paper 004 Prop. 9.3). Samples are
stored in index order up to the rule's stop, exactly as the direct path stores them; answers past the stop (paid for)
stay in the request cache, unused.

**Keys, cache, resume.** A sample is the same request as a direct call: the body of
:func:`~relgate_tui.engine.transport.endpoints.request_body` with the per-sample seed
:func:`~relgate_tui.engine.transport.endpoints.sample_seed`, and the request cache's key from the same
:func:`~relgate_tui.engine.transport.endpoints.fingerprinter` the direct sampler calls — so batch and direct runs share
answers. ``custom_id`` = ``<run id>/<item id>/<sample index>``. Every answer goes to the cache as soon as the output
file is read and to the run store in index order up to the stop (an answer after a gap waits in the cache for the
next round). The
batch ids of a round are written to the run (the manifest's ``batch``) right after the batch is created and before it is
polled: a run killed while a batch is in flight polls that batch again when resumed and never submits its requests
twice. The uploaded file's id is written before the create request: a run killed while that request was on the wire
finds the batch the endpoint created from the file (``GET /batches``), or creates it then — never two.

**Faults.** A failed line (a 429 or 5xx in the error file, an expired or cancelled request, a line of the output file
that cannot be read, an answer that never came) is a counted failure (``totals.failed``) and is asked again in the next
round; a request rejected as such (other 4xx) or failed ``max_attempts`` times ends its item (incomplete, samples
kept). An expired or cancelled batch keeps every answer it completed. A file over the download cap or a failed batch is
one :class:`~relgate_tui.engine.transport.batch.BatchError` line; the batch id stays in the run.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from relgate_tui.core.text import counted
from relgate_tui.core.types import INVALID
from relgate_tui.engine.records import StoredSample, canonical_prefix
from relgate_tui.engine.transport.batch import (
    MAX_FILE_BYTES,
    BatchClient,
    BatchError,
    BatchResults,
    BatchStatus,
    RetryPolicy,
    max_file_bytes,
    parse_results,
    request_line,
)
from relgate_tui.engine.transport.endpoints import (
    Completion,
    EndpointConfig,
    RequestFailed,
    fingerprinter,
    request_body,
    sample_seed,
)
from relgate_tui.engine.transport.prompts import item_messages
from relgate_tui.engine.transport.sampler import (
    ItemDone,
    SampleDone,
    SampleFailed,
    SamplingJob,
    SamplingTotals,
    class_counts,
)

__all__ = ["BatchError", "BatchProgress", "BatchSettings", "BatchSampler", "make_batch_sampler", "round_size",
           "parse_custom_id"]

MAX_BATCH_LINES = 50_000  # OpenAI's limit per batch; a larger round is several batches


@dataclass(frozen=True)
class BatchProgress:
    """A batch's state after a poll: round, id, status, and its request counts; ``eta_s`` when the provider gives
    one."""

    round: int
    batch_id: str
    status: str
    total: int
    completed: int
    failed: int
    eta_s: float | None = None
    note: str | None = None  # a notable event of the round instead of counts (unreadable lines)

    @property
    def text(self) -> str:
        if self.note:
            return f"batch round {self.round} ({self.batch_id}): {self.note}"
        eta = f", about {self.eta_s:.0f} s left" if self.eta_s is not None else ""
        return (f"batch round {self.round} ({self.batch_id}): {self.status}, {self.completed}/{self.total} completed, "
                f"{self.failed} failed{eta}")

    @property
    def line(self) -> str | None:
        """The round as one progress line (the TUI's sampling screen): submitted / in progress / completed, the ETA;
        None for a note."""
        if self.note:
            return None
        running = max(0, self.total - self.completed - self.failed)
        eta = f" · ETA {self.eta_s:.0f} s" if self.eta_s is not None else ""
        return (f"batch round {self.round} {self.status}: submitted {self.total} · in progress {running} · completed "
                f"{self.completed}" + (f" · failed {self.failed}" if self.failed else "") + eta)


@dataclass(frozen=True)
class BatchSettings:
    """Round sizing (module docstring: ``k0`` None = the rule's own earliest stop, ``growth`` = g), the retry budget
    (``max_attempts`` per sample, ``retry_rounds`` rounds after ``max_rounds`` for failed samples only), polling
    (first after ``first_poll_s``, doubling up to ``poll_interval_s``; a batch still running after ``deadline_s``
    — the 24 h completion window and an hour — stops the invocation, its id kept) and the download cap. Each control
    call is retried by the client's :class:`~relgate_tui.engine.transport.batch.RetryPolicy`."""

    k0: int | None = None
    growth: float = 0.25
    max_rounds: int = 8
    retry_rounds: int = 2
    max_attempts: int = 3
    first_poll_s: float = 0.02
    poll_interval_s: float = 10.0
    deadline_s: float = 25 * 3600.0
    max_file_bytes: int = MAX_FILE_BYTES
    retry: RetryPolicy | None = None  # None: the client's default policy


def round_size(rule: Any, counts: Sequence[int], n: int, k_max: int, round_no: int, settings: BatchSettings) -> int:
    """Samples to ask for an unsettled item in round ``round_no`` (module docstring), 1 ≤ m ≤ K_max − n."""
    room = k_max - n
    if room <= 0:
        return 0
    if round_no >= settings.max_rounds:
        return room
    d = room
    values = list(counts)
    lead = max(range(len(values)), key=values.__getitem__) if values and max(values) > 0 else None
    for j in range(1, room + 1):
        trial = values + [j] if lead is None else [v + j if i == lead else v for i, v in enumerate(values)]
        if rule.should_stop(trial, n + j):
            d = j
            break
    if round_no <= 1:
        m = max(settings.k0 or 1, d)
    else:
        m = max(d, math.ceil(settings.growth * n))
    return max(1, min(room, m))


def parse_custom_id(custom_id: str) -> tuple[str, str, int] | None:
    """``(run id, item id, sample index)`` of ``<run>/<item>/<index>`` (item ids may hold ``/``), or None."""
    run, sep, rest = custom_id.partition("/")
    item, sep2, index = rest.rpartition("/")
    if not sep or not sep2 or not index.isdigit() or len(index) > 9:
        return None
    return run, item, int(index)


@dataclass
class _Item:
    item: Any
    messages: list[dict]
    fingerprint: Callable[[int, int | None], str]
    canonicals: list[str]
    counts: dict[str, int]
    resumed: int
    attempts: dict[int, int] = field(default_factory=dict)
    failed: bool = False
    stopped: bool = False  # the rule stopped (nothing past that point is stored)


class BatchSampler:
    """Samples a :class:`SamplingJob` through the endpoint's Batch API in rounds (module docstring). ``persist``
    stores samples in the run; ``state`` / ``save_state`` read and write the run's batch state."""

    def __init__(self, endpoint: EndpointConfig, *, run_id: str, cache: Any = None,
                 persist: Callable[[list[StoredSample]], None] | None = None,
                 state: Callable[[], dict[str, Any] | None] = lambda: None,
                 save_state: Callable[[dict[str, Any]], None] = lambda _s: None,
                 settings: BatchSettings | None = None, transport: Any = None) -> None:
        self.endpoint = endpoint
        self.run_id = run_id
        self.cache = cache
        self.persist = persist
        self._state = state
        self._save_state = save_state
        self.settings = settings or BatchSettings()
        self.totals = SamplingTotals()
        self._transport = transport
        self._spare: dict[str, Completion] = {}  # answers by fingerprint when there is no cache

    # the pipeline's pause/resume reach a sampler; a submitted batch cannot be paused
    def pause(self) -> None:
        return None

    def resume(self) -> None:
        return None

    @property
    def paused(self) -> bool:
        return False

    def _items(self, job: SamplingJob) -> dict[str, _Item]:
        """Each item's state from the samples the run already holds (counted as cached)."""
        items: dict[str, _Item] = {}
        for item in job.items:
            stored = job.existing.get(item.id, ())
            canonicals = canonical_prefix(stored)
            messages = item_messages(item)
            items[item.id] = _Item(item, messages, fingerprinter(self.endpoint, messages), canonicals,
                                   class_counts(canonicals), len(canonicals),
                                   stopped=_used(job, canonicals) < len(canonicals) or _stops(job, canonicals))
            self.totals.cached += len(canonicals)
            self.totals.items += 1
        return items

    async def run(self, job: SamplingJob) -> AsyncIterator[Any]:
        """Sample every item of ``job`` in rounds; yields sampler events and :class:`BatchProgress`. A
        :class:`BatchError` ends the invocation with one line saying what the run keeps and how to resume."""
        try:
            async for event in self._rounds(job):
                yield event
        except BatchError as exc:
            raise BatchError(f"{exc}; {self._resume_hint()}", exc.status) from None

    def _resume_hint(self) -> str:
        pending = (self._state() or {}).get("pending")
        ids = [str(b) for b in pending.get("batches", ())] if isinstance(pending, dict) else []
        if isinstance(pending, dict) and isinstance(pending.get("creating"), str):
            ids.append(f"the one created from {pending['creating']}")
        if ids:
            return (f"the run keeps batch {', '.join(ids)}: rerun the same command to collect it (nothing is "
                    "submitted twice)")
        return "no batch of this run is in flight: rerun the same command to continue"

    async def _rounds(self, job: SamplingJob) -> AsyncIterator[Any]:
        items = self._items(job)
        state = self._state() or {}
        rounds = int(state.get("rounds", 0)) if isinstance(state.get("rounds"), int) else 0
        async with BatchClient(self.endpoint, max_file_bytes=self.settings.max_file_bytes,
                               transport=self._transport, retry=self.settings.retry) as client:
            pending = state.get("pending")
            if isinstance(pending, dict) and isinstance(pending.get("batches"), list):
                round_no = int(pending.get("round", rounds + 1))
                self.totals.batch_rounds += 1
                resumed = [str(b) for b in pending["batches"]]
                creating = pending.get("creating")
                if isinstance(creating, str):  # killed while creating a batch of this uploaded file: did it exist?
                    found = await client.find(creating)
                    resumed.append(found.id if found is not None else (await client.create(
                        creating, {"relgate_run": self.run_id, "round": str(round_no)})).id)
                    self._save_state({"rounds": rounds, "pending": {"round": round_no, "batches": resumed}})
                async for event in self._collect(client, job, items, round_no, resumed):
                    yield event
                rounds = round_no
                self._save_state({"rounds": rounds, "pending": None})
            while True:
                round_no = rounds + 1
                lines: list[bytes] = []
                for event in self._plan(job, items, round_no, lines):
                    yield event
                if not lines:
                    break
                if round_no > self.settings.max_rounds + self.settings.retry_rounds:
                    for it in items.values():
                        if not self._settled(job, it):
                            it.failed = True
                    break
                batch_ids: list[str] = []
                for start in range(0, len(lines), MAX_BATCH_LINES):
                    chunk = b"".join(lines[start:start + MAX_BATCH_LINES])
                    file_id = await client.upload(chunk, f"relgate-{self.run_id}-round{round_no}.jsonl")
                    # stored before the create request: a run killed while it is on the wire looks the batch up
                    self._save_state({"rounds": rounds, "pending": {"round": round_no, "batches": batch_ids,
                                                                     "creating": file_id}})
                    created = await client.create(file_id, {"relgate_run": self.run_id, "round": str(round_no)})
                    batch_ids.append(created.id)
                    # stored before the batch is polled: a killed run polls this batch again, never pays twice
                    self._save_state({"rounds": rounds, "pending": {"round": round_no, "batches": batch_ids}})
                self.totals.batched += len(lines)
                self.totals.batch_rounds += 1
                async for event in self._collect(client, job, items, round_no, batch_ids):
                    yield event
                rounds = round_no
                self._save_state({"rounds": rounds, "pending": None})
        for it in items.values():
            used = _used(job, it.canonicals)
            stopped = used < job.k_max and it.stopped
            self.totals.samples_used += used
            self.totals.items_stopped_early += stopped
            self.totals.items_failed += it.failed
            yield ItemDone(it.item.id, used, stopped, class_counts(it.canonicals[:used]), it.failed, it.resumed)

    # -- offline rounds (relgate batch write / read) ----------------------------------------------------------------
    def offline_requests(self, job: SamplingJob) -> tuple[int, list[bytes], int]:
        """``(round, request lines, open items)`` of the run's next round, for a file run elsewhere (``vllm
        run-batch``); answers the cache already holds are stored first. Nothing is submitted."""
        items = self._items(job)
        rounds = self._offline_rounds()
        lines: list[bytes] = []
        self._plan(job, items, rounds + 1, lines)
        return rounds + 1, lines, sum(not self._settled(job, it) and not it.failed for it in items.values())

    def offline_results(self, job: SamplingJob, files: Sequence[bytes]) -> tuple[int, list[Any], int]:
        """Read a round's results file(s) (``vllm run-batch`` / Batch API output and error JSONL) into the run:
        ``(round, events, items still open)``."""
        items = self._items(job)
        round_no = self._offline_rounds() + 1
        results = parse_results(files, self.endpoint)
        events = self._ingest(job, items, round_no, results, "offline")
        self._save_state({"rounds": round_no, "pending": None})
        return round_no, events, sum(not self._settled(job, it) and not it.failed for it in items.values())

    def _offline_rounds(self) -> int:
        state = self._state() or {}
        if state.get("pending"):
            raise BatchError("a batch of this run is in flight with the provider: finish it with `relgate certify "
                             "--batch` first")
        return int(state["rounds"]) if isinstance(state.get("rounds"), int) else 0

    # -- a round ----------------------------------------------------------------------------------------------
    @staticmethod
    def _settled(job: SamplingJob, it: _Item) -> bool:
        return it.stopped or len(it.canonicals) >= job.k_max

    def _cached(self, fingerprint: str) -> Completion | None:
        if fingerprint in self._spare:
            return self._spare[fingerprint]
        return self.cache.get(fingerprint) if self.cache is not None else None

    def _plan(self, job: SamplingJob, items: dict[str, _Item], round_no: int, lines: list[bytes]) -> list[Any]:
        """The request lines of round ``round_no`` (appended to ``lines``); samples the cache already holds are stored
        first (their events are returned)."""
        events: list[Any] = []
        for it in items.values():
            if it.failed:
                continue
            events += self._take(job, it, {})
            if self._settled(job, it):
                continue
            n = len(it.canonicals)
            m = round_size(job.rule, list(it.counts.values()), n, job.k_max, round_no, self.settings)
            for index in range(n, n + m):
                seed = sample_seed(job.seed, it.item.id, index)
                if self._cached(it.fingerprint(index, seed)) is not None:
                    continue  # an answer after a gap: stored once the gap is filled
                body = request_body(self.endpoint, it.messages, seed, 1)
                lines.append(request_line(f"{self.run_id}/{it.item.id}/{index}", body))
        return events

    def _take(self, job: SamplingJob, it: _Item, answers: dict[int, Completion]) -> list[Any]:
        """Store the item's next samples, in index order, from ``answers`` (this round's) or the cache, up to the
        first one missing; their :class:`SampleDone` events."""
        events: list[Any] = []
        new: list[StoredSample] = []
        while len(it.canonicals) < job.k_max and not it.stopped:  # as the direct path: nothing past the stop
            index = len(it.canonicals)
            seed = sample_seed(job.seed, it.item.id, index)
            fingerprint = it.fingerprint(index, seed)
            completion = answers.get(index)
            cached = completion is None
            if completion is None:
                completion = self._cached(fingerprint)
                if completion is None:
                    break
                self.totals.cached += 1
            canonical = job.canonicalizer(completion.text, it.item.choices)
            usage = {"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens}
            new.append(StoredSample.trusted(it.item.id, index, completion.text, canonical, usage, fingerprint))
            it.canonicals.append(canonical)
            if canonical != INVALID:
                it.counts[canonical] = it.counts.get(canonical, 0) + 1
            if not it.stopped and job.rule.should_stop(list(it.counts.values()), len(it.canonicals)):
                it.stopped = True
            events.append(SampleDone(it.item.id, index, completion.text, canonical, cached, usage,
                                     completion.logprobs))
        if new and self.persist is not None:
            self.persist(new)
        return events

    async def _collect(self, client: BatchClient, job: SamplingJob, items: dict[str, _Item], round_no: int,
                       batch_ids: list[str]) -> AsyncIterator[Any]:
        """Poll each batch of the round to its end, read its files, cache and store the answers, count failures."""
        results = BatchResults()
        for batch_id in batch_ids:
            status: BatchStatus | None = None
            async for event in self._poll(client, round_no, batch_id):
                status = event[1]
                yield event[0]
            assert status is not None
            if status.status == "failed":  # rejected as a whole (nothing ran, nothing is charged): not polled again
                self._save_state({"rounds": round_no - 1, "pending": None})
                raise BatchError(f"batch {batch_id} failed: {'; '.join(status.errors) or 'no reason given'}")
            files = [await client.download(f) for f in (status.output_file_id, status.error_file_id) if f]
            parse_results(files, self.endpoint, results)
        for event in self._ingest(job, items, round_no, results, batch_ids[-1]):
            yield event

    def _ingest(self, job: SamplingJob, items: dict[str, _Item], round_no: int, results: BatchResults,
                label: str) -> list[Any]:
        """Cache every answer of ``results`` (a round's), store each item's next samples in index order, count the
        failures and unreadable lines; the events."""
        events: list[Any] = []
        by_item: dict[str, dict[int, Completion]] = {}
        for custom_id, completions in results.answers.items():
            key = parse_custom_id(custom_id)
            it = items.get(key[1]) if key is not None and key[0] == self.run_id else None
            if it is None or key is None:
                results.malformed += 1
                continue
            completion = completions[0]
            fingerprint = it.fingerprint(key[2], sample_seed(job.seed, it.item.id, key[2]))
            if self.cache is not None:
                self.cache.put(fingerprint, completion)
            else:
                self._spare[fingerprint] = completion
            by_item.setdefault(it.item.id, {})[key[2]] = completion
            self.totals.made += 1
            self.totals.samples_new += 1
            self.totals.prompt_tokens += completion.prompt_tokens
            self.totals.completion_tokens += completion.completion_tokens
        for custom_id, exc in results.failures.items():
            key = parse_custom_id(custom_id)
            it = items.get(key[1]) if key is not None and key[0] == self.run_id else None
            if it is None or key is None:
                results.malformed += 1
                continue
            self.totals.failed += 1
            events.append(self._failure(it, key[2], exc))
        if results.malformed:
            self.totals.failed += results.malformed
            events.append(BatchProgress(round_no, label, "read", 0, 0, results.malformed,
                                        note=f"{counted(results.malformed, 'unreadable result line')}: "
                                             + ("its request is" if results.malformed == 1 else "their requests are")
                                             + " asked again next round"))
        for it in items.values():
            events += self._take(job, it, by_item.get(it.item.id, {}))
        return events

    def _failure(self, it: _Item, index: int, exc: RequestFailed) -> SampleFailed:
        attempt = it.attempts[index] = it.attempts.get(index, 0) + 1
        final = not exc.retryable or attempt >= self.settings.max_attempts
        if final:
            it.failed = True
        else:
            self.totals.retries += 1
        note = "" if final else " (asked again next round)"
        return SampleFailed(it.item.id, index, exc.kind, f"{exc}{note}", final, attempt)

    async def _poll(self, client: BatchClient, round_no: int, batch_id: str
                    ) -> AsyncIterator[tuple[BatchProgress, BatchStatus]]:
        """Poll ``batch_id`` until it ends (each call retried by the client's :class:`RetryPolicy`), at most
        ``settings.deadline_s`` on the policy's clock (then :class:`BatchError`; the batch stays in the run)."""
        clock, sleep = client.retry.clock, client.retry.sleep
        start = clock()
        delay = self.settings.first_poll_s
        last: tuple[str, int, int] | None = None
        while True:
            try:
                status = await client.status(batch_id)
            except BatchError as exc:
                if exc.status == 404:  # the provider knows no such batch (deleted, another account): not polled again
                    self._save_state({"rounds": round_no - 1, "pending": None})
                    raise BatchError(f"batch {batch_id} is unknown to the endpoint (HTTP 404); it is dropped from the "
                                     "run: the next run submits its requests again") from None
                raise
            seen = (status.status, status.completed, status.failed)
            if seen != last or status.ended:
                last = seen
                eta = None if status.eta_at is None else max(0.0, status.eta_at - time.time())
                yield BatchProgress(round_no, batch_id, status.status, status.total, status.completed, status.failed,
                                    eta), status
            if status.ended:
                return
            if clock() - start >= self.settings.deadline_s:
                raise BatchError(f"batch {batch_id} is still {status.status} ({status.completed}/{status.total} "
                                 f"completed) after {_duration(self.settings.deadline_s)} (--batch-deadline)")
            await sleep(delay)
            delay = min(delay * 2, self.settings.poll_interval_s)


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds:g} s"


def _stops(job: SamplingJob, canonicals: Sequence[str]) -> bool:
    return bool(canonicals) and bool(job.rule.should_stop(list(class_counts(canonicals).values()), len(canonicals)))


def _used(job: SamplingJob, canonicals: Sequence[str]) -> int:
    """Samples the rule uses: the first n at which it stops over the prefix (else all of it, up to K_max)."""
    counts: dict[str, int] = {}
    for n, canonical in enumerate(canonicals[: job.k_max], 1):
        if canonical != INVALID:
            counts[canonical] = counts.get(canonical, 0) + 1
        if job.rule.should_stop(list(counts.values()), n):
            return n
    return min(len(canonicals), job.k_max)


def make_batch_sampler(prepared: Any, cache: Any = None, **kwargs: Any) -> BatchSampler:
    """The run's :class:`BatchSampler` (``relgate certify --batch``): samples persisted to the run store (one write
    per round and item), the batch state kept in the run's manifest (``batch``)."""
    store = prepared.store

    def persist(samples: list[StoredSample]) -> None:
        store.append_samples(samples)

    def state() -> dict[str, Any] | None:
        value = store.manifest.get("batch")
        return value if isinstance(value, dict) else None

    def save_state(value: dict[str, Any]) -> None:
        store.update_manifest(batch=dict(value))  # atomic replace: a kill leaves the old state or the new one

    kwargs.setdefault("settings", BatchSettings(max_file_bytes=max_file_bytes()))
    return BatchSampler(prepared.config.endpoint_config(), run_id=store.run_id, cache=cache, persist=persist,
                        state=state, save_state=save_state, **kwargs)
