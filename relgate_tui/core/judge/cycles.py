"""Directed 3-cycles (transitivity violations) per input and their aggregate (paper 000 §3.1, eq. 1, Table 1).

A transitivity violation is a directed 3-cycle s_i → s_j → s_k → s_i in the input's tournament. The per-input
violation rate is paper eq. (1):

    ρ(x) = #directed 3-cycles in G / C(n, 3).

Aggregates (paper Table 1): mean ρ over inputs, the share of inputs with ρ(x) > 0 (at least one cycle), max ρ and
median ρ. Inputs with fewer than 3 candidates have no triples (C(n, 3) = 0); their ρ is reported as 0.0 with
``n_triples = 0`` and they are left out of the aggregate (``n_inputs_with_triples`` says how many remain).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from relgate_tui.core.judge.tournament import Tournament


@dataclass(frozen=True)
class CycleReport:
    """3-cycles of one input. Each cycle (a, b, c) means a → b → c → a, rotated so that ``a`` comes first in the
    tournament's candidate order; cycles are listed in lexicographic order of candidate indices."""

    n_candidates: int
    n_triples: int
    cycles: tuple[tuple[str, str, str], ...]
    rho: float

    @property
    def n_cycles(self) -> int:
        return len(self.cycles)


@dataclass(frozen=True)
class CycleSummary:
    """Paper Table 1 over the inputs that have ≥ 3 candidates. ``pooled_rho`` = Σ cycles / Σ C(n, 3) (equals
    ``mean_rho`` when every input has the same n). All rates are NaN when no input has ≥ 3 candidates."""

    n_inputs: int
    n_inputs_with_triples: int
    mean_rho: float
    share_inputs_with_cycle: float
    max_rho: float
    median_rho: float
    pooled_rho: float


def three_cycles_from_adjacency(adjacency: np.ndarray) -> list[tuple[int, int, int]]:
    """Index triples (i, j, k), i the smallest index, with edges i → j → k → i, for a boolean adjacency matrix
    (A[i, j] = edge i → j; A and Aᵀ never both True). Vectorised over all C(n, 3) triples."""
    a = np.asarray(adjacency, dtype=bool)
    n = a.shape[0]
    if n < 3:
        return []
    t = np.array(list(combinations(range(n), 3)), dtype=np.intp)
    i, j, k = t[:, 0], t[:, 1], t[:, 2]
    forward = a[i, j] & a[j, k] & a[k, i]  # i → j → k → i
    backward = a[i, k] & a[k, j] & a[j, i]  # i → k → j → i
    out = [(int(x), int(y), int(z)) for x, y, z in t[forward]]
    out += [(int(x), int(z), int(y)) for x, y, z in t[backward]]
    out.sort()
    return out


def cycle_report(tournament: Tournament) -> CycleReport:
    """Enumerate the directed 3-cycles of one input and its violation rate ρ(x) (paper eq. 1)."""
    n = tournament.n
    triples = math.comb(n, 3)
    idx_cycles = three_cycles_from_adjacency(tournament.adjacency())
    c = tournament.candidates
    cycles = tuple((c[i], c[j], c[k]) for i, j, k in idx_cycles)
    rho = len(cycles) / triples if triples else 0.0
    return CycleReport(n_candidates=n, n_triples=triples, cycles=cycles, rho=rho)


def summarize_cycles(reports: Iterable[CycleReport]) -> CycleSummary:
    """Aggregate per-input reports into paper Table 1 (mean ρ, % inputs with ≥ 1 cycle, max ρ, median ρ)."""
    reports = list(reports)
    used = [r for r in reports if r.n_triples > 0]
    if not used:
        nan = math.nan
        return CycleSummary(len(reports), 0, nan, nan, nan, nan, nan)
    rho = np.array([r.rho for r in used], dtype=np.float64)
    return CycleSummary(
        n_inputs=len(reports),
        n_inputs_with_triples=len(used),
        mean_rho=float(rho.mean()),
        share_inputs_with_cycle=float(np.mean([r.n_cycles > 0 for r in used])),
        max_rho=float(rho.max()),
        median_rho=float(np.median(rho)),
        pooled_rho=sum(r.n_cycles for r in used) / sum(r.n_triples for r in used),
    )
