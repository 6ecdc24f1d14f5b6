"""Issue 37 §2 in the core: a run's ``reliability_lower_bound`` is the bound its gate decides on
(:func:`relgate_tui.core.certification.gate.watched_lower_bound`), whatever the gate; the fixed-n Clopper–Pearson
value is kept apart as ``fixed_n_lower_bound``. No statistic changes: each number is the one it was, under one name."""

from __future__ import annotations

import numpy as np
import pytest

from relgate_tui.core.certification.certify import CertificationInput, compute_results
from relgate_tui.core.certification.gate import decide_gate, watched_lower_bound
from relgate_tui.core.certification.intervals import clopper_pearson_lower, confidence_sequence_end


def _input(x: int, n: int) -> CertificationInput:
    return CertificationInput.from_arrays(np.array([1.0] * x + [2.0] * (n - x)), k_max=10)


@pytest.mark.parametrize("gate", [None, 0.8])
def test_the_run_bound_is_the_watch_rule_s_with_or_without_a_gate(gate: float | None) -> None:
    inp = _input(108, 120)
    once = compute_results(inp, 0.1, 0.95, gate)
    watched = compute_results(inp, 0.1, 0.95, gate, watch="anytime")
    cp, cs = clopper_pearson_lower(108, 120, 0.95), float(confidence_sequence_end(108, 120, 0.95, end="lower"))
    assert once.reliability_lower_bound == once.fixed_n_lower_bound == cp and not once.bound_differs
    assert watched.reliability_lower_bound == cs < watched.fixed_n_lower_bound == cp and watched.bound_differs
    assert (round(cs, 3), round(cp, 3)) == (0.805, 0.843)  # the reproduction, from the integer counts
    assert watched.bound_label == "95% anytime lower bound" and once.bound_label == "95% lower bound"
    if gate is not None:
        assert watched.gate_decision is not None and watched.gate_decision.lower_bound == cs
        assert watched.gate_decision.basis_label == watched.bound_label


def test_a_one_look_has_no_bound_before_its_plan_and_clopper_pearson_at_it() -> None:
    before = compute_results(_input(40, 50), 0.1, 0.95, 0.7, watch="one-look", planned=60)
    assert before.reliability_lower_bound is None and before.fixed_n_lower_bound is not None
    assert before.bound_note == "not decided yet: one-look at 60 labels, 50 so far"
    at = compute_results(_input(48, 60), 0.1, 0.95, 0.7, watch="one-look", planned=60)
    assert at.reliability_lower_bound == at.fixed_n_lower_bound == clopper_pearson_lower(48, 60, 0.95)
    assert not at.bound_differs and at.bound_label == "95% one-look lower bound"


@pytest.mark.parametrize("watch,planned", [("once", None), ("anytime", None), ("one-look", 30), ("one-look", 10)])
def test_decide_gate_decides_on_watched_lower_bound(watch: str, planned: int | None) -> None:
    for x, n in ((0, 0), (17, 20), (20, 20), (5, 30)):
        d = decide_gate(0.5, successes=x, n=n, confidence=0.9, watch=watch, planned=planned)
        assert d.lower_bound == watched_lower_bound(x, n, 0.9, watch, planned)


def test_compute_results_refuses_an_unknown_watch() -> None:
    with pytest.raises(ValueError, match="watch"):
        compute_results(_input(1, 2), 0.1, watch="sometimes")
