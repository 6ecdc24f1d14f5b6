"""Issue 33 §2, §6, §8 on Results' "Verification judge" tab: labels after the first unlabelled item of the seeded
order are left out of the judge-assisted bound, and the tab says how many and why; the gate line is the honest plan;
κ without an interval says why."""

from __future__ import annotations

from relgate_tui.core import ppi
from relgate_tui.engine.certification.assisted import AssistedRow, section_from_rows
from relgate_tui.tui.results_judges import assisted_view


def _rows(humans):
    return [AssistedRow(f"i{k}", 1, None, "ok", h) for k, h in enumerate(humans)]


def test_a_gap_leaves_later_labels_out_and_the_tab_says_so():
    humans = [1] * 10 + [None] + [1] * 20 + [None] * 30  # item 11 of the seeded order unlabelled, 20 labels after it
    section = section_from_rows(_rows(humans), confidence=0.95, judge=("http://j", "j"), mixed=False, gate=0.8)
    assert section.n_labels == 10 and section.prefix.left_out == 20
    f_all = [1] * len(humans)
    assert section.lower_bound == ppi.reliability_bound(f_all, [1] * 10, [1] * 10).lower  # the prefix only
    block = section.to_json()
    assert block["left_out"] == 20 and "20 later labels left out: item 11" in block["left_out_note"]
    text = str(assisted_view(section))
    assert "20 later labels left out: item 11 of the seeded order is not labelled yet" in text
    assert f"gate: {section.more_labels_message}" in text


def test_kappa_at_perfect_agreement_carries_its_note():
    """Issue 33 §8 / h33: a judge that agrees on every label has κ = 1 and no bootstrap interval; the JSON block's
    ``kappa.note`` and the tab say why (no zero-width "95%" interval)."""
    humans = [1, 0, 1, 1, 0, 1, 1, 1] * 3
    rows = [AssistedRow(f"i{k}", h, None, "ok", h) for k, h in enumerate(humans)]
    section = section_from_rows(rows, confidence=0.95, judge=("http://j", "j"), mixed=False)
    kappa = section.to_json()["agreement"]["kappa"]
    assert kappa["estimate"] == 1.0 and kappa["lower"] is None and kappa["note"].startswith("no interval")
    assert f"1.00 ({kappa['note']})" in str(assisted_view(section)).replace("\n", "")
