"""Directed 3-cycles and the violation rate ρ(x) (paper 000 eq. 1, Table 1)."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

from relgate_tui.core.judge import build_tournament, cycle_report, summarize_cycles, three_cycles_from_adjacency
from tests.core.test_judge_tournament import verdicts_for


def test_cyclic_triangle_has_one_cycle_rho_one():
    r = cycle_report(build_tournament(verdicts_for([("a", "b", 1), ("b", "c", 1), ("c", "a", 1)])))
    assert r.n_cycles == 1 and r.n_triples == 1 and r.rho == 1.0
    assert r.cycles == (("a", "b", "c"),)


def test_cycle_is_reported_in_its_direction():
    v = verdicts_for([("b", "a", 1), ("c", "b", 1), ("a", "c", 1)])
    assert cycle_report(build_tournament(v, ["a", "b", "c"])).cycles == (("a", "c", "b"),)  # a → c → b → a
    assert cycle_report(build_tournament(v)).cycles == (("b", "a", "c"),)  # rotated to start at b (first seen)


def test_four_nodes_with_outdegrees_3_1_1_1_have_exactly_one_cycle():
    t = build_tournament(verdicts_for([("a", "b", 1), ("a", "c", 1), ("a", "d", 1),
                                       ("b", "c", 1), ("c", "d", 1), ("d", "b", 1)]))
    assert sorted(t.adjacency().sum(axis=1).tolist()) == [1, 1, 1, 3]
    r = cycle_report(t)
    assert r.n_cycles == 1 and r.cycles == (("b", "c", "d"),)
    assert r.rho == pytest.approx(1 / 4)


def test_transitive_tournament_has_no_cycles():
    names = [f"s{i}" for i in range(7)]
    t = build_tournament(verdicts_for([(names[i], names[j], 1) for i, j in combinations(range(7), 2)]))
    r = cycle_report(t)
    assert r.n_cycles == 0 and r.rho == 0.0 and r.n_triples == 35


def _random_adjacency(rng: np.random.Generator, n: int, p_missing: float) -> np.ndarray:
    a = np.zeros((n, n), dtype=bool)
    for i, j in combinations(range(n), 2):
        if rng.random() < p_missing:
            continue
        if rng.random() < 0.5:
            a[i, j] = True
        else:
            a[j, i] = True
    return a


def test_complete_tournaments_match_moons_formula():
    """Complete tournament: #3-cycles = C(n,3) − Σ_i C(s_i, 2), s_i = out-degrees (Moon 1968)."""
    rng = np.random.default_rng(11)
    for _ in range(100):
        n = int(rng.integers(3, 13))
        a = _random_adjacency(rng, n, 0.0)
        expected = math.comb(n, 3) - sum(math.comb(int(s), 2) for s in a.sum(axis=1))
        assert len(three_cycles_from_adjacency(a)) == expected


def test_partial_tournaments_match_trace_of_cube_and_brute_force():
    rng = np.random.default_rng(12)
    for _ in range(100):
        n = int(rng.integers(3, 11))
        a = _random_adjacency(rng, n, 0.3)
        cycles = three_cycles_from_adjacency(a)
        ai = a.astype(np.int64)
        assert len(cycles) == np.trace(ai @ ai @ ai) // 3
        brute = sorted(
            (i, j, k) if a[i, j] else (i, k, j)
            for i, j, k in combinations(range(n), 3)
            if (a[i, j] and a[j, k] and a[k, i]) or (a[i, k] and a[k, j] and a[j, i])
        )
        assert cycles == brute
        for x, y, z in cycles:
            assert a[x, y] and a[y, z] and a[z, x] and x < y and x < z


def test_summary_matches_paper_table_1_definitions():
    tri = cycle_report(build_tournament(verdicts_for([("a", "b", 1), ("b", "c", 1), ("c", "a", 1)])))
    four = cycle_report(build_tournament(verdicts_for([("a", "b", 1), ("a", "c", 1), ("a", "d", 1),
                                                       ("b", "c", 1), ("c", "d", 1), ("d", "b", 1)])))
    clean = cycle_report(build_tournament(verdicts_for([("a", "b", 1), ("b", "c", 1), ("a", "c", 1)])))
    pair = cycle_report(build_tournament(verdicts_for([("a", "b", 1)])))
    assert pair.n_triples == 0 and pair.rho == 0.0
    s = summarize_cycles([tri, four, clean, clean, pair])
    assert s.n_inputs == 5 and s.n_inputs_with_triples == 4
    assert s.mean_rho == pytest.approx((1 + 0.25 + 0 + 0) / 4)
    assert s.share_inputs_with_cycle == pytest.approx(0.5)
    assert s.max_rho == 1.0 and s.median_rho == pytest.approx(0.125)
    assert s.pooled_rho == pytest.approx(2 / 7)
    empty = summarize_cycles([pair])
    assert empty.n_inputs_with_triples == 0 and math.isnan(empty.mean_rho)
