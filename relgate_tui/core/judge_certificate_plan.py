"""The judge certificate's fixed sequence and its planner: how many labelled items make the *whole* procedure PASS.

**The sequence** (:func:`start_items`, :func:`candidate_sequence`; the test itself is in
:mod:`relgate_tui.core.judge_certificate`): candidates are the labelled items' distinct confidences, most confident
first, thinned so that each next one adds at least ``step`` = max(1, ⌈n/200⌉) labelled items (the last one always
kept), starting at the first with at least ``m`` labelled items at or above it — m = the fewest items on which an
agreement of (1 + A)/2 passes the exact test, clipped to [:data:`MIN_ITEMS`, max(:data:`MIN_ITEMS`, n/4)].

**The planner** (:func:`pass_probability`, :func:`plan_labels`) gives P(PASS) of that whole procedure — the start
rule, the thinning, the stop at the first failure and the min-coverage rule — not the power of one test. Premise
(stated in every output): the n labelled items are a random sample of the task's items with distinct confidences;
the judge agrees with the humans with probability e on each of the ⌈C n⌉ most confident of them (C = the required
coverage) and with probability e_below (default e) on the others, independently. Then with all confidences distinct
the candidates hold N₁ < N₂ < … < N_J = n items (fixed by n), K_j = the agreements among the N_j most confident is a
sum of independent Bernoulli blocks, and

    P(PASS) = P( K_j ≥ k*(N_j) for every j ≤ J* ),   J* = the first j with N_j / n ≥ C,

with k*(N) the smallest count passing the exact test at A (P(Bin(N, A) ≥ k) ≤ δ). It is computed **exactly** by a
forward recursion over the distribution of K_j (convolve with the next block's binomial, drop the mass below k*;
tails below 1e-16 are dropped, so the error is < 1e-12) — no simulation is needed. Coverage is read on the labelled
items (exact when every item is labelled; with unlabelled items the share of all items above t̂ estimates it).

:func:`plan_labels` searches n (every n up to 150, then 2% apart) for the first with P(PASS) ≥ ½ and ≥ 0.9, above
the labels already given and at most the items that can still be labelled (``cap``); it reports P(PASS) at the n it
names. ``bench/judge_certificate.py`` checks the claim against a simulation of the shipped code.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import bdtrc
from scipy.stats import binom

from relgate_tui.core.typed_json import Record

__all__ = ["MIN_ITEMS", "PLAN_METHOD", "Plan", "binomial_p_value", "start_items", "candidate_sequence",
           "pass_probability", "plan_labels"]

MIN_ITEMS = 30
PLAN_METHOD = ("P(PASS) of the whole fixed sequence (start, thinning, stop at the first failure, min-coverage rule), "
               "exact, given agreement e on the most confident C share of a random sample of labelled items")
_TAIL = 1e-16


def binomial_p_value(k: int, n: int, a: float) -> float:
    """Exact p-value of H₀: rate < a against "rate ≥ a" from k successes in n: P(Bin(n, a) ≥ k)."""
    if k <= 0:
        return 1.0
    return float(bdtrc(k - 1, n, a))


def start_items(n: int, agreement: float, confidence: float) -> int:
    """m of the module docstring: where the fixed sequence starts, in labelled items."""
    return int(max(MIN_ITEMS, min(_start_unclipped(agreement, confidence), max(MIN_ITEMS, n // 4))))


@lru_cache(maxsize=256)
def _start_unclipped(agreement: float, confidence: float) -> int:
    half = 0.5 * (1.0 + agreement)
    ns = np.arange(1, 5001)
    ks = np.floor(ns * half).astype(np.int64)
    ok = np.nonzero((ks > 0) & (bdtrc(ks - 1, ns, agreement) <= 1.0 - confidence))[0]
    return int(ns[ok[0]]) if ok.size else 5000


def candidate_sequence(c_labelled: ArrayLike, min_items: int = MIN_ITEMS) -> tuple[np.ndarray, np.ndarray]:
    """The fixed sequence (module docstring): candidate thresholds, most confident first, and N(t) for each."""
    c = np.sort(np.asarray(c_labelled, dtype=np.float64))[::-1]
    n = c.size
    if not n:
        return np.empty(0), np.empty(0, dtype=np.int64)
    values, first = np.unique(-c, return_index=True)  # distinct confidences, descending
    counts = np.r_[first[1:], n].astype(np.int64)  # items with c ≥ each distinct value
    thresholds = -values
    step = max(1, math.ceil(n / 200))
    keep: list[int] = []
    plain = counts.tolist()
    i = bisect_left(plain, min_items)  # counts increase strictly
    while i < len(plain):
        keep.append(i)
        i = bisect_left(plain, plain[i] + step, i + 1)
    if keep and keep[-1] != counts.size - 1:
        keep.append(counts.size - 1)  # the last candidate (every labelled item) is always kept
    idx = np.asarray(keep, dtype=np.int64)
    return thresholds[idx], counts[idx]


def _distinct_counts(n: int, m: int) -> np.ndarray:
    """N_j of the sequence when all n confidences are distinct (what :func:`candidate_sequence` keeps)."""
    if n < m:
        return np.empty(0, dtype=np.int64)
    step = max(1, math.ceil(n / 200))
    counts = np.arange(m, n + 1, step, dtype=np.int64)
    return counts if counts[-1] == n else np.r_[counts, n]


def _k_stars(counts: np.ndarray, agreement: float, delta: float) -> np.ndarray:
    """k*(N) for each N: the smallest k ≥ 1 with P(Bin(N, A) ≥ k) ≤ δ (the shipped test's ``bdtrc``)."""
    k = np.maximum(binom.isf(delta, counts, agreement).astype(np.int64) + 1, 1)
    for _ in range(3):  # isf and bdtrc may differ by one count at the boundary: settle on bdtrc's answer
        k = np.where(bdtrc(k - 1, counts, agreement) > delta, k + 1, k)
        lower = np.maximum(k - 1, 1)
        k = np.where((lower < k) & (bdtrc(lower - 1, counts, agreement) <= delta), lower, k)
    return k


@lru_cache(maxsize=4096)
def _block(d_top: int, d_below: int, e: float, e_below: float) -> np.ndarray:
    pmf = binom.pmf(np.arange(d_top + 1), d_top, e) if d_top else np.ones(1)
    if d_below:
        pmf = np.convolve(pmf, binom.pmf(np.arange(d_below + 1), d_below, e_below))
    return pmf


def pass_probability(n: int, agreement: float, confidence: float, expect: float, coverage: float,
                     expect_below: float | None = None) -> float:
    """P(PASS) of the whole procedure with n labelled items under the premise of the module docstring (exact)."""
    if n <= 0:
        return 0.0
    e_below = expect if expect_below is None else expect_below
    delta = 1.0 - confidence
    counts = _distinct_counts(n, start_items(n, agreement, confidence))
    if not counts.size:
        return 0.0
    reach = np.nonzero(counts / n >= coverage)[0]
    counts = counts[: int(reach[0]) + 1]
    kstar = _k_stars(counts, agreement, delta)
    top = math.ceil(coverage * n)
    lo, dist, prev = 0, np.ones(1), 0
    for k, need in zip(counts.tolist(), kstar.tolist(), strict=True):
        d_top = max(0, min(k, top) - min(prev, top))
        dist = np.convolve(dist, _block(d_top, (k - prev) - d_top, expect, e_below))
        cut = need - lo  # drop the mass below k*: the walk stopped there
        if cut > 0:
            dist = dist[cut:]
            lo = need
        keep = np.nonzero(dist > _TAIL)[0]
        if not keep.size:
            return 0.0
        dist, lo = dist[keep[0]: keep[-1] + 1], lo + int(keep[0])
        prev = k
    return float(min(1.0, dist.sum()))


@dataclass(frozen=True)
class Plan(Record):
    """Labelled items with which the whole procedure PASSes with probability ½ and 0.9 (None: not within ``limit``
    — or ``cap``, the items that can be labelled), P(PASS) at those counts, and at ``cap`` when one is given;
    ``ceiling``: P(PASS) never exceeds it once n ≥ 4 m (:func:`_ceiling`)."""

    agreement: float
    expect: float
    coverage: float
    confidence: float
    n_half: int | None
    n_ninety: int | None
    limit: int
    p_half: float | None = None
    p_ninety: float | None = None
    have: int = 0
    cap: int | None = None
    p_cap: float | None = None
    expect_below: float | None = None
    ceiling: float = 1.0
    method: str = PLAN_METHOD


def _grid(start: int, stop: int) -> list[int]:
    out, n = [], start
    while n <= stop:
        out.append(n)
        n = n + 1 if n < 150 else max(n + 1, math.ceil(n * 1.02))
    if out and out[-1] != stop and stop >= start:
        out.append(stop)
    return out


def plan_labels(agreement: float = 0.90, expect: float = 0.95, coverage: float = 0.50, confidence: float = 0.95,
                limit: int = 100_000, *, have: int = 0, cap: int | None = None,
                expect_below: float | None = None) -> Plan:
    """The planner (module docstring): the first n in (``have``, min(``cap``, ``limit``)] on the search grid with
    P(PASS) ≥ ½ and ≥ 0.9."""
    if not 0.0 < agreement < 1.0 or not 0.0 < confidence < 1.0:
        raise ValueError("agreement and confidence must be in (0, 1)")
    if not 0.0 < expect <= 1.0 or not 0.0 < coverage <= 1.0:
        raise ValueError("expect and coverage must be in (0, 1]")
    top = limit if cap is None else min(cap, limit)
    found: dict[float, tuple[int, float] | None] = {0.5: None, 0.9: None}
    ceiling = _ceiling(agreement, confidence, expect)
    if expect > agreement:
        for n in _grid(max(1, have + 1), top):
            p = pass_probability(n, agreement, confidence, expect, coverage, expect_below)
            for target in found:
                if found[target] is None and p >= target:
                    found[target] = (n, p)
            if all(found[t] is not None for t in found if t <= ceiling) and n >= 4 * MIN_ITEMS:
                break
    p_cap = None if cap is None else pass_probability(cap, agreement, confidence, expect, coverage, expect_below)
    half, ninety = found[0.5], found[0.9]
    return Plan(agreement, expect, coverage, confidence, half[0] if half else None, ninety[0] if ninety else None,
                limit, half[1] if half else None, ninety[1] if ninety else None, have, cap, p_cap, expect_below,
                ceiling)


def _ceiling(agreement: float, confidence: float, expect: float) -> float:
    """An upper bound on P(PASS) for every n ≥ 4 m: the first test, on the m most confident items (m no longer grows
    with n), must pass — P(Bin(m, e) ≥ k*(m)); the procedure may never reach a target above it."""
    m = _start_unclipped(agreement, confidence)
    k = int(_k_stars(np.asarray([m]), agreement, 1.0 - confidence)[0])
    return float(binom.sf(k - 1, m, expect))
