"""Nonconformity scores of one item (paper 004 §6.2, eq. 6.1, 6.2, 10.1, §11.8; SPEC §3.3).

All scores take the item's :class:`~relgate_tui.core.certification.ranking.RankedClasses` and the *canonical* acceptable classes
(reference answers go through the same canonicalizer as the samples). INVALID is never acceptable. A larger score
means the acceptable answer is harder to find in the ranked consensus. Every score is ``math.inf`` when no
acceptable class was observed among the samples — including a human verdict "none acceptable"
(:data:`NONE_SCORE`) — because no set of observed classes can contain it. Such items are kept (never dropped).

Definitions used (K = ``ranked.n_samples``, all samples incl. INVALID; P̂(c) = count(c)/K; r* = rank score):

* rank (eq. 6.1 / 10.1):   ``s = min_l rank(c^{y_l})``, the best rank over the acceptable classes;
* cumulative (eq. 6.2):    ``s_cp = Σ_{j ≤ r*} P̂(c_(j))`` ∈ (0, 1];
* LAC (§11.8):             ``s_lac = 1 − max_l P̂(c^{y_l})`` ∈ [0, 1);
* APS (§11.8):             ``s_aps = Σ_{j < r*} P̂(c_(j)) + U · P̂(c_(r*))`` with U ~ Unif(0, 1) — the randomized APS
  of Romano, Sesia & Candès (2020). The paper's printed formula sums to r* *and* adds U·P̂(c_(r*)), counting the
  r*-th share twice; we use the standard form, whose U = 1 case is exactly the cumulative score (6.2).

For LAC and APS the paper works with a closed label set, where an unobserved class has P̂ = 0 and could enter a set
at threshold 1; relgate's sets contain observed classes only, so an unobserved acceptable class scores ∞ as with
the rank score (otherwise a saturated threshold would claim coverage the displayed set does not have).
"""

from __future__ import annotations

import math
from collections.abc import Collection

import numpy as np

from relgate_tui.core.certification.ranking import RankedClasses
from relgate_tui.core.types import INVALID

__all__ = [
    "NONE_SCORE",
    "rank_score",
    "cumulative_score",
    "lac_score",
    "aps_score",
    "acceptable_fraction",
    "validate_rank_score",
]

NONE_SCORE = math.inf
"""The score of an item whose verifier (human or reference) found no acceptable class among the candidates."""


def _acceptable_ranks(ranked: RankedClasses, acceptable: Collection[str]) -> list[int]:
    if isinstance(acceptable, str):
        raise TypeError("acceptable must be a collection of class strings, not a single string")
    wanted = set(acceptable)
    wanted.discard(INVALID)
    return [r for r, c in enumerate(ranked.classes, start=1) if c in wanted]


def rank_score(ranked: RankedClasses, acceptable: Collection[str]) -> float:
    """Rank score (eq. 6.1, with several acceptable answers eq. 10.1): the smallest rank of an acceptable class, as a
    float (1.0, 2.0, ...), or ``math.inf`` when none was observed."""
    ranks = _acceptable_ranks(ranked, acceptable)
    return float(ranks[0]) if ranks else math.inf


def cumulative_score(ranked: RankedClasses, acceptable: Collection[str]) -> float:
    """Cumulative-probability score (eq. 6.2): the total share of the classes ranked at or above the best acceptable
    class, ``Σ_{j ≤ r*} P̂_K(c_(j))``; ``math.inf`` when no acceptable class was observed."""
    ranks = _acceptable_ranks(ranked, acceptable)
    if not ranks:
        return math.inf
    return ranked.cumulative_shares[ranks[0] - 1]


def lac_score(ranked: RankedClasses, acceptable: Collection[str]) -> float:
    """LAC score (§11.8): ``1 − P̂(c*)`` for the most frequent acceptable class c*; ``math.inf`` when none observed."""
    ranks = _acceptable_ranks(ranked, acceptable)
    if not ranks:
        return math.inf
    return 1.0 - ranked.counts[ranks[0] - 1] / ranked.n_samples


def aps_score(
    ranked: RankedClasses,
    acceptable: Collection[str],
    u: float | np.random.Generator,
) -> float:
    """Randomized APS score (§11.8, standard form, see the module docstring):
    ``Σ_{j < r*} P̂(c_(j)) + u · P̂(c_(r*))``; ``math.inf`` when no acceptable class was observed.

    ``u`` is the uniform draw itself (in [0, 1]) or a Generator to draw it from (always drawn, even for an
    unobserved class, so the random stream does not depend on the verdict).
    """
    if isinstance(u, np.random.Generator):
        u = float(u.random())
    if not 0.0 <= u <= 1.0:
        raise ValueError("u must be in [0, 1]")
    ranks = _acceptable_ranks(ranked, acceptable)
    if not ranks:
        return math.inf
    r = ranks[0]
    k = ranked.n_samples
    before = sum(ranked.counts[: r - 1])
    return before / k + u * ranked.counts[r - 1] / k


def acceptable_fraction(ranked: RankedClasses, acceptable: Collection[str]) -> float:
    """Fraction of the K samples whose class is acceptable (INVALID never is): the item's empirical single-sample
    accuracy, an unbiased estimate of p*(x) (paper §2). nan when there are no samples."""
    ranks = _acceptable_ranks(ranked, acceptable)
    if ranked.n_samples == 0:
        return math.nan
    return sum(ranked.counts[r - 1] for r in ranks) / ranked.n_samples


def validate_rank_score(score: float) -> float:
    """Return ``score`` as a float if it is a valid rank score (a positive integer value or +∞), else raise
    ValueError. Used where scores enter from outside (human verdicts, stored runs)."""
    s = float(score)
    if s == math.inf:
        return s
    if math.isnan(s) or s < 1.0 or s != math.floor(s):
        raise ValueError(f"a rank score must be a positive integer or infinity, got {score!r}")
    return s
