"""Crash-safe run store (SPEC §4.5, §7): one directory per run, append-only files, nothing ever rewritten in place.

Layout of ``<runs dir>/<run_id>/``::

    manifest.json   identity (everything that determines the samples) + descriptive config, task name and file
                    sha256, model, endpoint URL, relgate version, seed, created/updated time, status.
                    Never holds a secret: the config names the API-key *environment variable*, never its value.
    samples.jsonl   one line per completed sample: {"item", "index", "text", "canonical", "usage", "fingerprint"}
    samples.index.npz  derived per-item summary of samples.jsonl, written by the writer on close and used only while
                    it matches the file (:mod:`relgate_tui.engine.runs.sampleindex`); deleting it loses nothing
    labels.jsonl    append-only verification events:
                      {"event": "label", "item", "rank": r | "none": true | "skip": true, "source", "ts"}
                      {"event": "undo", "ts"}
    results.json    the last computed result document (rewritten atomically)
    judge_verdicts.json  the optional pairwise judge's verdicts per item (rewritten atomically)
    verify_verdicts.json the optional verification judge's verdicts per item (issue 22; rewritten atomically)
    items.jsonl     a copy of the items the run uses (a task file), written once: the run opens after its task
                    file moved or changed
    (the manifest's ``batch``: the Batch API round in flight and the rounds so far, certification/batch_rounds.py)
    run.lock        advisory lock held by the one process writing the run
    *.quarantine    lines `relgate runs --repair` (runlist.repair_run) moved out of samples.jsonl / labels.jsonl

**Status.** :class:`RunStatus`, stored in the manifest: created → sampling → sampled (→ judging) → labelling →
complete, or incomplete (a pass ended with items not sampled to their stop: rerun to retry them).

**Listing.** ``manifest.json`` also holds ``counts`` — the samples and labels in effect and the byte sizes of their
files when they were counted (written on close by the process that wrote the run) — so ``relgate runs`` reads no
sample; when a file's size differs from the stored one, its lines are counted (bytes only, no JSON parse). Its
``result`` holds the last results document's headline and call counts with that document's byte size, so reopening
a run parses no results document either (unless it was replaced since).

**run_id.** ``<slug>-<12 hex>`` where the hex digits are the SHA-256 of the canonical JSON of the run's *identity*:
the task file hash, endpoint, model and every parameter that changes which requests are sent or when sampling
stops (system prompt, temperature, max_tokens, K_max, stopping rule, δ, canonicalizer, seed). Rerunning the same
command therefore reopens the same run and resumes it; α, the calibration size, the gate, labels and concurrency
only change the analysis, so changing them also reuses the run (the slug is only for humans).

**Durability.**

* Writes use one ``os.write`` of complete ``\\n``-terminated lines on an ``O_APPEND`` descriptor: once it returns,
  the bytes belong to the kernel and survive ``kill -9`` of relgate at any later moment.
* Labels (human effort) are also ``fsync``-ed per event, before :meth:`RunStore.append_label` returns (SPEC §4.5:
  "flushed (fsync) per keypress"), so they survive a power loss as well.
* Samples are written as soon as each call completes — durable against a process kill *before* the sampler can issue
  the next request for that item, which is what "no completed call paid twice" (SPEC §7) needs — and ``fsync``-ed at
  most every ``fsync_interval`` seconds, on a thread of their own (:mod:`~relgate_tui.engine.runs.fsync`), and on
  close. Per-line fsync would cap throughput at the disk's sync rate for no gain against ``kill -9``.
* Readers only accept ``\\n``-terminated lines, so a line torn by a kill mid-write is ignored; the next writer
  truncates such a torn tail before appending. A bad line anywhere else is reported as corruption (one line).
* ``manifest.json`` and ``results.json`` are replaced atomically (write temp, fsync, rename, fsync dir) — with one
  directory fsync fewer where its name can wait (issue 42 §7): a status change and the items copy skip it (a power
  loss may leave the previous manifest, whole, or no copy, written again by the next open), and ``results.json``
  shares the one of the manifest write that follows it.
* Reading a run (:class:`RunStore` without a write) takes no lock and writes nothing: viewing never changes a run.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from relgate_tui import __version__
from relgate_tui.engine.records import StoredSample
from relgate_tui.engine.runs import sampleindex
from relgate_tui.engine.runs.files import (
    _HEADLINE,
    REPAIR_HINT,
    RunStoreError,
    _count_lines,
    _now_iso,
    _obj,
    _read_json,
    _size,
    _write_all,
    atomic_write_bytes,
    atomic_write_json,
    canonical_json,
    make_run_id,
    open_append,
    read_jsonl,
)
from relgate_tui.engine.runs.fsync import BackgroundFsync
from relgate_tui.engine.runs.labels import LABEL_SOURCES, Label, replay_labels
from relgate_tui.engine.runs.sampleindex import ItemSamples, load_index, stamp
from relgate_tui.engine.runs.status import RunStatus

__all__ = ["RunStatus", "RunStoreError", "Label", "LABEL_SOURCES", "RunStore", "make_run_id",
           "canonical_json", "read_jsonl", "replay_labels", "json_object"]

MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"
LABELS = "labels.jsonl"
RESULTS = "results.json"
JUDGE_VERDICTS = "judge_verdicts.json"
VERIFY_VERDICTS = "verify_verdicts.json"
ITEMS = "items.jsonl"
LOCK = "run.lock"
FORMAT = 1


# -------------------------------------------------------------------------------------------------------------- store
class RunStore:
    """A run directory. Create or reopen with :meth:`create_or_open`, open an existing one with :func:`relgate_tui.engine.runs.listing.open_run`.

    Reading never needs the lock; the first write takes an exclusive advisory lock on ``run.lock`` (released by the
    kernel if the process dies), so two relgate processes can never interleave writes into one run. Listing, finding
    and repairing runs: :mod:`relgate_tui.engine.runs.listing`.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync_interval: float = 0.5) -> None:
        self.path = Path(path)
        if not os.path.lexists(self.path / MANIFEST):  # present but not a regular file: one line from the read
            raise RunStoreError(f"{self.path}: not a relgate run (no {MANIFEST})")
        self.fsync_interval = fsync_interval
        self._lock_fd: int | None = None
        self._samples_fd: int | None = None
        self._labels_fd: int | None = None
        self._last_sample_sync = time.monotonic()
        self._samples_unsynced = False
        self._syncer = BackgroundFsync()  # the periodic fsync, off the caller's thread (runs/fsync.py)
        self._samples_path = self.path / SAMPLES
        self._samples_name = str(self._samples_path)
        self._counts_stale = False
        self._samples_cache: tuple[tuple[int, ...], dict[str, ItemSamples]] | None = None
        self._index_stamp: dict[str, Any] | None = None  # the samples file's stamp the index on disk describes
        self._manifest: dict[str, Any] = self._load_manifest()

    # ---------------------------------------------------------------------------------------------- create / open
    @classmethod
    def create_or_open(
        cls,
        runs_root: str | os.PathLike[str],
        identity: Mapping[str, Any],
        *,
        label: str = "run",
        info: Mapping[str, Any] | None = None,
        fsync_interval: float = 0.5,
    ) -> RunStore:
        """Open the run of ``identity`` under ``runs_root`` (creating it on first use) and take its write lock.

        ``identity``: JSON-serialisable mapping of everything that determines the samples (see the module doc);
        the run id is :func:`make_run_id` of it. ``info``: descriptive manifest fields (task, model, endpoint,
        seed, config …) — refreshed on reopen, never part of the id; must not contain secrets. ``label`` only
        prefixes the id for humans.
        """
        run_id = make_run_id(identity, label)
        root = Path(runs_root)
        path = root / run_id
        ident = json.loads(canonical_json(dict(identity)))
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunStoreError(f"cannot create the run directory {path}: {exc.strerror or exc}") from None
        manifest_path = path / MANIFEST
        if not os.path.lexists(manifest_path):
            now = _now_iso()
            manifest = {
                "format": FORMAT,
                "run_id": run_id,
                "relgate_version": __version__,
                "created": now,
                "updated": now,
                "status": "created",
                "identity": ident,
                **dict(info or {}),
            }
            store_lock = cls._acquire_lock(path)
            try:
                if not os.path.lexists(manifest_path):  # re-check under the lock
                    atomic_write_json(manifest_path, manifest)
            except BaseException:
                os.close(store_lock)
                raise
            store = cls(path, fsync_interval=fsync_interval)
            store._lock_fd = store_lock
        else:
            store = cls(path, fsync_interval=fsync_interval)
            store._ensure_lock()
        if store._manifest.get("identity") != ident:
            store.close()
            raise RunStoreError(f"{path} holds a different run (its manifest identity does not match)")
        if info and any(store._manifest.get(k) != v for k, v in info.items()):  # a new run has them already
            store.update_manifest(**dict(info))
        return store

    def _load_manifest(self) -> dict[str, Any]:
        try:
            manifest = _read_json(self.path / MANIFEST)
        except FileNotFoundError:  # a dangling symlink, or removed meanwhile
            raise RunStoreError(f"{self.path}: not a relgate run (no {MANIFEST})") from None
        if not isinstance(manifest, dict) or not isinstance(manifest.get("run_id"), str):
            raise RunStoreError(f"{self.path / MANIFEST}: not a relgate run manifest")
        return manifest

    @staticmethod
    def _acquire_lock(path: Path) -> int:
        from relgate_tui.engine.runs.lock import write_lock

        return write_lock(path / LOCK, f"run {path.name} is in use by another relgate process", RunStoreError)

    def _ensure_lock(self) -> None:
        if self._lock_fd is None:
            self._lock_fd = self._acquire_lock(self.path)

    # ------------------------------------------------------------------------------------------------ properties
    @property
    def run_id(self) -> str:
        return str(self._manifest["run_id"])

    @property
    def manifest(self) -> dict[str, Any]:
        """A copy of the manifest."""
        return json.loads(json.dumps(self._manifest))

    @property
    def status(self) -> str:
        """The stored status as written (see :attr:`run_status` for the typed one)."""
        return str(self._manifest.get("status", ""))

    @property
    def run_status(self) -> RunStatus | None:
        """The stored status, or None when it names no :class:`RunStatus`."""
        return RunStatus.parse(self._manifest.get("status"))

    def lock(self) -> None:
        """Take the run's write lock now (every write takes it anyway); :class:`RunStoreError` when another
        relgate process holds it."""
        self._ensure_lock()

    def update_manifest(self, **fields: Any) -> None:
        """Merge ``fields`` into the manifest (atomic replace). ``run_id``, ``identity``, ``created`` are fixed."""
        self._write_manifest(fields, sync_dir=True)

    def set_status(self, status: RunStatus) -> None:
        """Record the run's phase (a :class:`RunStatus`; no directory fsync: a status only says where a run is)."""
        self._write_manifest({"status": RunStatus(status).value}, sync_dir=False)

    def _write_manifest(self, fields: dict[str, Any], *, sync_dir: bool) -> None:
        """:meth:`update_manifest`; ``sync_dir`` False: no directory fsync (see the module doc)."""
        for fixed in ("run_id", "identity", "created", "format"):
            fields.pop(fixed, None)
        self._ensure_lock()
        manifest = {**self._manifest, **fields, "updated": _now_iso()}
        atomic_write_json(self.path / MANIFEST, manifest, sync_dir=sync_dir)
        self._manifest = manifest

    # --------------------------------------------------------------------------------------------------- samples
    def append_samples(self, samples: Iterable[StoredSample], *, sync: bool = False, keep_texts: bool = True) -> int:
        """Append completed samples (one ``os.write`` for the batch, whole lines). ``fsync`` when ``sync`` is true
        or ``fsync_interval`` seconds have passed since the last one. Returns the number written. ``keep_texts``
        False: the per-item summaries this process keeps (:meth:`samples_by_item`) hold the new samples' spans, not
        the samples (a writer of many samples at once, e.g. an import, keeps memory to the summaries)."""
        batch = list(samples)
        lines = [(json.dumps(s.to_json(), ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
                 for s in batch]
        if not lines:
            return 0
        self._ensure_lock()
        if self._samples_fd is None:
            self._samples_fd = open_append(self.path / SAMPLES)
        st = os.fstat(self._samples_fd)  # the descriptor's file is the file at its name: one fstat, no path lookup
        before = (st.st_ino, st.st_size, st.st_mtime_ns)  # = _samples_version() (a replaced file: see samples_by_item)
        offset = st.st_size  # O_APPEND under our lock: the batch starts here
        _write_all(self._samples_fd, b"".join(lines))
        spans = []
        for line in lines:
            spans.append((offset, len(line) - 1))
            offset += len(line)
        self._extend_samples_cache(before, batch, spans, keep_texts, fd=self._samples_fd)
        self._samples_unsynced = True
        self._counts_stale = True
        if sync:
            self.sync_samples()
        elif time.monotonic() - self._last_sample_sync >= self.fsync_interval and self._syncer.start(self._samples_fd):
            self._samples_unsynced = False  # the background fsync covers every write so far (runs/fsync.py)
            self._last_sample_sync = time.monotonic()
        return len(lines)

    def sync_samples(self) -> None:
        """fsync the samples file now (also done on close)."""
        if not self._syncer.wait():
            self._samples_unsynced = True  # the background fsync failed: again here, raising this time
        if self._samples_fd is not None and self._samples_unsynced:
            os.fsync(self._samples_fd)
            self._samples_unsynced = False
        self._last_sample_sync = time.monotonic()

    def samples(self) -> list[StoredSample]:
        """Every stored sample in file order; a repeated (item, index) keeps its first occurrence."""
        out: list[StoredSample] = []
        seen: set[tuple[str, int]] = set()
        path = self.path / SAMPLES
        objs = read_jsonl(path)
        gc_was_enabled = gc.isenabled()
        gc.disable()  # see read_jsonl
        try:
            for lineno, obj in enumerate(objs, start=1):
                try:
                    s = StoredSample.from_json(obj)
                except ValueError as exc:
                    raise RunStoreError(f"{path}: record {lineno}: {exc}; {REPAIR_HINT}") from None
                key = (s.item, s.index)
                if key not in seen:
                    seen.add(key)
                    out.append(s)
        finally:
            if gc_was_enabled:
                gc.enable()
        return out

    def _group_samples(self) -> dict[str, ItemSamples]:
        """:meth:`samples` grouped by item in one pass (:func:`~relgate_tui.engine.runs.sampleindex.group_parsed`):
        sorted by index, a repeated index keeping its first occurrence (as in :meth:`samples`), with each line's
        byte span; a bad record is one line naming the file and the record."""
        path = self.path / SAMPLES
        line_spans: list[tuple[int, int]] = []
        objs = read_jsonl(path, spans=line_spans)
        gc_was_enabled = gc.isenabled()
        gc.disable()  # see read_jsonl
        try:
            return sampleindex.group_parsed(objs, line_spans, path)
        except ValueError as exc:
            raise RunStoreError(f"{path}: {exc}; {REPAIR_HINT}") from None
        finally:
            if gc_was_enabled:
                gc.enable()

    def _samples_version(self) -> tuple[int, ...] | None:
        try:
            st = os.stat(self._samples_name)  # a str made once: no pathlib join per sample appended
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _extend_samples_cache(self, before: tuple[int, ...] | None, batch: list[StoredSample],
                              spans: list[tuple[int, int]], keep_texts: bool = True, fd: int | None = None) -> None:
        """After this process appended ``batch`` (its lines at ``spans``): when the parsed samples were current just
        before the write (or the file was empty) and every new sample comes after its item's last one, add them (new
        summaries: the old ones may be held by a caller) instead of parsing the file again; otherwise the next read
        parses it. Costs O(the batch and its items' samples), not O(items): the sampler persists through here."""
        cache = self._samples_cache
        if cache is None and before is not None and before[1] == 0:
            grouped: dict[str, ItemSamples] = {}  # the file was empty: the batch is all of it
        elif cache is None or before is None or cache[0] != before:
            self._samples_cache = None
            return
        else:
            grouped = cache[1]  # updated in place: callers hold copies of the dict; summaries are replaced
        if not sampleindex.extend_grouped(grouped, batch, spans, self._samples_path, keep_texts=keep_texts):
            self._samples_cache = None  # out of order or repeated: the next read parses the file
            return
        if fd is not None:  # the descriptor just written (one fstat; issue 32 §6: two path stats per sample were ~5 %
            st = os.fstat(fd)  # of the sampler's CPU)
            after: tuple[int, ...] | None = (st.st_ino, st.st_size, st.st_mtime_ns)
        else:
            after = self._samples_version()
        self._samples_cache = (after, grouped) if after is not None else None

    def samples_by_item(self) -> dict[str, ItemSamples]:
        """Stored samples by item id, each an :class:`~relgate_tui.engine.runs.sampleindex.ItemSamples` (read-only,
        sorted by index, with the item's summary; shared between calls). Read once per version of the file (inode,
        size, mtime): from the derived index when it describes the file as it is, else parsed; this process's own
        appends are added without a parse."""
        version = self._samples_version()
        if version is None or self._samples_cache is None or self._samples_cache[0] != version:
            path = self.path / SAMPLES
            source = stamp(path) if version is not None else None
            grouped = load_index(self.path, path, source)
            if grouped is None:
                grouped = self._group_samples()
            else:
                self._index_stamp = source
            self._samples_cache = (version, grouped) if version is not None else None
            return dict(grouped)
        return dict(self._samples_cache[1])  # the per-item summaries are shared: callers never modify them

    def write_index(self) -> bool:
        """Write the derived sample index when it does not describe the samples file as it is now (the writer does
        this on close; see :mod:`relgate_tui.engine.runs.sampleindex`). True when an index is now current."""
        path = self.path / SAMPLES
        source = stamp(path)
        if source is None:
            return False
        if source == self._index_stamp:
            return True
        version = self._samples_version()
        cache = self._samples_cache
        if cache is not None and cache[0] == version:
            grouped = cache[1]
        else:  # read nothing here yet: the index on disk may be current (checked in full), else parse
            if load_index(self.path, path, source) is not None:
                self._index_stamp = source
                return True
            grouped = self._group_samples()
        if stamp(path) != source:  # changed while it was read
            return False
        if sampleindex.write_index(self.path, path, source, grouped):
            self._index_stamp = source
            return True
        return False

    # ---------------------------------------------------------------------------------------------------- labels
    def _append_event(self, event: Mapping[str, Any]) -> None:
        self._ensure_lock()
        if self._labels_fd is None:
            self._labels_fd = open_append(self.path / LABELS)
        _write_all(self._labels_fd, (json.dumps(dict(event), ensure_ascii=False) + "\n").encode("utf-8"))
        os.fsync(self._labels_fd)
        self._counts_stale = True

    def append_label(self, label: Label) -> Label:
        """Persist one verdict (write + fsync) before returning it. A zero ``ts`` is replaced by the current time."""
        if not label.ts:
            label = Label(label.item, label.rank, label.none, label.skip, label.source, time.time())
        self._append_event(label.to_event())
        return label

    def undo_last_label(self) -> Label | None:
        """Cancel the most recent label still in effect by appending an undo event (write + fsync). Returns the
        cancelled label, or None (and writes nothing) when there is nothing to undo."""
        stack = self._label_stack()
        if not stack:
            return None
        self._append_event({"event": "undo", "ts": time.time()})
        return stack[-1]

    def label_events(self) -> list[dict[str, Any]]:
        """Every label/undo event in order."""
        path = self.path / LABELS
        events = read_jsonl(path)
        for lineno, ev in enumerate(events, start=1):
            kind = ev.get("event")
            if kind == "label":
                try:
                    Label.from_event(ev)
                except (ValueError, TypeError) as exc:
                    raise RunStoreError(f"{path}: event {lineno}: {exc}; {REPAIR_HINT}") from None
            elif kind != "undo":
                raise RunStoreError(f"{path}: event {lineno}: unknown event {kind!r}; {REPAIR_HINT}")
        return events

    def _label_stack(self) -> list[Label]:
        stack: list[Label] = []
        for ev in self.label_events():
            if ev.get("event") == "undo":
                if stack:
                    stack.pop()
            else:
                stack.append(Label.from_event(ev))
        return stack

    def current_labels(self) -> dict[str, Label]:
        """The verdict in effect per item after replaying every event (see :func:`replay_labels`)."""
        return replay_labels(self.label_events())

    # --------------------------------------------------------------------------------------------------- results
    def write_results(self, results: Mapping[str, Any], **fields: Any) -> None:
        """Replace ``results.json`` atomically; its headline figures (``result``), fresh sample/label counts and
        ``fields`` (a new ``status``) go into the manifest in one write, so listing runs never parses a document."""
        self._ensure_lock()
        # one line: the C encoder (an indented dump of a 10,000-item document takes seconds); `relgate report
        # --format json` prints it indented
        atomic_write_json(self.path / RESULTS, dict(results), indent=None, sync_dir=False)  # the manifest's syncs it
        headline = {k: results.get(k) for k in _HEADLINE}
        # the call counts too (a reopened run shows them), valid while results.json keeps this size
        headline.update(calls=_obj(results, "calls"), judge_calls=_obj(_obj(results, "pairwise_judge"), "calls"),
                        results_bytes=_size(self.path / RESULTS))
        self.update_manifest(result=headline, counts=self.count_files(), **fields)
        self._counts_stale = False

    def result_calls(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The call counts of the last results document (``calls``, and the pairwise judge's ``calls``; empty when
        none): from the manifest when it describes ``results.json`` as it is (its byte size), else read from it (a run
        written before the manifest carried them, or a results file replaced since)."""
        res = _obj(self._manifest, "result")
        if "calls" in res and res.get("results_bytes") == _size(self.path / RESULTS):
            return _obj(res, "calls"), _obj(res, "judge_calls")
        doc = self.read_results() or {}
        return _obj(doc, "calls"), _obj(_obj(doc, "pairwise_judge"), "calls")

    def read_results(self) -> dict[str, Any] | None:
        """The last written results document, or None."""
        try:
            doc = _read_json(self.path / RESULTS)
        except FileNotFoundError:
            return None
        return doc if isinstance(doc, dict) else None

    # ----------------------------------------------------------------------------------------------- judge
    def write_judge_verdicts(self, verdicts: Mapping[str, Any]) -> None:
        """Replace ``judge_verdicts.json`` (the optional pairwise judge's verdicts) atomically."""
        self._ensure_lock()
        atomic_write_json(self.path / JUDGE_VERDICTS, dict(verdicts))

    def write_verify_verdicts(self, verdicts: Mapping[str, Any]) -> None:
        """Replace ``verify_verdicts.json`` (the optional verification judge's verdicts) atomically."""
        self._ensure_lock()
        atomic_write_json(self.path / VERIFY_VERDICTS, dict(verdicts))

    def read_verify_verdicts(self) -> dict[str, Any] | None:
        """The stored verification-judge verdicts, or None (no judge, or not asked yet)."""
        try:
            doc = _read_json(self.path / VERIFY_VERDICTS)
        except FileNotFoundError:
            return None
        return doc if isinstance(doc, dict) else None

    def read_judge_verdicts(self) -> dict[str, Any] | None:
        """The stored pairwise-judge verdicts, or None (no judge, or not asked yet)."""
        try:
            doc = _read_json(self.path / JUDGE_VERDICTS)
        except FileNotFoundError:
            return None
        return doc if isinstance(doc, dict) else None

    # ---------------------------------------------------------------------------------------------------- counts
    def count_files(self) -> dict[str, int]:
        """Sample lines and labels in effect now, with the byte sizes of their files (see the module doc)."""
        samples, labels = self.path / SAMPLES, self.path / LABELS
        return {"samples": _count_lines(samples), "samples_bytes": _size(samples),
                "labels": len(self.current_labels()), "labels_bytes": _size(labels)}

    # ---------------------------------------------------------------------------------------------- items copy
    def write_items_copy(self, data: bytes) -> None:
        """Keep a copy of the run's items (``items.jsonl``, a task file) unless the run has one already."""
        if (self.path / ITEMS).is_file():
            return
        self._ensure_lock()
        atomic_write_bytes(self.path / ITEMS, data, sync_dir=False)  # its name lost: written again by the next open

    def items_copy_path(self) -> Path | None:
        """The run's copy of its items, or None (a run made before runs kept one)."""
        p = self.path / ITEMS
        return p if p.is_file() else None

    # ---------------------------------------------------------------------------------------------------- closing
    def release_files(self) -> None:
        """Close the append descriptors (fsync-ing pending samples); the next write reopens them."""
        if self._samples_fd is not None:
            with contextlib.suppress(OSError):
                self.sync_samples()
            os.close(self._samples_fd)
            self._samples_fd = None
        if self._labels_fd is not None:
            os.close(self._labels_fd)
            self._labels_fd = None

    def close(self) -> None:
        """Flush and fsync pending samples, refresh the manifest's counts when this process wrote samples or
        labels, release the files and the lock. Idempotent."""
        if self._counts_stale and self._lock_fd is not None:
            self._counts_stale = False
            with contextlib.suppress(OSError, RunStoreError, ValueError):
                if self._samples_fd is not None:
                    self.sync_samples()
                self.update_manifest(counts=self.count_files())
        if self._lock_fd is not None:
            with contextlib.suppress(OSError, RunStoreError, ValueError):
                self.write_index()
        self.release_files()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            self.close()


json_object = _obj
