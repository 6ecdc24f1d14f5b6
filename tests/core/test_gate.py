"""Issue 11 §4: the gate decision and the spot-check's anytime-valid live gate (core/gate.py, the confidence
sequence of core/intervals.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from relgate_tui.core.certification.gate import (
    ASSISTED_UNUSABLE_NOTE,
    GATE_ON_CHOICES,
    check_gate_on,
    decide_gate,
    sequential_gate,
)
from relgate_tui.core.certification.intervals import clopper_pearson_lower, confidence_sequence, confidence_sequence_end


def _lower_table(n_max: int, bound) -> np.ndarray:
    """table[n, s] = the bound after s successes of n (nan where s > n)."""
    n = np.arange(n_max + 1)[:, None] * np.ones((1, n_max + 1))
    s = np.arange(n_max + 1)[None, :] * np.ones((n_max + 1, 1))
    ok = s <= n
    out = np.full(n.shape, np.nan)
    out[ok] = bound(s[ok], n[ok])
    return out


def _pass_probability(table: np.ndarray, p: float, gate: float) -> float:
    """Exact P(the bound reaches the gate at some n <= N) for i.i.d. Bernoulli(p) labels: a labeller who stops the
    moment it does. Dynamic programming over the success count; mass that passes is removed."""
    n_max = table.shape[0] - 1
    alive = np.zeros(n_max + 1)
    alive[0] = 1.0
    passed = 0.0
    for n in range(1, n_max + 1):
        nxt = np.zeros_like(alive)
        nxt[1:] += alive[:-1] * p
        nxt += alive * (1 - p)
        hit = np.nan_to_num(table[n] >= gate)
        passed += float((nxt * hit).sum())
        alive = nxt * (1 - hit)
    return passed


def _tabled_confidence_sequence(monkeypatch, n_max: int) -> None:
    """Make ``decide_gate``'s human-only anytime bound (``confidence_sequence_end`` at 95%, lower end) a lookup in a
    table of the same function over every (successes, n ≤ n_max), computed once, vectorised — spot-checked against
    the scalar calls here — so a simulation can re-decide the gate after every label in seconds."""
    from relgate_tui.core.certification import gate as gate_module

    table = _lower_table(n_max, lambda s, n: confidence_sequence_end(s, n, 0.95, end="lower"))
    for s_, n_ in ((0, 1), (1, 1), (170, 190), (n_max, n_max), (57, 64)):
        assert table[n_, s_] == confidence_sequence_end(s_, n_, 0.95, end="lower")
    real_end = gate_module.confidence_sequence_end

    def tabled_end(successes, n, confidence, *args, end="lower", **kwargs):
        if confidence == 0.95 and end == "lower" and np.ndim(successes) == 0 and int(n) <= n_max:
            return float(table[int(n), int(successes)])
        return real_end(successes, n, confidence, *args, end=end, **kwargs)

    monkeypatch.setattr(gate_module, "confidence_sequence_end", tabled_end)


CP_LOWER = np.vectorize(lambda s, n: clopper_pearson_lower(int(s), int(n)) if n > 0 else 0.0)


def test_stopping_when_the_confidence_sequence_clears_the_gate_is_safe():
    """A labeller who watches the live bound after every label (up to 400) and stops as soon as it clears 0.90
    passes a model whose true coverage is exactly 0.90 at most 5% of the time (exact); watching the fixed-n
    Clopper-Pearson bound instead passes it far more often (issue 11 measured 11.5%)."""
    n_max = 400
    cs = _lower_table(n_max, lambda s, n: confidence_sequence_end(s, n, 0.95, end="lower"))
    assert _pass_probability(cs, 0.90, 0.90) <= 0.05
    assert _pass_probability(cs, 0.88, 0.90) <= 0.05
    cp = _lower_table(n_max, CP_LOWER)
    assert _pass_probability(cp, 0.90, 0.90) > 0.08  # the fixed-n bound is not safe to watch


def test_simulated_labellers_who_stop_at_the_gate():
    rng = np.random.default_rng(11)
    n_max, trials = 300, 3000
    labels = rng.random((trials, n_max)) < 0.90
    successes = labels.cumsum(axis=1)
    table = _lower_table(n_max, lambda s, n: confidence_sequence_end(s, n, 0.95, end="lower"))
    lower = table[np.arange(1, n_max + 1)[None, :], successes]
    passed = (lower >= 0.90).any(axis=1).mean()
    assert passed <= 0.05


def test_confidence_sequence_matches_its_definition():
    """The ends solve M_n(p) = 1/(1 - confidence) for the beta-binomial mixture (checked by numerical integration)."""
    a, b = 18.0, 2.0
    for s, n in ((97, 100), (45, 50), (3, 10), (180, 200)):
        lower, upper = confidence_sequence(s, n, 0.95)
        for p in (lower, upper):
            mix = integrate.quad(lambda t: t**s * (1 - t) ** (n - s) * stats.beta.pdf(t, a, b), 0, 1, epsabs=0,
                                 limit=200)[0]
            assert mix / (p**s * (1 - p) ** (n - s)) == pytest.approx(20.0, rel=1e-6)
        assert lower < s / n < upper
        assert lower <= clopper_pearson_lower(s, n)  # anytime validity costs width
    assert confidence_sequence(0, 10) [0] == 0.0 and confidence_sequence(10, 10)[1] == 1.0
    assert confidence_sequence(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        confidence_sequence(5, 4)
    with pytest.raises(ValueError):
        confidence_sequence(1, 4, confidence=1.0)


def test_sequential_gate_says_decided_or_how_many_more():
    g = sequential_gate(200, 200, 0.90)
    assert g.decided == "PASS" and g.summary() == "decided: PASS after 200 labels"
    g = sequential_gate(100, 200, 0.90)
    assert g.decided == "FAIL" and g.summary() == "decided: FAIL after 200 labels"
    g = sequential_gate(48, 50, 0.90)
    assert g.decided is None and g.more_labels is not None and g.summary().startswith("≈ ")
    # the estimate is right: at the same success rate (rounded down), that many more labels decide it, fewer not
    m = g.more_labels
    assert sequential_gate(math.floor(48 + 0.96 * m + 1e-9), 50 + m, 0.90).decided == "PASS"
    for fewer in range(1, m, 7):
        assert sequential_gate(math.floor(48 + 0.96 * fewer + 1e-9), 50 + fewer, 0.90).decided is None
    f = sequential_gate(40, 50, 0.90)
    assert f.more_labels is not None and sequential_gate(math.ceil(40 + 0.8 * f.more_labels - 1e-9),
                                                         50 + f.more_labels, 0.90).decided == "FAIL"
    assert sequential_gate(45, 50, 0.90).more_labels is None  # at the gate's own rate it never decides
    assert sequential_gate(0, 0, 0.90).summary() == "undecided: more labels needed"
    assert sequential_gate(95, 100, 0.9, confidence=0.8).lower > sequential_gate(95, 100, 0.9).lower


def test_decide_gate_guards_its_inputs():
    d = decide_gate(0.9, successes=93, n=100, confidence=0.95)
    assert d.gate_on == "bound" and d.value == d.lower_bound == clopper_pearson_lower(93, 100, 0.95)
    assert d.level == 93 / 101 and d.passed is (d.lower_bound >= 0.9)
    assert decide_gate(0.9, successes=93, n=100, confidence=0.95, gate_on="level").passed  # 0.921 ≥ 0.9
    with pytest.raises(ValueError):
        decide_gate(1.5, successes=9, n=10, confidence=0.95)
    with pytest.raises(ValueError):
        decide_gate(0.9, successes=9, n=10, confidence=0.95, gate_on="mean")
    with pytest.raises(ValueError):
        decide_gate(0.9, successes=11, n=10, confidence=0.95)
    assert GATE_ON_CHOICES == ("bound", "level", "assisted")
    assert check_gate_on("best") == "assisted"  # an old config's name: the gate it is now (issue 37 §3)
    with pytest.raises(ValueError):
        check_gate_on("better")


def test_assisted_gates_use_the_assisted_bound_at_full_confidence():
    """"assisted" and "best": the judge-assisted bound (one e-process, core/ppi.py) at the full confidence — no
    halving, no fixed-n Clopper–Pearson half (issue 33 §1; the former δ/2 test is gone: its human half was not
    valid when watched)."""
    asked: list[float] = []

    def assisted(c: float) -> float:
        asked.append(c)
        return 0.91 if c == 0.95 else 0.89

    a = decide_gate(0.9, successes=80, n=90, confidence=0.95, gate_on="assisted", assisted=assisted)
    assert (a.gate_on, a.value, a.passed, a.assisted_lower_bound) == ("assisted", 0.91, True, 0.91)
    assert a.lower_bound == clopper_pearson_lower(80, 90, 0.95) and a.level == 80 / 91
    assert a.summary() == "PASS: 95% judge-assisted lower bound 91.0% ≥ gate 90.0%"
    b = decide_gate(0.9, successes=80, n=90, confidence=0.95, gate_on="best", assisted=assisted)
    assert set(asked) == {0.95} and (b.value, b.passed) == (0.91, True)
    assert "confidence_each" not in b.to_json() and b.to_json()["assisted_lower_bound"] == 0.91
    # an assisted gate whose bound cannot be used is decided on the human-only bound, and says so
    c = decide_gate(0.85, successes=80, n=90, confidence=0.95, gate_on="best", assisted=None)
    assert c.gate_on == "bound" and c.note == ASSISTED_UNUSABLE_NOTE and c.value == c.lower_bound
    w = decide_gate(0.85, successes=80, n=90, confidence=0.95, gate_on="best", assisted=None, watch="anytime")
    assert w.lower_bound == confidence_sequence_end(80, 90, 0.95, end="lower") < c.lower_bound
    # undecided: nothing is decided, the reason is the summary
    u = decide_gate(0.85, successes=80, n=90, confidence=0.95, gate_on="assisted", assisted=assisted,
                    undecided="undecided: sampling is incomplete")
    assert u.passed is None and u.summary() == "undecided: sampling is incomplete" and u.value == 0.91


@given(st.integers(0, 60), st.integers(0, 60), st.floats(0.0, 1.0), st.sampled_from([0.8, 0.9, 0.95]),
       st.sampled_from(["once", "anytime"]))
def test_best_is_the_assisted_bound_whatever_the_human_counts(x, extra, threshold, confidence, watch):
    n = max(1, x + extra)
    d = decide_gate(threshold, successes=x, n=n, confidence=confidence, gate_on="best", assisted=lambda c: 0.5,
                    watch=watch)
    assert d.value == 0.5 and d.passed is (0.5 >= threshold)


def test_watched_best_gate_is_valid_when_re_decided_after_every_label(monkeypatch):
    """Issue 33 §1, at the decide_gate level: a reviewer labels a model whose true reliability is exactly the gate
    (0.90), with a coin-flip judge on N = 2,000 items, and stops the first time ``best`` says PASS. The former rule
    (max of Clopper–Pearson and the assisted bound at 97.5%) passed it in ≈ 10% of runs within 200 labels; the
    shipped rule must stay ≤ δ = 5% (+ 2 MC SE).

    Vectorised (the same 200 runs × 200 labels, drawn in the same order, each re-decided by ``decide_gate`` after
    every label): the runs' assisted paths come from one ``ppi.bound_paths`` call (what ``bound_path`` computes per
    run), and the human-only anytime bound that ``decide_gate`` computes beside it (unused by ``best``) is read from
    a table of ``confidence_sequence_end`` over every (successes, n) — the same function, vectorised
    (:func:`_tabled_confidence_sequence`)."""
    from relgate_tui.core import ppi

    rng = np.random.default_rng(33)
    runs, labels, n_items, gate = 200, 200, 2000, 0.90
    f_all = np.empty((runs, n_items))
    y = np.empty((runs, labels))
    for r in range(runs):
        f_all[r] = (rng.random(n_items) < 0.5).astype(float)
        y[r] = (rng.random(labels) < gate).astype(float)
    paths: dict[float, np.ndarray] = {}

    def path(c: float) -> np.ndarray:
        if c not in paths:
            paths[c] = ppi.bound_paths(f_all.sum(axis=1), n_items, f_all[:, :labels], y, c)
        return paths[c]

    assert np.array_equal(path(0.95)[3], ppi.bound_path(f_all[3], f_all[3, :labels], y[3], 0.95))
    _tabled_confidence_sequence(monkeypatch, labels)
    passed = 0
    counts = y.cumsum(axis=1).astype(int)
    for r in range(runs):
        for m in range(1, labels + 1):
            d = decide_gate(gate, successes=int(counts[r, m - 1]), n=m, confidence=0.95, gate_on="best",
                            assisted=lambda c, r=r, m=m: float(path(c)[r, m - 1]), watch="anytime")
            if d.passed:
                passed += 1
                break
    share = passed / runs
    assert share <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs), share


def test_a_watched_bound_gate_is_anytime_valid_and_one_look_waits_for_its_labels(monkeypatch):
    """``watch="anytime"``: re-decided after every label, a model at the gate passes ≤ δ (exact DP, as above);
    ``"once"`` (the Clopper–Pearson bound) re-decided so passes it > 8%. ``"one-look"``: undecided before the planned
    labels, the exact bound at them. (decide_gate is asked at every (n, s); its anytime bound is read from the
    vectorised table of :func:`_tabled_confidence_sequence`.)"""
    n_max = 200
    _tabled_confidence_sequence(monkeypatch, n_max)
    table = np.full((n_max + 1, n_max + 1), np.nan)
    for watch, expect_valid in (("anytime", True), ("once", False)):
        for n in range(1, n_max + 1):
            for s in range(n + 1):
                table[n, s] = decide_gate(0.9, successes=s, n=n, confidence=0.95, watch=watch).value
        p = _pass_probability(table, 0.90, 0.90)
        assert (p <= 0.05) is expect_valid, (watch, p)
    early = decide_gate(0.8, successes=40, n=40, confidence=0.95, watch="one-look", planned=120)
    assert early.passed is None and early.lower_bound is None
    assert early.summary() == "undecided: not decided yet: one-look at 120 labels, 40 so far"
    at = decide_gate(0.8, successes=110, n=120, confidence=0.95, watch="one-look", planned=120)
    assert at.passed is True and at.lower_bound == clopper_pearson_lower(110, 120, 0.95)
    assert at.to_json()["planned_labels"] == 120 and at.to_json()["watch"] == "one-look"
    late = decide_gate(0.8, successes=130, n=140, confidence=0.95, watch="one-look", planned=120)
    assert late.lower_bound == confidence_sequence_end(130, 140, 0.95, end="lower") and "anytime" in late.note
    with pytest.raises(ValueError):
        decide_gate(0.8, successes=1, n=1, confidence=0.95, watch="one-look")


def test_no_verified_item_gives_no_number_and_no_decision():
    """Issue 33 §7: n = 0 — level and bound None (null in JSON), nothing decided, "no verified items yet"."""
    for gate_on in GATE_ON_CHOICES:
        d = decide_gate(0.8, successes=0, n=0, confidence=0.95, gate_on=gate_on)
        assert d.level is None and d.lower_bound is None and d.passed is None and d.value is None
        assert "no verified items yet" in d.summary()
        j = d.to_json()
        assert j["level"] is None and j["lower_bound"] is None and j["passed"] is None
