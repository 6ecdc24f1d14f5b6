"""The fewest labels any valid bound can clear a gate with (relgate_tui.core.label_limits, issue 22 "fewer labels"):
each programme checked against an independent construction, and the figures the README and the bench quote."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betaincinv
from scipy.stats import binom

from relgate_tui.core import label_limits as L


def _ump_binomial_power(n: int, null: float, alt: float, delta: float) -> float:
    """The randomised one-sided binomial test (uniformly most powerful for θ ≤ null), by its tails."""
    c = int(binom.isf(delta, n, null))  # smallest c with P0(X > c) ≤ δ
    while binom.sf(c - 1, n, null) <= delta:
        c -= 1
    size_above = binom.sf(c, n, null)  # P0(X > c)
    gamma = (delta - size_above) / binom.pmf(c, n, null)
    return float(binom.sf(c, n, alt) + gamma * binom.pmf(c, n, alt))


def test_a_judge_independent_of_the_answers_gives_exactly_the_binomial_test() -> None:
    """With a coin-flip judge the judge verdicts are pure noise: the programme's best power is the UMP binomial
    test's, computed here from the binomial tails alone."""
    law = L.cells_of(0.9, 0.5, 0.5)
    for n in (12, 30):
        lp = L.most_powerful(law, L.null_laws(law, 0.8), n)
        assert lp == pytest.approx(_ump_binomial_power(n, 0.8, 0.9, 0.05), abs=1e-6)


def test_one_null_law_gives_the_neyman_pearson_test() -> None:
    """Against a single null law the programme is the Neyman–Pearson lemma: reject the outcomes in decreasing
    likelihood ratio until the size is spent, the last one in part."""
    law, null = L.cells_of(0.9, 0.98, 0.98), np.array([0.786, 0.098, 0.014, 0.102])
    n = 9
    x = L._outcomes(n)
    p1, p0 = L._pmf(x, law), L._pmf(x, null)
    order = np.argsort(-(p1 / p0), kind="stable")
    size = power = 0.0
    for i in order:
        if size + p0[i] <= 0.05:
            size, power = size + p0[i], power + p1[i]
        else:
            power += p1[i] * (0.05 - size) / p0[i]
            break
    assert L.most_powerful(law, null[None, :], n) == pytest.approx(power, abs=1e-7)


def test_the_limit_is_above_a_known_valid_test() -> None:
    """A never-wrong judge at θ = 0.9: certifying on 24 agreeing labels of which ≥ 22 are judge-"yes" is valid for
    every null law of the grid and certifies with probability 0.56; the programme can only do better."""
    law = L.cells_of(0.9, 1.0, 1.0)
    nulls = L.null_laws(law, 0.8)
    n = 24
    x = L._outcomes(n)
    reject = (x[:, 1] == 0) & (x[:, 2] == 0) & (x[:, 0] >= 22)  # no disagreement, ≥ 22 judge-yes
    sizes = np.array([L._pmf(x, q)[reject].sum() for q in nulls])
    assert sizes.max() <= 0.05
    power = L._pmf(x, law)[reject].sum()
    assert power == pytest.approx(0.564, abs=0.001)
    assert L.most_powerful(law, nulls, n) >= power


def test_null_laws_sit_on_the_gate_with_the_judges_yes_share() -> None:
    law = L.cells_of(0.9, 0.95, 0.95)
    nulls = L.null_laws(law, 0.8)
    assert len(nulls) > 50
    assert np.allclose(nulls.sum(1), 1.0)
    assert np.allclose(nulls[:, 0] + nulls[:, 2], 0.8)
    assert np.allclose(nulls[:, 0] + nulls[:, 1], law[0] + law[1])
    assert (nulls >= 0).all()


def test_watched_clopper_pearson_matches_a_seeded_simulation_and_is_not_valid_when_watched() -> None:
    exact = L.watched_cp_clearing(0.9, 0.8, horizon=60)
    rng = np.random.default_rng(11)
    y = rng.random((20_000, 60)) < 0.9
    s = y.cumsum(1)
    t = np.arange(1, 61)[None, :]
    lower = np.where(s > 0, betaincinv(np.maximum(s, 1), t - s + 1.0, 0.05), 0.0)
    hit = lower >= 0.8
    first = np.where(hit.any(1), hit.argmax(1) + 1, 61)
    for n in (20, 37, 44, 60):
        assert float((first <= n).mean()) == pytest.approx(exact[n - 1], abs=4 * np.sqrt(0.25 / 20_000))
    assert L.watched_cp_median(0.9, 0.8) == 37  # the median the issue compares with
    assert L.watched_cp_median(0.8, 0.8, horizon=60) == 61  # never half the time within 60 labels
    assert L.watched_cp_clearing(0.8, 0.8)[-1] > 0.2  # at θ = gate it clears in > 20% of runs: not valid watched


def test_the_limits_the_readme_quotes() -> None:
    """No valid bound's median can be below these (README "Judge-assisted certification"); the issue's targets
    (≤ 60% and ≤ 110% of watched Clopper–Pearson's 37) sit just above them."""
    good = L.fewest_labels_any_bound(L.cells_of(0.9, 0.98, 0.98), 0.8, start=21)
    assert (good.labels, round(good.power, 3)) == (21, 0.506)
    assert good.power_before < 0.5
    coin = L.fewest_labels_any_bound(L.cells_of(0.9, 0.5, 0.5), 0.8, start=37)
    assert (coin.labels, round(coin.power, 3)) == (37, 0.502)
    assert coin.power_before < 0.5


def test_meeting_the_coin_flip_target_costs_the_early_stop_at_a_better_model() -> None:
    """A valid bound that clears by 40 labels half the time at θ = 0.9 (the coin-flip target) cannot also clear by
    24 labels half the time at θ = 0.95, where a single look needs 14 and watched Clopper–Pearson 22."""
    assert L.two_look_limit(0.9, 0.95, 0.8, 24, 40) < 0.5
    assert L.two_look_limit(0.9, 0.95, 0.8, 26, 40) > 0.5
    single = L.most_powerful(L.cells_of(0.9, 0.5, 0.5), L.null_laws(L.cells_of(0.9, 0.5, 0.5), 0.8), 40)
    assert L.two_look_limit(0.9, 0.95, 0.8, 24, 40) < single  # the early requirement costs power at 40
    assert L.fewest_labels_any_bound(L.cells_of(0.95, 0.5, 0.5), 0.8, start=14).labels == 14
    assert L.watched_cp_median(0.95, 0.8) == 22
    with pytest.raises(ValueError):
        L.two_look_limit(0.9, 0.95, 0.8, 40, 40)
