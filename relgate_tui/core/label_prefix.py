r"""Only the prefix counts (issue 33 §2): which labels the judge-assisted bound may use.

The bound of :mod:`relgate_tui.core.ppi` treats the labelled items as i.i.d. draws from the task. That holds for the
first n items of the run's seeded order — a uniformly random permutation fixed before any label — whatever n the
reviewer stops at (a stopping time). It does **not** hold for an arbitrary subset: an item the reviewer leaves
unlabelled (a pending item in a ``review pull``, a row missing from a labels file, an item skipped in another tool)
may be left out *because of what it is* — typically a hard item — and the remaining labels then over-represent easy
items. In the bench's world where the judge is wrong exactly on the hard items (15% of items, 40% of them right) and
the reviewer leaves hard items unlabelled, the bound computed from all the labels given exceeded the truth in 29.7%
of runs (issue 33); when every hard item among the first 120 is left unlabelled it does so in over 90%
(tests/core/test_label_prefix.py), and the prefix bound in none.

**Rule.** Use the labelled items up to the first unlabelled item in the seeded order, and say how many later labels
were left out and why. A *skip* is a label (Y = 0, a miss, as the spot-check records it): it can only lower the
bound, so it never stops the prefix. The prefix is a stopping time of the seeded order (the first gap), so the
bound's anytime guarantee covers it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Prefix", "labelled_prefix", "prefix_arrays"]


@dataclass(frozen=True)
class Prefix:
    """The labelled prefix of the seeded order: ``used`` labels at its head are usable; ``left_out`` labels come
    after ``first_gap`` (the 0-based position in the order of the first unlabelled item, None when every labelled
    item is in the prefix) and are not used."""

    used: int
    left_out: int
    first_gap: int | None

    @property
    def note(self) -> str | None:
        """The line the results, CLI and screens show when labels were left out (None when none was)."""
        if not self.left_out:
            return None
        later = "label" if self.left_out == 1 else "labels"
        return (f"{self.left_out} later {later} left out: item {(self.first_gap or 0) + 1} "
                "of the seeded order is not labelled yet, and the judge-assisted bound uses only the labels before "
                "the first unlabelled item (an item left unlabelled may be a hard one; label it or skip it to use "
                "the rest)")


def labelled_prefix(labelled: Sequence[bool] | np.ndarray) -> Prefix:
    """The :class:`Prefix` of a seeded order given, item by item in that order, whether it is labelled (a skip
    counts as labelled)."""
    flags = np.asarray(labelled, dtype=bool)
    if flags.ndim != 1:
        raise ValueError("labelled must be one flag per item, in the seeded order")
    gaps = np.flatnonzero(~flags)
    if gaps.size == 0:
        return Prefix(int(flags.size), 0, None)
    first = int(gaps[0])
    left_out = int(flags[first:].sum())
    return Prefix(first, left_out, first if left_out else None)


def prefix_arrays(judge: Sequence[int], human: Sequence[int | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                             Prefix]:
    """(f on all judged items, f on the usable labelled ones, Y on them, the :class:`Prefix`) from the judge's 0/1
    verdicts and the humans' (0/1, None = unlabelled), both listed in the seeded order — what
    :func:`relgate_tui.core.ppi.reliability_bound` takes."""
    if len(judge) != len(human):
        raise ValueError("judge and human must list the same items, in the seeded order")
    prefix = labelled_prefix([h is not None for h in human])
    f_all = np.asarray([int(v) for v in judge], dtype=np.int64)
    y_lab = np.asarray([int(h) for h in human[:prefix.used] if h is not None], dtype=np.int64)
    return f_all, f_all[:prefix.used].copy(), y_lab, prefix
