"""The per-item sample summary of a run (issue 10 §6): :class:`ItemSamples`, and ``samples.index.npz`` — a compact,
derived index of ``samples.jsonl`` that lets a 10,000-item × K = 20 run open without parsing 200,000 JSON lines.

**What an item needs.** Analysing a run (:mod:`relgate_tui.engine.certification.analysis`), resuming it (the sampler and
:func:`relgate_tui.engine.certification.run_start.needs_network`) and the live table use only, per item: how many samples are stored,
the canonical classes of the contiguous prefix of indices 0, 1, 2, … (the samples the run uses), the token usage
totals and — to replay the stopping rule — the rule-independent state after each prefix (leader count, runner-up
count, classes seen, the leader's order of first appearance; :func:`prefix_stats`). Texts are only needed when one
item is shown; they are read then, from the file, at the byte offsets of its lines.

:class:`ItemSamples` is that summary; it is also the ``Sequence[StoredSample]`` the run store always gave
(``len``, iteration, indexing, ``==`` with a list): the samples themselves are parsed on first use.

**The index file** (``samples.index.npz``, numpy's uncompressed zip of plain arrays, read with
``allow_pickle=False``) is derived and rebuildable: written only by the process holding the run's write lock (on
close, when missing or stale), atomically (temp file, rename). It records the samples file's *stamp* — byte size,
modification time (ns) and the SHA-256 of its first and last 64 KiB — and is used only when the file's stamp is
the same now; a stale, corrupt, truncated or inconsistent index is ignored and the samples file parsed, as a run
written before indexes existed is. Deleting it loses nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgate_tui.core.types import INVALID
from relgate_tui.engine.records import StoredSample
from relgate_tui.engine.runs.inputs import InputError, open_regular

if TYPE_CHECKING:  # numpy is imported where the index is read or written (below), not to sample a new run
    import numpy as np

INDEX = "samples.index.npz"
FORMAT = 1
_EDGE = 65536

__all__ = ["INDEX", "ItemSamples", "prefix_stats", "group_parsed", "extend_grouped", "stamp",
           "load_index", "write_index"]


# ------------------------------------------------------------------------------------------------ prefix state
def prefix_stats(canon: Sequence[str]) -> list[tuple[int, int, int, int]]:
    """The stopping rule's input after each prefix k = 1 … len(canon) of an item's canonical classes: (leader count,
    runner-up count, classes seen, the leader's order of first appearance), INVALID never counted. The leader is the
    first class to reach the top count (it changes only when another class strictly exceeds it); when the leader is
    strict — the only case where a rule may stop — it is that unique class. Independent of the rule and of K_max."""
    out: list[tuple[int, int, int, int]] = []
    counts: dict[str, int] = {}
    first_seen: dict[str, int] = {}
    lead_class, lead, runner = None, 0, 0
    for c in canon:
        if c != INVALID:
            first_seen.setdefault(c, len(first_seen) + 1)
            v = counts[c] = counts.get(c, 0) + 1
            if c == lead_class:
                lead = v
            elif v > lead:
                lead_class, runner, lead = c, lead, v
            elif v > runner:
                runner = v
        out.append((lead, runner, len(counts), first_seen[lead_class] if lead_class is not None else 1))
    return out


def _coded_prefix_stats(codes: Sequence[int], n_classes: int) -> list[tuple[int, int, int, int]]:
    """:func:`prefix_stats` of classes coded by order of first appearance (0, 1, 2, …; −1 for INVALID): the same
    rows, with lists for dicts (a class's order of first appearance is its code + 1; classes seen, the top code + 1)."""
    out: list[tuple[int, int, int, int]] = []
    counts = [0] * n_classes
    lead_code, lead, runner, seen = -1, 0, 0, 0
    for c in codes:
        if c >= 0:
            if c >= seen:
                seen = c + 1
            v = counts[c] = counts[c] + 1
            if c == lead_code:
                lead = v
            elif v > lead:
                lead_code, runner, lead = c, lead, v
            elif v > runner:
                runner = v
        out.append((lead, runner, seen, lead_code + 1 if lead_code >= 0 else 1))
    return out


# ------------------------------------------------------------------------------------------------- one item
class ItemSamples(Sequence[StoredSample]):
    """The stored samples of one item, sorted by index (a repeated index keeps its first line), with their summary:
    ``canonicals`` (the contiguous prefix's classes), ``prompt_tokens``/``completion_tokens`` (over every stored
    sample), ``stats`` (:func:`prefix_stats` of the prefix as an int array, or None) and the byte ``spans``
    (start, length) of their lines in ``samples.jsonl``. The samples are parsed on first use when not given.
    Read-only (the lists are shared)."""

    __slots__ = ("item", "canonicals", "prompt_tokens", "completion_tokens", "_n", "_indices", "_spans", "_stats",
                 "_src", "_samples", "_path")

    def __init__(self, item: str, indices: Sequence[int], spans: Any,
                 canonicals: Sequence[str], prompt_tokens: int, completion_tokens: int, *,
                 stats: np.ndarray | None = None, samples: list[StoredSample] | None = None,
                 path: Path | None = None) -> None:
        self.item = item
        self._n = len(indices)
        self._indices: Sequence[int] | None = indices
        self._spans = spans
        self.canonicals = canonicals
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self._stats = stats
        self._src: tuple[dict[str, np.ndarray], int, int, int, int] | None = None
        self._samples = samples
        self._path = path

    @classmethod
    def _indexed(cls, item: str, canonicals: list[str], prompt_tokens: int, completion_tokens: int,
                 arrays: dict[str, np.ndarray], rows: tuple[int, int, int, int], path: Path) -> ItemSamples:
        """From the index: the item's rows ``s0:s1`` of the per-sample arrays and ``p0:p1`` of the prefix ones,
        sliced on first use (most items of a big run are never asked for their spans)."""
        out = cls.__new__(cls)
        out.item, out.canonicals = item, canonicals
        out.prompt_tokens, out.completion_tokens = prompt_tokens, completion_tokens
        out._n = rows[1] - rows[0]
        out._indices = out._spans = out._stats = out._samples = None
        out._src, out._path = (arrays, *rows), path
        return out

    @property
    def indices(self) -> Sequence[int]:
        """The stored sample indices, ascending."""
        if self._indices is None:
            assert self._src is not None
            arrays, s0, s1, _, _ = self._src
            self._indices = arrays["indices"][s0:s1].tolist()
        return self._indices

    @property
    def spans(self) -> Any:
        """(offset, length) of each sample's line in ``samples.jsonl``, or None when unknown."""
        if self._spans is None and self._src is not None:
            arrays, s0, s1, _, _ = self._src
            self._spans = arrays["spans"][s0:s1]
        return self._spans

    @property
    def stats(self) -> np.ndarray | None:
        """:func:`prefix_stats` of ``canonicals`` as an int array (from the index), or None."""
        if self._stats is None and self._src is not None and self._src[0].get("stats") is not None:
            arrays, _, _, p0, p1 = self._src
            self._stats = arrays["stats"][p0:p1]
        return self._stats

    def extended(self, new: Sequence[StoredSample], spans: Sequence[tuple[int, int]] | None) -> ItemSamples:
        """A new summary with ``new`` (indices after the last one) appended; this one is unchanged."""
        canonicals = list(self.canonicals)
        prompt, completion = self.prompt_tokens, self.completion_tokens
        for s in new:
            if s.index == len(canonicals):  # indices only grow: the prefix extends when no gap is left
                canonicals.append(s.canonical)
            u = s.usage
            prompt += _int(u.get("prompt_tokens", 0))
            completion += _int(u.get("completion_tokens", 0))
        old_spans = self.spans
        all_spans: Any
        if old_spans is None or spans is None:
            all_spans = None
        else:
            all_spans = [*(old_spans.tolist() if hasattr(old_spans, "tolist") else old_spans), *spans]  # an array
        samples = None if self._samples is None else [*self._samples, *new]
        if samples is None and all_spans is not None:  # texts are read at their spans: keep the spans compact
            import numpy as np

            all_spans = np.asarray(all_spans, dtype=np.int64).reshape(-1, 2)
        out = ItemSamples(self.item, [*self.indices, *(s.index for s in new)], all_spans,
                          canonicals, prompt, completion, samples=samples, path=self._path)
        if samples is None and all_spans is None:
            out._samples = [*self._load(), *new]
        return out

    # -- the sequence ----------------------------------------------------------------------------------------
    def _load(self) -> list[StoredSample]:
        if self._samples is None:
            self._samples = _read_spans(self)
        return self._samples

    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def __getitem__(self, i: Any) -> Any:
        return self._load()[i]

    def __iter__(self) -> Iterator[StoredSample]:
        return iter(self._load())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ItemSamples, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ItemSamples({self.item!r}, n={len(self)}, prefix={len(self.canonicals)})"


def group_parsed(objs: Sequence[Mapping[str, Any]], line_spans: Sequence[tuple[int, int]], path: Path
                 ) -> dict[str, ItemSamples]:
    """Summaries of the parsed lines of ``path`` (objects and their byte spans, file order): per item the samples
    sorted by index, a repeated index keeping its first line. Each line is checked as
    :meth:`StoredSample.from_json` checks it (ValueError ``record N: …``), but no sample is kept: the texts are read
    at their spans when an item is shown, so a big run leaves a few arrays, not 200,000 objects, behind."""
    if not objs:  # a new run's empty file: no item (and numpy not needed)
        return {}
    import numpy as np

    rows: dict[str, list[int]] = {}
    index_of: list[int] = []
    canon_of: list[str] = []
    usage_of: list[Mapping[str, Any]] = []
    disordered: set[str] = set()
    get = rows.get
    for r, obj in enumerate(objs):
        item, index, canonical = obj.get("item"), obj.get("index"), obj.get("canonical", "")
        usage, text, fp = obj.get("usage") or {}, obj.get("text", ""), obj.get("fingerprint", "")
        if not (type(item) is str and type(index) is int and index >= 0 and type(text) is str  # noqa: E721
                and type(canonical) is str and type(usage) is dict and type(fp) is str):
            try:
                s = StoredSample.from_json(obj)  # the rule (and its one-line reason) for any other shape
            except ValueError as exc:
                raise ValueError(f"record {r + 1}: {exc}") from None
            item, index, canonical, usage = s.item, s.index, s.canonical, s.usage
        index_of.append(index)
        canon_of.append(canonical)
        usage_of.append(usage)
        lst = get(item)
        if lst is None:
            rows[item] = [r]
        else:
            if index <= index_of[lst[-1]]:
                disordered.add(item)
            lst.append(r)
    for item in disordered:
        first: dict[int, int] = {}
        for r in rows[item]:
            first.setdefault(index_of[r], r)
        rows[item] = [first[i] for i in sorted(first)]
    order = [r for lst in rows.values() for r in lst]
    line = np.array(line_spans, dtype=np.int64).reshape(-1, 2)
    arrays: dict[str, Any] = {"indices": np.array(index_of, dtype=np.int64)[order] if order else
                              np.zeros(0, dtype=np.int64), "spans": line[order] if order else line[:0], "stats": None}
    out: dict[str, ItemSamples] = {}
    at = 0
    for item, lst in rows.items():
        canon: list[str] = []
        prompt = completion = 0
        for r in lst:
            if index_of[r] == len(canon):
                canon.append(canon_of[r])
            u = usage_of[r]
            prompt += _int(u.get("prompt_tokens", 0))
            completion += _int(u.get("completion_tokens", 0))
        out[item] = ItemSamples._indexed(item, canon, prompt, completion, arrays, (at, at + len(lst), 0, 0), path)
        at += len(lst)
    return out


def extend_grouped(grouped: dict[str, ItemSamples], batch: Sequence[StoredSample], spans: Sequence[tuple[int, int]],
                   path: Path, *, keep_texts: bool = True) -> bool:
    """Add appended samples (their lines at ``spans``) to ``grouped`` in place, one new summary per item touched;
    False (``grouped`` then partly updated: drop it) when a sample does not come after its item's last one. A new
    item's summary holds the samples themselves when ``keep_texts``, else only their spans (read when shown)."""
    by_item: dict[str, tuple[list[StoredSample], list[tuple[int, int]]]] = {}
    for s, span in zip(batch, spans, strict=True):
        entry = by_item.get(s.item)
        if entry is None:
            by_item[s.item] = ([s], [span])
        else:
            entry[0].append(s)
            entry[1].append(span)
    for item, (new, new_spans) in by_item.items():
        lst = grouped.get(item)
        last = lst.indices[-1] if lst else -1
        for s in new:
            if s.index <= last:
                return False
            last = s.index
        base = lst if lst is not None else ItemSamples(item, [], [], [], 0, 0, samples=[] if keep_texts else None,
                                                       path=path)
        grouped[item] = base.extended(new, new_spans)
    return True


def _int(v: Any) -> int:
    return v if type(v) is int else (int(v) if isinstance(v, (int, float)) and v == v and abs(v) < 1e18 else 0)


def _read_spans(items: ItemSamples) -> list[StoredSample]:
    """The samples of one indexed item, read at their byte spans. Each line must be that item's sample of the
    expected index; when one is not (the file was rewritten since it was indexed, e.g. repaired), the item's samples
    are found by parsing the whole file instead (:func:`_parse_item`)."""
    assert items._path is not None and items.spans is not None
    out: list[StoredSample] = []
    try:
        with open_regular(items._path, what="a run's samples file") as f:
            for (start, length), index in zip(items.spans, items.indices, strict=True):
                f.seek(int(start))
                s = StoredSample.from_json(json.loads(f.read(int(length))))
                if s.item != items.item or s.index != int(index):
                    return _parse_item(items._path, items.item)
                out.append(s)
    except (OSError, ValueError, TypeError, AttributeError, RecursionError):
        return _parse_item(items._path, items.item)
    return out


def _parse_item(path: Path, item: str) -> list[StoredSample]:
    """One item's samples from the whole samples file (sorted by index, a repeated index keeping its first line);
    :class:`~relgate_tui.engine.runs.files.RunStoreError` (one line) when the file cannot be read or is corrupt."""
    from relgate_tui.engine.runs.files import REPAIR_HINT, RunStoreError, read_jsonl

    first: dict[int, StoredSample] = {}
    for lineno, obj in enumerate(read_jsonl(path), start=1):
        if obj.get("item") != item:
            continue
        try:
            s = StoredSample.from_json(obj)
        except ValueError as exc:
            raise RunStoreError(f"{path}: record {lineno}: {exc}; {REPAIR_HINT}") from None
        first.setdefault(s.index, s)
    return [first[i] for i in sorted(first)]


# --------------------------------------------------------------------------------------------- the index file
def stamp(path: Path) -> dict[str, Any] | None:
    """The samples file's stamp: size, mtime (ns) and SHA-256 of its first and last 64 KiB; None when missing or
    unreadable; :class:`~relgate_tui.engine.runs.files.RunStoreError` (one line) when it is not a regular file."""
    from relgate_tui.engine.runs.files import RunStoreError

    try:
        f = open_regular(path, what="a run's samples file")
    except InputError as exc:
        raise RunStoreError(str(exc)) from None
    except OSError:
        return None
    with f:
        try:
            fd = f.fileno()
            st = os.fstat(fd)
            h = hashlib.sha256(os.pread(fd, _EDGE, 0))
            if st.st_size > _EDGE:
                h.update(os.pread(fd, _EDGE, max(_EDGE, st.st_size - _EDGE)))
        except OSError:
            return None
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "edges_sha256": h.hexdigest()}


def write_index(run: Path, samples_path: Path, source: Mapping[str, Any], grouped: Mapping[str, ItemSamples]
                ) -> bool:
    """Write ``samples.index.npz`` for the samples file whose stamp was ``source`` (atomic; best effort: False when
    a summary lacks its spans or the directory is not writable)."""
    import numpy as np

    ids = list(grouped)
    classes: list[list[str]] = []
    n: list[int] = []
    n_prefix: list[int] = []
    tokens: list[tuple[int, int]] = []
    spans: list[np.ndarray] = []
    indices: list[int] = []
    codes: list[int] = []
    stats: list[tuple[int, int, int, int]] = []
    for item in ids:
        s = grouped[item]
        item_spans = s.spans
        if item_spans is None or len(item_spans) != len(s):
            return False
        n.append(len(s))
        n_prefix.append(len(s.canonicals))
        tokens.append((s.prompt_tokens, s.completion_tokens))
        if len(s):
            spans.append(np.asarray(item_spans, dtype=np.int64).reshape(-1, 2))
        indices.extend(s.indices)
        canon = s.canonicals
        table = list(dict.fromkeys(c for c in canon if c != INVALID))  # classes in order of first appearance
        code_of = {c: i for i, c in enumerate(table)}
        code_of[INVALID] = -1
        item_codes = list(map(code_of.__getitem__, canon))
        codes.extend(item_codes)
        classes.append(table)
        known = s.stats
        stats.extend(_coded_prefix_stats(item_codes, len(table)) if known is None else map(tuple, known.tolist()))
    meta = {"format": FORMAT, "source": dict(source), "items": ids, "classes": classes}
    span_arr = np.concatenate(spans) if spans else np.zeros((0, 2), dtype=np.int64)
    index_arr = np.array(indices, dtype=np.int64)
    stats_arr = np.array(stats, dtype=np.int64).reshape(-1, 4)
    small = (not len(index_arr) or int(index_arr.max()) < 2**31) and (not len(stats_arr) or int(stats_arr.max()) < 2**15)
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), dtype=np.uint8),
             n=np.array(n, dtype=np.int64), n_prefix=np.array(n_prefix, dtype=np.int64),
             tokens=np.array(tokens, dtype=np.int64).reshape(-1, 2), starts=span_arr[:, 0].copy(),
             lengths=span_arr[:, 1].astype(np.int32 if int(span_arr[:, 1].max(initial=0)) < 2**31 else np.int64),
             indices=index_arr.astype(np.int32) if small else index_arr, codes=np.array(codes, dtype=np.int32),
             stats=stats_arr.astype(np.int16) if small else stats_arr)
    tmp = run / f".{INDEX}.{os.getpid()}.tmp"
    try:
        tmp.write_bytes(buf.getvalue())
        os.replace(tmp, run / INDEX)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
    return True


def load_index(run: Path, samples_path: Path, source: Mapping[str, Any] | None) -> dict[str, ItemSamples] | None:
    """The per-item summaries from ``samples.index.npz`` when it describes the samples file as it is now (stamp
    ``source``) and is internally consistent; None otherwise (missing, stale, corrupt: parse the samples file)."""
    if source is None:
        return None
    try:  # a FIFO or device planted as the index is no index (the samples file is parsed), never a hang
        f = open_regular(run / INDEX, what="a run's sample index")
    except (InputError, OSError):
        return None
    import numpy as np

    try:
        with f, np.load(f, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"].astype(np.uint8)))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("source") != dict(source):
                return None
            arrays = {k: z[k] for k in ("n", "n_prefix", "tokens", "starts", "lengths", "indices", "codes", "stats")}
    except Exception:  # noqa: BLE001 - any unreadable index (zip, npy, JSON, missing key) is only ignored
        return None
    try:
        return _summaries(meta, arrays, samples_path, int(source["size"]))
    except (ValueError, TypeError, KeyError, IndexError, OverflowError):
        return None


def _summaries(meta: dict[str, Any], a: dict[str, np.ndarray], samples_path: Path, size: int
               ) -> dict[str, ItemSamples] | None:
    import numpy as np

    ids, classes = meta.get("items"), meta.get("classes")
    if not isinstance(ids, list) or not isinstance(classes, list) or len(ids) != len(classes):
        return None
    n_items = len(ids)
    n, n_prefix, tokens = a["n"], a["n_prefix"], a["tokens"]
    starts, lengths, indices, codes, stats = a["starts"], a["lengths"], a["indices"], a["codes"], a["stats"]
    if (n.shape != (n_items,) or n_prefix.shape != (n_items,) or tokens.shape != (n_items, 2)
            or stats.ndim != 2 or stats.shape[1] != 4):
        return None
    total, total_prefix = int(n.sum()), int(n_prefix.sum())
    if (starts.shape != (total,) or lengths.shape != (total,) or indices.shape != (total,)
            or codes.shape != (total_prefix,) or stats.shape[0] != total_prefix
            or (n_prefix > n).any() or (n < 0).any() or (n_prefix < 0).any()):
        return None
    if total and (starts.min() < 0 or lengths.min() < 1 or int((starts + lengths).max()) > size):
        return None
    sample_at = np.concatenate([[0], np.cumsum(n)])
    prefix_at = np.concatenate([[0], np.cumsum(n_prefix)])
    if total:  # indices strictly increase within an item, and its prefix rows are the indices 0, 1, 2, …
        pos = np.arange(total, dtype=np.int64) - np.repeat(sample_at[:-1], n)
        in_prefix = pos < np.repeat(n_prefix, n)
        if (indices[in_prefix] != pos[in_prefix]).any() or (np.diff(indices)[pos[1:] > 0] <= 0).any():
            return None
    arrays = {"indices": indices, "spans": np.stack([starts, lengths], axis=1) if total
              else np.zeros((0, 2), dtype=np.int64), "stats": stats}
    out: dict[str, ItemSamples] = {}
    code_list = codes.tolist()
    token_list = tokens.tolist()
    s_at, p_at = sample_at.tolist(), prefix_at.tolist()
    indexed = ItemSamples._indexed
    for j, item in enumerate(ids):
        table = classes[j]
        if (not isinstance(item, str) or not isinstance(table, list) or item in out
                or not all(type(c) is str and c != INVALID for c in table)):
            return None
        p0, p1 = p_at[j], p_at[j + 1]
        item_codes = code_list[p0:p1]
        if item_codes and (max(item_codes) >= len(table) or min(item_codes) < -1):
            return None
        canon = [table[c] for c in item_codes] if -1 not in item_codes else [
            INVALID if c < 0 else table[c] for c in item_codes]
        prompt, completion = token_list[j]
        out[item] = indexed(item, canon, prompt, completion, arrays, (s_at[j], s_at[j + 1], p0, p1), samples_path)
    return out
