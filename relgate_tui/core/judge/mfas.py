"""Minimum weighted feedback arc set (MFAS) ranking repair (paper 000 §3.1 "MFAS-ILP" / "MFAS-Copeland", Table 2).

Given the weighted tournament (edge u → v with margin w_uv), a ranking (strict linear order) *reverses* the edge
u → v when it puts v above u. The MFAS ranking minimises the total reversed weight

    cost(π) = Σ_{u → v} w_uv · [π ranks v above u]

(Ailon et al. 2008; the reversed edges form a minimum feedback arc set, and removing them leaves an acyclic graph
whose topological order is π).

**Exact (CP-SAT)**, :func:`mfas_exact`: the linear-ordering formulation. One Boolean x_ij per pair i < j ("i above
j"), x_ji ≡ 1 − x_ij, with the 3-dicycle transitivity constraints for every triple i < j < k:

    0 ≤ x_ij + x_jk − x_ik ≤ 1,

which are exactly the conditions for x to encode a linear order; objective Σ_{u→v} w_uv (1 − x_uv). Solved by
OR-Tools CP-SAT with a time limit; ``optimal`` is True only when CP-SAT proves optimality. Speed-up that preserves
exactness: the problem is solved per strongly connected component (SCC) — an edge between two SCCs is never on a
cycle, so an optimal order lists the SCCs in topological order of the condensation and the optimum is the sum of
the per-SCC optima. The Copeland order is given to CP-SAT as a solution hint.

**Copeland approximation**, :func:`mfas_copeland`: order by Copeland score (ties by candidate order) and report the
weight of the edges that order reverses (an upper bound on the optimum; 0 ⇒ provably optimal).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, permutations

import numpy as np

from relgate_tui.core.judge.rankings import Ranking, copeland_scores
from relgate_tui.core.judge.tournament import Edge, Tournament

BRUTE_FORCE_MAX_N = 9


@dataclass(frozen=True)
class MfasResult:
    """An MFAS ranking. ``cost`` = total weight of ``reversed_edges`` (tournament edges the order contradicts);
    ``optimal`` = proven minimum; ``lower_bound`` = proven lower bound on the minimum (= cost when optimal);
    ``status`` = "OPTIMAL", "FEASIBLE" (time limit hit), "COPELAND" or "BRUTE_FORCE"."""

    ranking: Ranking
    cost: int
    optimal: bool
    lower_bound: int
    reversed_edges: tuple[Edge, ...]
    status: str
    solve_seconds: float


def order_cost(margins: np.ndarray, order: Sequence[int]) -> int:
    """cost(π) = Σ_{u,v} W[u, v] · [pos(v) < pos(u)] for an order given as indices, best first."""
    w = np.asarray(margins)
    pos = np.empty(len(order), dtype=np.intp)
    pos[np.asarray(order, dtype=np.intp)] = np.arange(len(order))
    return int(np.sum(w * (pos[None, :] < pos[:, None])))


def reversed_edges(tournament: Tournament, order: Sequence[str]) -> tuple[Edge, ...]:
    """Edges u → v of the tournament that ``order`` (best first) contradicts, i.e. ranks v above u."""
    _check_order(tournament, order)
    pos = {c: p for p, c in enumerate(order)}
    return tuple(e for e in tournament.edges if pos[e.loser] < pos[e.winner])


def _check_order(tournament: Tournament, order: Sequence[str]) -> None:
    if sorted(order) != sorted(tournament.candidates) or len(set(order)) != len(order):
        raise ValueError("the order must list every candidate of the tournament exactly once")


def _ranking_from_order(method: str, tournament: Tournament, order_idx: Sequence[int]) -> Ranking:
    n = tournament.n
    scores = np.empty(n)
    scores[np.asarray(order_idx, dtype=np.intp)] = np.arange(n, 0, -1, dtype=np.float64)
    c = tournament.candidates
    return Ranking(method, c, tuple(float(s) for s in scores), tuple(c[i] for i in order_idx))


def _result(method: str, t: Tournament, order_idx: Sequence[int], optimal: bool, lower: int, status: str,
            seconds: float) -> MfasResult:
    ranking = _ranking_from_order(method, t, order_idx)
    rev = reversed_edges(t, ranking.order)
    cost = sum(e.margin for e in rev)
    return MfasResult(ranking, cost, optimal, cost if optimal else lower, rev, status, seconds)


def copeland_order(tournament: Tournament) -> list[int]:
    """Indices by Copeland score descending, ties by candidate order."""
    return [int(i) for i in np.argsort(-copeland_scores(tournament), kind="stable")]


def mfas_copeland(tournament: Tournament) -> MfasResult:
    """Copeland approximation of MFAS (paper Table 2 "MFAS-Copeland")."""
    t0 = time.perf_counter()
    order = copeland_order(tournament)
    cost = order_cost(tournament.margin_matrix(), order)
    return _result("mfas_copeland", tournament, order, cost == 0, 0, "COPELAND", time.perf_counter() - t0)


def _solve_component(w: np.ndarray, nodes: list[int], hint_rank: dict[int, int], time_limit_s: float,
                     num_workers: int, seed: int) -> tuple[list[int], bool, int]:
    """CP-SAT linear-ordering MFAS on the sub-tournament ``nodes``; returns (order, optimal, lower bound)."""
    from ortools.sat.python import cp_model  # deferred: keeps `import relgate_tui.core.judge` light
    m = len(nodes)
    model = cp_model.CpModel()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    for a, b in combinations(range(m), 2):
        x[a, b] = model.new_bool_var(f"x{a}_{b}")
    for a, b, c in combinations(range(m), 3):
        s = x[a, b] + x[b, c] - x[a, c]
        model.add(s <= 1)
        model.add(s >= 0)
    terms = []
    const = 0
    for a in range(m):
        for b in range(m):
            wt = int(w[nodes[a], nodes[b]])
            if wt == 0:
                continue
            if a < b:  # edge a → b reversed iff x_ab = 0
                const += wt
                terms.append(-wt * x[a, b])
            else:  # edge a → b with b < a reversed iff b above a, i.e. x_ba = 1
                terms.append(wt * x[b, a])
    model.minimize(sum(terms) + const)
    for (a, b), var in x.items():
        model.add_hint(var, 1 if hint_rank[nodes[a]] < hint_rank[nodes[b]] else 0)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(time_limit_s, 1e-3)
    solver.parameters.num_workers = num_workers
    solver.parameters.random_seed = seed
    solver.parameters.linearization_level = 2  # put the 3-dicycle constraints into the LP relaxation
    status = solver.solve(model)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        above = np.zeros(m, dtype=np.int64)  # number of nodes each node is above
        for (a, b), var in x.items():
            if solver.value(var):
                above[a] += 1
            else:
                above[b] += 1
        local = np.argsort(-above, kind="stable")
        order = [nodes[i] for i in local]
        return order, status == cp_model.OPTIMAL, max(0, math.ceil(solver.best_objective_bound - 1e-6))
    order = sorted(nodes, key=lambda v: hint_rank[v])  # no solution in time: fall back to the hint
    return order, False, 0


def mfas_exact(tournament: Tournament, time_limit_s: float = 10.0, num_workers: int = 1, seed: int = 0,
               priority: Sequence[int] | None = None) -> MfasResult:
    """Exact weighted MFAS by CP-SAT (paper Table 2 "MFAS-ILP"), solved per strongly connected component.

    ``time_limit_s`` bounds the total solver time; if it runs out the best order found is returned with
    ``optimal=False`` and CP-SAT's proven lower bound. ``num_workers=1`` (default) makes the result deterministic
    for a given seed; more workers may return a different order of equal cost.

    ``priority`` (node indices, most preferred first; default the Copeland order) breaks ties between orders of
    equal cost: components with no verdict between them, and unrelated nodes, come in priority order, and it is the
    solver's starting hint inside a component. The cost is optimal whatever the priority."""
    if not time_limit_s > 0:
        raise ValueError("time_limit_s must be > 0")
    if num_workers < 1:
        raise ValueError("num_workers must be >= 1")
    import networkx as nx  # deferred, like OR-Tools

    t0 = time.perf_counter()
    n = tournament.n
    w = tournament.margin_matrix()
    if priority is not None and sorted(priority) != list(range(n)):
        raise ValueError(f"priority must be a permutation of the {n} node indices")
    hint = list(priority) if priority is not None else copeland_order(tournament)
    hint_rank = {v: r for r, v in enumerate(hint)}
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(zip(*np.nonzero(w), strict=True))
    cond = nx.condensation(g)
    members = {c: sorted(cond.nodes[c]["members"], key=lambda v: hint_rank[v]) for c in cond.nodes}
    comp_order = nx.lexicographical_topological_sort(cond, key=lambda c: hint_rank[members[c][0]])
    order: list[int] = []
    optimal = True
    lower = 0
    for comp in comp_order:
        nodes = members[comp]
        if len(nodes) < 3:  # no cycle possible (a 2-node SCC would need a 2-cycle)
            order += nodes
            continue
        remaining = time_limit_s - (time.perf_counter() - t0)
        sub, opt, lb = _solve_component(w, nodes, hint_rank, remaining, num_workers, seed)
        order += sub
        optimal &= opt
        lower += lb
    elapsed = time.perf_counter() - t0
    result = _result("mfas_exact", tournament, order, optimal, lower,
                     "OPTIMAL" if optimal else "FEASIBLE", elapsed)
    return result


def mfas_brute_force(tournament: Tournament) -> MfasResult:
    """Reference MFAS by enumerating all n! orders (n ≤ :data:`BRUTE_FORCE_MAX_N`); first optimal order in
    lexicographic permutation order."""
    n = tournament.n
    if n > BRUTE_FORCE_MAX_N:
        raise ValueError(f"brute-force MFAS is limited to n <= {BRUTE_FORCE_MAX_N} candidates, got {n}")
    t0 = time.perf_counter()
    w = tournament.margin_matrix()
    if n == 0:
        return _result("mfas_brute_force", tournament, [], True, 0, "BRUTE_FORCE", 0.0)
    perms = np.array(list(permutations(range(n))), dtype=np.intp)  # (P, n): perms[p, r] = node at rank r
    pos = np.empty_like(perms)
    rows = np.arange(perms.shape[0])[:, None]
    pos[rows, perms] = np.arange(n)[None, :]
    us, vs = np.nonzero(w)
    costs = ((pos[:, vs] < pos[:, us]) * w[us, vs][None, :]).sum(axis=1)
    best = int(np.argmin(costs))
    return _result("mfas_brute_force", tournament, perms[best].tolist(), True, int(costs[best]), "BRUTE_FORCE",
                   time.perf_counter() - t0)
