"""Judge certificate (issue 30): the fixed sequence, bounds and verdicts against an independent computation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta, binomtest

from relgate_tui.core.judge_certificate import (
    MIN_ITEMS,
    agreement_curve,
    apply_threshold,
    candidate_sequence,
    certify,
    consistency,
    corrected_pass_rate,
    selective,
    start_items,
)


def _judge(n: int, seed: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A fixed synthetic judge: P(yes) and the human verdict, agreement = confidence + shift (clipped)."""
    rng = np.random.default_rng(seed)
    c = np.round(rng.uniform(0.5, 1.0, n), 3)  # ties on purpose: distinct values < n
    f = rng.integers(0, 2, n)
    agree = rng.random(n) < np.clip(c + shift, 0, 1)
    human = np.where(agree, f, 1 - f)
    return np.where(f == 1, c, 1 - c), human


def _independent(c: np.ndarray, agree: np.ndarray, a: float, conf: float) -> tuple[float | None, list[float]]:
    """The same sequence walked with scipy.stats.binomtest: distinct confidences, descending, ≥ m above (the fewest
    items on which agreement (1 + a)/2 passes, clipped to [30, max(30, n/4)]), each next one ≥ ⌈n/200⌉ more items
    (or the last)."""
    n = c.size
    m = next(k for k in range(1, 5000)
             if int(k * (1 + a) / 2) > 0 and binomtest(int(k * (1 + a) / 2), k, a, alternative="greater").pvalue
             <= 1 - conf)
    m = max(MIN_ITEMS, min(m, max(MIN_ITEMS, n // 4)))
    step = max(1, -(-n // 200))
    distinct = sorted(set(c.tolist()), reverse=True)
    t_hat, pvals, last = None, [], -1
    for i, t in enumerate(distinct):
        k_above = int(np.sum(c >= t))
        if k_above < m or (last >= 0 and k_above - last < step and i != len(distinct) - 1):
            continue
        last = k_above
        k = int(agree[c >= t].sum())
        p = binomtest(k, k_above, a, alternative="greater").pvalue
        pvals.append(p)
        if p > 1 - conf:
            break
        t_hat = t
    return t_hat, pvals


@pytest.mark.parametrize("seed,shift,a", [(0, 0.0, 0.9), (1, 0.05, 0.9), (2, 0.0, 0.8), (3, -0.1, 0.7)])
def test_threshold_and_p_values_equal_scipy_binomtest(seed: int, shift: float, a: float) -> None:
    p, human = _judge(800, seed, shift)
    f = (p >= 0.5).astype(int)
    c = np.maximum(p, 1 - p)
    agree = (f == human).astype(int)
    sel = selective(c, agree, c, a, 0.95)
    t_ref, p_ref = _independent(c, agree, a, 0.95)
    assert sel.threshold == t_ref
    assert len(sel.steps) == len(p_ref) > 0
    np.testing.assert_allclose([s.p_value for s in sel.steps], p_ref, rtol=0, atol=1e-12)
    if t_ref is not None:
        n_dec = int(np.sum(c >= t_ref))
        k_dec = int(agree[c >= t_ref].sum())
        assert sel.n_decided_labelled == n_dec
        assert sel.agreement_lower == pytest.approx(beta.ppf(0.05, k_dec, n_dec - k_dec + 1), abs=1e-12)
        assert sel.agreement_lower >= a  # the duality p ≤ δ ⇔ CP lower ≥ A
        assert sel.coverage.value == n_dec / c.size


def test_bounds_equal_clopper_pearson_from_scipy() -> None:
    p, human = _judge(500, 7, 0.05)
    human = human.copy()
    human[300:] = -1
    cert = certify(p, human, agreement=0.9, confidence=0.95)
    f = (p >= 0.5).astype(int)[:300]
    y = human[:300]
    for got, k, n in ((cert.accuracy, np.sum(f == y), 300), (cert.tpr, np.sum((f == 1) & (y == 1)), np.sum(y == 1)),
                      (cert.tnr, np.sum((f == 0) & (y == 0)), np.sum(y == 0))):
        assert got.value == k / n
        assert got.lower == pytest.approx(beta.ppf(0.05, k, n - k + 1), abs=1e-12)
    assert cert.base_rate.value == np.mean(y == 1)
    assert cert.n_items == 500 and cert.n_labelled == 300
    assert cert.kappa is not None and cert.kappa_lower is not None and cert.kappa_lower <= cert.kappa


def test_a_good_judge_passes_and_the_sentence_says_so() -> None:
    rng = np.random.default_rng(5)
    n = 1000
    c = np.where(rng.random(n) < 0.8, 0.99, 0.6)
    f = rng.integers(0, 2, n)
    human = np.where(rng.random(n) < c, f, 1 - f)
    cert = certify(np.where(f == 1, c, 1 - c), human, agreement=0.9, min_coverage=0.5)
    assert cert.verdict == "PASS"
    assert cert.selective.threshold == 0.99
    assert cert.sentence.startswith("PASS: the judge decides 8") and "go to people" in cert.sentence


def test_a_useless_judge_fails_and_a_constant_one_is_named() -> None:
    rng = np.random.default_rng(6)
    n = 600
    human = rng.integers(0, 2, n)
    cert = certify(np.full(n, 0.1), human)
    assert cert.verdict == "FAIL"
    assert cert.selective.threshold is None
    assert any("says no to 100% of items" in w for w in cert.warnings)
    assert cert.sentence.startswith("FAIL: ")


def test_too_few_labels_is_not_decidable_with_a_count_capped_by_the_items_left() -> None:
    p = np.full(200, 0.99)
    human = np.r_[np.ones(20, dtype=int), np.full(180, -1)]
    cert = certify(p, human)
    assert cert.verdict == "NOT DECIDABLE"
    assert cert.more_labels is not None and 0 < cert.more_labels <= 180
    assert str(cert.more_labels) in cert.sentence and "of the 180 unlabelled" in cert.sentence
    assert cert.plan.n_half == 20 + cert.more_labels and (cert.plan.p_half or 0) >= 0.5
    assert cert.next_step and "seeded order" in cert.next_step


def test_everything_labelled_is_said_with_the_next_step_that_exists() -> None:
    """Issue 41 §1: a run whose every item is labelled used to be told 'about 71 more would reach 50% coverage'."""
    cert = certify(np.full(20, 0.99), np.ones(20, dtype=int))
    assert cert.verdict == "NOT DECIDABLE" and cert.more_labels is None
    assert "all 20 items are labelled" in cert.sentence
    assert cert.next_step and "--publish" in cert.next_step and "deployment items" in cert.next_step


def test_zero_labels_plans_from_the_assumed_agreement_capped_by_the_items() -> None:
    cert = certify(np.full(100, 0.99), np.full(100, -1))
    assert cert.verdict == "NOT DECIDABLE" and cert.sentence.startswith("NOT DECIDABLE: no labelled item yet")
    assert cert.plan.cap == 100 and cert.more_labels is None and "even with all 100 items labelled" in cert.sentence
    assert f"probability {cert.plan.p_cap:.2f} only" in cert.sentence and cert.next_step


def test_rogan_gladen_is_exact_on_its_formula_and_brackets() -> None:
    rng = np.random.default_rng(9)
    y = rng.integers(0, 2, 400)
    f = np.where(rng.random(400) < 0.9, y, 1 - y)
    fa = rng.integers(0, 2, 3000)
    r = corrected_pass_rate(fa, f, y)
    se, sp = np.mean(f[y == 1] == 1), np.mean(f[y == 0] == 0)
    assert r.value == pytest.approx((fa.mean() + sp - 1) / (se + sp - 1), abs=1e-12)
    assert r.lower <= r.value <= r.upper and r.note is None
    bad = corrected_pass_rate(fa, 1 - y, y)
    assert (bad.lower, bad.upper) == (0.0, 1.0) and bad.note


def test_consistency_share() -> None:
    c = consistency([(1, 1, 1), (1, 0, 1), (0, 0), (1,)])
    assert c is not None and c.n_items == 3 and c.share.value == pytest.approx(2 / 3)
    assert consistency([(1,), (0,)]) is None


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.6, 0.95))
def test_laws_threshold_passes_and_every_earlier_step_passed(seed: int, a: float) -> None:
    p, human = _judge(300, seed)
    f = (p >= 0.5).astype(int)
    c = np.maximum(p, 1 - p)
    agree = (f == human).astype(int)
    sel = selective(c, agree, c, a, 0.9)
    assert all(s.passed for s in sel.steps[:-1])
    assert [s.threshold for s in sel.steps] == sorted((s.threshold for s in sel.steps), reverse=True)
    if sel.threshold is not None:
        assert sel.agreement_lower is not None and sel.agreement_lower >= a - 1e-12
    # a stricter target never certifies more
    stricter = selective(c, agree, c, min(0.99, a + 0.05), 0.9)
    assert (stricter.coverage.value or 0) <= (sel.coverage.value or 0)


def test_start_items() -> None:
    assert start_items(1000, 0.9, 0.95) == 116
    assert start_items(200, 0.9, 0.95) == 50  # at most a quarter of the labelled items
    assert start_items(50, 0.9, 0.95) == MIN_ITEMS


def test_candidate_sequence_starts_at_min_items() -> None:
    t, n = candidate_sequence(np.linspace(0.5, 1.0, 100))
    assert n[0] == MIN_ITEMS and t[0] == pytest.approx(np.linspace(0.5, 1.0, 100)[-MIN_ITEMS])
    assert np.all(np.diff(n) >= 1) and n[-1] == 100


def test_apply_threshold_orders_escalations_least_confident_first() -> None:
    p = np.array([0.99, 0.4, 0.7, 0.05, 0.55, 0.5])
    c, decided, escalated = apply_threshold(p, None, 0.9)
    assert decided.tolist() == [0, 3]
    assert escalated.tolist() == [5, 4, 1, 2]  # c = 0.5, 0.55, 0.6, 0.7
    _, none, everyone = apply_threshold(p, None, None)
    assert none.size == 0 and everyone.size == p.size
    # a verdict given apart from P(yes) is as confident as P(its verdict): a "no" at P(yes) 0.99 is the least
    c2, _, esc2 = apply_threshold([0.99, 0.8], [0, 1], 0.7)
    assert c2[0] == pytest.approx(0.01) and esc2.tolist() == [0]


def test_agreement_curve_matches_scipy_point_by_point() -> None:
    p, human = _judge(400, 21)
    f = (p >= 0.5).astype(int)
    c = np.maximum(p, 1 - p)
    agree = (f == human).astype(int)
    cov, ag, lo = agreement_curve(c, agree, 0.95, points=50)
    order = np.argsort(-c, kind="stable")
    for x, a, low in zip(cov, ag, lo, strict=True):
        k = round(x * 400)
        got = int(agree[order[:k]].sum())
        assert a == got / k
        assert low == pytest.approx(beta.ppf(0.05, got, k - got + 1) if got else 0.0, abs=1e-12)


def test_rogan_gladen_never_prints_a_clipped_value_and_chance_only_when_the_bounds_allow_it() -> None:
    """Issue 41 §6: a clipped 0%/100% was shown beside [0, 1]; 'no better than chance' for TPR 82.6%, TNR 100%."""
    y = np.r_[np.ones(23, dtype=int), np.zeros(5, dtype=int)]
    f = np.r_[np.ones(19, dtype=int), np.zeros(4, dtype=int), np.zeros(5, dtype=int)]  # TPR 82.6%, TNR 100%
    r = corrected_pass_rate(np.ones(200, dtype=int), f, y)
    assert r.value is None and (r.lower, r.upper) == (0.0, 1.0) and r.note is not None
    assert "no better than chance" not in r.note and "too few labelled items of one verdict" in r.note
    f_lab = np.r_[np.ones(240), np.zeros(60), np.zeros(90), np.ones(10)].astype(int)  # TPR 0.8, TNR 0.9
    y_lab = np.r_[np.ones(300), np.zeros(100)].astype(int)
    outside = corrected_pass_rate(np.r_[np.ones(2850), np.zeros(150)].astype(int), f_lab, y_lab)  # q 0.95: π 1.21
    assert outside.value is None and outside.note and "cannot be corrected" in outside.note
    rng = np.random.default_rng(2)
    yy = rng.integers(0, 2, 400)
    chance = corrected_pass_rate(rng.integers(0, 2, 1000), rng.integers(0, 2, 400), yy)
    assert chance.value is None and chance.note and "no better than chance" in chance.note


def test_the_sentence_is_about_items_like_the_labelled_ones() -> None:
    p, human = _judge(800, 3, 0.2)
    cert = certify(p, human)
    assert cert.verdict == "PASS" and "on items like the labelled ones" in cert.sentence


def test_the_certificate_round_trips_as_its_type() -> None:
    from relgate_tui.core.judge_certificate import JudgeCertificate

    p, human = _judge(600, 4, 0.05)
    cert = certify(p, human, votes=[(1, 1, 0)] * 600)
    assert JudgeCertificate.from_json(cert.to_json()) == cert
    bad = cert.to_json()
    bad["selective"]["threshold"] = "abc"
    with pytest.raises(ValueError, match=r"^selective\.threshold: expected a number"):
        JudgeCertificate.from_json(bad)


def test_labels_left_out_of_the_prefix_are_named_when_none_is_usable() -> None:
    cert = certify(np.full(100, 0.99), np.full(100, -1), left_out=7)
    assert cert.sentence.startswith("NOT DECIDABLE: no usable labelled item yet (7 later labels left out")
