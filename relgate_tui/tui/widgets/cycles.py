"""What both cycle viewers (the certification results' judge tab and the judge audit) show behind an edge."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["EdgeVerdicts", "edge_verdicts"]


@dataclass(frozen=True)
class EdgeVerdicts:
    """The verdicts on the pair {x, y} oriented as x against y: (x's wins, y's wins) with x shown first and with y
    shown first, and the repetitions without a verdict (tie or unparseable)."""

    x_first: tuple[int, int]
    y_first: tuple[int, int]
    no_verdict: int

    @property
    def total(self) -> tuple[int, int]:
        return self.x_first[0] + self.y_first[0], self.x_first[1] + self.y_first[1]


def edge_verdicts(pairs: Iterable[Mapping[str, Any]], x: str, y: str) -> EdgeVerdicts | None:
    """Find {x, y} among the ``pairs`` rows of a result document (``core.judge.verdicts_by_order``: a, b,
    a_first/b_first = [a won, b won, no verdict]) and orient it as x against y; None when the pair was not judged."""
    for p in pairs:
        if {p["a"], p["b"]} != {x, y}:
            continue
        x_is_a = p["a"] == x
        x_row, y_row = (p["a_first"], p["b_first"]) if x_is_a else (p["b_first"], p["a_first"])
        i, j = (0, 1) if x_is_a else (1, 0)
        return EdgeVerdicts((x_row[i], x_row[j]), (y_row[i], y_row[j]), x_row[2] + y_row[2])
    return None
