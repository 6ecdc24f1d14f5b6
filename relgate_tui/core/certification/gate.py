"""The reliability gate (issue 11 §4, issue 22 §4): PASS/FAIL on a lower confidence bound by default, never silently
on the point estimate. This module is **the gate rule**: every front end (CLI, TUI results, the spot-check's live
panel, the report, compare) shows the :class:`GateDecision` that :func:`decide_gate` returns.

``gate_on`` (:data:`GateOn`) chooses the number compared with the threshold t; ``watch`` (:data:`WATCH`) says how the
human-only bound may be looked at (issue 33 §1):

* ``"bound"`` (default): a one-sided lower bound of the human-only result, x successes of n, at ``confidence``.
  PASS iff it is >= t. Which bound depends on ``watch``:

  - ``watch="once"``: the exact Clopper–Pearson bound L(x, n). Valid for a set of items that is fixed before anyone
    looks — the headless ``relgate certify`` of a task whose items are all verified by **reference answers** decides
    once: if the true top-answer coverage p is <= t, P(PASS) = P(L >= t) <= P(L >= p) <= 1 − confidence.
  - ``watch="anytime"``: the beta-binomial confidence sequence (:func:`relgate_tui.core.certification.watched.
    human_only_bound`). This is the rule whenever a **person** labelled items (spot-check, labels file, team review):
    the live panel re-decides after every label and a labeller may stop the moment it says PASS, so the number must
    be valid at every n (Ville): P(∃ n: PASS) <= 1 − confidence. The fixed-n bound re-decided after every label passes
    a model at the gate in ≈ 13.6% of runs within 300 labels at 97.5% (issue 33). The run — CLI, Results, report,
    live panel — uses one rule, so they agree.
  - ``watch="one-look"`` with ``planned`` = N (``relgate certify --one-look N``, stored in the run's config and id):
    the exact Clopper–Pearson bound at the N labels fixed before labelling; nothing is decided before N labels
    (``passed`` None, "not decided yet: one-look at N labels, k so far"). With more than N labels the counts of the
    first N are not known here, so it is decided on the anytime bound and ``note`` says so.
* ``"level"``: the reliability level 1 − α* = x/(n + 1) (paper 004 Def. 2.4). A model exactly at the threshold passes
  about half of the time (43–48% at n = 50), which is why it is offered but never the default.
* ``"assisted"`` (needs a verification judge): the judge-assisted lower bound
  (:func:`relgate_tui.core.ppi.reliability_bound`, one e-process mixing judge reliances λ including λ = 0, plain
  human-only betting) at the **full** ``confidence`` — anytime-valid by Ville, so safe to watch. The former name
  ``best`` (once the better of two bounds at δ/2, whose Clopper–Pearson half was not valid when watched; issue 33 §3)
  is read from old configs and results as ``"assisted"`` (:func:`check_gate_on`): the mixture already hedges a
  useless judge.

The human-only numbers come from the integer counts (x, n), never from a rounded level. With n = 0 there is no number:
``level`` and ``lower_bound`` are None and nothing is decided ("no verified items yet"). When the assisted bound
cannot be used (no verdicts yet, or some items have a reference answer so the two bounds would not estimate the same
thing) an assisted gate is decided on the human-only bound of ``watch`` and ``note`` says so. With ``undecided``
(e.g. sampling incomplete) nothing is decided: ``passed`` is None and the summary gives the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from relgate_tui.core.certification.gate_names import (  # the names, numpy-free (read before a run samples)
    ASSISTED_GATES,
    ASSISTED_UNUSABLE_NOTE,
    GATE_ON_CHOICES,
    HUMAN_GATES,
    NO_VERIFIED_ITEMS,
    OLD_GATE_ON,
    WATCH,
    GateOn,
    Watch,
    check_gate_on,
    check_watch,
)
from relgate_tui.core.certification.intervals import (
    clopper_pearson_lower,
    confidence_sequence,
    confidence_sequence_end,
)

__all__ = ["ASSISTED_GATES", "GATE_ON_CHOICES", "HUMAN_GATES", "GateDecision", "GateOn", "SequentialGate", "WATCH",
           "Watch", "ASSISTED_UNUSABLE_NOTE", "NO_VERIFIED_ITEMS", "OLD_GATE_ON", "check_gate_on", "check_watch",
           "decide_gate", "sequential_gate", "watched_lower_bound"]

@dataclass(frozen=True)
class GateDecision:
    """PASS/FAIL of a reliability gate with the numbers it could be based on (see the module docstring).

    ``gate_on`` is the basis the decision was made on (an assisted gate that could not be used falls back to
    "bound", with ``note``). ``level`` and ``lower_bound`` are the human-only level x/(n + 1) and lower bound at
    ``confidence``; ``assisted_lower_bound`` the judge-assisted bound at ``confidence`` ("assisted"/"best").
    ``value`` is the number compared with ``threshold``; ``passed`` = value >= threshold, None when ``undecided``.
    ``level``/``lower_bound`` are None with no verified item; ``lower_bound`` is the bound of ``watch`` (None
    before a one-look's planned labels).
    """

    threshold: float
    gate_on: GateOn
    level: float | None
    lower_bound: float | None
    confidence: float
    passed: bool | None
    assisted_lower_bound: float | None = None
    note: str | None = None
    undecided: str | None = None
    watch: Watch = "once"
    planned: int | None = None

    @property
    def value(self) -> float | None:
        if self.gate_on == "level":
            return self.level
        if self.gate_on in ASSISTED_GATES:
            return self.assisted_lower_bound
        return self.lower_bound

    @property
    def basis_label(self) -> str:
        """Words for the compared number, with the confidence the user set: "95% lower bound" / "level"."""
        if self.gate_on == "level":
            return "level"
        if self.gate_on in ASSISTED_GATES:
            return f"{self.confidence:.0%} judge-assisted lower bound"
        if self.watch == "anytime":
            return f"{self.confidence:.0%} anytime lower bound"
        if self.watch == "one-look":
            return f"{self.confidence:.0%} one-look lower bound"
        return f"{self.confidence:.0%} lower bound"

    def summary(self) -> str:
        """One line: ``PASS: 95% lower bound 91.2% ≥ gate 90.0% (level 95.1%)``; the reason when undecided."""
        if self.passed is None or self.value is None:
            return self.undecided or "undecided"
        cmp = f"{'PASS' if self.passed else 'FAIL'}: {self.basis_label} {self.value:.1%} " \
              f"{'≥' if self.passed else '<'} gate {self.threshold:.1%}"
        if self.gate_on in ASSISTED_GATES or self.level is None or self.lower_bound is None:
            return cmp
        bound = {"anytime": "anytime lower bound", "one-look": "one-look lower bound"}.get(self.watch, "lower bound")
        other = (f"level {self.level:.1%}" if self.gate_on == "bound"
                 else f"{self.confidence:.0%} {bound} {self.lower_bound:.1%}")
        return f"{cmp} ({other})"

    def to_json(self) -> dict[str, object]:
        """The document's ``gate`` block (``relgate certify``'s JSON; keys in a fixed order)."""
        out: dict[str, object] = {
            "threshold": self.threshold, "gate_on": self.gate_on, "value": self.value, "level": self.level,
            "lower_bound": self.lower_bound, "confidence": self.confidence, "passed": self.passed,
            "summary": self.summary(),
        }
        if self.note is not None:
            out["note"] = self.note
        if self.watch != "once":
            out["watch"] = self.watch
        if self.planned is not None:
            out["planned_labels"] = self.planned
        if self.gate_on in ASSISTED_GATES:
            out["assisted_lower_bound"] = self.assisted_lower_bound
        return out


def watched_lower_bound(successes: int, n: int, confidence: float, watch: str = "once",
                        planned: int | None = None) -> float | None:
    """The human-only lower bound a gate of ``watch`` decides on after ``successes`` of ``n`` (module docstring) —
    *the* lower bound of a run, the one every front end shows: the exact Clopper–Pearson L(x, n) with ``watch``
    "once" and for a one-look at exactly its ``planned`` labels; the beta-binomial confidence sequence's lower end
    (anytime-valid, :func:`~relgate_tui.core.certification.intervals.confidence_sequence_end`) with "anytime" and past
    a one-look's plan; None with n = 0 and before a one-look's planned labels (nothing to decide on)."""
    x, n = int(successes), int(n)
    if n == 0 or (watch == "one-look" and planned is not None and n < int(planned)):
        return None
    if watch == "once" or (watch == "one-look" and n == planned):
        return clopper_pearson_lower(x, n, confidence)
    return float(confidence_sequence_end(x, n, confidence, end="lower"))


def decide_gate(threshold: float, *, successes: int, n: int, confidence: float, gate_on: str = "bound",
                assisted: Callable[[float], float] | None = None, undecided: str | None = None,
                watch: str = "once", planned: int | None = None) -> GateDecision:
    """The gate decision (module docstring) from the human-only counts — ``successes`` of ``n`` — and, for an
    assisted gate, ``assisted``: the judge-assisted lower bound at a given confidence (None when it cannot be
    used; it is asked at ``confidence`` only). ``undecided``: the reason no PASS/FAIL may be decided (``passed``
    None). ``watch``/``planned``: how the human-only bound is looked at (:data:`WATCH`)."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"the gate threshold must be in [0, 1], got {threshold!r}")
    looked = check_watch(watch)
    if watch == "one-look" and (planned is None or planned < 1):
        raise ValueError("a one-look gate needs the planned number of labels (>= 1), fixed before labelling")
    on: GateOn = check_gate_on(gate_on)
    x, n = int(successes), int(n)
    if not 0 <= x <= max(n, 0):
        raise ValueError(f"successes and n must satisfy 0 <= successes <= n, got {x} of {n}")
    level = x / (n + 1) if n > 0 else None
    note: str | None = None
    lower = watched_lower_bound(x, n, confidence, watch, planned)
    if watch == "one-look" and 0 < n < int(planned):  # type: ignore[arg-type]
        if undecided is None:  # as watched.human_only_bound(mode="one-look"): nothing before the planned labels
            undecided = f"undecided: not decided yet: one-look at {planned} labels, {n} so far"
    elif watch == "one-look" and n > int(planned):  # type: ignore[arg-type]
        note = (f"{n} labels, more than the one-look plan of {planned}: decided on the anytime bound (valid at "
                "every n)")
    assisted_value = None
    if on in ASSISTED_GATES and assisted is None:
        on, note = "bound", ASSISTED_UNUSABLE_NOTE if note is None else f"{ASSISTED_UNUSABLE_NOTE}; {note}"
    elif on in ASSISTED_GATES and n > 0:  # no label: the assisted bound would be a 0 from nothing
        assert assisted is not None
        assisted_value = float(assisted(confidence))
    if n == 0 and undecided is None:  # no verified item, so no label either: no number, no decision
        undecided = f"undecided: {NO_VERIFIED_ITEMS}"
    d = GateDecision(float(threshold), on, level, lower, float(confidence), None,
                     assisted_lower_bound=assisted_value, note=note, undecided=undecided, watch=looked,
                     planned=int(planned) if watch == "one-look" and planned is not None else None)
    if d.undecided is not None or d.value is None:
        return replace(d, undecided=d.undecided or f"undecided: {NO_VERIFIED_ITEMS}")
    return replace(d, passed=bool(d.value >= threshold))


@dataclass(frozen=True)
class SequentialGate:
    """The spot-check's live gate (issue 11 §4): the anytime-valid interval of the top-answer coverage after
    ``successes`` of ``n`` verified items, and what it says about ``threshold``.

    ``decided`` is "PASS" once ``lower`` >= threshold, "FAIL" once ``upper`` < threshold, else None; because the
    interval is a confidence sequence (:func:`~relgate_tui.core.certification.intervals.confidence_sequence`), stopping the
    labelling the moment it is decided is safe: a model whose true coverage is <= threshold is decided PASS with
    probability <= 1 − confidence, whenever the labeller stops. ``more_labels`` ≈ how many more verdicts at the
    current success rate would decide it (None when decided, when n = 0, or when the rate equals the threshold).
    """

    successes: int
    n: int
    threshold: float
    confidence: float
    lower: float
    upper: float
    decided: str | None
    more_labels: int | None

    def summary(self) -> str:
        """``decided: PASS after 120 labels`` / ``decided: FAIL after 40 labels`` / ``≈ 35 more labels needed``."""
        if self.decided is not None:
            return f"decided: {self.decided} after {self.n} labels"
        if self.more_labels is None:
            return "undecided: more labels needed"
        return f"≈ {self.more_labels} more labels needed"


_MORE_LABELS_MAX = 100_000


def _first_deciding(successes: int, n: int, rate: float, threshold: float, confidence: float,
                    candidates: np.ndarray) -> int | None:
    expected = successes + rate * candidates
    if rate > threshold:  # successes rounded against the decision: the estimate errs towards "more labels"
        x = np.floor(expected + 1e-9)
        hit = np.asarray(confidence_sequence_end(x, n + candidates, confidence, end="lower")) >= threshold
    else:
        x = np.ceil(expected - 1e-9)
        hit = np.asarray(confidence_sequence_end(x, n + candidates, confidence, end="upper")) < threshold
    return int(candidates[np.argmax(hit)]) if hit.any() else None


def sequential_gate(successes: int, n: int, threshold: float, confidence: float = 0.95) -> SequentialGate:
    """The live gate after ``successes`` of ``n`` (see :class:`SequentialGate`). Two vectorised passes (a geometric
    grid, then a refinement) estimate ``more_labels``: a few milliseconds, fit for a keypress."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"the gate threshold must be in [0, 1], got {threshold!r}")
    lower, upper = confidence_sequence(successes, n, confidence)
    decided = "PASS" if lower >= threshold else ("FAIL" if upper < threshold else None)
    more = None
    if decided is None and n > 0 and successes / n != threshold:
        rate = successes / n
        grid = np.unique(np.round(np.geomspace(1, _MORE_LABELS_MAX, 64))).astype(np.float64)
        coarse = _first_deciding(successes, n, rate, threshold, confidence, grid)
        if coarse is not None:
            previous = grid[max(0, int(np.searchsorted(grid, coarse)) - 1)]
            fine = np.unique(np.round(np.linspace(previous, coarse, 64))).astype(np.float64)
            more = _first_deciding(successes, n, rate, threshold, confidence, fine) or coarse
    return SequentialGate(int(successes), int(n), float(threshold), float(confidence), float(lower), float(upper),
                          decided, more)
