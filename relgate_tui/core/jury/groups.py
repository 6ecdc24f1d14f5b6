"""Grouped splits for the jury protocol: no group in both the training and the test part (issue 20 §2).

Paper 003 splits items at random, so summaries of the same source document (SummEval: 16 systems per document;
HANNA: 11 stories per prompt) land in train and test: the reliability predictors then learn the document, and the
test τ is optimistic. With a group per item (the source text, a data set, any field, or the id's prefix), a split
partitions the *groups*: a seeded permutation of the groups (``numpy.random.default_rng(seed + s)``, as the item
splits), cut where the running item count first reaches 60% and 80% of the items, so the parts hold about 60/20/20 of
the items and every group lies in exactly one part.

:func:`id_prefix` reads a group from an id ("P12-S3" → "P12"); :func:`looks_grouped` says when ids look grouped
that way although no grouping was asked for (the caller warns).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from relgate_tui.core.text import counted

SEPARATORS = ("-", "_", ":", "/", "#", "|", ".")


def item_splits(n: int, count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``count`` seeded random 60/20/20 partitions of ``n`` items (paper 003 §4.3)."""
    out = []
    for s in range(count):
        perm = np.random.default_rng(seed + s).permutation(n)
        a, b = int(round(0.6 * n)), int(round(0.8 * n))
        out.append((np.sort(perm[:a]), np.sort(perm[a:b]), np.sort(perm[b:])))
    return out


def group_splits(groups: Sequence[str], count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``count`` seeded 60/20/20 partitions of the items that keep each group in one part (module docstring).
    Needs at least three groups (one per part)."""
    keys, codes = np.unique(np.asarray(list(groups), dtype=object).astype(str), return_inverse=True)
    g = keys.size
    if g < 3:
        raise ValueError(f"{counted(int(g), 'group')}: a grouped 60/20/20 split needs at least three")
    sizes = np.bincount(codes, minlength=g)
    n = int(sizes.sum())
    out = []
    for s in range(count):
        perm = np.random.default_rng(seed + s).permutation(g)
        cum = np.cumsum(sizes[perm])
        a = int(np.searchsorted(cum, 0.6 * n))  # the group that reaches 60% closes the training part
        b = int(np.searchsorted(cum, 0.8 * n))
        a = min(max(a, 0), g - 3)
        b = min(max(b, a + 1), g - 2)
        part = np.empty(g, dtype=int)
        part[perm[: a + 1]], part[perm[a + 1 : b + 1]], part[perm[b + 1 :]] = 0, 1, 2
        where = part[codes]
        out.append((np.flatnonzero(where == 0), np.flatnonzero(where == 1), np.flatnonzero(where == 2)))
    return out


def id_prefix(item_id: str, sep: str) -> str:
    """The group of an id: the part before its last ``sep`` (the id itself when it has none)."""
    head, found, _ = item_id.rpartition(sep)
    return head if found and head else item_id


def looks_grouped(ids: Sequence[str]) -> tuple[str, int] | None:
    """``(separator, number of groups)`` when at least 90% of the ids have a prefix before a separator and the
    prefixes are shared (on average at least two ids each); None otherwise. The first separator that fits wins."""
    n = len(ids)
    if n < 4:
        return None
    for sep in SEPARATORS:
        with_sep = [i for i in ids if sep in i.strip(sep)]
        if len(with_sep) < 0.9 * n:
            continue
        prefixes = {id_prefix(i, sep) for i in ids}
        if len(prefixes) <= n / 2:
            return sep, len(prefixes)
    return None
