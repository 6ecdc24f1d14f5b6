"""Judge cascade: J = 1 is the single-judge certificate, the walk's tests against scipy, the path reads no human
label, and simulated worlds — validity of the whole cascade ≤ δ + 2 SE, a useless cheap judge costs at most what the
cascade spent on it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta, binomtest

from relgate_tui.core.judge_cascade import (
    COST,
    LAST_SHARE,
    Cascade,
    apply_cascade,
    cascade_of,
    cascade_path,
    certify_cascade,
    route,
)
from relgate_tui.core.judge_certificate import certify, selective

A, CONF = 0.90, 0.95
DELTA = 1 - CONF


def _strong(d: np.ndarray) -> np.ndarray:
    return 0.5 + 0.5 * (1 - d ** 4)


def _world(name: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(confidences, P(right)) of the cheap and the strong judge (bench/judge_cascade.py's worlds)."""
    d = rng.random(n)
    if name == "easy-only":
        c1 = q1 = 1 - d / 2
    elif name == "overconfident":
        q1 = 1 - d / 2
        c1 = np.where(rng.random(n) < 0.5, 1 - rng.random(n) / 20, q1)
    else:  # worse than chance
        c1, q1 = 1 - d / 2, np.full(n, 0.4)
    return np.array([c1, _strong(d)]), np.array([q1, _strong(d)])


def _draw(name: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c, q = _world(name, rng, n)
    y = (rng.random(n) < 0.7).astype(np.int64)
    return c, np.where(rng.random(q.shape) < q, y, 1 - y), y


def _truth(c: np.ndarray, q: np.ndarray, t: tuple[float | None, ...]) -> tuple[float, float]:
    d = route(c, t)
    dec = d >= 0
    return (float(q[d[dec], np.nonzero(dec)[0]].mean()) if dec.any() else 1.0), float(dec.mean())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_judge_is_exactly_the_single_judge_certificate(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 700
    p = np.round(rng.random(n), 3)
    human = np.where(rng.random(n) < 0.8, (rng.random(n) < np.maximum(p, 0.0)).astype(int), -1)
    cas = certify_cascade([p], human)
    sel = certify(p, human).selective
    assert cas.thresholds == (sel.threshold,) and cas.route == ("single" if sel.threshold is not None else "none")
    assert [(s.thresholds[0], s.n_above, s.n_agree, s.p_value, s.passed) for s in cas.path] == \
        [(s.threshold, s.n_above, s.n_agree, s.p_value, s.passed) for s in sel.steps]
    assert cas.n_decided == sel.coverage.successes and cas.coverage == sel.coverage.value
    assert (cas.coverage_lower, cas.coverage_upper) == (sel.coverage.lower, sel.coverage.upper)
    assert cas.agreement_lower == sel.agreement_lower and cas.start == sel.start and cas.last == ()
    assert cas.n_decided_labelled == sel.n_decided_labelled


def test_walk_p_values_equal_scipy_and_the_bounds_are_exact() -> None:
    c, f, y = _draw("easy-only", np.random.default_rng(5), 600)
    cas = cascade_of(c, f, y, A, CONF)
    assert cas.route in ("path", "last") and cas.path_delta == pytest.approx(DELTA * (1 - LAST_SHARE))
    for s in (*cas.path, *cas.last):
        d = route(c, s.thresholds)
        dec = d >= 0
        k = int(np.sum(f[d[dec], np.nonzero(dec)[0]] == y[dec]))
        assert (s.n_above, s.n_agree) == (int(dec.sum()), k)
        assert s.p_value == pytest.approx(binomtest(k, int(dec.sum()), A, alternative="greater").pvalue, abs=1e-12)
    path_ok = [s for s in cas.path if s.passed]
    assert all(s.passed for s in cas.path[:-1])  # the walk stops at its first failure
    chosen = path_ok[-1] if cas.route == "path" else [s for s in cas.last if s.passed][-1]
    assert chosen.thresholds == cas.thresholds
    assert cas.agreement_lower == pytest.approx(beta.ppf(DELTA, cas.n_agree, cas.n_decided_labelled - cas.n_agree + 1))
    assert cas.agreement_lower is not None and cas.agreement_lower >= A  # certified at a stricter level than CONF
    assert sum(s.n_decided for s in cas.stages) == cas.n_decided and sum(s.n_agree for s in cas.stages) == cas.n_agree
    assert cas.calls_saved == (cas.stages[0].n_decided,)  # the strong judge is asked only where the cheap did not decide


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_the_path_reads_no_human_label(seed: int) -> None:
    rng = np.random.default_rng(seed)
    c, f, y = _draw("easy-only", rng, 250)
    other = np.where(rng.random(y.size) < 0.3, 1 - y, y)
    a, b = cascade_of(c, f, y), cascade_of(c, f, other)
    k = min(len(a.path), len(b.path))
    assert [s.thresholds for s in a.path[:k]] == [s.thresholds for s in b.path[:k]]


def test_path_steps_have_enough_items_and_falling_predicted_cost() -> None:
    c, f, _ = _draw("easy-only", np.random.default_rng(3), 800)
    path = cascade_path(c, f, 116, COST)
    assert len(path) >= 5 and len(set(path)) == len(path)
    sizes = [int(np.sum(route(c, t) >= 0)) for t in path]
    assert min(sizes) >= 116
    cost = [COST * (np.mean(route(c, t) != 0) if t[1] is not None else 0.0) + np.mean(route(c, t) < 0) for t in path]
    assert np.all(np.diff(cost) <= 1e-12)  # each step the cheapest at a lower predicted agreement: cost falls


def test_apply_routes_like_the_certificate_and_orders_people_least_confident_first() -> None:
    c, f, y = _draw("easy-only", np.random.default_rng(8), 800)
    cas = cascade_of(c, f, y)
    c_new, _, _ = _draw("easy-only", np.random.default_rng(9), 200)
    d, people = apply_cascade(c_new, cas.thresholds)
    assert np.array_equal(d, route(c_new, cas.thresholds))
    assert set(people.tolist()) == set(np.nonzero(d < 0)[0].tolist())
    last = max(j for j, t in enumerate(cas.thresholds) if t is not None)
    assert np.all(np.diff(c_new[last][people]) >= 0)
    with pytest.raises(ValueError):
        apply_cascade(c_new[:1], cas.thresholds)


def test_json_round_trip_and_refusals() -> None:
    c, f, y = _draw("overconfident", np.random.default_rng(4), 500)
    y = np.where(np.arange(500) % 5 == 0, -1, y)
    cas = cascade_of(c, f, y)
    assert Cascade.from_json(cas.to_json()) == cas
    bad = {**cas.to_json(), "route": "maybe"}
    with pytest.raises(ValueError, match="route"):
        Cascade.from_json(bad)
    with pytest.raises(ValueError, match="n_items"):
        Cascade.from_json({**cas.to_json(), "n_items": "500"})
    with pytest.raises(ValueError):
        cascade_of(c, f[:, :10], y)
    with pytest.raises(ValueError):
        cascade_of(c, f, y, cost=-1.0)


RUNS = 120


@pytest.mark.parametrize("name,seed", [("easy-only", 11), ("overconfident", 12), ("worse than chance", 13)])
def test_simulated_world_validity_and_coverage(name: str, seed: int) -> None:
    """Per run the cascade's true agreement and share decided (population of 20,000 items), and the strong judge
    alone's share: at the full δ in the easy-only world, at the δ the cascade left to its last-judge sequence in the
    worlds whose cheap judge is useless (what the cascade spent on the cheap judge is the rest)."""
    rng = np.random.default_rng(seed)
    pop_c, pop_q = _world(name, np.random.default_rng(seed + 1), 20_000)
    out = np.zeros((3, RUNS))
    for r in range(RUNS):
        c, f, y = _draw(name, rng, 300)
        cas = cascade_of(c, f, y, A, CONF)
        out[0, r], out[1, r] = _truth(pop_c, pop_q, cas.thresholds)
        conf = CONF if name == "easy-only" else 1 - cas.last_delta
        t = selective(c[1], (f[1] == y).astype(np.int64), c[1], A, conf).threshold
        out[2, r] = _truth(pop_c, pop_q, (None, t))[1]
    agreement, share, strong = out
    assert np.mean(agreement < A) <= DELTA + 2 * np.sqrt(DELTA * (1 - DELTA) / RUNS)
    if name == "easy-only":
        assert np.median(share) >= 0.9 * np.median(strong)
    else:
        assert np.median(share) >= np.median(strong)
