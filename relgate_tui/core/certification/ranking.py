"""Ranked consensus over canonical answer classes (paper 004 §4.6, eq. 4.8, Def. 4.8; SPEC §3.2).

K samples of one item are canonicalized to classes. Classes are ranked by count, descending; ties are broken
uniformly at random with a caller-supplied (seeded) ``numpy.random.Generator`` — the paper's convention, never
alphabetical (SPEC §9). The INVALID class (unparseable answers) is counted but excluded from the ranking.

Shares use the paper's empirical distribution ``P̂_K(c | x) = count(c) / K`` where **K counts every sample, INVALID
included** (``n_samples``). INVALID answers therefore lower the shares of the ranked classes: with 10 samples of
which 4 are INVALID and 6 agree, the consensus strength is 0.6, not 1.0. The same convention is used at calibration
and at deployment, so conformal validity is unaffected.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from relgate_tui.core.types import INVALID

__all__ = ["RankedClasses", "rank_classes", "rank_from_counts", "tie_rate", "leader_tie_rate"]


@dataclass(frozen=True)
class RankedClasses:
    """The ranked consensus of one item.

    ``classes[r-1]`` is the class of rank r (c_(r) in the paper) and ``counts[r-1]`` its number of samples.
    ``n_samples`` = K, all samples including ``n_invalid`` INVALID ones. ``tie_broken`` is True when two ranked
    classes had equal counts, so that the order between them was drawn at random.
    """

    classes: tuple[str, ...]
    counts: tuple[int, ...]
    n_samples: int
    n_invalid: int = 0
    tie_broken: bool = False

    def __post_init__(self) -> None:
        if len(self.classes) != len(self.counts):
            raise ValueError("classes and counts must have the same length")
        if INVALID in self.classes:
            raise ValueError("INVALID is never a ranked class")
        if len(set(self.classes)) != len(self.classes):
            raise ValueError("ranked classes must be distinct")
        if any(c <= 0 for c in self.counts) or any(a < b for a, b in zip(self.counts, self.counts[1:], strict=False)):
            raise ValueError("counts must be positive and non-increasing")
        if self.n_invalid < 0 or sum(self.counts) + self.n_invalid != self.n_samples:
            raise ValueError("n_samples must equal the sum of counts plus n_invalid")

    @property
    def n_classes(self) -> int:
        """Number of distinct non-INVALID classes observed."""
        return len(self.classes)

    @property
    def shares(self) -> tuple[float, ...]:
        """``P̂_K(c_(r)) = counts[r-1] / K`` with K = ``n_samples`` (INVALID in the denominator)."""
        k = self.n_samples
        return tuple(c / k for c in self.counts) if k else ()

    @property
    def cumulative_shares(self) -> tuple[float, ...]:
        """``Σ_{j≤r} P̂_K(c_(j))`` for r = 1..n_classes, computed as (integer cumulative count) / K so that every
        user of cumulative shares (eq. 6.2 score, eq. 6.7 sets) gets bit-identical values."""
        k = self.n_samples
        out, run = [], 0
        for c in self.counts:
            run += c
            out.append(run / k)
        return tuple(out)

    @property
    def leader(self) -> str | None:
        """The mode c_(1) (after tie-breaking), or None when no valid answer was observed."""
        return self.classes[0] if self.classes else None

    @property
    def phi(self) -> float:
        """Consensus strength φ = P̂_K(c_(1)) (Def. 4.8); 0 when no valid class was observed."""
        return self.counts[0] / self.n_samples if self.classes else 0.0

    @property
    def margin(self) -> float:
        """Consensus margin Δ = P̂_K(c_(1)) − P̂_K(c_(2)) (Def. 4.8); the second share is 0 when there is one class."""
        if not self.classes:
            return 0.0
        second = self.counts[1] if len(self.counts) > 1 else 0
        return (self.counts[0] - second) / self.n_samples

    @property
    def entropy(self) -> float:
        """Consensus entropy H = −Σ_c P̂_K(c) ln P̂_K(c) over the non-INVALID classes (natural log, paper §11.4),
        with the same shares as everywhere else (INVALID in the denominator, its own term omitted)."""
        k = self.n_samples
        return -sum((c / k) * math.log(c / k) for c in self.counts) if k else 0.0

    @property
    def leader_tied(self) -> bool:
        """True when the top two classes had equal counts (the mode itself was chosen at random)."""
        return len(self.counts) > 1 and self.counts[0] == self.counts[1]

    def rank_of(self, cls: str) -> float:
        """1-based rank of ``cls``, or ``math.inf`` when it was not observed (INVALID is never ranked)."""
        try:
            return float(self.classes.index(cls) + 1)
        except ValueError:
            return math.inf

    def count_of(self, cls: str) -> int:
        """Number of samples in class ``cls`` (INVALID included: ``count_of(INVALID) == n_invalid``)."""
        if cls == INVALID:
            return self.n_invalid
        try:
            return self.counts[self.classes.index(cls)]
        except ValueError:
            return 0


def rank_from_counts(counts: Mapping[str, int], n_invalid: int, rng: np.random.Generator) -> RankedClasses:
    """Rank classes given their counts (eq. 4.8), ties broken uniformly at random with ``rng``.

    A count stored under the INVALID key is added to ``n_invalid``; zero counts are ignored. The result depends only
    on the counts and the state of ``rng`` (never on the mapping's order): classes are first put in sorted order,
    then, only when there is a tie, a uniformly random permutation drawn from ``rng`` orders the tied classes.
    """
    if n_invalid < 0:
        raise ValueError("n_invalid must be >= 0")
    invalid = n_invalid
    items: list[tuple[str, int]] = []
    for cls, cnt in counts.items():
        cnt = int(cnt)
        if cnt < 0:
            raise ValueError(f"negative count for class {cls!r}")
        if cls == INVALID:
            invalid += cnt
        elif cnt > 0:
            items.append((cls, cnt))
    items.sort()
    values = [c for _, c in items]
    tie = len(set(values)) < len(values)
    if tie:
        priority = rng.permutation(len(items))
        order = sorted(range(len(items)), key=lambda i: (-values[i], priority[i]))
    else:
        order = sorted(range(len(items)), key=lambda i: -values[i])
    return RankedClasses(
        classes=tuple(items[i][0] for i in order),
        counts=tuple(values[i] for i in order),
        n_samples=sum(values) + invalid,
        n_invalid=invalid,
        tie_broken=tie,
    )


def rank_classes(answers: Sequence[str] | Iterable[str], rng: np.random.Generator) -> RankedClasses:
    """Count canonical answers (one per sample), set INVALID aside, rank the rest by count with random tie-breaking.

    ``n_samples`` is the number of answers (K), ``n_invalid`` the number equal to :data:`INVALID`.
    """
    return rank_from_counts(Counter(answers), 0, rng)


def tie_rate(ranked: Sequence[RankedClasses]) -> float:
    """Fraction of items whose ranking needed a random tie-break anywhere (``tie_broken``); nan for no items."""
    return sum(r.tie_broken for r in ranked) / len(ranked) if ranked else math.nan


def leader_tie_rate(ranked: Sequence[RankedClasses]) -> float:
    """Fraction of items whose mode itself was a random pick among tied classes; nan for no items."""
    return sum(r.leader_tied for r in ranked) / len(ranked) if ranked else math.nan
