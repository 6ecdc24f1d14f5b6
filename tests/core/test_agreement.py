"""Judge-vs-human agreement (issue 22 §3, relgate_tui.core.agreement): the 2×2 table, Cohen's κ and its bootstrap
interval, the false-accept rate and its exact upper bound."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.core.agreement import agreement
from relgate_tui.core.certification.intervals import clopper_pearson_upper


def _pairs(yy: int, yn: int, ny: int, nn: int) -> tuple[list[int], list[int]]:
    judge = [1] * (yy + yn) + [0] * (ny + nn)
    human = [1] * yy + [0] * yn + [1] * ny + [0] * nn
    return judge, human


def test_table_kappa_and_false_accepts_of_a_worked_example() -> None:
    # 40 yes/yes, 5 judge-yes/human-no, 10 judge-no/human-yes, 45 no/no (n = 100)
    a = agreement(*_pairs(40, 5, 10, 45))
    assert (a.yes_yes, a.yes_no, a.no_yes, a.no_no, a.n) == (40, 5, 10, 45, 100)
    po, pe = 0.85, (45 * 50 + 55 * 50) / 100**2  # p_o and the margins' chance agreement
    assert a.kappa == pytest.approx((po - pe) / (1 - pe))
    assert a.kappa_lower < a.kappa < a.kappa_upper
    assert a.false_accept_rate == pytest.approx(5 / 50)  # of the 50 answers humans rejected, 5 accepted
    assert a.false_accept_upper == pytest.approx(clopper_pearson_upper(5, 50, 0.95))
    assert a.agreement_rate == pytest.approx(0.85)


def test_perfect_and_degenerate_agreement() -> None:
    perfect = agreement(*_pairs(30, 0, 0, 10))
    assert perfect.kappa == pytest.approx(1.0) and perfect.false_accept_rate == 0.0
    assert 0.0 < perfect.false_accept_upper < 0.3  # 0 of 10: Clopper–Pearson still allows some
    constant = agreement([1, 1, 1], [1, 1, 1])  # one verdict everywhere: κ undefined, no rejected answer
    assert constant.kappa is None and constant.false_accept_rate is None and constant.false_accept_upper is None
    empty = agreement([], [])
    assert empty.n == 0 and empty.kappa is None and empty.agreement_rate is None


def test_the_bootstrap_interval_is_seeded() -> None:
    j, h = _pairs(20, 3, 4, 13)
    assert agreement(j, h) == agreement(j, h)


@pytest.mark.parametrize("args", [([1, 0], [1]), ([2, 0], [1, 0]), ([[1]], [[1]])])
def test_malformed_verdicts_are_errors(args) -> None:
    with pytest.raises(ValueError):
        agreement(*args)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=60))
def test_laws(pairs) -> None:
    judge, human = (list(x) for x in zip(*pairs, strict=True))
    a = agreement(judge, human, n_boot=200)
    assert a.n == len(pairs)
    assert a.agreement_rate == pytest.approx(np.mean(np.array(judge) == np.array(human)))
    if a.kappa is not None:
        assert -1.0 - 1e-9 <= a.kappa <= 1.0 + 1e-9
    if a.false_accept_rate is not None:
        assert a.false_accept_rate <= a.false_accept_upper <= 1.0
    swapped = agreement(human, judge, n_boot=200)  # κ is symmetric in its two raters
    assert (a.kappa is None) == (swapped.kappa is None)
    if a.kappa is not None:
        assert a.kappa == pytest.approx(swapped.kappa)


def test_a_degenerate_bootstrap_gives_no_zero_width_interval() -> None:
    """Issue 33 §8: perfect agreement gave [1.0, 1.0], a constant reviewer [0, 0], each called a 95% interval."""
    from relgate_tui.core.agreement import agreement as judge_agreement
    from relgate_tui.core.review.agreement import agreement as review_agreement
    from relgate_tui.core.review.agreement import agreement_json

    y = np.array([1, 0] * 15)
    for judge in (y, np.ones(30, dtype=np.int64)):
        a = judge_agreement(judge, y)
        assert a.kappa is not None and a.kappa_lower is None and a.kappa_upper is None
        assert a.kappa_note is not None and a.kappa_note.startswith("no interval")
    same = {f"i{k}": {"a": "1" if k % 2 else "2", "b": "1" if k % 2 else "2"} for k in range(30)}
    r = review_agreement(same, 2)
    for e in (r.fleiss_kappa, r.krippendorff_alpha, r.pairs[0].cohen_kappa):
        assert e.value == 1.0 and e.ci is None and e.note is not None
    assert agreement_json(r)["fleiss_kappa"]["ci_note"].startswith("no interval")
    varied = review_agreement({f"i{k}": {"a": "1" if k % 2 else "2", "b": "1" if k % 3 else "2"}
                               for k in range(30)}, 2)
    kappa = varied.pairs[0].cohen_kappa
    assert kappa.note is None and kappa.ci is not None and kappa.ci[0] < kappa.ci[1]
