"""The special functions core's certification path uses, without importing scipy until one is needed (issue 32 §6).

scipy costs 0.1–0.2 s to import. Core's statistics modules sit on the import path of ``relgate certify``, but none
of them needs scipy before sampling ends, so they take these wrappers instead of ``from scipy.special import …``:
the first call imports scipy (a dictionary lookup on every later call), and ``relgate certify`` reaches its first
request without it. :func:`betaincinv` and :func:`logsumexp` are exactly the scipy functions of the same name;
:func:`ndtri` (the only one a run without labels needs at its end) is the standard library's, equal to scipy's
within two units in the last place, so such a run never imports scipy.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

_NORMAL = NormalDist()
_LOG2 = math.log(2.0)

__all__ = ["betaincinv", "logaddexp_at_least", "logaddexp_exact", "logsumexp", "ndtri"]


def betaincinv(a: Any, b: Any, y: Any) -> Any:
    """:func:`scipy.special.betaincinv`: the inverse of the regularized incomplete beta function in its last argument."""
    from scipy.special import betaincinv as f

    return f(a, b, y)


def ndtri(p: float) -> float:
    """The standard normal quantile Φ⁻¹(p) of a scalar ``p`` in (0, 1): :meth:`statistics.NormalDist.inv_cdf` (the
    standard library's Wichura AS 241 algorithm, within 2e-15 relative — one or two units in the last place — of
    :func:`scipy.special.ndtri` on a grid of 200,001 points in [1e-12, 1 − 1e-12]; ``tests/core/test_special.py``).
    No scipy: a run's Wilson intervals need only this, and ``relgate certify`` ends without importing scipy for it."""
    return _NORMAL.inv_cdf(p)


def logsumexp(a: Any, *args: Any, **kwargs: Any) -> Any:
    """:func:`scipy.special.logsumexp` (same arguments)."""
    from scipy.special import logsumexp as f

    return f(a, *args, **kwargs)


def logaddexp_exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``logsumexp(np.stack([a, b]), axis=0)`` bit for bit, without scipy's per-call overhead (the judge-assisted
    bound's hot loop calls it once per label). scipy's algorithm on two terms: with h = max(a, b), the terms equal to
    h are left out of the sum, s = Σ_{others} exp(x − h), divided by the count c of terms equal to h, and
    log(a ⊕ b) = log1p(s) + log(c) + h — for a ≠ b that is log1p(exp(min − max)) + max (log 1 = 0 adds nothing),
    for a = b it is log 2 + h (s = 0). Infinities need no special case: the formula gives scipy's value (−∞ and a
    finite b: log1p(0) + b = b, scipy's finite result; +∞ with anything but NaN: +∞; −∞ twice: log 2 − ∞ = −∞, what
    scipy's fallback log(e^a + e^b) gives). The result is NaN exactly when a term is; those entries get scipy's
    fallback for a non-finite result, log(e^a + e^b) by the same numpy operations, so every entry has scipy's bits,
    NaN included; ``tests/core/test_special.py`` checks it."""
    hi = np.maximum(a, b)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.where(a == b, _LOG2 + hi, np.log1p(np.exp(np.minimum(a, b) - hi)) + hi)
    odd = np.isnan(out)
    if odd.any():  # scipy's own fallback for them, log Σ exp, by the same numpy operations in the same order
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out[odd] = np.log(np.sum(np.exp(np.stack([a[odd], b[odd]])), axis=0))
    return out


def logaddexp_at_least(a: np.ndarray, b: np.ndarray, threshold: float) -> np.ndarray:
    """``logaddexp_exact(a, b) >= threshold`` elementwise, computing the sum only where the larger term h decides
    nothing (the judge-assisted bound's hot loop needs only this comparison). The result is h + c with c ∈ [0, 1)
    (c = log 2, or log1p(e^{min − h}) ∈ [0, log 2]) and floating-point addition is monotone, so h ≥ threshold means
    the result is too, and h + 1 < threshold means it is not; NaN in either term (a NaN result) is never ≥."""
    hi = np.maximum(a, b)
    out = hi >= threshold
    undecided = ~out & (hi + 1.0 >= threshold)
    if undecided.any():
        out[undecided] = logaddexp_exact(a[undecided], b[undecided]) >= threshold
    return out
