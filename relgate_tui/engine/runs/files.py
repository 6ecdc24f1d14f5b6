"""File-level helpers of the run store (:mod:`.store`): the run id, whole-line JSONL reading, atomic JSON
replacement, ``O_APPEND`` writes that truncate a torn tail first, and the run store's one error type.

Every read of a run's own files goes through the one bounded regular-file read
(:mod:`relgate_tui.engine.runs.inputs`): a FIFO, a device or a symlink to one planted in a run directory (as its
manifest, samples, labels, results or index) is a one-line :class:`RunStoreError` naming the file, never a hang or
an unbounded read, and a file is read up to a bound (:data:`MAX_DOCUMENT_BYTES`, :data:`MAX_JSONL_BYTES`) counted on
the bytes read."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from relgate_tui.engine.runs.outputs import _write_all as _write_all
from relgate_tui.engine.runs.outputs import write_file
from relgate_tui.errors import DataError

REPAIR_HINT = "`relgate runs --repair RUN` moves corrupt lines aside"
MAX_DOCUMENT_BYTES = 1 << 30  # a run's JSON document (manifest, results, verdicts), read whole
MAX_JSONL_BYTES = 8 << 30  # a run's samples or labels file, read whole (a million items × 1,000 answers is less)


class RunStoreError(DataError):
    """A run directory that cannot be used (missing, corrupt, locked, or a different run). One-line message."""


def read_run_file(path: Path, limit: int, what: str) -> bytes:
    """The bytes of the run's own file ``path`` through the one bounded regular-file read; :class:`RunStoreError`
    (one line) for a FIFO, a device, a socket, a directory (through a symlink or not) or a file over ``limit``;
    :class:`FileNotFoundError` when it is missing."""
    from relgate_tui.engine.runs.inputs import InputError, read_regular

    try:
        return read_regular(path, limit, what=what)
    except FileNotFoundError:
        raise
    except InputError as exc:
        raise RunStoreError(str(exc)) from None
    except OSError as exc:
        raise RunStoreError(f"{path}: cannot read ({exc.strerror or exc})") from None


# ------------------------------------------------------------------------------------------------------ file helpers
def canonical_json(obj: Any) -> str:
    """Sorted-key, compact, ASCII JSON (a stable input for hashing)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def _slug(text: str, limit: int = 40) -> str:
    s = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return (s[:limit].strip("-") or "run")


def make_run_id(identity: Mapping[str, Any], label: str = "run") -> str:
    """``<slug(label)>-<first 12 hex of SHA-256(canonical JSON of identity)>`` — deterministic (see module doc)."""
    digest = hashlib.sha256(canonical_json(dict(identity)).encode("ascii")).hexdigest()
    return f"{_slug(label)}-{digest[:12]}"


def read_jsonl(path: Path, *, spans: list[tuple[int, int]] | None = None) -> list[dict[str, Any]]:
    """Objects of a JSONL file written by this module. A missing file is empty; an unterminated last line (torn by a
    kill mid-write) is ignored; any other unreadable line raises :class:`RunStoreError` naming file and line.
    ``spans``, when given, receives the (byte offset, length) of each object's line, in the same order."""
    try:
        data = read_run_file(path, MAX_JSONL_BYTES, "a run's JSONL file")
    except FileNotFoundError:
        return []
    end = data.rfind(b"\n")
    if end < 0:
        return []
    lines = data[: end + 1].split(b"\n")[:-1]
    records = [raw for raw in lines if raw.strip()]
    if spans is not None:
        spans.extend(_line_spans(data, end, lines, len(records)))
    gc_was_enabled = gc.isenabled()
    gc.disable()  # hundreds of thousands of small dicts: no cycle can form, the collector would only rescan them
    try:  # fast path: the whole file as one JSON array (one C call instead of one per line)
        objs = json.loads(b"[" + b",".join(records) + b"]")
        if len(objs) == len(records) and all(type(o) is dict for o in objs):
            return objs
    except (UnicodeDecodeError, json.JSONDecodeError):
        pass
    finally:
        if gc_was_enabled:
            gc.enable()
    out: list[dict[str, Any]] = []  # slow path: find and name the bad line
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise RunStoreError(f"{path}: line {lineno} is corrupt (not JSON); {REPAIR_HINT}") from None
        if not isinstance(obj, dict):
            raise RunStoreError(f"{path}: line {lineno} is corrupt (not a JSON object); {REPAIR_HINT}")
        out.append(obj)
    return out


def jsonl_objects(text: str, display: str, error: type[ValueError] = DataError,
                  first_line: int = 1) -> list[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line of a JSONL text; ``error`` (one line) on a bad line.
    Lines are split on ``\\n`` only: JSON strings may hold U+2028 and other characters ``splitlines`` breaks on."""
    rows = []
    for line_no, line in enumerate(text.split("\n"), start=first_line):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{display}:{line_no}: bad JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(row, dict):
            raise error(f"{display}:{line_no}: expected a JSON object, got {type(row).__name__}")
        rows.append((line_no, row))
    return rows


def _line_spans(data: bytes, end: int, lines: list[bytes], n_records: int) -> list[tuple[int, int]]:
    """(offset, length) of the non-blank lines among ``lines`` (``data[:end + 1]`` split at newlines)."""
    if n_records == len(lines):  # no blank line: every newline ends a record (one vectorised pass)
        import numpy as np

        nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8, count=end + 1) == 10)
        starts = np.concatenate(([0], nl[:-1] + 1))
        return list(zip(starts.tolist(), (nl - starts).tolist(), strict=True))
    out, pos = [], 0
    for raw in lines:
        if raw.strip():
            out.append((pos, len(raw)))
        pos += len(raw) + 1
    return out


def atomic_write_json(path: Path, obj: Any, *, indent: int | None = 2, sync_dir: bool = True) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=indent, ensure_ascii=False, allow_nan=False) + "\n").encode(),
                       sync_dir=sync_dir)


def atomic_write_bytes(path: Path, data: bytes, *, sync_dir: bool = True) -> None:
    """``data`` at ``path`` all or nothing, through the one file write (:func:`~relgate_tui.engine.runs.outputs.write_file`:
    temporary file, fsync, rename, directory fsync unless ``sync_dir`` is False; never renamed over a path that is not
    a regular file)."""
    write_file(path, data, sync_dir=sync_dir)


def quarantine_lines(path: Path, valid: Callable[[bytes], bool]) -> int | None:
    """Move every line of the JSONL file ``path`` that ``valid`` rejects to ``<path>.quarantine`` (appended,
    fsync-ed; nothing is deleted) and rewrite ``path`` with the good lines (atomic replace); a torn last line is
    dropped as on every open. The one repair of ``relgate runs --repair`` and ``relgate audits --repair``. Returns the
    number of lines moved (None when the file does not exist). The caller holds the directory's write lock."""
    from relgate_tui.engine.runs.inputs import open_regular

    try:
        with open_regular(path, what="a JSONL file") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    end = data.rfind(b"\n")
    good: list[bytes] = []
    bad: list[bytes] = []
    for raw in data[: end + 1].split(b"\n")[:-1] if end >= 0 else []:
        if raw.strip():
            (good if valid(raw) else bad).append(raw + b"\n")
    if bad:
        qfd = os.open(path.with_name(f"{path.name}.quarantine"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            _write_all(qfd, b"".join(bad))
            os.fsync(qfd)
        finally:
            os.close(qfd)
        atomic_write_bytes(path, b"".join(good))
    return len(bad)


def _read_json(path: Path) -> Any:
    """The JSON document ``path`` of a run (:func:`read_run_file`); :class:`FileNotFoundError` when missing."""
    data = read_run_file(path, MAX_DOCUMENT_BYTES, "a run's JSON document")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:
        raise RunStoreError(f"{path}: unreadable ({exc.__class__.__name__})") from None


def open_append(path: Path) -> int:
    """Open ``path`` for appending after truncating a torn (unterminated) last line, if any."""
    from relgate_tui.engine.runs.inputs import InputError, check_mode

    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags, 0o644)
    try:
        st = os.fstat(fd)
        try:
            check_mode(path, st.st_mode, what="a run's JSONL file")
        except InputError as exc:
            raise RunStoreError(str(exc)) from None
        os.set_blocking(fd, True)
        size = st.st_size
        if size:
            tail_start = max(0, size - 65536)
            while True:
                chunk = os.pread(fd, size - tail_start, tail_start)
                nl = chunk.rfind(b"\n")
                if nl >= 0:
                    keep = tail_start + nl + 1
                    break
                if tail_start == 0:
                    keep = 0
                    break
                tail_start = max(0, tail_start - 65536)
            if keep != size:
                os.ftruncate(fd, keep)
                os.fsync(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _opt_float(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _obj(d: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``d[key]`` when it is a JSON object, else an empty one (a hand-edited or older manifest)."""
    v = d.get(key)
    return v if isinstance(v, dict) else {}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_HEADLINE = ("reliability_level", "reliability_lower_bound", "m_star", "passed", "sampling_complete",
             "min_reliability")


REVIEW_FILE = "review.json"  # what the last `relgate review pull` brought in (written by engine/review/pull.py)


def read_review_summary(run_path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The run's ``review.json`` (None when the run was never pulled into, or the file is unreadable): the result's
    ``review`` section, handed to :func:`~relgate_tui.engine.certification.finish.finish`."""
    try:
        doc = json.loads((Path(run_path) / REVIEW_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _count_lines(path: Path) -> int:
    """Complete lines of a JSONL file, counted on bytes (no parse); 0 when it is missing or unreadable,
    :class:`RunStoreError` when it is not a regular file (a FIFO would block, ``/dev/zero`` never ends)."""
    from relgate_tui.engine.runs.inputs import InputError, open_regular

    n = 0
    try:
        with open_regular(path, what="a run's JSONL file") as f:
            while chunk := f.read(1 << 20):
                n += chunk.count(b"\n")
    except InputError as exc:
        raise RunStoreError(str(exc)) from None
    except OSError:
        return 0
    return n


# the append-only line file as other packages use it (the team-review journal, engine/review/journal.py)
write_all = _write_all
