"""The one certification pipeline (issue 10 §1): sampling and the optional judge pass of a prepared run, as events.

:func:`run` is an async generator that both front ends iterate — the CLI through :func:`run_certify` (``asyncio.run``
plus printing), the TUI in its sampling worker (:meth:`relgate_tui.engine.certification.session.Session.sample`). It:

1. checks, when some item still needs a request that neither the run store nor the cache holds, that the API-key
   variable is set and that the endpoint answers HTTP (one line otherwise);
2. samples every item through the sampler (bounded concurrency, retries, sequential stopping, K_max cap), resuming
   from the run store and the request cache; each completed sample is appended to the run before the sampler can
   issue that item's next request; yields :class:`Sampling` after each sampler event and :class:`EndpointDown` /
   :class:`EndpointUp`;
3. raises :class:`~relgate_tui.engine.certification.analysis.CertifyError` when *every* request failed and nothing is stored (a
   wrong key, a wrong model name): an error, never a result;
4. with a pairwise judge, asks it about every item with ≥ 2 answer classes (:mod:`relgate_tui.engine.judging.certify_judge`,
   cached) and stores its verdicts in the run, yielding :class:`Judging`; with a verification judge, asks it about
   every sampled item without a reference (:mod:`relgate_tui.engine.judging.verify_judge`, issue 22) likewise;
5. yields :class:`Done` with the invocation's call counts.

The run status (:class:`~relgate_tui.engine.runs.store.RunStatus`) moves sampling → sampled | incomplete (→ judging →
sampled); the front end then ends the run with :func:`relgate_tui.engine.certification.finish.finish` (the result
document and the final status). Pause/resume and stop go through a :class:`RunControl`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgate_tui.core.text import counted
from relgate_tui.engine.certification.calls import CallCounts
from relgate_tui.engine.certification.options import CertifyConfig
from relgate_tui.engine.certification.prepared import Prepared, prepare
from relgate_tui.engine.certification.run_start import (
    END_OF_RUN_MODULES,
    check_reachable,
    needs_network,
    prefetch,
    reachable_and_slots,
)
from relgate_tui.engine.records import StoredSample, canonical_prefix
from relgate_tui.engine.runs.store import RunStatus, RunStore, RunStoreError
from relgate_tui.engine.transport.events import EndpointDown, EndpointUp  # the sampler's, passed on as they are
from relgate_tui.engine.transport.sampler import (
    EndpointUnreachable,
    ItemDone,
    SampleDone,
    SampleFailed,
    Sampler,
    SamplingJob,
)
from relgate_tui.errors import CertifyError

if TYPE_CHECKING:  # batch_rounds (and httpx's multipart) is imported only by a --batch run (issue 32 §6: start-up)
    from relgate_tui.engine.certification.batch_rounds import BatchProgress

__all__ = [
    "Sampling",
    "EndpointDown",
    "EndpointUp",
    "Judging",
    "Done",
    "PipelineEvent",
    "RunControl",
    "run",
    "open_cache",
    "sampling_job",
    "make_sampler",
    "needs_network",
    "check_reachable",
    "CertifyOutcome",
    "run_certify",
]


# ------------------------------------------------------------------------------------------------------------ events
@dataclass(frozen=True)
class Sampling:
    """Progress after one sampler event: ``event`` is the sampler's :class:`SampleDone`, :class:`SampleFailed` or
    :class:`ItemDone`; ``done_items`` of ``total_items`` are finished; ``calls`` counts this pass; ``samples_used``
    sums the samples of the finished items; ``message`` names a notable event (an item that failed for good);
    ``batch``: a Batch API round's progress line (its ``message`` says the same for a log)."""

    event: SampleDone | SampleFailed | ItemDone | BatchProgress
    done_items: int
    total_items: int
    calls: CallCounts
    samples_used: int
    message: str | None = None
    batch: str | None = None  # with --batch: the round's progress line (BatchProgress.line), else None


@dataclass(frozen=True)
class Judging:
    """Progress of a judge pass: ``done`` of ``total`` judge answers, its own call counts; ``which`` judge:
    "pairwise" or "verification" (issue 22)."""

    done: int
    total: int
    calls: CallCounts
    message: str | None = None
    which: str = "pairwise"


@dataclass(frozen=True)
class Done:
    """The pipeline finished: the sampling pass's ``calls``, the judge's (None without a judge), and the status the
    run was left in (sampled, or incomplete when items were not sampled to their stop)."""

    calls: CallCounts
    judge_calls: CallCounts | None
    status: RunStatus
    verify_calls: CallCounts | None = None


PipelineEvent = Sampling | EndpointDown | EndpointUp | Judging | Done


class RunControl:
    """Pause / resume the requests of a running pipeline (in-flight ones complete); the pipeline sets ``sampler``
    to the sampler of its current phase (sampling, then the judge's)."""

    def __init__(self) -> None:
        self.sampler: Any = None

    def pause(self) -> bool:
        if self.sampler is None:
            return False
        self.sampler.pause()
        return True

    def resume(self) -> bool:
        if self.sampler is None:
            return False
        self.sampler.resume()
        return True


# ------------------------------------------------------------------------------------------------------- sampling
def open_cache(cfg: CertifyConfig) -> Any:
    """The request cache of completed samples: ``cfg.cache_dir`` or ``<cache dir>/samples`` (engine/runs/paths.py). A
    damaged cache database is moved aside and rebuilt by :class:`~relgate_tui.engine.transport.cache.SampleCache`."""
    from relgate_tui.engine.runs.paths import cache_dir
    from relgate_tui.engine.transport.cache import SampleCache

    path = Path(cfg.cache_dir) if cfg.cache_dir else cache_dir() / "samples"
    try:
        return SampleCache(path)
    except OSError as exc:
        raise CertifyError(f"cannot open the sample cache {path}: {exc.strerror or exc}") from None


def sampling_job(prepared: Prepared, existing: Any = None) -> SamplingJob:
    """The sampler's job for the run: every item, the run's canonicalizer and stopping rule, K_max, seed, and the
    samples already stored (the resume; read from the run store unless given)."""
    cfg = prepared.config
    return SamplingJob(
        items=prepared.items,
        canonicalizer=prepared.canonicalizer,
        rule=prepared.rule,
        k_max=cfg.k_max,
        seed=cfg.seed,
        existing=prepared.store.samples_by_item() if existing is None else existing,
    )


def make_sampler(prepared: Prepared, cache: Any = None, **kwargs: Any) -> Sampler:
    """A sampler that persists every completed sample into the run store (:class:`StoreWriter`)."""
    cfg = prepared.config
    kwargs.setdefault("max_down_s", cfg.max_down_s)
    kwargs.setdefault("discover_slots", True)  # llama.cpp's /props total_slots: the adaptive limit starts there
    return Sampler(cfg.endpoint_config(), concurrency=cfg.concurrency, cache=cache, persist=StoreWriter(prepared.store),
                   **kwargs)


class StoreWriter:
    """The sampler's ``persist``: the samples handed over during one turn of the event loop are appended to the run
    store in one write (issue 32 §6: a write, two ``fstat`` and the store's bookkeeping per sample were a tenth of the
    sampler's CPU), at the start of the loop's next turn — or sooner, when :func:`run` takes an event: it calls
    :meth:`flush` first, so a sample is on disk before any event after it is seen. A failed write is raised by the
    next ``persist`` (the worker stops, as before) and by :meth:`flush`."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.pending: list[StoredSample] = []
        self.error: BaseException | None = None

    def __call__(self, sample: StoredSample) -> None:
        if self.error is not None:
            raise self.error
        if not self.pending:
            asyncio.get_running_loop().call_soon(self._flush_soon)
        self.pending.append(sample)

    def flush(self) -> None:
        if self.error is not None:
            raise self.error
        if self.pending:
            batch, self.pending = self.pending, []
            self.store.append_samples(batch)

    def _flush_soon(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # noqa: BLE001 - a callback's error would be lost: kept, raised by the next call
            self.error = exc


def _calls(totals: Any, sampler: Any = None, offline: Any = None) -> CallCounts:
    """The invocation's calls from the sampler's totals; with the Batch API, its failed lines by reason; with
    ``offline`` (the run's :class:`~relgate_tui.engine.certification.batch_state.OfflineCalls`), the rounds of
    ``relgate batch read`` added: the run says where its samples came from."""
    reasons = dict(getattr(sampler, "reasons", None) or {})
    rounds, batched, failed = int(totals.batch_rounds), int(totals.batched), int(totals.failed)
    if offline is not None and offline.rounds:
        rounds, batched, failed = rounds + offline.rounds, batched + offline.batched, failed + offline.failed
        for reason, n in offline.reasons:
            reasons[reason] = reasons.get(reason, 0) + n
    top = tuple(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:20])
    return CallCounts(int(totals.made), int(totals.cached), failed, rounds, batched, top)


def _batch_state(store: RunStore) -> Any:
    """The run's Batch API state (a --batch run's or ``relgate batch``'s), None when it has none."""
    raw = store.manifest.get("batch")
    if not isinstance(raw, dict):
        return None
    from relgate_tui.engine.certification.batch_state import BatchState

    return BatchState.from_json(raw)


# ------------------------------------------------------------------------------------------------------- pipeline
async def run(prepared: Prepared, *, cache: Any = None, control: RunControl | None = None,
              judge: bool = True) -> AsyncIterator[PipelineEvent]:
    """Sample the run and (with a pairwise judge and ``judge``) ask the judge; yield the events of the module
    docstring. Raises :class:`CertifyError` (one line) when the endpoint cannot be reached, stays down longer than
    ``max_down_s``, every request failed, or the run is in use by another process. Completed samples are kept
    whatever happens: the same command (or Resume) continues."""
    cfg = prepared.config
    store = prepared.store
    control = control or RunControl()
    own_cache = cache is None
    if own_cache:
        cache = await asyncio.to_thread(open_cache, cfg)
    try:
        try:
            store.lock()
        except RunStoreError as exc:
            raise CertifyError(str(exc)) from None
        existing = store.samples_by_item()
        job = sampling_job(prepared, existing)
        batch_state = _batch_state(store)
        recorded = dict(batch_state.failed) if batch_state is not None else {}  # failed for good in a batch round
        if recorded and cfg.batch is None:  # a direct call does not ask them again (relgate batch write --retry-failed)
            job = replace(job, items=[item for item in job.items if item.id not in recorded])
        network = needs_network(prepared, job, cache)
        if network and cfg.api_key_env and not os.environ.get(cfg.api_key_env):
            raise CertifyError(f"--api-key-env {cfg.api_key_env}: that environment variable is not set (or empty)")
        batch_progress: tuple[type, ...] = ()  # isinstance(x, ()) is False: no Batch API events on a direct run
        stop_errors: tuple[type[Exception], ...] = (EndpointUnreachable,)
        prefetching = None
        if cfg.batch is not None:
            from relgate_tui.engine.certification.batch_rounds import BatchError, BatchProgress, make_batch_sampler

            if network:
                await check_reachable(cfg)
            sampler: Any = make_batch_sampler(prepared, cache)
            batch_progress, stop_errors = (BatchProgress,), (EndpointUnreachable, BatchError)
        else:
            sampler = make_sampler(prepared, cache)
            prefetching = prefetch(END_OF_RUN_MODULES)  # from here on the loop mostly waits, first for the check
            if network:
                try:
                    await reachable_and_slots(cfg, sampler, job)
                except BaseException:
                    if prefetching is not None:  # done before the error ends the run (nothing half-imported)
                        await asyncio.to_thread(prefetching.join)
                    raise
        control.sampler = sampler
        store.set_status(RunStatus.SAMPLING)
        total = len(prepared.items)
        done = used = 0
        incomplete = 0
        first_error = ""
        flush = getattr(sampler.persist, "flush", None) or (lambda: None)  # a StoreWriter's (not the Batch API's)
        try:
            async for event in sampler.run(job):
                flush()
                if isinstance(event, (EndpointDown, EndpointUp)):  # the endpoint stopped / started answering
                    yield event
                    continue
                message = batch_line = None
                if isinstance(event, batch_progress):  # a Batch API round's progress (batch_rounds.py)
                    message, batch_line = getattr(event, "text", None), getattr(event, "line", None)
                elif isinstance(event, ItemDone):
                    done += 1
                    used += event.n_samples
                    if event.failed:
                        incomplete += 1
                        message = (f"item {event.item_id}: sampling failed after "
                                   f"{counted(event.n_samples, 'sample')} (kept)")
                elif isinstance(event, SampleFailed) and (event.final or event.wait_s >= 5):
                    message = f"item {event.item_id} sample {event.index}: {event.error_kind}: {event.message}"
                    if event.final:
                        first_error = first_error or f"{event.error_kind}: {event.message}"
                yield Sampling(event, done, total, _calls(sampler.totals, sampler), used, message, batch_line)
            if cfg.batch is None:
                for item in prepared.items:
                    if item.id in recorded:  # ended by a batch round: reported as failed, never asked again here
                        done += 1
                        incomplete += 1
                        kept = canonical_prefix(existing.get(item.id, ()))
                        n = min(len(kept), cfg.k_max)
                        used += n
                        yield Sampling(ItemDone(item.id, n, False, {}, True, n), done, total,
                                       _calls(sampler.totals, sampler), used,
                                       f"item {item.id}: failed in a batch round ({recorded[item.id]}); "
                                       f"{counted(n, 'sample')} kept")
        except stop_errors as exc:  # EndpointUnreachable, and with --batch BatchError
            raise CertifyError(str(exc)) from None
        finally:
            control.sampler = None
            flush()
            store.sync_samples()
            if prefetching is not None:  # done before anything here imports them itself
                await asyncio.to_thread(prefetching.join)
        calls = _calls(sampler.totals, sampler, batch_state.offline if batch_state is not None else None)
        if calls.failed and not calls.made and not calls.cached and not any(existing.values()):
            store.set_status(RunStatus.INCOMPLETE)
            raise CertifyError(f"every request failed ({calls.failed} failed, none answered; first: {first_error}) "
                               "— check the endpoint URL, the model name and the API key")
        judge_calls = None
        if judge and cfg.uses_pairwise_judge:
            store.set_status(RunStatus.JUDGING)
            async for jevent in _judge_pass(prepared, cache, control):
                if isinstance(jevent, CallCounts):
                    judge_calls = jevent
                else:
                    yield jevent
        verify_calls = None
        if judge and cfg.verify_judge_model is not None:
            store.set_status(RunStatus.JUDGING)
            async for jevent in _verify_pass(prepared, cache, control):
                if isinstance(jevent, CallCounts):
                    verify_calls = jevent
                else:
                    yield jevent
        status = RunStatus.INCOMPLETE if incomplete else RunStatus.SAMPLED
        store.set_status(status)
        yield Done(calls, judge_calls, status, verify_calls)
    finally:
        if own_cache:
            cache.close()


async def _judge_pass(prepared: Prepared, cache: Any, control: RunControl) -> AsyncIterator[Judging | CallCounts]:
    """Ask the pairwise judge about every item with ≥ 2 answer classes (k verdicts per pair in seeded random orders,
    paper 000, through the sampler and the cache), store the verdicts in the run; yields progress, then the judge's call counts."""
    from relgate_tui.engine.judging.certify_judge import (
        ask_pairwise_judge_async,
        judge_calls_needed,
        verdicts_document,
    )

    cfg = prepared.config.pairwise_judge_config()
    from relgate_tui.engine.certification.certify import analyse_prepared

    analysis = await asyncio.to_thread(analyse_prepared, prepared)
    ranked = {a.item_id: a.ranked for a in analysis.items}
    total = judge_calls_needed(ranked, cfg.max_classes, cfg.reps)
    async for event in _judge_task(functools.partial(ask_pairwise_judge_async, prepared.items, ranked, cfg,
                                                     cache=cache), total, "pairwise", control,
                                   lambda verdicts: prepared.store.write_judge_verdicts(verdicts_document(cfg, verdicts))):
        yield event


async def _judge_task(ask: Callable[..., Any], total: int, which: str, control: RunControl,
                      store: Callable[[Any], None]) -> AsyncIterator[Judging | CallCounts]:
    """Run one judge pass, ``ask(on_progress=, on_sampler=)`` (the pairwise or the verification judge): its progress
    as :class:`Judging` events from 0 to ``total``, its verdicts given to ``store`` (written to the run), then its call
    counts. The pass's sampler is the run's while it runs (so a pause reaches it); cancelling the caller cancels the
    pass; a judge error is one :class:`CertifyError` line."""
    from relgate_tui.engine.judging.certify_judge import JudgeCertifyError

    queue: asyncio.Queue[Any] = asyncio.Queue()

    def on_sampler(sampler: Any) -> None:
        control.sampler = sampler

    yield Judging(0, total, CallCounts(), None, which)
    task = asyncio.ensure_future(ask(on_progress=queue.put_nowait, on_sampler=on_sampler))
    try:
        async for event in _follow(task, queue, total, which):
            yield event
        try:
            result = task.result()
        except JudgeCertifyError as exc:
            raise CertifyError(str(exc)) from None
    finally:
        if not task.done():
            task.cancel()
        control.sampler = None
    verdicts, made = result
    store(verdicts)
    calls = CallCounts(made.made, made.cached, made.failed)
    yield Judging(total, total, calls, None, which)
    yield calls


async def _follow(task: Any, queue: asyncio.Queue[Any], total: int, which: str) -> AsyncIterator[Judging]:
    """Relay a judge pass's progress reports (``queue``) as :class:`Judging` events until ``task`` ends."""
    while True:
        getter = asyncio.ensure_future(queue.get())
        finished, _ = await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
        if getter not in finished:
            getter.cancel()
            break
        p = getter.result()
        yield Judging(p.done, total, CallCounts(p.made, p.cached, p.failed), p.message, which)
    while not queue.empty():
        p = queue.get_nowait()
        yield Judging(p.done, total, CallCounts(p.made, p.cached, p.failed), p.message, which)


async def _verify_pass(prepared: Prepared, cache: Any, control: RunControl) -> AsyncIterator[Judging | CallCounts]:
    """Ask the verification judge about every sampled item without a reference (issue 22,
    :mod:`relgate_tui.engine.judging.verify_judge`; cached) and store its verdicts in the run; yields progress, then its
    call counts."""
    from relgate_tui.engine.judging.verify_judge import (
        ask_verify_judge_async,
        config_of,
        top_answer_text,
        verdicts_document,
    )

    cfg = config_of(prepared.config)
    assert cfg is not None  # run() calls this only with a verification judge
    from relgate_tui.engine.certification.certify import analyse_prepared

    samples = await asyncio.to_thread(prepared.store.samples_by_item)
    analysis = await asyncio.to_thread(analyse_prepared, prepared, samples)
    tops = {a.item_id: (top_answer_text(samples.get(a.item_id, ()), a.ranked.classes[0]) if a.ranked.n_classes
                        else None)
            for a in analysis.items if a.sampled and not a.has_reference}
    total = sum(v is not None for v in tops.values())
    async for event in _judge_task(functools.partial(ask_verify_judge_async, prepared.items, tops, cfg, cache=cache),
                                   total, "verification", control,
                                   lambda verdicts: prepared.store.write_verify_verdicts(verdicts_document(cfg, verdicts))):
        yield event


# ------------------------------------------------------------------------------------------------------ CLI driver
@dataclass
class CertifyOutcome:
    """What :func:`run_certify` returns: the result document, the run's directory and the invocation's calls. The
    CLI's exit code follows from ``document["sampling_complete"]`` and ``document["passed"]``."""

    document: dict[str, Any]
    run_path: Path
    calls: CallCounts


def run_certify(cfg: CertifyConfig, on_event: Callable[[PipelineEvent], None] | None = None) -> CertifyOutcome:
    """All phases, as ``relgate certify`` runs them: prepare, :func:`run` under ``asyncio.run`` (every event to
    ``on_event``), then the end of a run (:func:`~relgate_tui.engine.certification.finish.finish`, the same one the TUI,
    review pull and the importer end with): the labels file, ``results.json`` and the final status."""
    prepared = prepare(cfg)
    failed = True
    try:
        done: list[Done] = []

        async def drive() -> None:
            async for event in run(prepared):
                if isinstance(event, Done):
                    done.append(event)
                if on_event is not None:
                    on_event(event)

        asyncio.run(drive())
        finished = done[-1]
        from relgate_tui.engine.certification.finish import finish

        end = finish(prepared, calls=finished.calls, labels=prepared.file_labels, labels_source=str(cfg.labels),
                     judge_calls=finished.judge_calls, verify_calls=finished.verify_calls)
        doc = end.document
        failed = False
        return CertifyOutcome(doc, prepared.store.path, finished.calls)
    finally:
        _close_or_drop(prepared, failed)


def _close_or_drop(prepared: Prepared, failed: bool) -> None:
    """Close the run; a certify that failed before storing anything (a wrong key or model name: every request
    failed) leaves no "created · 0 samples" run behind — an empty run directory is removed (issue 24 §8). A run that
    holds batch state (a batch in flight, or an uploaded file being created into one) is never empty: its batch id is
    what a rerun collects instead of paying for the same requests twice."""
    from relgate_tui.engine.certification.result import read_result

    empty = False
    if failed:
        try:
            counts = prepared.store.count_files()
            empty = (counts["samples"] == 0 and counts["labels"] == 0 and read_result(prepared.store) is None
                     and not _holds_batch(_batch_state(prepared.store)))
        except (OSError, ValueError, RunStoreError):
            empty = False
    prepared.close()
    if empty:
        from relgate_tui.engine.runs.listing import remove_run

        with contextlib.suppress(OSError, RunStoreError):
            remove_run(RunStore(prepared.store.path))


def _holds_batch(state: Any) -> bool:
    """The run's batch state (batch_state.py) names work the provider holds or a failure it recorded."""
    return state is not None and (state.pending is not None or bool(state.failed))
