"""Paper 001 methods: coverage ≥ 1 − α on simulated exchangeable data (simulated judge; fixed seeds).

Monte-Carlo tolerance: with m conformal points and t test points, one split's coverage has sd ≈ √(α(1−α)(1/m + 1/t))
about its mean (≥ 1 − α for a valid method); averaging T independent data sets divides it by √T. Each assertion
allows 3.5 sd.
"""

import functools
import math

import numpy as np
import pytest

from relgate_tui.core.judge_intervals.base import conformal_quantile, lower_conformal_quantile, single_thread
from relgate_tui.core.judge_intervals.methods import METHOD_NAMES, METHODS, ORDINAL, parse_methods
from relgate_tui.core.judge_intervals.simulate import simulate
from relgate_tui.core.judge_intervals.study import prepare, run_study, split_data, split_indices

ALPHA = 0.1


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Small matrices: BLAS threads only oversubscribe a shared machine (as run_study does per seed)."""
    with single_thread():
        yield


@functools.cache
def _input(n, seed, raters=3):
    """The simulated study input of (n, seed, raters), built once: every method's coverage test reads the same data
    sets (seeds 1000, 1001, …). Read-only arrays, so no test can change what another one reads."""
    z, y, raw = simulate(n, seed=seed, raters=raters)
    inp = prepare([f"i{i}" for i in range(n)], [dict(zip(range(1, 6), r)) for r in z], list(y), list(raw))
    for a in (inp.z, inp.y, inp.raw):
        a.setflags(write=False)
    return inp


def _mean_coverage(name, n, trials):
    covs, m_conf, n_test = [], 0, 0
    for t in range(trials):
        inp = _input(n, 1000 + t)
        test, cal = split_indices(inp.n, t + 1)
        d = split_data(inp, cal, inp.z[test])
        m_conf = len(d.y_cal) + (len(d.y_fit) if name in ORDINAL else 0)
        b = METHODS[name](d, ALPHA, t)
        y = inp.y[test]
        n_test = len(y)
        covs.append(np.mean((np.maximum(b.lower, 1) <= y + 1e-9) & (y <= np.minimum(b.upper, 5) + 1e-9)))
    return float(np.mean(covs)), m_conf, n_test


# (items per data set, data sets): cheap methods get more trials; every method ≥ 6 independent data sets
BUDGET = {"cqr": (400, 10), "asym-cqr": (400, 10), "chr": (400, 10), "lvd": (400, 10), "boosted-cqr": (400, 10),
          "boosted-lcp": (400, 10), "r2ccp": (400, 10), "ordinal-aps": (400, 150), "ordinal-rc": (400, 150)}


@pytest.mark.slow
@pytest.mark.parametrize("name", METHOD_NAMES)
def test_coverage_at_least_one_minus_alpha(name):
    n, trials = BUDGET[name]
    cov, m, t = _mean_coverage(name, n, trials)
    tol = 3.5 * math.sqrt(ALPHA * (1 - ALPHA) * (1 / m + 1 / t)) / math.sqrt(trials)
    assert cov >= 1 - ALPHA - tol, f"{name}: mean coverage {cov:.4f} < {1 - ALPHA:.2f} − {tol:.4f}"


def test_conformal_quantiles_use_the_finite_sample_ranks():
    s = np.arange(1, 20, dtype=float)                  # n = 19: ⌈20·0.9⌉ = 18th smallest
    assert conformal_quantile(s, 0.1) == 18.0
    assert conformal_quantile(s[:8], 0.1) == math.inf   # ⌈9·0.9⌉ = 9 > 8
    assert lower_conformal_quantile(s, 0.1) == 2.0      # ⌊20·0.1⌋ = 2nd smallest
    assert lower_conformal_quantile(s[:8], 0.1) == -math.inf


def test_every_split_adjusted_coverage_is_not_lower_and_json_has_the_issue_fields():
    inp = _input(120, 7, raters=1)
    study = run_study(inp, methods=METHOD_NAMES, seeds=range(1, 4), curve_methods=("ordinal-aps",))
    doc = study.to_json()
    assert doc["n_items"] == 120 and doc["alpha"] == 0.1 and doc["seeds"] == [1, 2, 3]
    for m in study.methods:
        assert m.never_dropped, m.name                 # Theorem 1 on every split
        j = doc["methods"][m.name]
        for key in ("coverage_mean", "coverage_sd", "width_mean", "width_sd"):
            assert key in j and key in j["adjusted"]
        assert len(j["items"]) == 60 and set(j["items"][0]) == {"id", "human", "lower", "upper", "adj_lower",
                                                                 "adj_upper"}
    first_test = split_indices(120, 1)[0]
    assert [it["id"] for it in doc["methods"]["r2ccp"]["items"]] == [f"i{i}" for i in first_test]
    assert set(doc["scores"]) == {"raw", "weighted", "midpoint", "midpoint_adjusted"}
    assert [c["fraction"] for c in doc["calibration_curve"]] == [0.25, 0.5, 0.75, 1.0]


def test_split_convention_puts_the_first_half_of_the_permutation_in_test():
    test, cal = split_indices(11, 5)
    perm = np.random.RandomState(5).permutation(11)
    assert list(test) == list(perm[:6]) and list(cal) == list(perm[6:])


def test_parse_methods():
    assert parse_methods("all") == METHOD_NAMES
    assert parse_methods("r2ccp, cqr,r2ccp") == ("r2ccp", "cqr")
    with pytest.raises(ValueError, match="unknown method"):
        parse_methods("cqr,nope")


def test_a_ten_point_scale_works():
    n = 300
    z, y, raw = simulate(n, seed=11, k=10, raters=1)
    inp = prepare([f"i{i}" for i in range(n)], [dict(zip(range(1, 11), r)) for r in z], list(y), list(raw))
    assert inp.scale == tuple(range(1, 11)) and inp.grid.name == "integer" and inp.z.shape == (n, 10)
    study = run_study(inp, methods=("r2ccp", "ordinal-aps", "cqr"), seeds=range(1, 3), curve_methods=())
    for m in study.methods:
        assert m.never_dropped and 0.0 < m.adjusted.width_mean <= 9.0
        assert all(1.0 <= it.adj_lower <= it.adj_upper <= 10.0 for it in m.items)


def test_shift_study_calibrates_on_a_and_tests_on_all_of_b():
    from relgate_tui.core.judge_intervals.study import shift_study

    a, b = _input(200, 21), _input(90, 22)
    res = shift_study(a, b, methods=("ordinal-aps", "r2ccp"), seeds=range(1, 4))
    assert [r.method for r in res] == ["ordinal-aps", "r2ccp"]
    for r in res:
        assert 0.0 <= r.coverage_mean <= r.adj_coverage_mean <= 1.0
        assert r.width_mean > 0
