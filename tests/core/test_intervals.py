import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binom

from relgate_tui.core.certification.intervals import (
    bootstrap_ci,
    bootstrap_distribution,
    clopper_pearson_interval,
    clopper_pearson_lower,
    clopper_pearson_upper,
    wilson_interval,
    wilson_proportion,
)


# ------------------------------------------------------------------------------------------------- Clopper–Pearson
def test_worked_example_lower_bound_45_of_50():
    # SPEC issue 2: Beta^-1(0.05; 45, 6) = 0.8012 to 4 decimals.
    assert round(clopper_pearson_lower(45, 50, 0.95), 4) == 0.8012


def test_lower_bound_closed_forms():
    assert clopper_pearson_lower(0, 20) == 0.0
    assert clopper_pearson_lower(0, 0) == 0.0
    # x = n: Beta(n, 1) has cdf t^n, so the bound solves t^n = 1 - conf.
    for n in (1, 7, 50, 400):
        assert clopper_pearson_lower(n, n, 0.95) == pytest.approx(0.05 ** (1 / n), rel=1e-12)
    # x = 0 upper: Beta(1, n) quantile = 1 - (1 - conf)^(1/n).
    for n in (1, 7, 50):
        assert clopper_pearson_upper(0, n, 0.95) == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-12)
    assert clopper_pearson_upper(9, 9) == 1.0


@pytest.mark.parametrize("x,n", [(1, 10), (45, 50), (17, 40), (300, 500)])
def test_lower_bound_is_the_exact_binomial_tail_inversion(x, n):
    # Defining identity of the exact bound: P_{p=L}(X >= x) = 1 - confidence.
    lo = clopper_pearson_lower(x, n, 0.95)
    assert binom.sf(x - 1, n, lo) == pytest.approx(0.05, rel=1e-8)
    hi = clopper_pearson_upper(x, n, 0.95)
    assert binom.cdf(x, n, hi) == pytest.approx(0.05, rel=1e-8)


@pytest.mark.parametrize("n", [10, 37, 120])
def test_one_sided_lower_bound_has_exact_coverage_at_least_confidence(n):
    # P_p(L(X) <= p) computed exactly over X ~ Bin(n, p), on a grid of p.
    lows = np.array([clopper_pearson_lower(x, n, 0.95) for x in range(n + 1)])
    pmf_x = np.arange(n + 1)
    worst = 1.0
    for p in np.linspace(0.001, 0.999, 400):
        cov = binom.pmf(pmf_x, n, p)[lows <= p].sum()
        worst = min(worst, cov)
    assert worst >= 0.95 - 1e-12
    assert worst < 0.97  # and it is not absurdly conservative (exactness: the infimum approaches 0.95)


@given(st.integers(0, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_clopper_pearson_orderings(xn, conf):
    x, n = xn
    lo1 = clopper_pearson_lower(x, n, conf)
    lo2, hi2 = clopper_pearson_interval(x, n, conf)
    assert 0.0 <= lo2 <= lo1 <= hi2 <= 1.0
    if n:
        assert lo2 <= x / n <= hi2
        assert lo1 <= x / n
    # more confidence, lower lower bound
    assert clopper_pearson_lower(x, n, 0.999) <= lo1 + 1e-15


# ------------------------------------------------------------------------------------------------------- Wilson
@pytest.mark.parametrize(
    "x,n,lo,hi",
    [
        # paper 004 Table 2 / Table 5 (GPT-4.1): 95% Wilson intervals printed to 2 decimals
        (478, 500, 0.93, 0.97),  # GSM8K coverage 0.956
        (53, 82, 0.54, 0.74),  # HumanEval mode accuracy 0.646
        (29, 82, 0.26, 0.46),  # HumanEval mode error .354 at K = 1
        (399, 500, 0.76, 0.83),  # MMLU mode accuracy 0.798
    ],
)
def test_wilson_reproduces_the_papers_intervals(x, n, lo, hi):
    a, b = wilson_interval(x, n, 0.95)
    assert (round(a, 2), round(b, 2)) == (lo, hi)


def test_wilson_edge_cases():
    # 0/20: upper bound z^2 / (n + z^2) (Newcombe 1998, Table I: 0.1611)
    lo, hi = wilson_interval(0, 20)
    assert lo == 0.0 and round(hi, 4) == 0.1611
    lo, hi = wilson_interval(20, 20)
    assert hi == 1.0 and round(lo, 4) == 0.8389
    assert wilson_interval(0, 0) == (0.0, 1.0)
    p = wilson_proportion(0, 0)
    assert math.isnan(p.estimate) and (p.lower, p.upper) == (0.0, 1.0)


@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), st.sampled_from([0.9, 0.95, 0.99]))
def test_wilson_bounds_invert_the_score_test(xn, conf):
    x, n = xn
    z = {0.9: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}[conf]
    lo, hi = wilson_interval(x, n, conf)
    phat = x / n
    assert 0.0 <= lo <= phat <= hi <= 1.0
    for b in (lo, hi):
        if 0.0 < b < 1.0:
            # |phat - p| = z sqrt(p(1-p)/n) at each bound
            assert abs(abs(phat - b) - z * math.sqrt(b * (1 - b) / n)) < 1e-9


def test_wilson_accepts_fractional_successes_and_rejects_bad_input():
    p = wilson_proportion(12.5, 20)
    assert p.estimate == 0.625 and p.lower < 0.625 < p.upper
    with pytest.raises(ValueError):
        wilson_interval(21, 20)
    with pytest.raises(ValueError):
        wilson_interval(-1, 20)
    with pytest.raises(ValueError):
        wilson_interval(1, 20, confidence=1.0)
    with pytest.raises(ValueError):
        clopper_pearson_lower(2.5, 10)
    with pytest.raises(ValueError):
        clopper_pearson_lower(3, 2)


# ---------------------------------------------------------------------------------------------------- bootstrap
def test_bootstrap_is_seeded_and_reproducible():
    x = np.random.default_rng(3).integers(1, 6, size=500)
    assert bootstrap_ci(x, seed=7) == bootstrap_ci(x, seed=7)
    a, b = bootstrap_distribution(x, seed=7), bootstrap_distribution(x, seed=8)
    assert np.array_equal(a, bootstrap_distribution(x, seed=7)) and not np.array_equal(a, b)


def test_bootstrap_degenerate_sample():
    assert bootstrap_ci(np.full(50, 3.0)) == (3.0, 3.0)
    with pytest.raises(ValueError):
        bootstrap_ci([])


def test_bootstrap_mean_matches_normal_theory_for_large_n():
    x = (np.random.default_rng(11).random(4000) < 0.3).astype(float)
    lo, hi = bootstrap_ci(x, n_boot=10_000)
    half = 1.959963984540054 * x.std() / math.sqrt(x.size)
    assert lo == pytest.approx(x.mean() - half, abs=0.1 * half)
    assert hi == pytest.approx(x.mean() + half, abs=0.1 * half)


def test_multinomial_shortcut_agrees_with_index_resampling():
    x = np.random.default_rng(5).choice([1.0, 2.0, 3.0, 5.0], p=[0.6, 0.2, 0.15, 0.05], size=3000)
    fast = bootstrap_distribution(x, np.mean, 4000, seed=1)  # multinomial path
    slow = bootstrap_distribution(x, lambda a, axis: np.mean(a, axis=axis), 4000, seed=1)  # generic path
    assert fast.mean() == pytest.approx(x.mean(), abs=0.005)
    assert slow.mean() == pytest.approx(x.mean(), abs=0.005)
    assert fast.std() == pytest.approx(slow.std(), rel=0.08)
    assert fast.std() == pytest.approx(x.std() / math.sqrt(x.size), rel=0.08)


def test_bootstrap_other_statistics_chunked():
    x = np.random.default_rng(9).normal(10.0, 2.0, size=5000)  # > one chunk of rows
    reps = bootstrap_distribution(x, np.median, 1500, seed=2)
    assert reps.shape == (1500,)
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert lo < np.median(x) < hi and hi - lo < 0.3
