"""What every importer produces: an :class:`ImportedLog` of :class:`ImportedItem` (issue 15 §1), and the flags.

An item carries its K raw answers in sample order (``samples``), its reference answers, its options (multiple
choice) and, for lm-eval, the tool's document hash (used by ``relgate compare`` to pair items across runs).

**Flags** — items whose repeats carry no self-consistency signal are flagged, never silently certified. The
certification itself stays valid for them (a rank score is a valid conformal score whatever produced the samples),
but their prediction sets cannot reflect uncertainty, so the summary says how many items are affected and why:

``loglikelihood_mc``
    log-likelihood multiple choice: the answer is the arg-max of the options' log-likelihoods, one deterministic
    answer however many repeats were asked for.
``temperature_0``
    the requests were sent with temperature 0 or ``do_sample: false`` (greedy decoding; lm-eval's default when a
    generation task sets neither).
``fixed_seed``
    every repeat was sent with one fixed ``seed`` (lm-eval sends ``seed: 1234`` with every API request unless the
    task sets ``seed: null``; Inspect sends ``GenerateConfig.seed`` when set) *and* this item's repeats are
    byte-identical — a server that honours the seed returned the same answer K times.
``identical_repeats``
    the item's repeats are byte-identical and the log shows a response cache (lm-eval ``use_cache``), or every item
    of the log with two or more repeats is byte-identical although neither greedy decoding nor a fixed seed
    explains it (a cache replaying one answer). lm-eval 0.4.13 caches only deterministic requests (``do_sample:
    false``), so with it this flag comes together with ``temperature_0``; older versions and other tools cache
    sampled requests too.
``single_sample``
    only one answer for the item: no repeat to compare.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_LOG_BYTES",
    "MAX_LINE_BYTES",
    "MAX_IMPORT_ITEMS",
    "MAX_IMPORT_ANSWERS",
    "check_totals",
    "LogLines",
    "FLAG_REASONS",
    "ImportedItem",
    "ImportedLog",
    "SourceFile",
    "assign_flags",
    "read_log",
    "parse_json_line",
]

FLAG_REASONS: dict[str, str] = {
    "loglikelihood_mc": "log-likelihood multiple choice: one deterministic answer, repeats add nothing",
    "temperature_0": "sampled at temperature 0 / do_sample false: greedy decoding repeats itself",
    "fixed_seed": "every repeat sent with one fixed seed and the server returned identical answers",
    "identical_repeats": "byte-identical repeats that neither greedy decoding nor a fixed seed explains (a response "
                         "cache replays one answer, or the model repeats itself)",
    "single_sample": "only one answer: no repeats to compare",
}


@dataclass(frozen=True)
class SourceFile:
    """A file the import read, with the SHA-256 of its bytes."""

    path: str
    sha256: str


@dataclass(frozen=True)
class ImportedItem:
    """One question of an imported log: its raw answers in sample order and its reference(s). ``messages``: the
    chat messages the tool sent before the model's reply (``{"role", "content"}``), kept when their wording is not
    ``question`` alone (an Inspect solver's template); empty otherwise."""

    id: str
    question: str
    samples: tuple[str, ...]
    answers: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    doc_hash: str | None = None
    flags: tuple[str, ...] = ()
    messages: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True)
class ImportedLog:
    """A whole imported log. ``temperature`` / ``do_sample`` / ``seed`` describe how the repeats were requested
    (None = the log does not say; ``seed`` is the fixed request seed, None when there was none or it is unknown);
    ``cache`` is True when the log shows a response cache. ``notes`` are one-line remarks for the summary."""

    tool: str
    version: str | None
    task: str
    model: str
    files: tuple[SourceFile, ...]
    items: tuple[ImportedItem, ...]
    endpoint: str | None = None
    temperature: float | None = None
    do_sample: bool | None = None
    seed: int | None = None
    cache: bool = False
    loglikelihood: bool = False
    filter: str | None = None
    notes: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # the edge where a log's URL enters relgate: stored, shown and exported only without its credentials
        if self.endpoint is not None:
            from relgate_tui.core.redact import public_url

            object.__setattr__(self, "endpoint", public_url(self.endpoint))

    @property
    def k(self) -> int:
        """The most answers any item has (the run's K_max)."""
        return max((len(it.samples) for it in self.items), default=0)


MAX_LOG_BYTES = 1024**3  # the largest log an import accepts: 1 GiB (counted on the bytes read)
MAX_LINE_BYTES = 64 << 20  # one line of a JSONL log (one row: its prompt and its K answers)
MAX_DOCUMENT_BYTES = 256 << 20  # a log that is one JSON document (parsed whole): lm-eval 0.4.0-0.4.2, Inspect .json


MAX_IMPORT_ITEMS = 100_000  # items of one import: the certification holds a few KB per item
MAX_IMPORT_ANSWERS = 2_000_000  # answers of one import (K ≤ 1,000 per item)


def check_totals(path: Path, items: int, answers: int, *, line: int | None = None) -> None:
    """One-line :class:`~relgate_tui.errors.DataError` (naming the file and the line reached) once a log holds more
    than :data:`MAX_IMPORT_ITEMS` items or :data:`MAX_IMPORT_ANSWERS` answers: a log of a million tiny rows would
    otherwise cost memory per item, far beyond its size, before anything could be said."""
    from relgate_tui.errors import data_error

    if items > MAX_IMPORT_ITEMS:
        raise data_error(path, f"more than {MAX_IMPORT_ITEMS:,} items: relgate imports at most {MAX_IMPORT_ITEMS:,} "
                               "per run (import a part of the log)", line=line)
    if answers > MAX_IMPORT_ANSWERS:
        raise data_error(path, f"more than {MAX_IMPORT_ANSWERS:,} answers: relgate imports at most "
                               f"{MAX_IMPORT_ANSWERS:,} per run (import a part of the log)", line=line)


def read_log(path: Path, *, limit: int = MAX_LOG_BYTES, what: str = "a log file") -> tuple[bytes, str]:
    """The bytes of the log file ``path`` and the SHA-256 of exactly those bytes (the provenance hash names what was
    imported, not what the file holds later). The file must be a regular file (a FIFO, ``/dev/zero`` or a symlink to
    one is refused before anything is read) and is read up to ``limit`` bytes (a sparse or growing file cannot
    outgrow it). One-line :class:`~relgate_tui.errors.DataError` for anything wrong."""
    from relgate_tui.engine.runs.inputs import read_regular

    with _read_errors(path):
        data = read_regular(path, limit, what=what)
    return data, hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def _read_errors(path: Path) -> Iterator[None]:
    """OS errors opening or reading the log ``path`` as one-line DataErrors (a DataError passes as it is)."""
    from relgate_tui.errors import DataError, data_error

    try:
        yield
    except FileNotFoundError:
        raise data_error(path, "no such file") from None
    except DataError:
        raise
    except OSError as exc:
        raise data_error(path, f"cannot read ({exc.strerror or exc})") from None


def parse_json_line(path: Path, lineno: int, line: str) -> Any:
    """One line of a JSONL log parsed; a one-line DataError naming the file and line when it is not JSON."""
    from relgate_tui.core.jsonsafe import loads_strict
    from relgate_tui.errors import data_error

    try:
        return loads_strict(line)  # also refuses 1e400 (∞), 400-digit integers and lone surrogates, in our words
    except json.JSONDecodeError as exc:
        raise data_error(path, f"bad JSON: {exc.msg} (column {exc.colno})", line=lineno) from None
    except ValueError as exc:  # JSONInputError: one line of our own
        raise data_error(path, f"bad JSON: {exc}", line=lineno) from None


class LogLines:
    """A JSONL log read as a stream: ``(line number, text)`` for each line (with its newline; a UTF-8 BOM before
    the first is dropped), opened through the one regular-file check and read through a 1 MB buffer, so memory
    holds one line at a time, never the file. Bounded on the bytes read: at most ``limit`` in all and
    :data:`MAX_LINE_BYTES` per line (one-line :class:`~relgate_tui.errors.DataError` beyond, naming the file and
    line). :attr:`sha256` is the hash of every byte read — of the whole file once the lines are consumed."""

    def __init__(self, path: Path, *, what: str, limit: int = MAX_LOG_BYTES) -> None:
        self.path, self.what, self.limit = path, what, limit
        self._hash = hashlib.sha256()

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    def __iter__(self) -> Iterator[tuple[int, str]]:
        from relgate_tui.engine.runs.inputs import open_regular, too_large
        from relgate_tui.errors import data_error

        path = self.path
        with _read_errors(path):
            raw_file = open_regular(path, what=self.what)
        try:
            declared = os.fstat(raw_file.fileno()).st_size
        except OSError:
            declared = 0
        if declared > self.limit:  # refused at once; what is read stays bounded whatever the size says
            raw_file.close()
            raise too_large(path, self.limit, self.what)
        total = lineno = 0
        with io.BufferedReader(raw_file, 1 << 20) as f:  # type: ignore[arg-type,type-var]
            while True:
                try:
                    raw = f.readline(min(MAX_LINE_BYTES, self.limit - total) + 1)
                except OSError as exc:
                    raise data_error(path, f"cannot read ({exc.strerror or exc})") from None
                if not raw:
                    return
                total += len(raw)
                lineno += 1
                if total > self.limit:
                    raise too_large(path, self.limit, self.what)
                if len(raw) > MAX_LINE_BYTES:
                    raise data_error(path, f"line longer than {MAX_LINE_BYTES >> 20} MB", line=lineno)
                self._hash.update(raw)
                start = 3 if lineno == 1 and raw.startswith(b"\xef\xbb\xbf") else 0
                try:
                    text = raw[start:].decode("utf-8") if start else raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise data_error(path, f"not UTF-8 text (byte {total - len(raw) + start + exc.start})",
                                     line=lineno) from None
                yield lineno, text


def _identical(samples: Sequence[str]) -> bool:
    return len(samples) >= 2 and all(s == samples[0] for s in samples)


def assign_flags(log: ImportedLog) -> ImportedLog:
    """The log with every item's flags set (see the module docstring for each rule)."""
    greedy = log.do_sample is False or (log.temperature is not None and log.temperature == 0)
    multi = [it for it in log.items if len(it.samples) >= 2]
    all_identical = bool(multi) and all(_identical(it.samples) for it in multi)
    cache_evident = log.cache or (all_identical and not greedy and log.seed is None and not log.loglikelihood)
    items = []
    for it in log.items:
        flags: list[str] = []
        same = _identical(it.samples)
        if log.loglikelihood:
            flags.append("loglikelihood_mc")
        if greedy:
            flags.append("temperature_0")
        if same and log.seed is not None and not log.loglikelihood:
            flags.append("fixed_seed")
        if same and cache_evident and "fixed_seed" not in flags:
            flags.append("identical_repeats")
        if len(it.samples) == 1:
            flags.append("single_sample")
        items.append(replace(it, flags=tuple(flags)))
    return replace(log, items=tuple(items))


def flag_counts(items: Sequence[ImportedItem]) -> dict[str, int]:
    """How many items carry each flag (flags in :data:`FLAG_REASONS` order)."""
    c = Counter(f for it in items for f in it.flags)
    return {f: c[f] for f in FLAG_REASONS if c[f]}
