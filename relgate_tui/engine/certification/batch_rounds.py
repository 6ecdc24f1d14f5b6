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

**Faults** (issue 42). Every control call is retried by the client
(:class:`~relgate_tui.engine.transport.batch.RetryPolicy`); a call that gives up, a batch past ``--batch-deadline``, a
file over the download cap or a failed batch is one :class:`~relgate_tui.engine.transport.batch.BatchError` line
saying what the run keeps — the batch id stays in the run (the empty-run cleanup never deletes a run holding one) and
the rerun collects that batch. A failed line (a 429 or 5xx in the error file, an expired or cancelled request, an
unreadable line, a request of the round with no line at all) is a counted failure (``totals.failed``, by reason in
:attr:`BatchSampler.reasons`) and is asked again next round; a request rejected as such (a 4xx line: the provider's
reason, vLLM's ``error`` string or object, is kept) or failed ``max_attempts`` times ends its item, recorded in the
run's :class:`~relgate_tui.engine.certification.batch_state.BatchState` (no later round and no direct call asks it
again). Lines naming another run or an item the run does not have, answers to indices the round did not ask
(``asked``) and conflicting duplicates are refused — counted, never cached or used. Two rounds in a row without a
usable answer stop the run. An expired or cancelled batch keeps every answer it completed.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from relgate_tui.core.text import counted, one_line
from relgate_tui.core.types import INVALID
from relgate_tui.engine.certification.batch_plan import (
    MAX_BATCH_LINES,
    BatchProgress,
    BatchSettings,
    parse_custom_id,
    request_files,
    round_size,
)
from relgate_tui.engine.certification.batch_state import BatchState, Pending
from relgate_tui.engine.records import StoredSample, canonical_prefix
from relgate_tui.engine.transport.batch import (
    BatchClient,
    BatchError,
    BatchResults,
    BatchStatus,
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


_NO_LINE = RequestFailed("empty", "no line of the batch results answers it")  # asked, and no line says anything


UNSTORED_STOP = "past their item's stop — the stopping rule needed fewer samples than the round asked"
UNSTORED_GAP = ("after a sample of their item still missing — samples are stored in index order; kept in the request "
                "cache until it is answered")


class _Barren(BatchError):
    """Two rounds in a row without a usable answer: a rerun would do the same (no resume hint)."""


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
    stores samples in the run; ``state`` / ``save_state`` read and write the run's :class:`BatchState`."""

    def __init__(self, endpoint: EndpointConfig, *, run_id: str, cache: Any = None,
                 persist: Callable[[list[StoredSample]], None] | None = None,
                 state: Callable[[], BatchState] = BatchState,
                 save_state: Callable[[BatchState], None] = lambda _s: None,
                 settings: BatchSettings | None = None, transport: Any = None) -> None:
        self.endpoint = endpoint
        self.run_id = run_id
        self.cache = cache
        self.persist = persist
        self._state = state
        self._save_state = save_state
        self.settings = settings or BatchSettings()
        self.totals = SamplingTotals()
        self.reasons: Counter[str] = Counter()  # failed and refused lines by reason (this invocation)
        self.unstored: Counter[str] = Counter()  # answers read but not stored (yet), by why (this invocation)
        self._transport = transport
        self._spare: dict[str, Completion] = {}  # answers by fingerprint when there is no cache
        self._failed: dict[str, str] = {}  # items failed for good, with the reason (persisted)
        self._reported: set[str] = set()  # items whose ItemDone was yielded (this invocation)

    # the pipeline's pause/resume reach a sampler; a submitted batch cannot be paused
    def pause(self) -> None:
        return None

    def resume(self) -> None:
        return None

    @property
    def paused(self) -> bool:
        return False

    @property
    def recorded_failures(self) -> dict[str, str]:
        """Items failed for good, by id, with the reason (in the run's batch state)."""
        return dict(self._failed)

    def _put(self, **changes: Any) -> None:
        """Write the run's batch state with ``changes`` (and the items failed so far)."""
        self._save_state(self._state().with_(failed=dict(self._failed), **changes))

    def _items(self, job: SamplingJob) -> dict[str, _Item]:
        """Each item's state from the samples the run already holds (counted as cached) and its recorded failure."""
        items: dict[str, _Item] = {}
        self._failed = dict(self._state().failed)
        for item in job.items:
            stored = job.existing.get(item.id, ())
            canonicals = canonical_prefix(stored)
            messages = item_messages(item)
            it = items[item.id] = _Item(item, messages, fingerprinter(self.endpoint, messages), canonicals,
                                        class_counts(canonicals), len(canonicals),
                                        stopped=_used(job, canonicals) < len(canonicals) or _stops(job, canonicals))
            it.failed = item.id in self._failed and not self._settled(job, it)
            self.totals.cached += len(canonicals)
            self.totals.items += 1
        return items

    async def run(self, job: SamplingJob) -> AsyncIterator[Any]:
        """Sample every item of ``job`` in rounds; yields sampler events and :class:`BatchProgress`. A
        :class:`BatchError` ends the invocation with one line saying what the run keeps and how to resume."""
        try:
            async for event in self._rounds(job):
                yield event
        except _Barren:
            raise
        except BatchError as exc:
            raise BatchError(f"{exc}; {self._resume_hint()}", exc.status) from None

    def _resume_hint(self) -> str:
        pending = self._state().pending
        if pending is None:
            return "no batch of this run is in flight: rerun the same command to continue"
        ids = list(pending.batches) + ([f"the one created from {pending.creating}"] if pending.creating else [])
        return f"the run keeps batch {', '.join(ids)}: rerun the same command to collect it (nothing is submitted twice)"

    async def _rounds(self, job: SamplingJob) -> AsyncIterator[Any]:
        items = self._items(job)
        state = self._state()
        rounds = state.rounds
        async with BatchClient(self.endpoint, max_file_bytes=self.settings.max_file_bytes,
                               transport=self._transport, retry=self.settings.retry) as client:
            if state.pending is not None:
                round_no = state.pending.round or rounds + 1
                self.totals.batch_rounds += 1
                resumed = list(state.pending.batches)
                if state.pending.creating is not None:  # killed while creating a batch of this file: did it exist?
                    found = await client.find(state.pending.creating)
                    resumed.append(found.id if found is not None else (await client.create(
                        state.pending.creating, self._metadata(round_no))).id)
                    self._put(pending=Pending(round_no, tuple(resumed)))
                async for event in self._collect(client, job, items, round_no, resumed, state.asked):
                    yield event
                for event in self._item_events(job, items):
                    yield event
                rounds = round_no
                self._put(rounds=rounds, pending=None, asked={})
            barren = 0
            while True:
                round_no = rounds + 1
                lines: list[bytes] = []
                asked: dict[str, tuple[int, int]] = {}
                for event in self._plan(job, items, round_no, lines, asked):
                    yield event
                for event in self._item_events(job, items):  # settled by answers the cache held
                    yield event
                if not lines:
                    break
                if round_no > self.settings.max_rounds + self.settings.retry_rounds:
                    self._give_up(job, items)
                    break
                self._put(asked=asked)
                batch_ids: list[str] = []
                for chunk in request_files(lines, MAX_BATCH_LINES, self.settings.max_request_bytes):
                    file_id = await client.upload(chunk, f"relgate-{self.run_id}-round{round_no}.jsonl")
                    # stored before the create request: a run killed while it is on the wire looks the batch up
                    self._put(pending=Pending(round_no, tuple(batch_ids), file_id))
                    created = await client.create(file_id, self._metadata(round_no))
                    batch_ids.append(created.id)
                    # stored before the batch is polled: a killed run polls this batch again, never pays twice
                    self._put(pending=Pending(round_no, tuple(batch_ids)))
                self.totals.batched += len(lines)
                self.totals.batch_rounds += 1
                made = self.totals.made
                async for event in self._collect(client, job, items, round_no, batch_ids, asked):
                    yield event
                for event in self._item_events(job, items):  # the items this round settled, now
                    yield event
                rounds = round_no
                self._put(rounds=rounds, pending=None, asked={})
                barren = barren + 1 if self.totals.made == made else 0
                if barren >= 2:  # no usable answer in a round and in its retry: stop, never pay for it ten times
                    first = self.reasons.most_common(1)
                    raise _Barren(f"rounds {round_no - 1} and {round_no} gave no usable answer"
                                     + (f" (first reason: {first[0][0]})" if first else "")
                                     + ": the endpoint's batch output does not answer this run's requests (custom_id "
                                  f"{self.run_id}/<item>/<index>); the run stops")
        for event in self._item_events(job, items, final=True):
            yield event

    def _metadata(self, round_no: int) -> dict[str, str]:
        return {"relgate_run": self.run_id, "round": str(round_no)}

    def _give_up(self, job: SamplingJob, items: dict[str, _Item]) -> None:
        rounds = self.settings.max_rounds + self.settings.retry_rounds
        for it in items.values():
            if not self._settled(job, it) and not it.failed:
                self._fail(it, f"not sampled to its stop within {rounds} rounds")
        self._put()

    def _fail(self, it: _Item, reason: str) -> None:
        it.failed = True
        self._failed[it.item.id] = reason

    def _item_events(self, job: SamplingJob, items: dict[str, _Item], final: bool = False) -> list[ItemDone]:
        """The :class:`ItemDone` of every item settled (its stopping rule ended it, or K_max) and not reported yet —
        yielded after each round, so progress counts the items done round by round; ``final``: every item not
        reported yet (failed or unsettled ones included)."""
        events = []
        for it in items.values():
            if it.item.id in self._reported or not (final or (self._settled(job, it) and not it.failed)):
                continue
            self._reported.add(it.item.id)
            used = _used(job, it.canonicals)
            stopped = used < job.k_max and it.stopped
            self.totals.samples_used += used
            self.totals.items_stopped_early += stopped
            self.totals.items_failed += it.failed
            events.append(ItemDone(it.item.id, used, stopped, class_counts(it.canonicals[:used]), it.failed,
                                   it.resumed))
        return events

    # -- offline rounds (relgate batch write / read) ----------------------------------------------------------------
    def offline_requests(self, job: SamplingJob, retry_failed: bool = False) -> tuple[int, list[bytes], int]:
        """``(round, request lines, open items)`` of the run's next round, for a file run elsewhere (``vllm
        run-batch``); answers the cache already holds are stored first; the round's asked indices are recorded
        (``retry_failed``: items recorded as failed are asked again). Nothing is submitted."""
        if retry_failed:
            self._check_offline()
            self._save_state(self._state().with_(failed={}))
        items = self._items(job)
        rounds = self._check_offline().rounds
        lines: list[bytes] = []
        asked: dict[str, tuple[int, int]] = {}
        self._plan(job, items, rounds + 1, lines, asked)
        self._put(asked=asked, written=len(lines))
        return rounds + 1, lines, self._open(job, items)

    def offline_results(self, job: SamplingJob, files: Sequence[bytes | BinaryIO]) -> tuple[int, list[Any], int]:
        """Read a round's results file(s) (``vllm run-batch`` / Batch API output and error JSONL) into the run:
        ``(round, events, items still open)``. A read that stores nothing (every line refused or unreadable) counts no
        round; a request the round asked with no line in the files is a counted failure."""
        items = self._items(job)
        state = self._check_offline()
        round_no = state.rounds + 1
        results = parse_results(files, self.endpoint)
        events = self._ingest(job, items, round_no, results, "offline", state.asked, online=False)
        accepted = self.totals.made + sum(isinstance(e, SampleFailed) for e in events)
        if accepted:
            offline = self._state().offline.add(rounds=1, batched=state.written,
                                                made=self.totals.made, failed=self.totals.failed,
                                                reasons=self.reasons)
            self._put(rounds=round_no, pending=None, asked={}, written=0, offline=offline)
        else:
            self._put()
        return round_no if accepted else state.rounds, events, self._open(job, items)

    def _open(self, job: SamplingJob, items: dict[str, _Item]) -> int:
        return sum(not self._settled(job, it) and not it.failed for it in items.values())

    def _check_offline(self) -> BatchState:
        state = self._state()
        if state.pending is not None:
            raise BatchError("a batch of this run is in flight with the provider: finish it with `relgate certify "
                             "--batch` first")
        return state

    # -- a round ----------------------------------------------------------------------------------------------
    @staticmethod
    def _settled(job: SamplingJob, it: _Item) -> bool:
        return it.stopped or len(it.canonicals) >= job.k_max

    def _cached(self, fingerprint: str) -> Completion | None:
        if fingerprint in self._spare:
            return self._spare[fingerprint]
        return self.cache.get(fingerprint) if self.cache is not None else None

    def _plan(self, job: SamplingJob, items: dict[str, _Item], round_no: int, lines: list[bytes],
              asked: dict[str, tuple[int, int]]) -> list[Any]:
        """The request lines of round ``round_no`` (appended to ``lines``, their indices to ``asked``); samples the
        cache already holds are stored first (their events are returned)."""
        events: list[Any] = []
        for it in items.values():
            if it.failed:
                continue
            events += self._take(job, it, {})
            if self._settled(job, it):
                continue
            n = len(it.canonicals)
            m = round_size(job.rule, list(it.counts.values()), n, job.k_max, round_no, self.settings)
            asked[it.item.id] = (n, n + m)
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
                       batch_ids: list[str], asked: Mapping[str, tuple[int, int]]) -> AsyncIterator[Any]:
        """Poll each batch of the round to its end, read its files, cache and store the answers, count failures."""
        results = BatchResults()
        for batch_id in batch_ids:
            status: BatchStatus | None = None
            async for event in self._poll(client, round_no, batch_id):
                status = event[1]
                yield event[0]
            assert status is not None
            if status.status == "failed":  # rejected as a whole (nothing ran, nothing is charged): not polled again
                self._put(rounds=round_no - 1, pending=None)
                raise BatchError(f"batch {batch_id} failed: {'; '.join(status.errors) or 'no reason given'}")
            for file_id in (status.output_file_id, status.error_file_id):
                if file_id:
                    with await client.download_to(file_id) as downloaded:
                        parse_results([downloaded], self.endpoint, results)
        for event in self._ingest(job, items, round_no, results, batch_ids[-1], asked):
            yield event

    def _ingest(self, job: SamplingJob, items: dict[str, _Item], round_no: int, results: BatchResults,
                label: str, asked: Mapping[str, tuple[int, int]], online: bool = True) -> list[Any]:
        """Cache every answer of ``results`` (a round's) that this round asked for, store each item's next samples
        in index order, count the failures, the refused lines (another run's, an unknown item's, an index not asked,
        conflicting duplicates) and the unreadable ones, and the asked requests no line answered; the events.
        ``asked`` empty (a run from before it was recorded): every index below K_max is taken as asked."""
        events: list[Any] = []
        refused: Counter[str] = Counter()
        if results.malformed:
            refused["an unreadable line"] += results.malformed

        def requested(custom_id: str) -> tuple[_Item, int] | None:
            key = parse_custom_id(custom_id)
            if key is None:
                refused["a custom_id relgate did not write"] += 1
            elif key[0] != self.run_id:
                refused["a line of another run"] += 1
            elif key[1] not in items:
                refused["an item this run does not have"] += 1
            elif not (asked.get(key[1], (0, 0)) if asked else (0, job.k_max))[0] <= key[2] < \
                    (asked.get(key[1], (0, 0)) if asked else (0, job.k_max))[1]:
                refused["a sample index this round did not ask for"] += 1
            elif custom_id in results.conflicts:
                refused["conflicting answers to one request"] += 1
            else:
                return items[key[1]], key[2]
            return None

        by_item: dict[str, dict[int, Completion]] = {}
        for custom_id, completions in results.answers.items():
            found = requested(custom_id)
            if found is None:
                continue
            it, index = found
            completion = completions[0]
            fingerprint = it.fingerprint(index, sample_seed(job.seed, it.item.id, index))
            if self.cache is not None:
                self.cache.put(fingerprint, completion)
            else:
                self._spare[fingerprint] = completion
            by_item.setdefault(it.item.id, {})[index] = completion
            self.totals.made += 1
            self.totals.samples_new += 1
            self.totals.prompt_tokens += completion.prompt_tokens
            self.totals.completion_tokens += completion.completion_tokens
        failures: list[tuple[_Item, int, RequestFailed]] = []
        for custom_id, exc in results.failures.items():
            found = requested(custom_id)
            if found is not None:
                failures.append((*found, exc))
        # asked, and no line of the results says anything of it (offline: unless nothing of the file was this run's
        # round — another run's file, a replay: such a read stores nothing and counts no round)
        for item_id, (lo, hi) in asked.items() if online or failures or by_item else ():
            one = items.get(item_id)
            for index in range(lo, hi) if one is not None else ():
                custom_id = f"{self.run_id}/{item_id}/{index}"
                if custom_id in results.answers or custom_id in results.failures or custom_id in results.conflicts:
                    continue
                if one is not None and self._cached(one.fingerprint(index, sample_seed(job.seed, item_id,
                                                                                       index))) is None:
                    failures.append((one, index, _NO_LINE))
        if refused:
            self.totals.failed += sum(refused.values())
            self.reasons.update({f"refused: {r}": n for r, n in refused.items()})
            first = next(iter(refused))
            n = sum(refused.values())
            events.append(BatchProgress(round_no, label, "read", 0, 0, n,
                                        note=f"{counted(n, 'result line')} refused (first: {first}); "
                                             + ("its request is" if n == 1 else "their requests are")
                                             + " asked again if the round asked them"))
        for it in items.values():
            answers = by_item.get(it.item.id, {})
            events += self._take(job, it, answers)
            if late := sum(index >= len(it.canonicals) for index in answers):  # each is in the request cache
                self.unstored[UNSTORED_STOP if it.stopped or len(it.canonicals) >= job.k_max else UNSTORED_GAP] += late
        unexplained = results.malformed  # an unreadable line is some request's failure, already counted as one
        for it, index, exc in sorted(failures, key=lambda f: (f[0].item.id, f[1])):
            if exc is _NO_LINE and unexplained:
                unexplained -= 1
            else:
                self.totals.failed += 1
                self.reasons[_reason_key(exc)] += 1
            if not it.failed and not self._settled(job, it) and index >= len(it.canonicals):
                events.append(self._failure(it, index, exc))
        self._put()
        return events

    def _failure(self, it: _Item, index: int, exc: RequestFailed) -> SampleFailed:
        attempt = it.attempts[index] = it.attempts.get(index, 0) + 1
        final = not exc.retryable or attempt >= self.settings.max_attempts
        if final:
            self._fail(it, f"sample {index}: {exc.kind}: {exc}")
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
                    self._put(rounds=round_no - 1, pending=None)
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


def _reason_key(exc: RequestFailed) -> str:
    """A failure's reason as counted in ``calls.failure_reasons``: its kind and message, numbers kept."""
    return one_line(f"{exc.kind}: {exc}", 200)


def make_batch_sampler(prepared: Any, cache: Any = None, **kwargs: Any) -> BatchSampler:
    """The run's :class:`BatchSampler` (``relgate certify --batch``): samples persisted to the run store (one write
    per round and item), the batch state kept in the run's manifest (``batch``)."""
    store = prepared.store

    def persist(samples: list[StoredSample]) -> None:
        store.append_samples(samples)

    def state() -> BatchState:
        return BatchState.from_json(store.manifest.get("batch"))

    def save_state(value: BatchState) -> None:
        store.update_manifest(batch=value.to_json())  # atomic replace: a kill leaves the old state or the new one

    cfg = prepared.config
    kwargs.setdefault("settings", BatchSettings(max_file_bytes=max_file_bytes(),
                                                max_request_bytes=int(cfg.batch_max_mb * 1024 * 1024),
                                                deadline_s=float(cfg.batch_deadline_h) * 3600.0))
    return BatchSampler(prepared.config.endpoint_config(), run_id=store.run_id, cache=cache, persist=persist,
                        state=state, save_state=save_state, **kwargs)
