"""Small samples say so (issue 24 §7): one line per claim a study's n or number of splits cannot support, printed by
``relgate judge-irt`` / ``jury`` / ``judge-intervals`` under their tables and shown by the TUI's study views.

* **IRT** (paper 002): C_V is the spread of the variants' within-category variances (Eqs. 2–3), a ratio of noisy
  variances — biased upward at small n. ``bench/irt_cv_bias.py`` fits a judge built with *one* GRM under three
  variants (a = 1.8, four thresholds, 10 seeds): mean C_V 0.21 at n = 150, 0.17 at n = 400 (such a judge fails the
  0.10 mark 80–90% of the time), 0.08 at n = 1,600 (20%). Below ``IRT_STABLE_N`` items the Phase 1 marks are indications;
  a fit that did not converge names the CLI's ``--prior map``.
* **Jury** (paper 003): the paper's one-sided exact Wilcoxon signed-rank test over S splits (shown beside the claim's
  corrected resampled t-test) cannot give p below 2^−S (every split favouring the jury): with S ≤ 4 it can never
  reach p < 0.05.
* **Intervals** (paper 001): an interval that is the whole scale always covers; when every interval of a method is
  full-scale its ✓ says nothing about the judge.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["IRT_STABLE_N", "irt_caveats", "jury_caveats", "intervals_caveats", "smallest_wilcoxon_p"]

IRT_STABLE_N = 1600  # n where a steady judge's C_V falls below the 0.10 mark on average (bench/irt_cv_bias.py)


def irt_caveats(study: Any, flipped: tuple[str, ...] = ()) -> list[str]:
    """Lines for an :class:`~relgate_tui.core.irt.study.IRTStudy`; ``flipped``: judges whose Phase 1 mark changes
    with the other prior (computed by the CLI, which can refit)."""
    out = []
    n = min((len(j.ids) for j in study.judges), default=0)
    if 0 < n < IRT_STABLE_N:
        out.append(f"small sample: n = {n} items — C_V is biased upward below ~{IRT_STABLE_N:,} (a judge with one "
                   "GRM under every variant measures ≈ 0.2 at n = 150–400), so read the Phase 1 marks as indications")
    if flipped:
        out.append(f"the Phase 1 mark of {', '.join(flipped)} flips with the other prior (--prior mml / map): "
                   "too few items to decide")
    if any(not j.converged for j in study.judges):
        out.append("a fit did not converge: rerun with `relgate judge-irt --prior map` (the paper's priors "
                   "keep the discriminations finite)")
    return out


def smallest_wilcoxon_p(splits: int) -> float:
    """The smallest p the one-sided exact Wilcoxon signed-rank test can give over ``splits`` paired splits: every
    difference positive, probability 2^−S under the null."""
    return 0.5 ** max(0, int(splits))


def jury_caveats(study: Any) -> list[str]:
    """Lines for a :class:`~relgate_tui.core.jury.protocol.JuryStudy`."""
    p_min = smallest_wilcoxon_p(study.splits)
    if p_min >= study.claim_alpha:
        need = math.ceil(math.log2(1.0 / study.claim_alpha) + 1e-12)
        return [f"with {study.splits} splits the paper's exact Wilcoxon can never reach p < {study.claim_alpha:g} "
                f"(the smallest attainable p is {p_min:.3g}) — use at least {need} splits"]
    return []


def intervals_caveats(study: Any) -> list[str]:
    """Lines for an :class:`~relgate_tui.core.judge_intervals.study.IntervalStudy`."""
    full = max(study.scale) - min(study.scale)
    trivial = [m.name for m in study.methods
               if m.items and all(i.upper - i.lower >= full - 1e-9 for i in m.items)]
    if trivial:
        from relgate_tui.core.judge_intervals.base import INF_REASON

        inf = any(INF_REASON in getattr(m, "reasons", ()) for m in study.methods if m.name in trivial)
        why = ("too few calibration items for this α: q̂ = ∞" if inf else  # issue 33 §8: not always the calibration size
               "its calibrated width reaches the whole scale: the judge's scores do not narrow it at this α")
        return [f"every interval of {', '.join(trivial)} is the full scale {min(study.scale)}–{max(study.scale)}: "
                f"its coverage ✓ holds trivially and says nothing about the judge ({why})"]
    return []
