"""Sequential stopping rules (SPEC §3.7, paper 004 eq. 9.1): unit tests and validity simulations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from relgate_tui.core.stopping import (
    STOPPING_RULES,
    AnytimeRule,
    NoStopping,
    PaperRule,
    StoppingRule,
    TrustGateRule,
    anytime_log_evidence,
    get_stopping_rule,
    simulate_stopping,
)

DELTA = 0.05


def first_unanimous_stop(rule: StoppingRule, k_limit: int = 200, invalid_every: int = 0) -> int | None:
    """Smallest k at which a unanimous item (optionally with INVALID samples interleaved) is stopped."""
    count, n = 0, 0
    while n < k_limit:
        n += 1
        if invalid_every and n % invalid_every == 0:
            pass  # an INVALID sample: n grows, the class count does not
        else:
            count += 1
        if rule.should_stop([count], n):
            return n
    return None


def cp_upper(successes: int, trials: int, confidence: float = 0.999) -> float:
    if successes >= trials:
        return 1.0
    return float(stats.beta.ppf(confidence, successes + 1, trials - successes))


def cp_lower(successes: int, trials: int, confidence: float = 0.999) -> float:
    if successes == 0:
        return 0.0
    return float(stats.beta.ppf(1 - confidence, successes, trials - successes + 1))


# ---------------------------------------------------------------------------------------------------------- registry


def test_registry_names_and_defaults():
    assert STOPPING_RULES == ("anytime", "paper", "none")
    assert "trustgate" not in STOPPING_RULES
    for name in (*STOPPING_RULES, "trustgate"):
        rule = get_stopping_rule(name)
        assert rule.name == name
        assert rule.delta == DELTA
        assert isinstance(rule, StoppingRule)
    assert get_stopping_rule("anytime", 0.1).delta == 0.1
    assert isinstance(get_stopping_rule("anytime"), AnytimeRule)
    assert isinstance(get_stopping_rule("paper"), PaperRule)
    assert isinstance(get_stopping_rule("none"), NoStopping)
    assert isinstance(get_stopping_rule("trustgate"), TrustGateRule)


@pytest.mark.parametrize("name", ["hoeffding", "", "Anytime", "sprt"])
def test_unknown_rule_name_is_a_one_line_value_error(name):
    with pytest.raises(ValueError) as info:
        get_stopping_rule(name)
    message = str(info.value)
    assert "\n" not in message and "anytime" in message


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 1.5, math.nan, "x", None])
def test_delta_outside_unit_interval_is_rejected(delta):
    for name in (*STOPPING_RULES, "trustgate"):
        with pytest.raises(ValueError) as info:
            get_stopping_rule(name, delta)
        assert "\n" not in str(info.value)


def test_bad_counts_are_rejected():
    for name in (*STOPPING_RULES, "trustgate"):
        rule = get_stopping_rule(name)
        with pytest.raises(ValueError):
            rule.should_stop([3, -1], 5)
        with pytest.raises(ValueError):
            rule.should_stop([3, 2], 4)  # fewer samples than counted answers


def test_bad_simulation_inputs_are_rejected():
    rule = get_stopping_rule("anytime")
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        simulate_stopping(rule, [0.5, 0.4], 20, 10, rng)  # does not sum to 1
    with pytest.raises(ValueError):
        simulate_stopping(rule, [0.5, 0.4], 20, 10, rng, invalid_prob=0.2)
    with pytest.raises(ValueError):
        simulate_stopping(rule, [1.2, -0.2], 20, 10, rng)
    with pytest.raises(ValueError):
        simulate_stopping(rule, [], 20, 10, rng)
    with pytest.raises(ValueError):
        simulate_stopping(rule, [1.0], 0, 10, rng)
    with pytest.raises(ValueError):
        simulate_stopping(rule, [1.0], 20, 0, rng)


# ---------------------------------------------------------------------------------------------------------- none


def test_none_never_stops():
    rule = get_stopping_rule("none")
    for k in range(1, 60):
        assert not rule.should_stop([k], k)
        assert not rule.should_stop([k, 0, 0], k + 3)
    stats_ = simulate_stopping(rule, [1.0], 20, 500, np.random.default_rng(1))
    assert stats_.mean_samples == 20 and stats_.early_stop_rate == 0 and stats_.saved_fraction == 0


# ---------------------------------------------------------------------------------------------------------- paper


def test_paper_cannot_stop_before_21_at_delta_005():
    rule = get_stopping_rule("paper", DELTA)
    for k in range(1, 21):
        # the most favourable counts: unanimous (|C| = max(2, 1) = 2), and unanimous with zeros around it
        assert not rule.should_stop([k], k)
        assert not rule.should_stop([0, k, 0], k)
        assert not rule.should_stop([k - 1, 1], k)
    assert rule.should_stop([21], 21)
    assert first_unanimous_stop(rule) == 21
    stats_ = simulate_stopping(rule, [1.0], 20, 200, np.random.default_rng(2))
    assert stats_.mean_samples == 20  # K_max = 20: it saves nothing


def test_paper_k0_is_immaterial_below_14_for_every_delta():
    for delta in (0.01, 0.05, 0.5, 0.9, 0.999999):
        rule = PaperRule(delta=delta)
        for k in range(1, 14):
            assert not rule.should_stop([k], k)


def test_paper_matches_eq_9_1_on_a_grid():
    rule = get_stopping_rule("paper", DELTA)
    for k in range(21, 120, 7):
        for top in range(k // 2, k + 1, 3):
            for second in (0, (k - top) // 2, k - top):
                if second > top or top + second > k:
                    continue
                counts = [c for c in (top, second, k - top - second) if c > 0]
                first, runner_up = sorted(counts + [0], reverse=True)[:2]
                bound = math.sqrt(2 * math.log(2 * max(2, len(counts)) * k * k / DELTA) / k)
                expected = (first - runner_up) / k > bound
                assert rule.should_stop(counts, k) == expected


def test_paper_uses_all_samples_including_invalid():
    rule = get_stopping_rule("paper", DELTA)
    assert rule.should_stop([21], 21)
    # 21 valid answers out of 30 samples: Delta = 0.7 is below the bound at k = 30 (0.87)
    assert not rule.should_stop([21], 30)


# ---------------------------------------------------------------------------------------------------------- trustgate


def test_trustgate_stops_unanimous_at_8():
    rule = get_stopping_rule("trustgate", DELTA)
    assert first_unanimous_stop(rule) == 8
    assert not rule.should_stop([7], 7)
    assert rule.should_stop([8], 8)


# ---------------------------------------------------------------------------------------------------------- anytime


def test_anytime_unanimous_stops_at_7():
    rule = get_stopping_rule("anytime", DELTA)
    assert first_unanimous_stop(rule) == 7
    # INVALID samples are ignored by the rule: it waits for 7 valid answers
    assert first_unanimous_stop(rule, invalid_every=3) == 10


def test_anytime_log_evidence_matches_numerical_integral():
    norm = integrate.quad(lambda t: t**7, 0.5, 1.0)[0]
    for a, b in [(0, 0), (1, 0), (6, 0), (12, 1), (15, 2), (3, 3), (30, 12), (5, 9)]:
        value = integrate.quad(lambda t: (2 * t) ** a * (2 * (1 - t)) ** b * t**7, 0.5, 1.0, epsabs=0)[0] / norm
        assert anytime_log_evidence(a, b) == pytest.approx(math.log(value), rel=1e-9, abs=1e-9)


def test_anytime_log_evidence_is_monotone():
    grid = np.arange(0, 60)
    a, b = np.meshgrid(grid, grid, indexing="ij")
    m = anytime_log_evidence(a, b)
    assert np.all(np.diff(m, axis=0) >= -1e-12)  # non-decreasing in the leader's count
    assert np.all(np.diff(m, axis=1) <= 1e-12)  # non-increasing in the opponent's count


def test_anytime_rule_is_the_documented_threshold():
    rule = get_stopping_rule("anytime", DELTA)
    for a, b, extra in itertools.product(range(1, 40), range(0, 15), range(0, 4)):
        counts = [a, b] + [1] * extra
        n_seen = sum(c > 0 for c in counts)
        if b > a or (extra and b < 1):
            continue
        level = DELTA * 6 / (math.pi**2 * n_seen**2)
        expected = a > b and anytime_log_evidence(a - 1, b) >= -math.log(level)
        assert rule.should_stop(counts, sum(counts) + 2) == expected


def test_anytime_never_stops_on_tied_top_counts():
    rule = get_stopping_rule("anytime", 0.5)
    for a in range(1, 200):
        assert not rule.should_stop([a, a], 2 * a)
        assert not rule.should_stop([a, a, 1], 2 * a + 1)


def test_decisions_ignore_order_and_zero_counts():
    rng = np.random.default_rng(3)
    for name in (*STOPPING_RULES, "trustgate"):
        rule = get_stopping_rule(name)
        for _ in range(200):
            counts = list(rng.integers(0, 30, size=rng.integers(1, 6)))
            n = sum(counts) + int(rng.integers(0, 5))
            shuffled = list(rng.permutation(counts)) + [0, 0]
            assert rule.should_stop(counts, n) == rule.should_stop(shuffled, n)


def test_batch_decisions_equal_scalar_decisions():
    rng = np.random.default_rng(4)
    triples = [(0, 0, 0)]
    for _ in range(800):
        leader = int(rng.integers(1, 80))
        n_seen = int(rng.integers(1, 6))
        runner_up = 0 if n_seen == 1 else int(rng.integers(1, leader + 1))
        triples.append((leader, runner_up, n_seen))
    leader, runner_up, n_seen = (np.array(column) for column in zip(*triples))
    for name in (*STOPPING_RULES, "trustgate"):
        rule = get_stopping_rule(name)
        for n_samples in (200, 250):
            batch = rule.should_stop_batch(leader, runner_up, n_seen, n_samples)
            for i, (a, b, c) in enumerate(triples):
                counts = ([a] if c >= 1 else []) + ([b] if c >= 2 else []) + [1] * max(0, c - 2)
                assert bool(batch[i]) == rule.should_stop(counts, n_samples)


# ---------------------------------------------------------------------------------------------------------- simulation


def exact_two_class(rule: StoppingRule, p: float, k_max: int) -> float:
    """Exact E[samples] for classes (p, 1 - p) by dynamic programming over the count of the first class."""
    alive = np.zeros(k_max + 1)
    alive[0] = 1.0
    expected = 0.0
    for k in range(1, k_max):
        nxt = np.zeros(k_max + 1)
        nxt[1:] += alive[:-1] * p
        nxt += alive * (1 - p)
        for first in range(k + 1):
            if nxt[first] and rule.should_stop([first, k - first], k):
                expected += k * nxt[first]
                nxt[first] = 0.0
        alive = nxt
    return expected + k_max * alive.sum()


@pytest.mark.parametrize("name", ["anytime", "trustgate"])
def test_simulation_matches_exact_expectation(name):
    rule = get_stopping_rule(name)
    for p in (0.9, 0.75):
        exact = exact_two_class(rule, p, 20)
        sim = simulate_stopping(rule, [p, 1 - p], 20, 20_000, np.random.default_rng(5))
        assert abs(sim.mean_samples - exact) < 0.1  # ~ 4-5 standard errors


class ScalarOnly:
    """A rule exposing only the Protocol (no batch method): exercises the trial-by-trial path."""

    def __init__(self, inner: StoppingRule):
        self.inner, self.name, self.delta = inner, inner.name, inner.delta

    def should_stop(self, counts, n_samples):
        return self.inner.should_stop(counts, n_samples)


def test_scalar_protocol_path_equals_vectorised_path():
    for name in ("anytime", "trustgate"):
        rule = get_stopping_rule(name)
        fast = simulate_stopping(rule, [0.8, 0.15, 0.05], 20, 300, np.random.default_rng(6), invalid_prob=0.0)
        slow = simulate_stopping(ScalarOnly(rule), [0.8, 0.15, 0.05], 20, 300, np.random.default_rng(6))
        assert fast == slow


def test_stats_fields_are_consistent():
    s = simulate_stopping(get_stopping_rule("anytime"), [0.8, 0.1], 20, 2000, np.random.default_rng(8), 0.1)
    assert s.rule == "anytime" and s.k_max == 20 and s.n_trials == 2000
    assert s.saved_fraction == pytest.approx(1 - s.mean_samples / 20)
    assert 0 < s.early_stop_rate < 1 and s.wrong_stop_rate == s.wrong_stops / 2000
    assert 1 <= s.mean_stop_k < 20


# ---------------------------------------------------------------------------------------------------------- validity

ADVERSARIAL = [
    pytest.param((0.5, 0.5), 0.0, id="tie-0.5-0.5"),
    pytest.param((0.55, 0.45), 0.0, id="0.55-0.45"),
    pytest.param((0.52, 0.48), 0.0, id="0.52-0.48"),
    pytest.param((0.4, 0.35, 0.25), 0.0, id="0.4-0.35-0.25"),
    pytest.param((0.45,) + (0.05,) * 11, 0.0, id="0.45+11x0.05"),
    pytest.param((1 / 3, 1 / 3, 1 / 3), 0.0, id="tie-3-way"),
    pytest.param((0.45, 0.45), 0.1, id="tie+invalid"),
    pytest.param((0.4, 0.35), 0.25, id="0.4-0.35+invalid"),
]
VALIDITY_TRIALS = 10_000
VALIDITY_K_MAX = 200


@pytest.mark.parametrize("name", ["anytime", "paper"])
@pytest.mark.parametrize(("probs", "invalid"), ADVERSARIAL)
def test_wrong_stop_rate_is_below_delta(name, probs, invalid):
    """P(stopped early with a leader that is not the unique true mode) <= delta, at a budget large enough (200)
    that the rule gets many chances to stop wrongly. With exact ties every stop is wrong. The assertion is on the
    one-sided 99.9 % Clopper-Pearson upper bound, so it certifies the rate is below delta (the anytime rule's
    worst case here, the exact tie, is ~0.02, giving an upper bound of ~0.024)."""
    rule = get_stopping_rule(name, DELTA)
    s = simulate_stopping(rule, probs, VALIDITY_K_MAX, VALIDITY_TRIALS, np.random.default_rng(2024), invalid)
    assert cp_upper(s.wrong_stops, s.n_trials) < DELTA


def test_validity_check_detects_an_unsound_rule():
    """The same harness flags TrustGate's rule on an exact tie: its stop rate is provably above delta."""
    s = simulate_stopping(get_stopping_rule("trustgate"), (0.5, 0.5), VALIDITY_K_MAX, VALIDITY_TRIALS,
                          np.random.default_rng(2024))
    assert cp_lower(s.wrong_stops, s.n_trials) > DELTA


def test_anytime_stays_valid_on_a_long_run():
    s = simulate_stopping(get_stopping_rule("anytime"), (0.5, 0.5), 1500, 2500, np.random.default_rng(11))
    assert cp_upper(s.wrong_stops, s.n_trials) < DELTA


# ---------------------------------------------------------------------------------------------------------- frugality


REFERENCE_WORKLOAD = [(0.60, (0.97, 0.02, 0.01)), (0.25, (0.75, 0.15, 0.10)), (0.15, (0.45, 0.30, 0.15, 0.10))]


def test_anytime_is_at_least_as_frugal_as_trustgate_on_the_reference_workload():
    """SPEC §3.7/§8 requirement at K_max = 20 and 10 (common random numbers: same sample streams for both rules)."""
    for k_max in (20, 10):
        means = {}
        for name in ("anytime", "trustgate"):
            rule = get_stopping_rule(name)
            means[name] = sum(
                share * simulate_stopping(rule, probs, k_max, 4000, np.random.default_rng(100 + i)).mean_samples
                for i, (share, probs) in enumerate(REFERENCE_WORKLOAD)
            )
        assert means["anytime"] <= means["trustgate"]
