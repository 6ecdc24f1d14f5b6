"""Confidence intervals used by the certification results (SPEC §3.5–3.6, paper 004 §11.1).

* :func:`clopper_pearson_lower` — the *exact* one-sided lower confidence bound of a binomial proportion, used next to
  the reliability level: ``Beta⁻¹(1 − conf; x, n − x + 1)``, and 0 when x = 0.
* :func:`clopper_pearson_interval` — the exact two-sided interval.
* :func:`wilson_interval` — the Wilson score interval the paper reports for every proportion (§11.1).
* :func:`bootstrap_ci` — the percentile bootstrap the paper uses for continuous metrics (B = 10,000, seeded).
* :func:`confidence_sequence` — an *anytime-valid* interval for a proportion (Robbins' beta-binomial mixture), for a
  labeller who watches the bound and stops when it clears a gate (issue 11 §4).

The beta quantile is evaluated with :func:`scipy.special.betaincinv` (a plain ufunc, microseconds per call) instead
of ``scipy.stats.beta.ppf`` so that results can be recomputed interactively (SPEC §8).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.special import betaincinv, ndtri

__all__ = [
    "Interval",
    "Proportion",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "clopper_pearson_interval",
    "wilson_interval",
    "wilson_proportion",
    "bootstrap_ci",
    "bootstrap_distribution",
    "confidence_sequence",
    "confidence_sequence_end",
    "CS_PRIOR",
]


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval ``[lower, upper]`` at level ``confidence``."""

    estimate: float
    lower: float
    upper: float
    confidence: float


@dataclass(frozen=True)
class Proportion(Interval):
    """A proportion ``successes / n`` with its (Wilson) interval. ``successes`` may be fractional (see
    :func:`wilson_proportion`). ``estimate`` is ``nan`` and the interval ``[0, 1]`` when ``n == 0``."""

    successes: float
    n: int


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def _check_count(successes: float, n: int, *, integer: bool) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if integer and (isinstance(successes, bool) or not isinstance(successes, (int, np.integer))):
        raise ValueError(f"successes must be an integer, got {successes!r}")
    if not (0 <= successes <= n):
        raise ValueError(f"successes must be in [0, n] = [0, {n}], got {successes!r}")


@lru_cache(maxsize=64)
def _z_two_sided(confidence: float) -> float:
    """Standard-normal quantile z with P(|Z| ≤ z) = confidence."""
    return float(ndtri(1.0 - (1.0 - confidence) / 2.0))


def clopper_pearson_lower(successes: int, n: int, confidence: float = 0.95) -> float:
    """Exact one-sided lower confidence bound for a binomial proportion (Clopper–Pearson):

    ``L = Beta⁻¹(1 − confidence; x, n − x + 1)`` for x ≥ 1 and ``L = 0`` for x = 0, so that
    ``P_p(L(X) ≤ p) ≥ confidence`` for every p. With n = 0 there is no information and the bound is 0.

    Worked example (SPEC issue 2): ``clopper_pearson_lower(45, 50) = Beta⁻¹(0.05; 45, 6) ≈ 0.8012``.
    """
    _check_confidence(confidence)
    _check_count(successes, n, integer=True)
    if successes == 0:
        return 0.0
    return float(betaincinv(successes, n - successes + 1, 1.0 - confidence))


def clopper_pearson_upper(successes: int, n: int, confidence: float = 0.95) -> float:
    """Exact one-sided upper bound: ``Beta⁻¹(confidence; x + 1, n − x)`` for x < n, and 1 for x = n."""
    _check_confidence(confidence)
    _check_count(successes, n, integer=True)
    if successes == n:
        return 1.0
    return float(betaincinv(successes + 1, n - successes, confidence))


def clopper_pearson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided interval: each side is the one-sided bound at level ``1 − (1 − confidence)/2``."""
    _check_confidence(confidence)
    one_sided = 1.0 - (1.0 - confidence) / 2.0
    return clopper_pearson_lower(successes, n, one_sided), clopper_pearson_upper(successes, n, one_sided)


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval (two-sided) for a proportion p̂ = x/n:

    ``(p̂ + z²/2n ± z·sqrt(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)`` with z the two-sided normal quantile.

    ``successes`` may be fractional (e.g. a sum of per-item fractions in [0, 1]); since any [0, 1]-valued variable
    with mean μ has variance ≤ μ(1−μ), the interval is then conservative relative to a Bernoulli count.
    ``n = 0`` gives the uninformative ``(0, 1)``.
    """
    _check_confidence(confidence)
    _check_count(successes, n, integer=False)
    if n == 0:
        return 0.0, 1.0
    z = _z_two_sided(confidence)
    p = successes / n
    z2n = z * z / n
    denom = 1.0 + z2n
    centre = (p + z2n / 2.0) / denom
    half = z * math.sqrt(max(p * (1.0 - p), 0.0) / n + z2n / (4.0 * n)) / denom
    lower = 0.0 if successes == 0 else max(0.0, centre - half)  # exact endpoints at x = 0 and x = n
    upper = 1.0 if successes == n else min(1.0, centre + half)
    return lower, upper


def wilson_proportion(successes: float, n: int, confidence: float = 0.95) -> Proportion:
    """``successes / n`` with its Wilson interval, as a :class:`Proportion`."""
    lower, upper = wilson_interval(successes, n, confidence)
    estimate = successes / n if n else math.nan
    return Proportion(float(estimate), lower, upper, confidence, float(successes), int(n))


_BOOT_CHUNK_ELEMENTS = 4_000_000  # resampled values held in memory at once by the general path (~32 MB)
_MULTINOMIAL_MAX_DISTINCT = 256  # use the exact multinomial shortcut for the mean below this many distinct values


def bootstrap_distribution(
    values: ArrayLike,
    statistic: Callable[..., np.ndarray] = np.mean,
    n_boot: int = 10_000,
    seed: int = 0,
) -> np.ndarray:
    """The ``n_boot`` bootstrap replicates of ``statistic`` (i.i.d. resampling of ``values`` with replacement).

    ``statistic`` must accept ``axis=1`` on a 2-D array (numpy reductions do). Vectorised: replicates are drawn in
    chunks of rows. For the mean of data with few distinct values (set sizes, samples used) an exactly equivalent
    shortcut is used: the resampled counts of the distinct values are Multinomial(n, empirical frequencies), so each
    replicate costs O(#distinct) instead of O(n).
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        raise ValueError("cannot bootstrap an empty sample")
    if n_boot < 1:
        raise ValueError("n_boot must be >= 1")
    rng = np.random.default_rng(seed)
    n = x.size
    if statistic is np.mean:
        distinct, freq = np.unique(x, return_counts=True)
        if distinct.size <= _MULTINOMIAL_MAX_DISTINCT and np.all(np.isfinite(distinct)):
            counts = rng.multinomial(n, freq / n, size=n_boot)
            return counts @ distinct / n
    rows = max(1, _BOOT_CHUNK_ELEMENTS // n)
    out = np.empty(n_boot, dtype=np.float64)
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = statistic(x[idx], axis=1)
    return out


def bootstrap_ci(
    values: ArrayLike,
    statistic: Callable[..., np.ndarray] = np.mean,
    n_boot: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval: the ``(1−conf)/2`` and ``(1+conf)/2`` quantiles of the bootstrap replicates of
    ``statistic`` (paper 004 §11.1: B = 10,000 resamples). Seeded, so the same input gives the same interval."""
    _check_confidence(confidence)
    reps = bootstrap_distribution(values, statistic, n_boot, seed)
    lo, hi = np.quantile(reps, [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0])
    return float(lo), float(hi)


CS_PRIOR: tuple[float, float] = (18.0, 2.0)
"""Beta(a, b) mixing prior of :func:`confidence_sequence` (mean 0.9: tightest around the usual gates 0.8–0.95)."""


def _cs_log_mixture_at(log_b_ratio: np.ndarray, successes: np.ndarray, failures: np.ndarray,
                       p: np.ndarray) -> np.ndarray:
    """log M_n(p) = log B(a + S, b + n − S) − log B(a, b) − S log p − (n − S) log(1 − p), the first two terms
    (``log_b_ratio``, which do not depend on p) given: the bisection of :func:`confidence_sequence_end` evaluates
    them once, not once per halving (the same operations in the same order, so the same bits). Call it under
    ``np.errstate(divide="ignore", invalid="ignore")`` (log 0 at p = 0)."""
    return log_b_ratio - successes * np.log(p) - failures * np.log1p(-p)


def confidence_sequence(
    successes: ArrayLike, n: ArrayLike, confidence: float = 0.95, prior: tuple[float, float] = CS_PRIOR
) -> tuple[np.ndarray | float, np.ndarray | float]:
    r"""Anytime-valid confidence interval ``(lower, upper)`` for a Bernoulli proportion after ``successes`` of ``n``
    (vectorised; scalars in, floats out).

    **Construction** (Robbins 1970; Howard, Ramdas, McAuliffe & Sekhon 2021, beta-binomial mixture). For a fixed
    p the mixture likelihood ratio

    .. math:: M_n(p) = \int_0^1 \frac{\theta^{S_n} (1-\theta)^{n-S_n}}{p^{S_n} (1-p)^{n-S_n}}\,
              \mathrm{Beta}(d\theta; a, b) = \frac{B(a + S_n,\ b + n - S_n)}{B(a, b)\, p^{S_n} (1-p)^{n-S_n}}

    is a non-negative martingale with M_0 = 1 under i.i.d. Bernoulli(p) labels, so by Ville's inequality
    P_p(∃ n: M_n(p) ≥ 1/ε) ≤ ε with ε = 1 − confidence. The interval is C_n = {p : M_n(p) < 1/ε}.

    **Guarantee.** P(the true p lies in C_n for every n = 1, 2, … simultaneously) ≥ confidence. So a labeller may
    look after every label and stop whenever they like — in particular as soon as ``lower`` clears a gate — and
    P(lower > p at the time they stop) ≤ 1 − confidence. (A fixed-n bound such as Clopper–Pearson, watched the
    same way, passes a model exactly at a 0.90 gate 11.5% of the time at 95%; issue 11 §4.)

    C_n is an interval because log M_n(p) is convex in p with its minimum at p̂ = S/n, where M_n(p̂) ≤ 1 < 1/ε (the
    likelihood is largest at p̂), so the endpoints are found by bisection on [0, p̂] and [p̂, 1] (48 halvings,
    rounded outward; :func:`confidence_sequence_end` computes one end). The Beta(18, 2) prior is a tuning choice (any prior is valid): it is tightest near 0.9.
    """
    lower = confidence_sequence_end(successes, n, confidence, prior, "lower")
    upper = confidence_sequence_end(successes, n, confidence, prior, "upper")
    if np.ndim(lower) == 0:
        return float(lower), float(upper)
    return lower, upper


def confidence_sequence_end(
    successes: ArrayLike, n: ArrayLike, confidence: float = 0.95, prior: tuple[float, float] = CS_PRIOR,
    end: str = "lower",
) -> np.ndarray | float:
    """One end ("lower" or "upper") of :func:`confidence_sequence` (half the work when only one is needed)."""
    _check_confidence(confidence)
    a, b = (float(prior[0]), float(prior[1]))
    if not (a > 0 and b > 0):
        raise ValueError(f"the prior's parameters must be positive, got {prior!r}")
    if end not in ("lower", "upper"):
        raise ValueError(f"end must be 'lower' or 'upper', got {end!r}")
    x, m = np.broadcast_arrays(np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64))
    if (m < 0).any() or (x < 0).any() or (x > m).any() or (x != np.floor(x)).any() or (m != np.floor(m)).any():
        raise ValueError("successes and n must be integers with 0 <= successes <= n")
    threshold = math.log(1.0 / (1.0 - confidence))
    p_hat = np.where(m > 0, x / np.maximum(m, 1.0), 0.5)
    from scipy.special import betaln

    with np.errstate(divide="ignore", invalid="ignore"):
        log_b_ratio, failures = betaln(a + x, b + m - x) - betaln(a, b), m - x
        if end == "lower":  # p below the end is rejected: bisect on [0, p_hat], return the rejected side (outward)
            lo, hi = np.zeros_like(p_hat), p_hat.copy()
            for _ in range(48):
                mid = (lo + hi) / 2.0
                reject = _cs_log_mixture_at(log_b_ratio, x, failures, mid) >= threshold
                lo, hi = np.where(reject, mid, lo), np.where(reject, hi, mid)
            result = np.where((x == 0) | (m == 0), 0.0, lo)
        else:
            lo, hi = p_hat.copy(), np.ones_like(p_hat)
            for _ in range(48):
                mid = (lo + hi) / 2.0
                reject = _cs_log_mixture_at(log_b_ratio, x, failures, mid) >= threshold
                lo, hi = np.where(reject, lo, mid), np.where(reject, mid, hi)
            result = np.where((x == m) | (m == 0), 1.0, hi)
    return float(result) if result.ndim == 0 else result
