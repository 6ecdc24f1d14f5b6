"""Paper 001 §3.3: label grids and boundary adjustment (worked examples; Theorem 1 as a per-point law)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.core.judge_intervals.grid import adjust, detect_grid, make_grid

INT = make_grid("integer", np.array([1.0]), 1, 5)
THIRDS = make_grid("thirds", np.array([1.0]), 1, 5)


def _adj(lo, up, grid, lam):
    a, b = adjust(np.array([lo]), np.array([up]), grid, lam)
    return float(a[0]), float(b[0])


def test_the_notes_examples():
    assert _adj(2.2, 3.9, INT, INT.full_lambda) == pytest.approx((2.0, 4.0))
    assert _adj(4.6, 4.9, THIRDS, THIRDS.full_lambda) == pytest.approx((14 / 3, 5.0))
    assert _adj(3.2, 4.9, INT, 0.1) == pytest.approx((3.2, 5.0))
    assert _adj(4.612, 5.0, THIRDS, THIRDS.full_lambda) == pytest.approx((14 / 3, 5.0))
    assert _adj(3.2, 4.9, INT, 0.0) == pytest.approx((3.2, 4.9))


def test_an_endpoint_a_hair_from_a_label_is_snapped_onto_it():
    """np.isclose's default relative tolerance (1e-5 · |label|) once counted 4.99996 as "already on 5": it stayed
    there, and a label 5 was missed. Every endpoint within 1e-12 of no label is rounded; the label is covered."""
    for gap in (3e-5, 5e-5, 1e-7, 1e-10):
        lo, up = _adj(1 + gap, 5 - gap, INT, INT.full_lambda)
        assert (lo, up) == (1.0, 5.0)
        lo, up = _adj(10 / 3 + gap, 14 / 3 - gap, THIRDS, THIRDS.full_lambda)
        assert lo == pytest.approx(10 / 3, abs=1e-12) and up == pytest.approx(14 / 3, abs=1e-12)
        assert lo <= 10 / 3 + 1e-12 and up >= 14 / 3 - 1e-12
    assert _adj(4.0, 4.0, INT, INT.full_lambda) == (4.0, 4.0)


def test_clipping_and_ties():
    assert _adj(-np.inf, np.inf, INT, 0.0) == (1.0, 5.0)      # q̂ = ∞ → the full scale
    assert _adj(2.5, 3.5, INT, 0.5) == (2.0, 4.0)             # halfway endpoints move outward


def test_grid_detection():
    assert detect_grid(np.array([1, 2, 5.0]), 1, 5).name == "integer"
    assert detect_grid(np.array([1, 4 / 3, 3.6666667, 5]), 1, 5).name == "thirds"
    assert detect_grid(np.array([1, 2.5, 5]), 1, 5).name == "halves"
    assert detect_grid(np.array([1.1, 2]), 1, 5) is None
    g = make_grid([1, 2, 4, 8], np.array([1.0]), 1, 8)
    assert g.values == (1, 2, 4, 8) and g.step == 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(-2, 8), st.floats(0, 4), st.integers(0, 12)), min_size=1, max_size=30),
       st.floats(0, 0.6), st.sampled_from(["integer", "thirds"]))
def test_adjustment_never_uncovers_a_label(rows, lam, name):
    """Theorem 1 per point: every grid label inside [l, u] stays inside [l', u'], for any λ."""
    grid = INT if name == "integer" else THIRDS
    lo = np.array([r[0] for r in rows])
    up = lo + np.array([r[1] for r in rows])
    labels = np.array([grid.values[r[2] % len(grid.values)] for r in rows])
    c_lo, c_up = adjust(lo, up, grid, 0.0)
    a_lo, a_up = adjust(lo, up, grid, lam)
    before = (c_lo <= labels + 1e-9) & (labels <= c_up + 1e-9)
    after = (a_lo <= labels + 1e-9) & (labels <= a_up + 1e-9)
    assert np.all(after[before])
    assert np.all(a_lo <= a_up + 1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 6), st.floats(0, 4), st.integers(0, 12)), min_size=1, max_size=30),
       st.floats(0, 0.3), st.floats(0, 0.3))
def test_coverage_is_monotone_in_lambda(rows, lam1, lam2):
    """Notes §6 claim 5: a label covered at λ₁ stays covered at every λ₂ ≥ λ₁."""
    small, big = sorted((lam1, lam2))
    lo = np.array([r[0] for r in rows])
    up = lo + np.array([r[1] for r in rows])
    labels = np.array([THIRDS.values[r[2] % 13] for r in rows])
    s_lo, s_up = adjust(lo, up, THIRDS, small)
    b_lo, b_up = adjust(lo, up, THIRDS, big)
    before = (s_lo <= labels + 1e-9) & (labels <= s_up + 1e-9)
    after = (b_lo <= labels + 1e-9) & (labels <= b_up + 1e-9)
    assert np.all(after[before])
