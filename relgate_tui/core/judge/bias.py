"""Position bias of a pairwise judge (paper 000 §2 cites position bias, Wang et al. 2023; issue 4 scope 1).

Two figures, over the *valid* verdicts (those naming a winner) of all inputs:

* **First-position share** = #{valid verdicts won by the candidate shown first} / #{valid verdicts}. An unbiased
  judge asked about both orders equally often has expected share 1/2; a two-sided exact binomial test against 1/2
  is reported as ``first_share_pvalue``.
* **Order-flip share.** For one input and one unordered pair {a, b}, split its valid verdicts by presentation
  order: the "a first" verdicts and the "b first" verdicts. Each order has a *majority winner* (the candidate that
  won strictly more of that order's valid verdicts; none on an even split). The pair is *decisive in both orders*
  when both majorities exist, and it **flips** when they differ, i.e. the judge prefers whichever candidate sits in
  one fixed position. flip share = #flipped pairs / #pairs decisive in both orders. Flips are further split by
  the position that wins (``flips_to_first``: the first-shown candidate wins in both orders; ``flips_to_second``).
  Pairs asked in only one order, or with an even split in an order, are counted in ``n_pairs_undecided``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from relgate_tui.core.judge.tournament import PairwiseVerdict


@dataclass(frozen=True)
class PositionBias:
    """Position-bias figures (module docstring). Shares are NaN when their denominator is 0."""

    n_valid: int
    n_first_wins: int
    first_share: float
    first_share_pvalue: float
    n_pairs: int
    n_pairs_decisive_both_orders: int
    n_pairs_undecided: int
    n_pairs_flipped: int
    flips_to_first: int
    flips_to_second: int
    flip_share: float


def _majority(wins: dict[str, int], a: str, b: str) -> str | None:
    wa, wb = wins.get(a, 0), wins.get(b, 0)
    return a if wa > wb else b if wb > wa else None


def position_bias(verdicts_per_input: Iterable[Sequence[PairwiseVerdict]]) -> PositionBias:
    """Position-bias figures over several inputs; each element holds one input's verdicts (pairs are per input)."""
    n_valid = n_first = 0
    n_pairs = decisive = undecided = flipped = to_first = to_second = 0
    for verdicts in verdicts_per_input:
        # (a, b) with a < b lexicographically -> {first-shown candidate -> {winner -> count}}
        by_pair: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
        for v in verdicts:
            key = (v.first, v.second) if v.first < v.second else (v.second, v.first)
            orders = by_pair.setdefault(key, {})
            if not v.is_valid:
                continue
            n_valid += 1
            n_first += v.winner == v.first
            wins = orders.setdefault(v.first, {})
            wins[v.winner] = wins.get(v.winner, 0) + 1
        for (a, b), orders in by_pair.items():
            n_pairs += 1
            maj_a_first = _majority(orders.get(a, {}), a, b)
            maj_b_first = _majority(orders.get(b, {}), a, b)
            if maj_a_first is None or maj_b_first is None:
                undecided += 1
                continue
            decisive += 1
            if maj_a_first != maj_b_first:
                flipped += 1
                if maj_a_first == a:  # a wins when first, b wins when first
                    to_first += 1
                else:
                    to_second += 1
    from scipy.stats import binomtest  # deferred: scipy.stats costs ~1 s to import (TUI cold start, SPEC §8)

    pvalue = binomtest(n_first, n_valid, 0.5).pvalue if n_valid else math.nan
    return PositionBias(
        n_valid=n_valid,
        n_first_wins=n_first,
        first_share=n_first / n_valid if n_valid else math.nan,
        first_share_pvalue=float(pvalue),
        n_pairs=n_pairs,
        n_pairs_decisive_both_orders=decisive,
        n_pairs_undecided=undecided,
        n_pairs_flipped=flipped,
        flips_to_first=to_first,
        flips_to_second=to_second,
        flip_share=flipped / decisive if decisive else math.nan,
    )


POSITION_ONLY_SHARE = 0.95
"""A judge whose first-shown (or second-shown) win share reaches this is flagged ``position_only``."""


@dataclass(frozen=True)
class PositionConsistency:
    """Position consistency of a pairwise judge from verdicts asked in *both* presentation orders (issue 11 §2),
    reported separately from ρ (which uses the randomised protocol of :mod:`relgate_tui.core.judge.protocol`).

    * ``consistency`` = 1 − flip share: the share of pairs (decisive in both orders) whose majority winner is the
      same whichever candidate is shown first.
    * ``first_share`` and its two-sided exact binomial p-value against 1/2 (see :class:`PositionBias`).
    * ``position_share`` = max(first share, 1 − first share), the share of valid verdicts won by the judge's
      favoured position. With each pair asked equally often in both orders a content-only judge scores 1/2, and at
      least 2·position_share − 1 of the verdicts (``min_share_decided_by_position``) must be decided by position
      alone: a content-driven verdict agrees with the favoured slot in exactly one of the two orders.
    * ``flag``: ``"position_only"`` when position_share ≥ ``position_only_share`` (default 0.95: ≥ 90% of verdicts
      decided by position) and the binomial test rejects 1/2 at ``alpha`` — e.g. a judge that always picks the
      first-shown candidate; ``"position_biased"`` when the test rejects but the share is lower;
      ``"no_bias_detected"`` when it does not reject; ``"insufficient"`` when there are too few valid verdicts for
      the test to reject at all (n valid verdicts with 2·2⁻ⁿ ≥ α, i.e. n < 6 at α = 0.05: even a judge that always
      picks the same position could not be told from a fair one). ``favoured`` is "first", "second" or "" (no
      rejection).
    """

    bias: PositionBias
    consistency: float
    position_share: float
    min_share_decided_by_position: float
    favoured: str
    flag: str
    alpha: float
    position_only_share: float


def position_consistency(verdicts_per_input: Iterable[Sequence[PairwiseVerdict]], *, alpha: float = 0.05,
                         position_only_share: float = POSITION_ONLY_SHARE) -> PositionConsistency:
    """Position consistency over several inputs (class docstring); each element holds one input's verdicts, asked
    in both orders (e.g. k per order). Verdicts of the randomised protocol may be pooled in too: the first-shown
    share stays unbiased because the presentation order is a fair coin, but pairs seen in one order only are
    counted as undecided for the flip share."""
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie in (0, 1)")
    if not 0.5 < position_only_share <= 1:
        raise ValueError("position_only_share must lie in (0.5, 1]")
    pb = position_bias(verdicts_per_input)
    share = max(pb.first_share, 1.0 - pb.first_share) if pb.n_valid else math.nan
    rejects = pb.first_share_pvalue < alpha
    favoured = ("first" if pb.first_share > 0.5 else "second") if rejects else ""
    if 2.0 * 0.5 ** pb.n_valid >= alpha:  # the most extreme outcome's two-sided p-value: no power at all
        flag = "insufficient"
    elif rejects:
        flag = "position_only" if share >= position_only_share else "position_biased"
    else:
        flag = "no_bias_detected"
    return PositionConsistency(
        bias=pb,
        consistency=1.0 - pb.flip_share if pb.n_pairs_decisive_both_orders else math.nan,
        position_share=share,
        min_share_decided_by_position=2.0 * share - 1.0 if pb.n_valid else math.nan,
        favoured=favoured,
        flag=flag,
        alpha=alpha,
        position_only_share=position_only_share,
    )
