"""Judge scores files: outputs of judges people already have, loaded with zero model calls (issue 9 item 5).

One row per item × judge × criterion (× prompt variant). JSONL, one object per line::

    {"id": "d17", "judge": "qwen-0.5b", "criterion": "coherence", "human": 3.67, "humans": [4, 3, 4],
     "score": 4, "logprobs": {"1": -7.2, "2": -4.1, "3": -1.3, "4": -0.4, "5": -2.2},
     "variant": "original", "input": "source text …", "output": "judged text …", "source": "dialsummeval"}

or CSV with the same columns, where ``lp_1 … lp_K`` hold the log-probabilities and ``human_1 … human_R`` the
per-rater human ratings. Only ``id`` is required, plus a ``score`` or ``logprobs``; ``"score": null`` (or an empty
``score`` cell in a CSV that has the column) without log-probabilities is a judge answer that could not be parsed:
the row is kept as "no score" for that judge and item, and :meth:`ScoresTable.unscored` counts such rows for the
summaries (a row with neither field at all is still an error). ``judge`` defaults to ``judge``,
``criterion`` to ``overall`` and ``variant`` to ``original``. ``logprobs`` maps each scale value (an integer) to the
log-probability of its token at the rating position. ``human`` defaults to the mean of ``humans``. Other columns
with a scalar value are kept as text in ``ScoreRow.fields`` (e.g. a document id for ``relgate judge jury --group-by
FIELD``): at most 32 per row, 1,000 characters each; lists and objects there are ignored. Every problem is a :class:`~relgate_tui.errors.DataError` of one line naming the file, the line and the
field; the same (id, judge, criterion, variant) twice is an error.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from relgate_tui.engine.judging.scores_table import (  # noqa: F401 - the table's types, re-exported
    _NAN,
    _NO_FIELDS,
    DEFAULT_CRITERION,
    DEFAULT_JUDGE,
    DEFAULT_VARIANT,
    Logprobs,
    ScoreRow,
    ScoresTable,
    _Columns,
)
from relgate_tui.engine.runs.inputs import open_regular, read_bounded
from relgate_tui.errors import DataError, data_error

MAX_FILE_BYTES = 1 << 30  # 1 GiB: far beyond any real scores file; a bound against /dev/zero-like inputs
MAX_TEXT_CHARS = 200_000  # per input/output text
_LP_COLUMN = re.compile(r"^lp_(-?\d+)$")
_HUMAN_COLUMN = re.compile(r"^human_(\d+)$")
_NAME_FIELDS = ("judge", "criterion", "variant", "source")
_TEXT_FIELDS = ("input", "output")
_KNOWN = frozenset(("id", "score", "human", "humans", "logprobs", *_NAME_FIELDS, *_TEXT_FIELDS))
MAX_EXTRA_FIELDS, MAX_EXTRA_CHARS = 32, 1_000


# --------------------------------------------------------------------------------------------------------- reading
def load_scores(path: str | Path) -> ScoresTable:
    """Read a judge scores file (JSONL, or CSV by its ``.csv`` suffix). Raises :class:`DataError` (one line)."""
    p = Path(path)
    display = str(path)
    try:
        f = open_regular(p, what="a scores file")  # a FIFO or a device is refused before anything is read
    except FileNotFoundError:
        raise data_error(display, "file not found") from None
    with f:
        if p.suffix.lower() == ".csv":
            raw = read_bounded(f, MAX_FILE_BYTES)
            if raw is None:
                raise data_error(display, f"file too large (more than {MAX_FILE_BYTES:,} bytes)")
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise data_error(display, f"not UTF-8 text (byte {exc.start})") from None
            del raw
            table = _build(_csv_records(text, display), display)
        else:
            table = _build(_jsonl_records(f, display), display)
    if not table.rows:
        raise data_error(display, "no rows")
    return table


_CHUNK_LINES = 1 << 14
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _jsonl_records(f: Any, display: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, object)`` of a JSONL scores file, read as a stream: chunks of lines parsed with one C call each
    (the line-by-line path only to name a bad line), so memory holds one chunk of objects, never the file's.
    Every problem is one line naming the line: bad JSON, not an object, not UTF-8, nested too deeply, a number with
    thousands of digits, a lone surrogate; the bytes read are bounded by :data:`MAX_FILE_BYTES`."""
    with io.BufferedReader(f, 1 << 20) as reader:  # closed with the file (no ResourceWarning)
        yield from _jsonl_chunks(reader, display)


def _jsonl_chunks(reader: Any, display: str) -> Iterator[tuple[int, dict[str, Any]]]:
    total, line_no, first = 0, 0, True
    while True:
        lines = reader.readlines(1 << 22)
        if not lines:
            return
        if first and lines[0].startswith(b"\xef\xbb\xbf"):
            lines[0] = lines[0][3:]
        first = False
        for i in range(0, len(lines), _CHUNK_LINES):
            part = lines[i:i + _CHUNK_LINES]
            total += sum(map(len, part))
            if total > MAX_FILE_BYTES:
                raise data_error(display, f"file too large (more than {MAX_FILE_BYTES:,} bytes)")
            numbered = [(line_no + k, raw) for k, raw in enumerate(part, start=1) if raw.strip()]
            line_no += len(part)
            yield from _parse_lines(numbered, display)


def _parse_lines(numbered: list[tuple[int, bytes]], display: str) -> Iterator[tuple[int, dict[str, Any]]]:
    joined = b"[" + b",".join(raw for _, raw in numbered) + b"]"
    objs: Any = None
    if not _SURROGATE_ESCAPE.search(joined):
        try:  # fast path: the whole chunk as one JSON array
            objs = json.loads(joined)
        except (ValueError, RecursionError):
            objs = None
    del joined
    if isinstance(objs, list) and len(objs) == len(numbered) and all(type(o) is dict for o in objs):
        yield from zip((n for n, _ in numbered), objs, strict=True)
        return
    for n, raw in numbered:  # slow path: each line alone, to name the bad one
        yield n, _parse_line(raw, display, n)


def _parse_line(raw: bytes, display: str, line: int) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise data_error(display, f"not UTF-8 text (byte {exc.start})", line=line) from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise data_error(display, f"bad JSON: {exc.msg} (column {exc.colno})", line=line) from None
    except RecursionError:
        raise data_error(display, "bad JSON: nested too deeply", line=line) from None
    except ValueError as exc:  # an integer of thousands of digits (Python's int-string conversion limit)
        raise data_error(display, f"bad JSON: {str(exc).split(';')[0][:80]}", line=line) from None
    if not isinstance(obj, dict):
        raise data_error(display, f"expected a JSON object, got {type(obj).__name__}", line=line)
    if _SURROGATE_ESCAPE.search(raw):
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise data_error(display, "a string holds a lone surrogate (not valid Unicode)", line=line) from None
    return obj


def table_from_records(records: Iterable[Mapping[str, Any]], path: str = "<memory>") -> ScoresTable:
    """A table from in-memory records (the JSONL objects), with the same validation as :func:`load_scores`."""
    return _build(((i, dict(r)) for i, r in enumerate(records, start=1)), path)


def _csv_records(text: str, display: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames:
        raise data_error(display, "empty file (no header row)", line=1)
    header = [(h or "").strip() for h in reader.fieldnames]
    has_score = "score" in header
    if "id" not in header:
        raise data_error(display, "missing column in the header", line=1, field="id")
    rows: list[tuple[int, dict[str, Any]]] = []
    try:
        for raw in reader:
            line = reader.line_num
            if None in raw:
                raise data_error(display, "more cells than header columns", line=line)
            cells = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
            if not any(cells.values()):
                continue
            rec: dict[str, Any] = {}
            logprobs: dict[str, Any] = {}
            humans: list[tuple[int, str]] = []
            for key, value in cells.items():
                if value == "":
                    continue
                if m := _LP_COLUMN.match(key):
                    logprobs[m.group(1)] = _csv_number(value, display, line, key)
                elif m := _HUMAN_COLUMN.match(key):
                    humans.append((int(m.group(1)), value))
                elif key in ("score", "human"):
                    rec[key] = _csv_number(value, display, line, key)
                else:
                    rec[key] = value
            if logprobs:
                rec["logprobs"] = logprobs
            elif has_score and "score" not in rec:
                rec["score"] = None  # an empty score cell: the CSV form of "score": null
            if humans:
                rec["humans"] = [_csv_number(v, display, line, f"human_{i}") for i, v in sorted(humans)]
            rows.append((line, rec))
    except csv.Error as exc:
        raise data_error(display, f"bad CSV: {exc}", line=reader.line_num) from None
    return rows


def _csv_number(value: str, display: str, line: int, name: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise data_error(display, f"not a number: {value[:40]!r}", line=line, field=name) from None
    if name.startswith("lp_") and x == -math.inf:
        return x
    if not math.isfinite(x):
        raise data_error(display, f"not a finite number: {value[:40]!r}", line=line, field=name)
    return x


def _build(records: Iterable[tuple[int, dict[str, Any]]], display: str) -> ScoresTable:
    cols = _Columns()
    hashes = array("q")  # duplicates are found on 8 bytes per row, not on a dict of a million keys
    for line, rec in records:
        hashes.append(hash(_row(rec, display, line, cols)))
    _check_duplicates(cols, hashes, display)
    return ScoresTable(display, cols)


def _check_duplicates(cols: _Columns, hashes: array, display: str) -> None:
    """One-line error for the first row whose (id, judge, criterion, variant) was given before: equal hashes are
    found by sorting, then only their rows are compared by key."""
    import numpy as np

    h = np.frombuffer(hashes, dtype=np.int64) if len(hashes) else np.zeros(0, dtype=np.int64)
    s = np.sort(h)
    repeated = set(s[1:][s[1:] == s[:-1]].tolist())
    if not repeated:
        return
    first: dict[tuple[str, str, str, str], int] = {}
    for i, hv in enumerate(hashes):
        if hv not in repeated:
            continue
        key = cols.key(i)
        if key in first:
            raise data_error(display, f"duplicate row for id {key[0]!r}, judge {key[1]!r}, criterion "
                                      f"{key[2]!r}, variant {key[3]!r} (first on line {first[key]})",
                             line=cols.line[i], field="id")
        first[key] = cols.line[i]


def _row(rec: Mapping[str, Any], display: str, line: int, cols: _Columns) -> tuple[str, str, str, str]:
    """Check one record and append it to ``cols``; returns its key. Every problem is one line naming the field."""
    def err(name: str, message: str) -> DataError:
        return data_error(display, message, line=line, field=name)

    raw_id = rec.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or str(raw_id).strip() == "":
        raise err("id", "missing or not a string/integer")
    names: dict[str, str | None] = {}
    for name in _NAME_FIELDS:
        value = rec.get(name)
        if value is None or value == "":
            names[name] = None
        elif isinstance(value, str):
            names[name] = value.strip() or None
        else:
            raise err(name, f"expected a string, got {type(value).__name__}")
    texts: dict[str, str | None] = {}
    for name in _TEXT_FIELDS:
        value = rec.get(name)
        if value is not None and not isinstance(value, str):
            raise err(name, f"expected a string, got {type(value).__name__}")
        if value is not None and len(value) > MAX_TEXT_CHARS:
            raise err(name, f"text too long ({len(value):,} characters; at most {MAX_TEXT_CHARS:,})")
        texts[name] = value
    score = _rating(_number(rec.get("score"), err, "score"), err, "score")
    humans = _humans(rec.get("humans"), err)
    human = _rating(_number(rec.get("human"), err, "human"), err, "human")
    if human is None and humans:
        human = math.fsum(humans) / len(humans)
    logprobs = _logprobs(rec.get("logprobs"), err)
    if score is None and logprobs is None and "score" not in rec:
        raise err("score", "a row needs a score or logprobs (or \"score\": null for an unparsed answer)")
    fields = _extra_fields(rec, err)
    i = len(cols)
    item = str(raw_id).strip()
    judge = names["judge"] or DEFAULT_JUDGE
    criterion = names["criterion"] or DEFAULT_CRITERION
    variant = names["variant"] or DEFAULT_VARIANT
    cols.ids.append(item)
    cols.judge.append(cols.code(judge))
    cols.criterion.append(cols.code(criterion))
    cols.variant.append(cols.code(variant))
    cols.source.append(cols.code(names["source"]))
    cols.score.append(_NAN if score is None else score)
    cols.human.append(_NAN if human is None else human)
    cols.line.append(line)
    if logprobs is None:
        cols.lp_scale.append(-1)
        cols.lp_off.append(0)
    else:
        keys = tuple(sorted(logprobs))
        cols.lp_scale.append(cols.scale_code(keys))
        cols.lp_off.append(len(cols.lp_values))
        cols.lp_values.extend(logprobs[k] for k in keys)
    if humans:
        cols.humans[i] = humans
    if texts["input"] is not None:
        cols.input[i] = texts["input"]
    if texts["output"] is not None:
        cols.output[i] = texts["output"]
    if fields:
        cols.fields[i] = fields
    return (item, judge, criterion, variant)


def _extra_fields(rec: Mapping[str, Any], err: Any) -> Mapping[str, str]:
    out: dict[str, str] = {}
    for key, value in rec.items():
        if key in _KNOWN or value is None or isinstance(value, (list, dict)):
            continue
        if len(out) >= MAX_EXTRA_FIELDS:
            break
        text = value if isinstance(value, str) else json.dumps(value)
        if len(text) > MAX_EXTRA_CHARS:
            raise err(str(key)[:40], f"value too long ({len(text):,} characters; at most {MAX_EXTRA_CHARS:,})")
        out[str(key)] = text
    return MappingProxyType(out) if out else _NO_FIELDS


def _number(value: Any, err: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise err(name, f"expected a number, got {type(value).__name__}")
    x = float(value)
    if not math.isfinite(x):
        raise err(name, "not a finite number")
    return x


MAX_RATING = 1e6
"""The largest magnitude a score or human rating may have: relgate reads rating scales of at most 101 points
(:data:`~relgate_tui.core.rating_scale.MAX_POINTS`), so a score of 1e300 is no rating, and would only overflow the
arithmetic downstream (a numpy warning and an infinite width)."""


def _rating(x: float | None, err: Any, name: str) -> float | None:
    if x is not None and abs(x) > MAX_RATING:
        raise err(name, f"{x:g} is off any rating scale (scales of 2 to 101 points; at most {MAX_RATING:g} in size)")
    return x


def _humans(value: Any, err: Any) -> tuple[float, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise err("humans", f"expected a list of numbers, got {type(value).__name__}")
    out = []
    for v in value:
        x = _rating(_number(v, err, "humans"), err, "humans")
        if x is None:
            raise err("humans", "a rating is null")
        out.append(x)
    return tuple(out)


def _logprobs(value: Any, err: Any) -> dict[int, float] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise err("logprobs", f"expected an object mapping scale values to log-probabilities, got "
                              f"{type(value).__name__}")
    if not value:
        raise err("logprobs", "empty object")
    out: dict[int, float] = {}
    for key, lp in value.items():
        try:
            k = int(str(key).strip())
        except ValueError:
            raise err("logprobs", f"scale value {str(key)[:20]!r} is not an integer") from None
        if isinstance(lp, bool) or not isinstance(lp, (int, float)):
            raise err("logprobs", f"log-probability of {k} is not a number")
        x = float(lp)
        if math.isnan(x) or x > 1e-6:
            raise err("logprobs", f"log-probability of {k} is {x} (must be ≤ 0)")
        if k in out:
            raise err("logprobs", f"scale value {k} given twice")
        out[k] = min(x, 0.0)
    return out
