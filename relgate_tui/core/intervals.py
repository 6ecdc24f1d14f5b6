"""Confidence intervals used by the certification results (SPEC §3.5–3.6, paper 004 §11.1).

* :func:`clopper_pearson_lower` — the *exact* one-sided lower confidence bound of a binomial proportion, used next to
  the reliability level: ``Beta⁻¹(1 − conf; x, n − x + 1)``, and 0 when x = 0.
* :func:`clopper_pearson_interval` — the exact two-sided interval.
* :func:`wilson_interval` — the Wilson score interval the paper reports for every proportion (§11.1).
* :func:`bootstrap_ci` — the percentile bootstrap the paper uses for continuous metrics (B = 10,000, seeded).

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
from scipy.special import betaincinv, ndtri

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
