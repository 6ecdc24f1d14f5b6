"""A judge scores table held column by column (issue 29): the rows of a scores file (:mod:`.scores_file`) as
columns — ids as strings, the names (judge, criterion, variant, source) as codes into one list of distinct strings,
scores and human scores as doubles (NaN = none), the log-probabilities packed in one array of doubles — so a million
rows take about a hundred bytes each, where an object per row took about 560. :class:`ScoreRow` objects are built
only when a row is read (:attr:`ScoresTable.rows`)."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from relgate_tui.core.text import counted

__all__ = ["DEFAULT_JUDGE", "DEFAULT_CRITERION", "DEFAULT_VARIANT", "Logprobs", "ScoreRow", "ScoresTable"]

DEFAULT_JUDGE, DEFAULT_CRITERION, DEFAULT_VARIANT = "judge", "overall", "original"
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
        if n == 0:
            return None
        return (f"{n:,} of {counted(len(self), 'row', grouped=True)} {'has' if n == 1 else 'have'} a null score "
                "(an unparsed judge answer): counted as no score for that judge and item")

    def scale(self) -> tuple[int, ...]:
        """The scale values that carry log-probabilities anywhere in the table, sorted (``()`` when none do)."""
        import numpy as np

        _, scale = self._score_and_scale()
        used: Any = np.unique(scale[scale >= 0]) if scale.size else ()
        return tuple(sorted({k for c in used for k in self._cols.scales[int(c)]}))
