"""The human-only bound a watched gate is decided on (issue 33 §1, relgate_tui.core.certification.watched): the
anytime mode is valid at the first clearing, the fixed-n Clopper–Pearson half of the former ``best`` gate was not, and
a one-look bound decides nothing before its planned number of labels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relgate_tui.core.certification.intervals import clopper_pearson_lower, confidence_sequence_end
from relgate_tui.core.certification.watched import human_only_bound

GATE, RUNS, HORIZON = 0.90, 2000, 300


def _first_clearing_share(bounds: object, confidence: float) -> float:
    """Share of runs of a model exactly at the gate in which the bound reaches the gate at some label ≤ HORIZON.
    ``bounds(successes, n, confidence)`` gets every distinct (successes, n) of the runs at once (arrays) and returns
    their bounds; each run's path is then read off a (successes, n) table."""
    s, ks, ms = _runs()
    clears = np.zeros((HORIZON + 1, HORIZON + 1), dtype=bool)
    clears[ks, ms] = np.asarray(bounds(ks, ms, confidence)) >= GATE  # type: ignore[operator]
    hit = clears[s, np.arange(1, HORIZON + 1)[None, :]]
    return float(hit.any(1).mean())


def _runs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The runs' success counts after each label (RUNS × HORIZON) and their distinct (successes, n) pairs."""
    rng = np.random.default_rng(33)
    s = (rng.random((RUNS, HORIZON)) < GATE).cumsum(1)
    pairs = [(int(k), m) for m in range(1, HORIZON + 1) for k in np.unique(s[:, m - 1])]
    return s, np.array([k for k, _ in pairs]), np.array([m for _, m in pairs])


def test_the_former_best_gates_human_half_watched_passes_a_model_at_the_gate_too_often() -> None:
    share = _first_clearing_share(
        lambda ks, ms, c: [clopper_pearson_lower(int(k), int(m), c) for k, m in zip(ks, ms, strict=True)], 0.975)
    assert share > 0.025 + 3 * math.sqrt(0.025 * 0.975 / RUNS)  # the issue measured 13.6% within 300 labels


def test_the_anytime_bound_watched_after_every_label_stays_valid() -> None:
    """The watched gate reads ``human_only_bound(k, n).lower``, which is ``confidence_sequence_end(k, n)``: the
    vectorised call gives every pair's bound at once, and equals ``human_only_bound`` bit for bit where the decision
    turns (at each n, the largest k that does not clear and the smallest that does)."""
    share = _first_clearing_share(lambda ks, ms, c: confidence_sequence_end(ks, ms, c, end="lower"), 0.975)
    assert share <= 0.025 + 2 * math.sqrt(0.025 * 0.975 / RUNS)
    _, ks, ms = _runs()
    lower = confidence_sequence_end(ks, ms, 0.975, end="lower")
    for m in range(1, HORIZON + 1):
        at = np.flatnonzero(ms == m)
        below, above = at[lower[at] < GATE], at[lower[at] >= GATE]
        for i in ([below[np.argmax(ks[below])]] if below.size else []) + ([above[np.argmin(ks[above])]]
                                                                          if above.size else []):
            assert human_only_bound(int(ks[i]), m, 0.975).lower == lower[i]


def test_one_look_decides_nothing_before_the_planned_labels() -> None:
    early = human_only_bound(40, 40, mode="one-look", planned=120)
    assert early.lower is None and not early.decided
    assert early.note == "not decided yet: one-look at 120 labels, 40 so far"
    at = human_only_bound(110, 120, mode="one-look", planned=120)
    assert at.decided and at.lower == pytest.approx(clopper_pearson_lower(110, 120))
    with pytest.raises(ValueError, match="first 120"):
        human_only_bound(125, 130, mode="one-look", planned=120)
    with pytest.raises(ValueError, match="planned"):
        human_only_bound(5, 10, mode="one-look")


def test_no_label_no_number() -> None:
    none = human_only_bound(0, 0)
    assert none.lower is None and none.note == "no verified items yet"


@given(st.integers(1, 400), st.floats(0.0, 1.0))
def test_the_anytime_bound_is_below_the_one_look_bound_at_the_same_counts(n: int, share: float) -> None:
    k = int(round(share * n))
    anytime = human_only_bound(k, n).lower
    one = human_only_bound(k, n, mode="one-look", planned=n).lower
    assert anytime is not None and one is not None and anytime <= one + 1e-12


def test_below_the_gate_no_count_is_promised() -> None:
    from relgate_tui.core.certification.gate import sequential_gate
    from relgate_tui.core.certification.watched import plan_labels

    # the case: the live panel promised thousands of labels on a 200-item task below the gate
    today = sequential_gate(150, 190, 0.8)
    plan = plan_labels(150, 190, 0.8, 0.95, items_left=10)
    assert plan.more is None and plan.message == "the level is below the gate: more labels will not clear it"
    assert today.more_labels is not None and today.more_labels > 10_000  # sequential_gate: 22502


@given(st.integers(1, 300), st.floats(0.0, 1.0), st.integers(0, 500), st.sampled_from([0.7, 0.8, 0.9]))
def test_a_count_never_exceeds_the_items_left(n: int, share: float, left: int, gate: float) -> None:
    from relgate_tui.core.certification.watched import plan_labels

    k = int(round(share * n))
    plan = plan_labels(k, n, gate, 0.95, left)
    assert plan.more is None or 0 <= plan.more <= left
    if k / n <= gate and plan.more != 0:
        assert plan.more is None and "below the gate" in plan.message


def test_ten_calibration_items_all_labelled_promise_nothing() -> None:
    from relgate_tui.core.certification.watched import plan_labels

    plan = plan_labels(9, 10, 0.8, 0.95, items_left=0)
    assert plan.more is None and "no item is left" in plan.message
