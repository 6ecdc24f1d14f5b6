"""Issue 28 §3: the verification judge's section is typed (:class:`AssistedSection`) and serialised once
(:meth:`AssistedSection.to_json`); :func:`recompute` checks a results file's block without the run."""

from __future__ import annotations

import numpy as np

from relgate_tui.core import ppi
from relgate_tui.core.agreement import agreement
from relgate_tui.engine.certification.assisted import AssistedRow, recompute, section_from_rows
from relgate_tui.engine.certification.calls import CallCounts

JUDGE = ("http://127.0.0.1:1/v1", "sim-judge")


def _rows(n: int = 40, labelled: int = 15) -> tuple[AssistedRow, ...]:
    rng = np.random.default_rng(3)
    out = []
    for i in range(n):
        f = int(rng.random() < 0.8)
        human = (f if rng.random() < 0.9 else 1 - f) if i < labelled else None
        out.append(AssistedRow(f"q{i}", f, None, "ok" if i % 7 else "unparseable", human))
    return tuple(out)


def test_the_section_is_the_core_s_bound_and_agreement_and_its_json_checks_out():
    rows = _rows()
    s = section_from_rows(rows, confidence=0.9, judge=JUDGE, mixed=False, calls=CallCounts(3, 37, 0), gate=0.6)
    f_all, f_lab, y_lab = s.arrays()
    assert s.n_judged == 40 and s.n_labels == 15 == f_lab.size
    assert s.bound == ppi.reliability_bound(f_all, f_lab, y_lab, 0.9)
    assert s.agreement == agreement(f_lab, y_lab, 0.9)
    assert s.more_labels == ppi.more_labels_needed(f_all, f_lab, y_lab, 0.6, 0.9)
    block = s.to_json()
    assert block["calls"] == {"made": 3, "cached": 37, "failed": 0} and block["more_labels"] == s.more_labels
    assert block["n_judge_unparseable"] == sum(r.status == "unparseable" for r in rows)
    assert block["agreement"]["table"]["judge_yes_human_no"] == s.agreement.yes_no
    assert block["population"].startswith("every sampled item") and s.message is None
    assert recompute(block) == s.bound  # the file alone gives the bound back
    bound_at = s.gate_bound()
    assert bound_at is not None and bound_at(0.9) == s.bound.lower
    assert bound_at(0.95) == ppi.reliability_bound(f_all, f_lab, y_lab, 0.95).lower


def test_no_bound_says_why_and_a_mixed_population_is_not_gated_on():
    waiting = section_from_rows(None, confidence=0.95, judge=JUDGE, mixed=False)
    assert waiting.bound is None and waiting.gate_bound() is None and "not been asked" in (waiting.message or "")
    assert waiting.to_json()["lower_bound"] is None and waiting.to_json()["verdicts"] == []
    empty = section_from_rows((), confidence=0.95, judge=JUDGE, mixed=True)
    assert "nothing for the judge" in (empty.message or "") and empty.to_json()["n_judged"] == 0
    mixed = section_from_rows(_rows(), confidence=0.95, judge=JUDGE, mixed=True, gate=None)
    assert mixed.bound is not None and mixed.gate_bound() is None  # two bounds of different populations
    assert "more_labels" not in mixed.to_json() and mixed.population.startswith("sampled items without")
