"""An imported log → a run in the run store, certified with zero model calls (issue 15 §1).

The run is a run like any other (``relgate runs`` lists it, the TUI opens it offline, spot-check, export): it is
made through the pipeline's public phases — :func:`~relgate_tui.engine.certification.certify.prepare` (so the run id, manifest
and configuration are exactly those that ``Session.open`` recomputes), then the K answers of every item are
appended as the run's samples, and the run ends as every run does
(:func:`~relgate_tui.engine.certification.finish.finish`: the labels of ``--labels`` applied, the analysis on the
summaries of the samples just written — their classes, no re-read of samples.jsonl — and the same document
``certify`` writes, ``calls.made`` = 0, plus ``imported_from``).

The run's task file ``task/<task>.jsonl`` (inside the run directory) holds each item's question, references and
options, plus an ``import`` field (tool, document hash, flags, and the SHA-256 of all imported answers — so two
different logs never share a run id, and importing the same log again reopens the same run, keeping its labels).
Stopping rule ``none`` and K_max = the log's largest K: every imported answer is used.

**Nothing half-written stays in the run store**: a new run is built in a hidden temporary directory under the runs
directory (not listed by ``relgate runs``) and renamed into place only when complete; on any error the temporary
directory is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from relgate_tui.engine.certification.result import RunResult, read_result
from relgate_tui.engine.importers.model import FLAG_REASONS, ImportedLog, assign_flags, flag_counts
from relgate_tui.engine.runs.store import RunStatus
from relgate_tui.errors import DataError, UserError

__all__ = ["ImportOptions", "ImportOutcome", "import_log", "import_file", "imported_task_lines", "task_filename",
           "PLACEHOLDER_ENDPOINT", "counting_notes", "level_counts"]


def counting_notes(result: RunResult) -> list[str]:
    """How relgate's figure relates to the tool's own (issue 31 item 26), one line each, for the import summary:

    * the reliability level is k/(n + 1) (paper 004, the conformal level: one more than the n verified items in the
      denominator), where the tool's accuracy on the same top answers is k/n — lm-eval's ``exact_match 0.52`` (13/25)
      is relgate's 13/26 = 50.0%;
    * an item whose top answer is tied (two classes with the most answers) has its leader drawn by the seeded RNG
      (``--seed``); a tool that breaks ties another way (the first answer, its own majority filter) can count those
      items differently — Inspect counted 16 where relgate's draw gave 17 of 26."""
    out: list[str] = []
    counts = level_counts(result)
    if counts is not None and result.reliability_level is not None:
        k, n = counts
        out.append(f"reliability level {k}/{n + 1} = {result.reliability_level:.1%}: the conformal level divides by "
                   f"n + 1; as an accuracy over the n items the same top answers are {k}/{n} = "
                   f"{k / n:.1%} (the tool's own figure, when the log gives it, is in the notes under its own name)")
    tied = [it for it in result.items if it.verified and it.top_tied]
    if tied:
        out.append(f"{len(tied)} verified item{'s' if len(tied) != 1 else ''} had a tie for the top answer, broken by "
                   "the seeded RNG (--seed): a tool that breaks ties another way can count "
                   f"{'them' if len(tied) != 1 else 'it'} differently")
    return out


def level_counts(result: RunResult) -> tuple[int, int] | None:
    """(k, n): the verified items whose top answer is acceptable, of the n verified items — the level's integer
    counts (k/(n + 1)), never rebuilt from the rounded level; None without a verified item."""
    n, k = result.reliability_n, result.reliability_successes
    return None if not n or k is None else (k, n)


TASK_DIR = "task"  # the run's task file lives in <run>/task/<task>.jsonl (never clashes with run-store files)
# The run's endpoint: an RFC 2606 reserved name that never resolves, so nothing can ever send a request with an
# imported run's configuration (the endpoint the tool used, when the log says, is in imported_from.endpoint).
PLACEHOLDER_ENDPOINT = "http://imported.invalid/v1"


@dataclass(frozen=True)
class ImportOptions:
    canon: str | None = None
    alpha: float = 0.10
    n_cal: int | None = None
    seed: int = 0
    labels: str | None = None
    min_reliability: float | None = None
    run_dir: str | None = None
    confidence: float = 0.95


@dataclass
class ImportOutcome:
    result: RunResult
    exit_code: int
    run_path: Path
    reused: bool

    @property
    def document(self) -> dict[str, Any]:
        """The run's result document (``--json``)."""
        return self.result.to_json()


def task_filename(task: str) -> str:
    """The run's task file name: the task's name made file-safe (the task loader names a task after its file)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", task).strip("-.")[:80] or "imported"
    return f"{safe}.jsonl"


def _samples_digest(log: ImportedLog) -> str:
    h = hashlib.sha256()
    for it in log.items:
        h.update(json.dumps([it.id, list(it.samples)], ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def imported_task_lines(log: ImportedLog) -> bytes:
    """The run's task file: one JSON line per item (the task-file format plus an ``import`` field)."""
    digest = _samples_digest(log)[:16]
    lines = []
    for it in log.items:
        row: dict[str, Any] = {"id": it.id, "question": it.question.strip() or f"(item {it.id}: no question text in "
                                                                              "the log)"}
        if it.answers:
            row["acceptable_answers"] = list(it.answers)
        if it.choices:
            row["choices"] = list(it.choices)
        if it.messages:  # the wording the model saw, where the tool rendered the question into another
            row["messages"] = [dict(m) for m in it.messages]
        imp: dict[str, Any] = {"tool": log.tool, "answers_sha256": digest}
        if it.doc_hash:
            imp["doc_hash"] = it.doc_hash
        if it.flags:
            imp["flags"] = list(it.flags)
        row["import"] = imp
        lines.append(json.dumps(row, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _imported_from(log: ImportedLog) -> dict[str, Any]:
    counts = flag_counts(log.items)
    return {
        "tool": log.tool,
        "version": log.version,
        "files": [{"path": f.path, "sha256": f.sha256} for f in log.files],
        "task": log.task,
        "model": log.model,
        "endpoint": log.endpoint,
        "k": log.k,
        "temperature": log.temperature,
        "do_sample": log.do_sample,
        "seed": log.seed,
        "filter": log.filter,
        "flags": counts,
        "flag_reasons": {f: FLAG_REASONS[f] for f in counts},
        "n_flagged": sum(1 for it in log.items if it.flags),
        "notes": list(log.notes),
    }


IMPORT_BATCH = 2048  # items canonicalised and appended per write at most
IMPORT_BATCH_CHARS = 1 << 20  # and answer text per write at most (about 1 MB: long answers make short batches)


def _write_samples(prepared: Any, log: ImportedLog) -> None:
    """Every imported answer appended to the run's samples as a :class:`~relgate_tui.engine.records.StoredSample`
    (canonical classes memoised per (answer, options)), a batch at a time (:data:`IMPORT_BATCH` items or
    :data:`IMPORT_BATCH_CHARS` of answer text, whichever comes first): only one batch of records and its lines are
    ever in memory, and the store keeps per-item summaries (classes and line spans), not the samples."""
    from relgate_tui.engine.records import StoredSample

    canon = prepared.canonicalizer
    store = prepared.store
    fingerprint = f"import:{log.tool}"
    memos: dict[tuple[str, ...], dict[str, str]] = {}
    no_usage: dict[str, int] = {}
    batch: list[StoredSample] = []
    append = batch.append
    items = chars = 0
    for it in log.items:
        memo = memos.setdefault(it.choices, {})
        for i, text in enumerate(it.samples):
            c = memo.get(text)
            if c is None:
                c = memo[text] = canon(text, it.choices)
            append(StoredSample(it.id, i, text, c, no_usage, fingerprint))
            chars += len(text)
        items += 1
        if items >= IMPORT_BATCH or chars >= IMPORT_BATCH_CHARS:
            store.append_samples(batch, keep_texts=False)
            batch.clear()
            items = chars = 0
    store.append_samples(batch, keep_texts=False)
    store.sync_samples()


def _without_samples(log: ImportedLog) -> ImportedLog:
    """The log without its answers, once they are in the run's samples: the results need of it only each item's id,
    flags and document hash. The answers are most of a samples log; with this, and a caller that does not keep the
    log itself (``relgate import`` does not), they are freed before the certification (issue 23 §4)."""
    return replace(log, items=tuple(replace(it, samples=()) for it in log.items))


def _give_back_free_memory() -> None:
    """Return the heap pages freed with the answers to the system (glibc ``malloc_trim``; elsewhere nothing). The
    answers are thousands of small heap blocks; freed, they leave holes that the certification's own allocations
    (Python's 1 MB arenas are mapped apart) cannot use, so without this the peak is the answers *plus* the
    certification instead of the larger of the two."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


class _NeverStop:
    """Stopping rule "none" (every stored answer is used) without per-sample argument checks: the import replays
    no sequential decision, and :class:`~relgate_tui.core.certification.stopping.NoStopping` validates its counts on every call,
    which is most of the analysis time at 200,000 answers. Same decisions, so the TUI's later analysis (with the
    run's configured rule "none") gives the same results."""

    name = "none"

    def should_stop(self, counts: Any, n_samples: int) -> bool:
        return False


def _finish(prepared: Any, log: ImportedLog, opts: ImportOptions, info: Mapping[str, Any],
            samples_by_item: Mapping[str, Sequence[Any]]) -> RunResult:
    """The end of the imported run (:func:`relgate_tui.engine.certification.finish.finish`, the one every run ends
    with): its labels file, the analysis of the samples just written (their per-item summaries: no re-read of
    samples.jsonl; no stopping rule — an imported log's samples are all there is), the document with the log's
    per-item flags and provenance, results.json and the status."""
    from relgate_tui.engine.certification.calls import CallCounts
    from relgate_tui.engine.certification.finish import finish

    item_fields = {}
    for it in log.items:
        extra: dict[str, Any] = {}
        if it.flags:
            extra["flags"] = list(it.flags)
        if it.doc_hash:
            extra["doc_hash"] = it.doc_hash
        if extra:
            item_fields[it.id] = extra
    end = finish(replace(prepared, rule=_NeverStop()), calls=CallCounts(0, 0, 0), labels=prepared.file_labels,
                 labels_source=str(opts.labels), samples_by_item=samples_by_item, item_fields=item_fields,
                 doc_fields={"imported_from": dict(info)}, set_status=False)
    # an imported log has every answer there is: nothing left to sample; complete unless items wait for labels
    prepared.store.set_status(RunStatus.LABELLING if end.n_pending else RunStatus.COMPLETE)
    return end


IMPORT_PREFIX = ".import-"


def remove_stale_imports(root: Path) -> None:
    """Remove the ``.import-<pid>-*`` work directories under ``root`` whose process is gone (an import killed with
    ``kill -9`` or by a power cut cannot clean up after itself; the next import does)."""
    for d in root.glob(f"{IMPORT_PREFIX}*"):
        pid_text = d.name[len(IMPORT_PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit() or not d.is_dir() or d.is_symlink():
            continue
        pid = int(pid_text)
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except (PermissionError, OverflowError):
            continue


def import_log(log: ImportedLog, opts: ImportOptions,
               on_phase: Callable[[str], None] | None = None) -> ImportOutcome:
    """Create (or reopen) the run of ``log`` and certify it. See the module docstring."""
    return _import([log], opts, on_phase)


def import_file(source: str, path: str | Path, task: str | None, opts: ImportOptions,
                on_phase: Callable[[str], None] | None = None) -> ImportOutcome:
    """:func:`import_log` of the log at ``path`` (:func:`~relgate_tui.engine.importers.load_log`), holding it only
    inside the import: its answers are freed once they are stored, before the certification — about half the peak
    memory of a samples log, which is mostly answer text (issue 23 §4)."""
    from relgate_tui.engine.importers import load_log

    box = [load_log(source, path, task)]
    return _import(box, opts, on_phase)


def _import(box: list[ImportedLog], opts: ImportOptions, on_phase: Callable[[str], None] | None) -> ImportOutcome:
    """The import of the log in ``box``, taken out of it (so a caller that keeps no other reference lets it go)."""
    from relgate_tui.engine.certification.certify import CertifyConfig, prepare
    from relgate_tui.engine.runs.paths import runs_dir

    log = box.pop()
    if not log.items:
        raise DataError(f"{log.files[0].path if log.files else log.task}: no items to import")
    if log.k > 1000:
        raise UserError(f"an item has {log.k} answers: relgate runs take at most 1000 per item")
    log = assign_flags(log)
    info = _imported_from(log)
    root = runs_dir(opts.run_dir)
    root.mkdir(parents=True, exist_ok=True)
    temperature = log.temperature if log.temperature is not None and 0.0 <= log.temperature <= 2.0 else 0.0
    remove_stale_imports(root)
    tmp = Path(tempfile.mkdtemp(prefix=f"{IMPORT_PREFIX}{os.getpid()}-", dir=root))
    prepared = None
    try:
        (tmp / TASK_DIR).mkdir()
        tmp_task = tmp / TASK_DIR / task_filename(log.task)
        tmp_task.write_bytes(imported_task_lines(log))
        cfg = CertifyConfig(task=str(tmp_task), endpoint=PLACEHOLDER_ENDPOINT, model=log.model,
                            canon=opts.canon, temperature=temperature, k_max=max(log.k, 1), stopping="none",
                            alpha=opts.alpha, n_cal=opts.n_cal, seed=opts.seed, labels=opts.labels,
                            min_reliability=opts.min_reliability, run_dir=str(tmp), confidence=opts.confidence)
        prepared = prepare(cfg)
        run_id = prepared.store.run_id
        final = root / run_id
        final_task = final / TASK_DIR / tmp_task.name
        public = {**cfg.public_dict(), "task": str(final_task), "run_dir": None}
        task_info = {"name": prepared.task.name, "path": str(final_task), "sha256": prepared.task.sha256,
                     "items": len(prepared.items)}
        if final.exists():
            # the same log imported again: reopen that run (its labels are kept) and recompute its results
            prepared.close()
            prepared = None
            shutil.rmtree(tmp, ignore_errors=True)
            prepared = prepare(replace(cfg, task=str(final_task), run_dir=str(root)))
            stored = sum(len(v) for v in prepared.store.samples_by_item().values())
            expected = sum(len(it.samples) for it in log.items)
            if stored != expected:
                raise DataError(f"{final}: the run holds {stored} samples, the log {expected}; remove the run "
                                "directory and import again")
            before = read_result(prepared.store)
            kept = None if before is None else before.min_reliability
            if opts.min_reliability is None and kept is not None:
                # re-imported without a gate (the TUI's Import…): the run keeps the gate it was judged against,
                # its FAIL never turns into "no gate" (issue 31 item 14)
                prepared.config = replace(prepared.config, min_reliability=float(kept))
            prepared.store.update_manifest(imported_from=info)
            doc = _finish(prepared, log, opts, info, prepared.store.samples_by_item())
            return ImportOutcome(doc, 1 if doc.passed is False else 0, final, True)
        if on_phase:
            on_phase("canonicalizing")
        store = prepared.store
        (store.path / TASK_DIR).mkdir()
        shutil.copyfile(tmp_task, store.path / TASK_DIR / tmp_task.name)
        store.update_manifest(config=public, task=task_info, imported_from=info)
        _write_samples(prepared, log)
        log = _without_samples(log)  # stored now: the certification below never holds the answers a second time
        _give_back_free_memory()
        store.set_status(RunStatus.SAMPLED)
        if on_phase:
            on_phase("certifying")
        doc = _finish(prepared, log, opts, info, store.samples_by_item())  # the summaries kept while writing
        prepared.close()
        prepared = None
        try:
            os.rename(store.path, final)
        except OSError:
            if not final.is_dir():
                raise
            # another relgate process imported the same log meanwhile: its run is this run (same id, same samples)
            return ImportOutcome(doc, 1 if doc.passed is False else 0, final, True)
        with contextlib.suppress(OSError):
            fd = os.open(root, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return ImportOutcome(doc, 1 if doc.passed is False else 0, final, False)
    finally:
        if prepared is not None:
            prepared.close()
        shutil.rmtree(tmp, ignore_errors=True)
