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
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from relgate_tui.engine.runs.files import jsonl_objects
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


@dataclass(frozen=True)
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
    fields: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

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


@dataclass(frozen=True)
class ScoresTable:
    """The rows of a judge scores file, in file order."""

    path: str
    rows: tuple[ScoreRow, ...]
    _index: Mapping[tuple[str, str, str, str], ScoreRow] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", MappingProxyType({r.key: r for r in self.rows}))

    def __len__(self) -> int:
        return len(self.rows)

    def _distinct(self, name: str) -> list[str]:
        return list(dict.fromkeys(getattr(r, name) for r in self.rows))

    def judges(self) -> list[str]:
        return self._distinct("judge")

    def criteria(self) -> list[str]:
        return self._distinct("criterion")

    def variants(self) -> list[str]:
        return self._distinct("variant")

    def ids(self) -> list[str]:
        """Item ids in order of first appearance."""
        return self._distinct("id")

    def get(self, id: str, judge: str, criterion: str, variant: str = DEFAULT_VARIANT) -> ScoreRow | None:
        return self._index.get((id, judge, criterion, variant))

    def select(self, *, judge: str | None = None, criterion: str | None = None,
               variant: str | None = None) -> ScoresTable:
        """The rows matching every given name (``None`` matches all)."""
        rows = tuple(r for r in self.rows
                     if (judge is None or r.judge == judge) and (criterion is None or r.criterion == criterion)
                     and (variant is None or r.variant == variant))
        return ScoresTable(self.path, rows)

    def unscored(self) -> int:
        """Rows with no score and no log-probabilities (``"score": null``: the judge's answer was not parsed)."""
        return sum(1 for r in self.rows if r.score is None and r.logprobs is None)

    def unscored_note(self) -> str | None:
        """The summary line about :meth:`unscored` rows, or None when every row has a score."""
        n = self.unscored()
        return None if n == 0 else (f"{n:,} of {len(self.rows):,} row(s) have a null score (an unparsed judge "
                                    "answer): counted as no score for that judge and item")

    def scale(self) -> tuple[int, ...]:
        """The scale values that carry log-probabilities anywhere in the table, sorted (``()`` when none do)."""
        return tuple(sorted({k for r in self.rows if r.logprobs for k in r.logprobs}))


# --------------------------------------------------------------------------------------------------------- reading
def load_scores(path: str | Path) -> ScoresTable:
    """Read a judge scores file (JSONL, or CSV by its ``.csv`` suffix). Raises :class:`DataError` (one line)."""
    p = Path(path)
    display = str(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise data_error(display, "file not found") from None
    except OSError as exc:
        raise data_error(display, f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise data_error(display, "not a regular file")
    if st.st_size > MAX_FILE_BYTES:
        raise data_error(display, f"file too large ({st.st_size:,} bytes; at most {MAX_FILE_BYTES:,})")
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise data_error(display, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise data_error(display, f"cannot read: {exc.strerror or exc}") from None
    if p.suffix.lower() == ".csv":
        records = _csv_records(text, display)
    else:
        records = jsonl_objects(text, display, DataError)
    table = _build(records, display)
    if not table.rows:
        raise data_error(display, "no rows")
    return table


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
    rows: list[ScoreRow] = []
    first_line: dict[tuple[str, str, str, str], int] = {}
    for line, rec in records:
        row = _row(rec, display, line)
        if row.key in first_line:
            raise data_error(display, f"duplicate row for id {row.id!r}, judge {row.judge!r}, criterion "
                                      f"{row.criterion!r}, variant {row.variant!r} (first on line "
                                      f"{first_line[row.key]})", line=line, field="id")
        first_line[row.key] = line
        rows.append(row)
    return ScoresTable(display, tuple(rows))


def _row(rec: Mapping[str, Any], display: str, line: int) -> ScoreRow:
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
    score = _number(rec.get("score"), err, "score")
    humans = _humans(rec.get("humans"), err)
    human = _number(rec.get("human"), err, "human")
    if human is None and humans:
        human = math.fsum(humans) / len(humans)
    logprobs = _logprobs(rec.get("logprobs"), err)
    if score is None and logprobs is None and "score" not in rec:
        raise err("score", "a row needs a score or logprobs (or \"score\": null for an unparsed answer)")
    return ScoreRow(id=str(raw_id).strip(), judge=names["judge"] or DEFAULT_JUDGE,
                    criterion=names["criterion"] or DEFAULT_CRITERION, score=score, human=human, humans=humans,
                    logprobs=logprobs, variant=names["variant"] or DEFAULT_VARIANT, input=texts["input"],
                    output=texts["output"], source=names["source"], line=line, fields=_extra_fields(rec, err))


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
    return MappingProxyType(out)


def _number(value: Any, err: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise err(name, f"expected a number, got {type(value).__name__}")
    x = float(value)
    if not math.isfinite(x):
        raise err(name, "not a finite number")
    return x


def _humans(value: Any, err: Any) -> tuple[float, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise err("humans", f"expected a list of numbers, got {type(value).__name__}")
    out = []
    for v in value:
        x = _number(v, err, "humans")
        if x is None:
            raise err("humans", "a rating is null")
        out.append(x)
    return tuple(out)


def _logprobs(value: Any, err: Any) -> Mapping[int, float] | None:
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
    return MappingProxyType(dict(sorted(out.items())))
