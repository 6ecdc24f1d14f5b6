"""The paired comparison gate (core/paired.py) against direct binomial computations, plus validity by simulation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.core.certification.paired import (
    PairedTable,
    _bounds,
    items_to_decide,
    paired_table,
    paired_test,
    set_size_difference,
)


def _tail_ge(x: int, n: int, p: float) -> float:
    """P(Bin(n, p) >= x) by direct summation."""
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(x, n + 1))


def _tail_le(x: int, n: int, p: float) -> float:
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(0, x + 1))


@pytest.mark.parametrize("n10, n01", [(0, 0), (3, 9), (9, 3), (5, 5), (0, 7), (12, 0), (20, 31)])
def test_margin_zero_is_the_exact_mcnemar_binomial(n10: int, n01: int) -> None:
    t = PairedTable(40, n10, n01, 17)
    r = paired_test(t, margin=0.0)
    d = n10 + n01
    exact_nw = sum(Fraction(math.comb(d, k), 2**d) for k in range(n01, d + 1)) if d else Fraction(1)
    exact_w = sum(Fraction(math.comb(d, k), 2**d) for k in range(0, n01 + 1)) if d else Fraction(1)
    assert r.p_not_worse == pytest.approx(float(exact_nw), rel=1e-12, abs=1e-15)
    assert r.p_worse == pytest.approx(float(exact_w), rel=1e-12, abs=1e-15)
    expected = "not_worse" if exact_nw <= 0.025 else "worse" if exact_w <= 0.025 else "undecided"
    assert r.decision == expected
    assert r.difference == pytest.approx((n01 - n10) / t.n)


@pytest.mark.parametrize("table", [PairedTable(60, 5, 9, 26), PairedTable(150, 0, 0, 0), PairedTable(30, 8, 2, 10)])
def test_cell_bounds_are_exact_clopper_pearson(table: PairedTable) -> None:
    """Each cell bound is the p at which the binomial tail of the observed count equals gamma/2 = 1.25%."""
    n, gamma = table.n, 0.025
    lower, upper = _bounds(table, gamma)
    # L = lo01 - up10, U = up01 - lo10; recover each cell bound from the direct tail equations
    lo01 = _solve(lambda p: _tail_ge(table.n01, n, p) - gamma / 2) if table.n01 else 0.0
    up10 = _solve(lambda p: gamma / 2 - _tail_le(table.n10, n, p)) if table.n10 < n else 1.0
    up01 = _solve(lambda p: gamma / 2 - _tail_le(table.n01, n, p)) if table.n01 < n else 1.0
    lo10 = _solve(lambda p: _tail_ge(table.n10, n, p) - gamma / 2) if table.n10 else 0.0
    assert lower == pytest.approx(max(-1.0, lo01 - up10), abs=1e-9)
    assert upper == pytest.approx(min(1.0, up01 - lo10), abs=1e-9)


def _solve(f, lo: float = 0.0, hi: float = 1.0) -> float:
    """Root of an increasing f on [0, 1] by bisection."""
    for _ in range(100):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def test_margin_decisions_follow_the_bounds() -> None:
    for t in (PairedTable(300, 10, 12, 78), PairedTable(300, 40, 5, 55), PairedTable(50, 3, 3, 14)):
        r = paired_test(t, margin=0.05)
        assert (r.decision == "not_worse") == (r.lower > -0.05)
        assert (r.decision == "worse") == (r.upper < -0.05)
        assert r.lower <= r.difference <= r.upper


def test_b_equal_a_decides_with_enough_items_only() -> None:
    # L = -(1 - 0.0125**(1/n)) > -0.05  <=>  n >= 86
    assert paired_test(PairedTable(86, 0, 0, 0), 0.05).decision == "not_worse"
    assert paired_test(PairedTable(60, 0, 26, 0), 0.05).decision == "not_worse"  # B better: decides sooner
    assert paired_test(PairedTable(85, 0, 0, 0), 0.05).decision == "undecided"
    assert items_to_decide(PairedTable(85, 0, 0, 0), 0.05) == 86
    assert items_to_decide(PairedTable(20, 0, 0, 0), 0.05) == 86
    assert 1 - 0.0125 ** (1 / 86) < 0.05 < 1 - 0.0125 ** (1 / 85)
    # at margin 0 agreement never shows B better
    assert paired_test(PairedTable(500, 0, 0, 0), 0.0).decision == "undecided"
    assert items_to_decide(PairedTable(500, 0, 0, 0), 0.0) is None


def test_items_to_decide_is_the_first_deciding_size() -> None:
    for t, m in ((PairedTable(60, 5, 5, 30), 0.05), (PairedTable(60, 10, 3, 27), 0.0)):
        n_star = items_to_decide(t, m)
        assert n_star is not None and n_star > t.n
        from relgate_tui.core.certification.paired import _scaled

        assert paired_test(_scaled(t, n_star), m).decision != "undecided"
        assert paired_test(_scaled(t, n_star - 1), m).decision == "undecided"


def test_validity_by_simulation() -> None:
    """At the null boundary the gate says "not worse" at most gamma = 2.5% of the time (MC slack 3 sd)."""
    rng = np.random.default_rng(7)
    trials = 1500
    # M > 0: Delta = p01 - p10 = -M exactly
    counts = rng.multinomial(200, [0.55, 0.15, 0.10, 0.20], size=trials)
    wrong = sum(_bounds(PairedTable(*map(int, c)), 0.025)[0] > -0.05 for c in counts)
    slack = 3 * math.sqrt(0.025 * 0.975 / trials)
    assert wrong / trials <= 0.025 + slack
    # M = 0: p01 = p10 (theta = 1/2)
    counts = rng.multinomial(120, [0.6, 0.1, 0.1, 0.2], size=trials)
    wrong = sum(paired_test(PairedTable(*map(int, c)), 0.0).decision == "not_worse" for c in counts)
    assert wrong / trials <= 0.025 + slack


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(0, 15), st.integers(0, 15), st.integers(0, 40))
def test_swapping_a_and_b_mirrors_the_result(n11: int, n10: int, n01: int, n00: int) -> None:
    t, s = PairedTable(n11, n10, n01, n00), PairedTable(n11, n01, n10, n00)
    if t.n == 0:
        return
    r, q = paired_test(t, 0.0), paired_test(s, 0.0)
    assert r.p_not_worse == pytest.approx(q.p_worse) and r.p_worse == pytest.approx(q.p_not_worse)
    assert r.lower == pytest.approx(-q.upper) and r.difference == pytest.approx(-q.difference)
    assert r.lower <= r.difference <= r.upper


def test_table_and_set_sizes() -> None:
    t = paired_table([True, True, False, False, True], [True, False, True, False, True])
    assert (t.n11, t.n10, t.n01, t.n00) == (2, 1, 1, 1)
    s = set_size_difference([1, 2, 3, float("nan")], [1, 3, 1, 2])
    assert (s.n, s.larger, s.smaller, s.equal) == (3, 1, 1, 1)
    assert s.mean_difference == pytest.approx((0 + 1 - 2) / 3)
    with pytest.raises(ValueError):
        PairedTable(-1, 0, 0, 0)
    with pytest.raises(ValueError):
        paired_test(t, margin=1.5)


def test_more_paired_items_never_exceeds_the_shared_items_left() -> None:
    from relgate_tui.core.certification.paired import more_paired_items

    table = paired_table([True] * 50 + [False] * 5, [True] * 48 + [False] * 7)
    assert items_to_decide(table) - table.n > 10  # what compare printed: far more than the runs share
    capped = more_paired_items(table, available=10)
    assert capped.more is None and capped.message.startswith("only 10 shared items left unpaired")
    free = more_paired_items(table, available=10**6)
    assert free.more == items_to_decide(table) - table.n
    assert more_paired_items(paired_table([], []), 5).more is None
