"""The scipy special functions core uses, imported on first call (issue 32 §6).

scipy costs about 0.2 s to import. Core's statistics modules sit on the import path of ``relgate certify``, but none
of them needs scipy before sampling ends, so they take these wrappers instead of ``from scipy.special import …``:
the first call imports scipy (a dictionary lookup on every later call), and ``relgate certify`` reaches its first
request without it. Each wrapper is exactly the scipy ufunc of the same name (same arguments, same result).
"""

from __future__ import annotations

from typing import Any

__all__ = ["betaincinv", "logsumexp", "ndtri"]


def betaincinv(a: Any, b: Any, y: Any) -> Any:
    """:func:`scipy.special.betaincinv`: the inverse of the regularized incomplete beta function in its last argument."""
    from scipy.special import betaincinv as f

    return f(a, b, y)


def ndtri(p: Any) -> Any:
    """:func:`scipy.special.ndtri`: the standard normal quantile."""
    from scipy.special import ndtri as f

    return f(p)






def logsumexp(a: Any, *args: Any, **kwargs: Any) -> Any:
    """:func:`scipy.special.logsumexp` (same arguments)."""
    from scipy.special import logsumexp as f

    return f(a, *args, **kwargs)
