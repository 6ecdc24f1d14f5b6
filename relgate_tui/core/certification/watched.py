r"""The human-only bound a gate may be decided on while it is watched (issue 33 §1).

A reviewer sees the gate after every label (spot-check, review screens, live panel) and may stop the moment it says
PASS. A bound is fit for that only if P(∃ n: lower_n ≥ θ) ≤ δ — an *anytime* guarantee. Two modes:

* ``"anytime"`` (the default): the beta-binomial mixture confidence sequence
  (:func:`~relgate_tui.core.certification.intervals.confidence_sequence`, Robbins 1970; Howard et al. 2021): by
  Ville's inequality a model at the gate clears it at *some* label with probability ≤ δ, whenever the labelling stops.
  The fixed-n Clopper–Pearson bound recomputed after every label does not have this property: at 97.5% (the human
  half of the former ``best`` gate) a model exactly at a 0.90 gate clears it within 300 labels in ≈ 13.6% of runs
  (issue 33; tests/core/test_watched.py), against 2.5%.
* ``"one-look"``: the exact one-sided Clopper–Pearson bound at a number of labels ``planned`` fixed in the run's
  config *before labelling starts*; nothing is decided before it is reached (``lower`` is None, the gate "not decided
  yet: one-look at 120 labels, 40 so far"). Valid because it is looked at once: P(CP_δ(S_n, n) ≥ θ) ≤ δ at that one
  fixed n. It needs fewer labels than the anytime bound when the planned n is right (44 at θ = 0.9, gate 0.8, 95%,
  against a median of 73), nothing when it is not.

With a verification judge the judge-assisted bound (:mod:`relgate_tui.core.ppi`) already contains human-only betting
(its λ = 0 component), so the ``best`` gate needs no separate human half: decide it on the assisted bound at the full
confidence, and on :func:`human_only_bound` when the assisted bound cannot be used.
"""

from __future__ import annotations

from dataclasses import dataclass

from relgate_tui.core.certification.gate import sequential_gate
from relgate_tui.core.certification.intervals import clopper_pearson_lower, confidence_sequence_end
from relgate_tui.core.text import counted

__all__ = ["WATCH_MODES", "HumanOnlyBound", "human_only_bound", "LabelPlan", "plan_labels"]

WATCH_MODES: tuple[str, ...] = ("anytime", "one-look")
"""The modes of :func:`human_only_bound` (config / ``--watch`` values)."""


@dataclass(frozen=True)
class HumanOnlyBound:
    """The human-only lower bound after ``successes`` of ``n`` labels in ``mode``; ``lower`` is None while a one-look
    bound has not reached its ``planned`` labels (nothing decided) and when there is no label (no number from
    nothing)."""

    lower: float | None
    successes: int
    n: int
    confidence: float
    mode: str
    planned: int | None

    @property
    def decided(self) -> bool:
        """Whether a gate may be decided on ``lower`` now."""
        return self.lower is not None

    @property
    def note(self) -> str:
        """What the bound is: ``95% anytime lower bound (valid after every label)`` / ``not decided yet: one-look at
        120 labels, 40 so far``."""
        if self.mode == "one-look":
            if self.lower is None:
                return f"not decided yet: one-look at {self.planned} labels, {self.n} so far"
            return f"{self.confidence:.0%} one-look Clopper–Pearson lower bound at the planned {self.planned} labels"
        if self.lower is None:
            return "no verified items yet"
        return f"{self.confidence:.0%} anytime lower bound (valid after every label)"


def human_only_bound(successes: int, n: int, confidence: float = 0.95, *, mode: str = "anytime",
                     planned: int | None = None) -> HumanOnlyBound:
    """The bound a watched gate is decided on (module docstring). ``mode="one-look"`` needs ``planned`` ≥ 1, fixed
    before the first label; with n > planned pass the counts of the first ``planned`` labels (the test is at that
    one n — a later n chosen after seeing the labels would make it a watched bound again)."""
    if mode not in WATCH_MODES:
        raise ValueError(f"mode must be one of {WATCH_MODES}, got {mode!r}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes and n must satisfy 0 <= successes <= n, got {successes!r}, {n!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if mode == "one-look":
        if planned is None or planned < 1:
            raise ValueError("a one-look bound needs the planned number of labels (≥ 1), fixed before labelling")
        if n > planned:
            raise ValueError(f"a one-look bound is decided at exactly {planned} labels: pass the counts of the first "
                             f"{planned}, not of {n}")
        lower = clopper_pearson_lower(int(successes), int(n), confidence) if n == planned else None
        return HumanOnlyBound(lower, int(successes), int(n), float(confidence), mode, int(planned))
    lower = None if n == 0 else float(confidence_sequence_end(int(successes), int(n), confidence, end="lower"))
    return HumanOnlyBound(lower, int(successes), int(n), float(confidence), mode, None)


@dataclass(frozen=True)
class LabelPlan:
    """How many more labels would clear the gate (issue 33 §6): ``more`` is 0 when cleared, a count never larger than
    ``items_left``, or None when no count would do; ``message`` is the line to show."""

    more: int | None
    message: str


def plan_labels(successes: int, n: int, threshold: float, confidence: float, items_left: int) -> LabelPlan:
    """The honest remaining-label count of the live panel for the anytime human-only bound after ``successes`` of
    ``n`` with ``items_left`` items not yet labelled: "the level is below the gate: more labels will not clear it"
    when the success rate is at or below the gate (no number of labels at this rate clears it); a count only when it
    fits in the items left (the estimate keeps the current rate, :func:`~relgate_tui.core.certification.gate.
    sequential_gate`)."""
    if items_left < 0:
        raise ValueError(f"items_left must be ≥ 0, got {items_left!r}")
    if n == 0:
        return LabelPlan(None, "no verified items yet")
    live = sequential_gate(successes, n, threshold, confidence)
    if live.decided == "PASS":
        return LabelPlan(0, f"cleared: {confidence:.0%} anytime lower bound ≥ gate {threshold:.0%}")
    if successes / n <= threshold:
        return LabelPlan(None, "the level is below the gate: more labels will not clear it")
    if items_left == 0:
        return LabelPlan(None, "no item is left to label: more labels will not clear it on this run")
    if live.more_labels is None or live.more_labels > items_left:
        return LabelPlan(None, f"not within the {counted(items_left, 'item')} left to label at this rate: labelling "
                               f"{'it' if items_left == 1 else 'them all'} will not clear it")
    return LabelPlan(live.more_labels, f"≈ {live.more_labels} more labels needed (of {items_left} left)")
