"""Exact weighted MFAS by CP-SAT and the Copeland approximation (paper 000 §3.1, Table 2)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from relgate_tui.core.judge import (
    Edge,
    PairwiseVerdict,
    build_tournament,
    mfas_brute_force,
    mfas_copeland,
    mfas_exact,
    order_cost,
    reversed_edges,
)
from tests.core.test_judge_tournament import verdicts_for


def random_weighted_tournament(rng: np.random.Generator, n: int, p_tie: float = 0.15, max_margin: int = 6):
    names = [f"c{i}" for i in range(n)]
    edges = []
    ties = []
    for i, j in combinations(range(n), 2):
        if rng.random() < p_tie:
            ties += [PairwiseVerdict(names[i], names[j], names[i]), PairwiseVerdict(names[j], names[i], names[i])]
            ties += [PairwiseVerdict(names[i], names[j], names[j])] * 2
            continue
        w, l = (i, j) if rng.random() < 0.5 else (j, i)
        edges.append((names[w], names[l], int(rng.integers(1, max_margin + 1))))
    return build_tournament(verdicts_for(edges) + ties, names)


def dp_mfas_cost(w: np.ndarray) -> int:
    """Independent exact reference: dynamic programme over subsets. best[S] = min cost of ordering S as the top
    |S| ranks; appending v below S reverses every edge v → u with u ∈ S."""
    n = w.shape[0]
    best = [0] + [None] * ((1 << n) - 1)
    for s in range(1, 1 << n):
        members = [u for u in range(n) if s >> u & 1]
        best[s] = min(best[s & ~(1 << v)] + sum(int(w[v, u]) for u in members if u != v) for v in members)
    return best[(1 << n) - 1]


def _check_consistent(t, res):
    order_idx = [t.candidates.index(c) for c in res.ranking.order]
    assert sorted(res.ranking.order) == sorted(t.candidates)
    assert res.cost == order_cost(t.margin_matrix(), order_idx) == sum(e.margin for e in res.reversed_edges)
    assert res.reversed_edges == reversed_edges(t, res.ranking.order)
    assert res.lower_bound <= res.cost
    if res.optimal:
        assert res.lower_bound == res.cost


def test_weighted_triangle_2_1_1_costs_one_and_reverses_a_weight_one_edge():
    t = build_tournament(verdicts_for([("a", "b", 2), ("b", "c", 1), ("c", "a", 1)]))
    for res in (mfas_exact(t), mfas_brute_force(t)):
        assert res.cost == 1 and res.optimal
        assert len(res.reversed_edges) == 1
        (e,) = res.reversed_edges
        assert e.margin == 1 and e in {Edge("b", "c", 1), Edge("c", "a", 1)}
        # the heavy edge a → b is kept
        assert res.ranking.order.index("a") < res.ranking.order.index("b")
        _check_consistent(t, res)


def test_transitive_tournament_costs_zero():
    rng = np.random.default_rng(1)
    order = [f"s{i}" for i in rng.permutation(9)]
    t = build_tournament(verdicts_for([(order[i], order[j], int(rng.integers(1, 5)))
                                       for i, j in combinations(range(9), 2)]), sorted(order))
    for res in (mfas_exact(t), mfas_copeland(t)):
        assert res.cost == 0 and res.optimal and res.reversed_edges == ()
        assert res.ranking.order == tuple(order)


def test_cp_sat_matches_brute_force_on_250_random_weighted_tournaments():
    rng = np.random.default_rng(2024)
    nontrivial = 0
    for _ in range(250):
        n = int(rng.integers(3, 8))
        t = random_weighted_tournament(rng, n)
        exact = mfas_exact(t, num_workers=1)
        brute = mfas_brute_force(t)
        assert exact.optimal and exact.status == "OPTIMAL"
        assert exact.cost == brute.cost
        _check_consistent(t, exact)
        approx = mfas_copeland(t)
        assert approx.cost >= exact.cost
        _check_consistent(t, approx)
        nontrivial += exact.cost > 0
    assert nontrivial > 150  # the sample is mostly cyclic, so the agreement is not about zeros


def test_cp_sat_matches_subset_dp_for_larger_tournaments():
    """n = 9..12, beyond brute force: exercises the per-SCC decomposition (sparse ties ⇒ several components)."""
    rng = np.random.default_rng(7)
    for k in range(12):
        n = 9 + k % 4
        t = random_weighted_tournament(rng, n, p_tie=0.1 + 0.05 * (k % 3))
        exact = mfas_exact(t)
        assert exact.optimal
        assert exact.cost == dp_mfas_cost(t.margin_matrix())
        _check_consistent(t, exact)


def test_components_are_ordered_by_the_condensation():
    """Two cyclic triangles, every member of the first beating every member of the second: cost 1 + 1, and the
    whole first triangle is ranked above the second."""
    top, bottom = ["a", "b", "c"], ["x", "y", "z"]
    edges = [("a", "b", 1), ("b", "c", 1), ("c", "a", 1), ("x", "y", 1), ("y", "z", 1), ("z", "x", 1)]
    edges += [(u, v, 1) for u in top for v in bottom]
    t = build_tournament(verdicts_for(edges), ["x", "y", "z", "a", "b", "c"])
    res = mfas_exact(t)
    assert res.cost == 2 and res.optimal
    assert set(res.ranking.order[:3]) == set(top)


def test_priority_breaks_ties_between_equal_cost_orders():
    """One verdict b → a among six candidates: every order with b above a costs 0. The priority (here the
    candidates' given order) decides the rest, so a follows b instead of sinking to the bottom as the Copeland hint
    would put it."""
    t = build_tournament(verdicts_for([("b", "a", 2)]), ["a", "b", "c", "d", "e", "f"])
    assert mfas_exact(t).ranking.order[-1] == "a"  # Copeland hint: a has the worst score
    res = mfas_exact(t, priority=range(6))
    assert res.cost == 0 and list(res.ranking.order) == ["b", "a", "c", "d", "e", "f"]
    rng = np.random.default_rng(11)
    for _ in range(30):  # the cost never depends on the priority
        t = random_weighted_tournament(rng, 6)
        assert mfas_exact(t, priority=rng.permutation(6).tolist()).cost == mfas_exact(t).cost
    with pytest.raises(ValueError, match="permutation"):
        mfas_exact(t, priority=[0, 0, 1, 2, 3, 4])


def test_time_limited_large_instance_reports_honestly():
    rng = np.random.default_rng(3)
    t = random_weighted_tournament(rng, 30, p_tie=0.0)
    res = mfas_exact(t, time_limit_s=0.05)
    _check_consistent(t, res)
    assert res.status in {"OPTIMAL", "FEASIBLE"} and res.optimal == (res.status == "OPTIMAL")
    assert res.cost <= mfas_copeland(t).cost  # never worse than the hint it starts from


def test_argument_checks():
    t = build_tournament(verdicts_for([("a", "b", 1)]))
    with pytest.raises(ValueError, match="time_limit_s"):
        mfas_exact(t, time_limit_s=0)
    with pytest.raises(ValueError, match="num_workers"):
        mfas_exact(t, num_workers=0)
    with pytest.raises(ValueError, match="every candidate"):
        reversed_edges(t, ["a"])
    big = build_tournament(verdicts_for([(f"c{i}", f"c{i + 1}", 1) for i in range(10)]))
    with pytest.raises(ValueError, match="brute-force"):
        mfas_brute_force(big)
