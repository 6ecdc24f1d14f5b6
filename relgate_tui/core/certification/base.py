"""What every certification module shares (paper 004): one item's record (:class:`ItemRecord`), validated
read-only score arrays, and M* from sorted scores — eq. 10.2's conformal quantile, the ⌈(n+1)(1−α)⌉-th smallest rank
score (+∞ when that rank exceeds n). :mod:`.certify`, :mod:`.adaptive_sets` and :mod:`.readouts` import it; it
imports none of them.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.certification.quantile import conformal_rank
from relgate_tui.core.certification.ranking import RankedClasses
from relgate_tui.core.certification.scores import acceptable_fraction, rank_score, validate_rank_score

__all__ = ["ItemRecord", "item_record", "readonly", "validated_scores", "m_star_sorted", "n_covered"]


@dataclass(frozen=True)
class ItemRecord:
    """What the results need from one item (the engine builds these from its stored samples and labels).

    ``score`` is the rank score when the item is verified (human verdict or reference), +∞ for "none acceptable",
    None when not verified. ``acceptable_fraction`` (fraction of the item's samples that are acceptable) is known
    only with references. ``n_classes`` counts observed non-INVALID classes; ``entropy`` is the consensus entropy;
    ``tie_broken`` says the ranking needed a random tie-break (for the reported tie rate, SPEC §3.2).
    ``stopped_early``: the stopping rule ended the item's sampling before K_max (None = unknown: taken as "stopped"
    when fewer than K_max samples were used, the pre-issue-11 reading; the engine always says). ``first_sample_
    acceptable``: whether the item's first sample (INVALID counts as not acceptable) is acceptable, for the unbiased
    single-sample accuracy; None when unknown (no reference or no sample).
    """

    item_id: str
    n_classes: int
    samples_used: int
    score: float | None = None
    skipped: bool = False
    acceptable_fraction: float | None = None
    entropy: float = 0.0
    tie_broken: bool = False
    stopped_early: bool | None = None
    first_sample_acceptable: bool | None = None
    cumulative_shares: tuple[float, ...] = ()

    @property
    def cp_score(self) -> float | None:
        """Cumulative-probability score (eq. 6.2) from the rank score: the share of the classes ranked at or above
        the accepted one; ∞ for "none acceptable"; None when unverified or the shares are unknown."""
        if self.score is None or not self.cumulative_shares:
            return None
        if math.isinf(self.score):
            return math.inf
        return self.cumulative_shares[int(self.score) - 1]


def item_record(
    item_id: str,
    ranked: RankedClasses,
    *,
    acceptable: Collection[str] | None = None,
    score: float | None = None,
    skipped: bool = False,
    stopped_early: bool | None = None,
    first_sample: str | None = None,
) -> ItemRecord:
    """Build an :class:`ItemRecord` from an item's ranking. With canonical ``acceptable`` classes (references) the
    rank score (eq. 10.1) and the acceptable-sample fraction are computed; an explicit ``score`` (a human verdict:
    the accepted rank, or ``NONE_SCORE``) takes precedence over the reference score. ``first_sample`` is the canonical
    class of the item's first sample (for the single-sample accuracy, with ``acceptable``)."""
    frac = None
    first_ok = None
    if acceptable is not None and first_sample is not None:
        first_ok = first_sample in acceptable
    if acceptable is not None:
        frac = acceptable_fraction(ranked, acceptable)
        if score is None:
            score = rank_score(ranked, acceptable)
    if score is not None:
        score = validate_rank_score(score)
    return ItemRecord(
        item_id=item_id,
        n_classes=ranked.n_classes,
        samples_used=ranked.n_samples,
        score=score,
        skipped=skipped,
        acceptable_fraction=frac,
        entropy=ranked.entropy,
        tie_broken=ranked.tie_broken,
        stopped_early=stopped_early,
        first_sample_acceptable=first_ok,
        cumulative_shares=tuple(ranked.cumulative_shares),
    )



def readonly(a: np.ndarray) -> np.ndarray:
    """A contiguous, read-only view of ``a`` (results are frozen: no caller can change them in place)."""
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def validated_scores(scores: ArrayLike, what: str, allow_nan: bool) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64).ravel()
    known = s[~np.isnan(s)] if allow_nan else s
    if not allow_nan and np.isnan(s).any():
        raise ValueError(f"{what}: a score is NaN (use +inf for 'no acceptable answer')")
    finite = known[np.isfinite(known)]
    if (known == -np.inf).any() or (finite < 1).any() or (finite != np.floor(finite)).any():
        raise ValueError(f"{what}: rank scores must be positive integers or +inf")
    return s


def m_star_sorted(sorted_scores: np.ndarray, alpha: float) -> tuple[int, float]:
    """(k, M*) from pre-sorted scores: the k-th smallest, +∞ when k > n (same rule as quantile.conformal_quantile)."""
    n = sorted_scores.size
    k = conformal_rank(n, alpha)
    return k, (math.inf if k > n else float(sorted_scores[k - 1]))


def n_covered(sorted_finite: np.ndarray, m_star: float) -> int:
    """Number of finite scores ≤ M* (scores +∞ are never covered by a displayed set)."""
    return int(np.searchsorted(sorted_finite, m_star, side="right"))
