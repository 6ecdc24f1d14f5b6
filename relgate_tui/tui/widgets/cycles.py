"""What both cycle viewers (the certification results' judge tab and the judge audit) show behind an edge."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.judge_section import PairCounts

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


def edge_verdicts(pairs: Iterable[Mapping[str, Any] | PairCounts], x: str, y: str) -> EdgeVerdicts | None:
    """Find {x, y} among the ``pairs`` — typed :class:`PairCounts` of a certification's judge view, or the rows of
    ``core.judge.verdicts_by_order`` (a, b, a_first/b_first = [a won, b won, no verdict]) — and orient it as x against
    y; None when the pair was not judged."""
    for p in pairs:
        a, b, a_first, b_first = ((p["a"], p["b"], p["a_first"], p["b_first"]) if isinstance(p, Mapping)
                                  else (p.a, p.b, p.a_first, p.b_first))
        if {a, b} != {x, y}:
            continue
        x_is_a = a == x
        x_row, y_row = (a_first, b_first) if x_is_a else (b_first, a_first)
        i, j = (0, 1) if x_is_a else (1, 0)
        return EdgeVerdicts((x_row[i], x_row[j]), (y_row[i], y_row[j]), x_row[2] + y_row[2])
    return None
