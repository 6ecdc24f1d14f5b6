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
with a scalar value are kept as text in ``ScoreRow.fields`` (e.g. a document id for ``relgate jury --group-by
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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from relgate_tui.engine.runs.inputs import open_regular, read_bounded
from relgate_tui.errors import DataError, data_error

MAX_FILE_BYTES = 1 << 30  # 1 GiB: far beyond any real scores file; a bound against /dev/zero-like inputs
MAX_TEXT_CHARS = 200_000  # per input/output text
DEFAULT_JUDGE, DEFAULT_CRITERION, DEFAULT_VARIANT = "judge", "overall", "original"
_LP_COLUMN = re.compile(r"^lp_(-?\d+)$")
_HUMAN_COLUMN = re.compile(r"^human_(\d+)$")
_NAME_FIELDS = ("judge", "criterion", "variant", "source")
_TEXT_FIELDS = ("input", "output")
_KNOWN = frozenset(("id", "score", "human", "humans", "logprobs", *_NAME_FIELDS, *_TEXT_FIELDS))
MAX_EXTRA_FIELDS, MAX_EXTRA_CHARS = 32, 1_000
_NO_FIELDS: Mapping[str, str] = MappingProxyType({})  # shared by every row without extra fields


class Logprobs(Mapping[int, float]):
    """A row's read-only ``scale value → log-probability`` map: a view of the table's one packed array of doubles
    (the keys tuple shared by every row with the same scale), so a row costs no array of its own."""

    __slots__ = ("_keys", "_values", "_off")

    def __init__(self, keys: tuple[int, ...], values: Iterable[float] | array, offset: int = 0) -> None:
        self._keys = keys
        self._values = values if isinstance(values, array) else array("d", values)
        self._off = offset

    def __getitem__(self, key: int) -> float:
        try:
            return self._values[self._off + self._keys.index(key)]
        except ValueError:
            raise KeyError(key) from None

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def items(self) -> Any:
        return zip(self._keys, self.values(), strict=True)

    def values(self) -> Any:
        return self._values[self._off:self._off + len(self._keys)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]  # a mapping

    def __repr__(self) -> str:
        return repr(dict(self.items()))


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One judge's verdict on one item under one criterion and prompt variant."""

    id: str
    judge: str = DEFAULT_JUDGE
    criterion: str = DEFAULT_CRITERION
    score: float | None = None
    human: float | None = None
    humans: tuple[float, ...] = ()
    logprobs: Mapping[int, float] | None = None
    variant: str = DEFAULT_VARIANT
    input: str | None = None
    output: str | None = None
    source: str | None = None
    line: int = 0
    fields: Mapping[str, str] = field(default_factory=lambda: _NO_FIELDS)  # one shared empty map

    @property
    def key(self) -> tuple[str, str, str, str]:
        """``(id, judge, criterion, variant)``: unique within a table."""
        return (self.id, self.judge, self.criterion, self.variant)

    def to_record(self) -> dict[str, Any]:
        """The JSONL object of this row (absent fields left out); ``table_from_records`` reads it back unchanged."""
        rec: dict[str, Any] = {"id": self.id, "judge": self.judge, "criterion": self.criterion,
                               "variant": self.variant}
        if self.score is not None or self.logprobs is None:
            rec["score"] = self.score  # None: an unparsed answer, written back as "score": null
        if self.human is not None:
            rec["human"] = self.human
        if self.humans:
            rec["humans"] = list(self.humans)
        if self.logprobs is not None:
            rec["logprobs"] = {str(k): v for k, v in sorted(self.logprobs.items())}
        for name in ("input", "output", "source"):
            value = getattr(self, name)
            if value is not None:
                rec[name] = value
        return rec | dict(self.fields)


_NAN = float("nan")


class _Columns:
    """Every row of one file, column by column (issue 29: a million rows in about 100 bytes each, where a row object
    with its strings, floats and log-prob map cost about 560): ids as strings, the names (judge, criterion, variant,
    source) as codes into one list of distinct strings, scores and human scores as doubles (NaN = none: both are
    finite when given), the log-probabilities packed in one array of doubles (a row's scale, its offset), the rare
    fields (per-rater humans, texts, extra columns) in maps by row. Rows are built only when read
    (:class:`_Rows`)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.names: list[str | None] = [None]  # code 0 = none (source only)
        self._codes: dict[str, int] = {}
        self.judge, self.criterion, self.variant, self.source = array("i"), array("i"), array("i"), array("i")
        self.score, self.human = array("d"), array("d")
        self.line = array("q")
        self.lp_scale = array("i")  # index into scales; -1 = no log-probs
        self.lp_off = array("q")
        self.lp_values = array("d")
        self.scales: list[tuple[int, ...]] = []
        self._scale_index: dict[tuple[int, ...], int] = {}
        self.humans: dict[int, tuple[float, ...]] = {}
        self.input: dict[int, str] = {}
        self.output: dict[int, str] = {}
        self.fields: dict[int, Mapping[str, str]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def code(self, name: str | None) -> int:
        if name is None:
            return 0
        c = self._codes.get(name)
        if c is None:
            c = self._codes[name] = len(self.names)
            self.names.append(name)
        return c

    def code_of(self, name: str) -> int | None:
        """The code of an existing name (None: no row has it)."""
        return self._codes.get(name)

    def scale_code(self, keys: tuple[int, ...]) -> int:
        c = self._scale_index.get(keys)
        if c is None:
            c = self._scale_index[keys] = len(self.scales)
            self.scales.append(keys)
        return c

    def row(self, i: int) -> ScoreRow:
        names = self.names
        sc = self.lp_scale[i]
        lps = None if sc < 0 else Logprobs(self.scales[sc], self.lp_values, self.lp_off[i])
        score, human = self.score[i], self.human[i]
        return ScoreRow(id=self.ids[i], judge=names[self.judge[i]] or DEFAULT_JUDGE,
                        criterion=names[self.criterion[i]] or DEFAULT_CRITERION,
                        score=None if score != score else score, human=None if human != human else human,
                        humans=self.humans.get(i, ()), logprobs=lps, variant=names[self.variant[i]] or DEFAULT_VARIANT,
                        input=self.input.get(i), output=self.output.get(i), source=names[self.source[i]],
                        line=self.line[i], fields=self.fields.get(i, _NO_FIELDS))

    def key(self, i: int) -> tuple[str, str, str, str]:
        names = self.names
        return (self.ids[i], names[self.judge[i]] or DEFAULT_JUDGE, names[self.criterion[i]] or DEFAULT_CRITERION,
                names[self.variant[i]] or DEFAULT_VARIANT)


class _Rows(Sequence[ScoreRow]):
    """The rows of a table (all of a file's, or a selection's), each built when read: iterating a million rows
    holds one at a time."""

    __slots__ = ("_cols", "_idx")

    def __init__(self, cols: _Columns, idx: Any) -> None:
        self._cols, self._idx = cols, idx  # idx: None (every row) or an int64 numpy array of row numbers

    def __len__(self) -> int:
        return len(self._cols) if self._idx is None else len(self._idx)

    def _at(self, k: int) -> int:
        return k if self._idx is None else int(self._idx[k])

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return tuple(self[j] for j in range(*k.indices(len(self))))
        n = len(self)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(k)
        return self._cols.row(self._at(k))

    def __iter__(self) -> Iterator[ScoreRow]:
        row = self._cols.row
        if self._idx is None:
            return (row(i) for i in range(len(self._cols)))
        return (row(int(i)) for i in self._idx)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and all(
            a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} score rows>"


class ScoresTable:
    """The rows of a judge scores file, in file order, held column by column (:class:`_Columns`); ``rows`` builds
    each :class:`ScoreRow` when it is read."""

    __slots__ = ("path", "_cols", "_idx", "_index")

    def __init__(self, path: str, cols: _Columns, idx: Any = None) -> None:
        self.path = path
        self._cols = cols
        self._idx = idx
        self._index: dict[tuple[str, str, str, str], int] | None = None

    @property
    def rows(self) -> Sequence[ScoreRow]:
        return _Rows(self._cols, self._idx)

    def __len__(self) -> int:
        return len(self._cols) if self._idx is None else len(self._idx)

    def __repr__(self) -> str:
        return f"ScoresTable({self.path!r}, {len(self)} rows)"

    def _positions(self) -> Any:
        import numpy as np

        return np.arange(len(self._cols), dtype=np.int64) if self._idx is None else self._idx

    def _codes(self, name: str) -> Any:
        import numpy as np

        codes = np.frombuffer(getattr(self._cols, name), dtype=np.int32) if len(self._cols) else np.zeros(
            0, dtype=np.int32)
        return codes if self._idx is None else codes[self._idx]

    def _distinct(self, name: str) -> list[str]:
        import numpy as np

        codes = self._codes(name)
        if not codes.size:
            return []
        uniq, first = np.unique(codes, return_index=True)
        default = {"judge": DEFAULT_JUDGE, "criterion": DEFAULT_CRITERION, "variant": DEFAULT_VARIANT}.get(name)
        out = [self._cols.names[int(c)] or default for c in uniq[np.argsort(first, kind="stable")]]
        return list(dict.fromkeys(out))  # type: ignore[arg-type]

    def judges(self) -> list[str]:
        return self._distinct("judge")

    def criteria(self) -> list[str]:
        return self._distinct("criterion")

    def variants(self) -> list[str]:
        return self._distinct("variant")

    def ids(self) -> list[str]:
        """Item ids in order of first appearance."""
        ids = self._cols.ids
        if self._idx is None:
            return list(dict.fromkeys(ids))
        return list(dict.fromkeys(ids[int(i)] for i in self._idx))

    def get(self, id: str, judge: str, criterion: str, variant: str = DEFAULT_VARIANT) -> ScoreRow | None:
        if self._index is None:  # built on the first look-up only
            key = self._cols.key
            self._index = {key(int(i)): int(i) for i in self._positions()}
        i = self._index.get((id, judge, criterion, variant))
        return None if i is None else self._cols.row(i)

    def select(self, *, judge: str | None = None, criterion: str | None = None,
               variant: str | None = None) -> ScoresTable:
        """The rows matching every given name (``None`` matches all)."""
        import numpy as np

        keep = np.ones(len(self), dtype=bool)
        for name, value, default in (("judge", judge, DEFAULT_JUDGE), ("criterion", criterion, DEFAULT_CRITERION),
                                     ("variant", variant, DEFAULT_VARIANT)):
            if value is None:
                continue
            wanted = [c for c in (self._cols.code_of(value),) if c is not None]
            if value == default:
                wanted.append(0)  # an absent name reads as the default
            keep &= np.isin(self._codes(name), np.array(wanted, dtype=np.int32))
        return ScoresTable(self.path, self._cols, self._positions()[keep])

    def _score_and_scale(self) -> tuple[Any, Any]:
        import numpy as np

        n = len(self._cols)
        score = np.frombuffer(self._cols.score, dtype=np.float64) if n else np.zeros(0)
        scale = np.frombuffer(self._cols.lp_scale, dtype=np.int32) if n else np.zeros(0, dtype=np.int32)
        return (score, scale) if self._idx is None else (score[self._idx], scale[self._idx])

    def unscored(self) -> int:
        """Rows with no score and no log-probabilities (``"score": null``: the judge's answer was not parsed)."""
        import numpy as np

        score, scale = self._score_and_scale()
        return int(np.count_nonzero(np.isnan(score) & (scale < 0)))

    def unscored_note(self) -> str | None:
        """The summary line about :meth:`unscored` rows, or None when every row has a score."""
        n = self.unscored()
        return None if n == 0 else (f"{n:,} of {len(self):,} row(s) have a null score (an unparsed judge "
                                    "answer): counted as no score for that judge and item")

    def scale(self) -> tuple[int, ...]:
        """The scale values that carry log-probabilities anywhere in the table, sorted (``()`` when none do)."""
        import numpy as np

        _, scale = self._score_and_scale()
        used: Any = np.unique(scale[scale >= 0]) if scale.size else ()
        return tuple(sorted({k for c in used for k in self._cols.scales[int(c)]}))


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
