"""Small samples say so (issue 24 §7): one caveat line per claim a study's n or splits cannot support."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest

from relgate_tui.cli import main
from relgate_tui.engine.judging.studies import (
    IRT_STABLE_N,
    intervals_caveats,
    irt_caveats,
    jury_caveats,
    smallest_wilcoxon_p,
)

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize("splits, caveat", [(3, True), (4, True), (5, False), (10, False)])
def test_jury_splits_that_can_never_reach_p_below_alpha_say_so(splits, caveat):
    from scipy.stats import wilcoxon

    # the smallest p is every split favouring the jury — exactly what the exact test gives then
    p = wilcoxon(np.arange(1, splits + 1, dtype=float), alternative="greater", method="exact").pvalue
    assert smallest_wilcoxon_p(splits) == pytest.approx(p)
    lines = jury_caveats(NS(splits=splits, claim_alpha=0.05))
    assert bool(lines) == caveat
    if splits == 3:
        assert lines == ["with 3 splits the paper's exact Wilcoxon can never reach p < 0.05 (the smallest attainable "
                         "p is 0.125) — use at least 5 splits"]


def test_full_scale_intervals_are_not_a_success():
    full = NS(name="cqr", items=(NS(lower=1.0, upper=5.0), NS(lower=1.0, upper=5.0)))
    narrow = NS(name="r2ccp", items=(NS(lower=2.0, upper=4.0), NS(lower=1.0, upper=5.0)))
    (line,) = intervals_caveats(NS(scale=(1, 2, 3, 4, 5), methods=(full, narrow)))
    assert line.startswith("every interval of cqr is the full scale 1–5") and "r2ccp" not in line
    assert intervals_caveats(NS(scale=(1, 2, 3, 4, 5), methods=(narrow,))) == []
    assert line.endswith("(its calibrated width reaches the whole scale: the judge's scores do not narrow it at this α)")
    from relgate_tui.core.judge_intervals.base import INF_REASON

    starved = NS(name="cqr", items=full.items, reasons=(INF_REASON,))
    (line,) = intervals_caveats(NS(scale=(1, 2, 3, 4, 5), methods=(starved,)))
    assert line.endswith("(too few calibration items for this α: q̂ = ∞)")


def test_irt_caveats_name_the_sample_size_the_prior_and_the_flag():
    judge = NS(ids=tuple(range(20)), converged=False)
    lines = irt_caveats(NS(judges=(judge,)), flipped=("j1",))
    assert lines[0].startswith("small sample: n = 20 items")
    assert "j1 flips with the other prior" in lines[1]
    assert "`relgate judge irt --prior map`" in lines[2]
    assert irt_caveats(NS(judges=(NS(ids=tuple(range(IRT_STABLE_N)), converged=True),))) == []


def test_judge_irt_prints_its_caveats(capsys, tmp_path):
    assert main(["judge-irt", "--ratings", str(EXAMPLES / "hanna-coherence-sim-judges.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "caveat: small sample: n = 150 items" in out
