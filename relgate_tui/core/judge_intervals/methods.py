"""The nine methods of paper 001 by name, and their families (regression methods take z, ordinal ones softmax(z))."""

from __future__ import annotations

from collections.abc import Callable

from .base import Bounds, SplitData
from .boosted import boosted_cqr, boosted_lcp
from .cqr import asym_cqr, cqr
from .density import chr_method, r2ccp
from .lvd import lvd
from .ordinal import ordinal_aps, ordinal_rc

Method = Callable[[SplitData, float, int], Bounds]

METHODS: dict[str, Method] = {
    "cqr": cqr,
    "asym-cqr": asym_cqr,
    "chr": chr_method,
    "lvd": lvd,
    "boosted-cqr": boosted_cqr,
    "boosted-lcp": boosted_lcp,
    "r2ccp": r2ccp,
    "ordinal-aps": ordinal_aps,
    "ordinal-rc": ordinal_rc,
}
ORDINAL = frozenset({"ordinal-aps", "ordinal-rc"})
METHOD_NAMES: tuple[str, ...] = tuple(METHODS)
MIN_FIT = 8   # learned methods need at least this many points in the fit part


def family(name: str) -> str:
    return "ordinal" if name in ORDINAL else "regression"


def parse_methods(spec: str) -> tuple[str, ...]:
    """``all`` or a comma-separated list of method names (order kept, duplicates dropped)."""
    if spec.strip() in ("", "all"):
        return METHOD_NAMES
    out: list[str] = []
    for part in spec.split(","):
        name = part.strip().lower()
        if name not in METHODS:
            raise ValueError(f"unknown method {part.strip()!r} (known: {', '.join(METHOD_NAMES)})")
        if name not in out:
            out.append(name)
    return tuple(out)
