"""How the TUI writes its figures: percentages, M*, proportions with their intervals, conformal scores ("—" for an
undefined value, "∞" for an infinite one, "·" for a score not verified yet) — one place, so every screen writes a
figure the same way."""

from __future__ import annotations

import math

__all__ = ["fmt_pct", "fmt_m_star", "fmt_prop", "fmt_score"]


def fmt_pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}%}"


def fmt_m_star(m: float) -> str:
    return "∞" if math.isinf(m) else str(int(m))


def fmt_prop(p) -> str:  # noqa: ANN001 - core Proportion
    if p is None:
        return "—"
    return f"{p.estimate:.1%} [{p.lower:.1%}, {p.upper:.1%}]"


def fmt_score(s: float | None) -> str:
    if s is None:
        return "·"
    return "∞" if math.isinf(s) else str(int(s))
