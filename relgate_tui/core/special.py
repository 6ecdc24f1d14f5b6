"""The special functions core's certification path uses, without importing scipy until one is needed (issue 32 §6).

scipy costs 0.1–0.2 s to import. Core's statistics modules sit on the import path of ``relgate certify``, but none
of them needs scipy before sampling ends, so they take these wrappers instead of ``from scipy.special import …``:
the first call imports scipy (a dictionary lookup on every later call), and ``relgate certify`` reaches its first
request without it. :func:`betaincinv` and :func:`logsumexp` are exactly the scipy functions of the same name;
:func:`ndtri` (the only one a run without labels needs at its end) is the standard library's, equal to scipy's
within two units in the last place, so such a run never imports scipy.
"""

from __future__ import annotations

from statistics import NormalDist
from typing import Any

_NORMAL = NormalDist()

__all__ = ["betaincinv", "logsumexp", "ndtri"]


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
