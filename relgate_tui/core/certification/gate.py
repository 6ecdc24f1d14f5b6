"""The reliability gate (issue 11 §4, issue 22 §4): PASS/FAIL on a lower confidence bound by default, never silently
on the point estimate. This module is **the gate rule**: every front end (CLI, TUI results, the spot-check's live
panel, the report, compare) shows the :class:`GateDecision` that :func:`decide_gate` returns.

``gate_on`` (:data:`GateOn`) chooses the number compared with the threshold t:

* ``"bound"`` (default): the one-sided Clopper–Pearson lower bound L(x, n) at ``confidence`` of the human-only
  result, x successes of n. PASS iff L >= t. Guarantee: if the true top-answer coverage p is <= t, then
  P(PASS) = P(L >= t) <= P(L >= p) = P_p(X >= x*) <= 1 − confidence, where x* is the smallest count whose bound
  reaches p (core/intervals.py).
* ``"level"``: the reliability level 1 − α* = x/(n + 1) (paper 004 Def. 2.4). A model exactly at the threshold passes
  about half of the time (43–48% at n = 50), which is why it is offered but never the default.
* ``"assisted"`` (needs a verification judge): the judge-assisted lower bound at ``confidence``
  (:func:`relgate_tui.core.ppi.reliability_bound`).
* ``"best"`` (the default with a verification judge): max(L(x, n), assisted bound), each at half the error,
  c' = 1 − (1 − confidence)/2. Valid by the union bound: if θ < t, P(PASS) <= δ/2 + δ/2 = δ.

The human-only numbers come from the integer counts (x, n), never from a rounded level. When the assisted bound
cannot be used (no verdicts yet, or some items have a reference answer so the two bounds would not estimate the same
thing) an assisted gate is decided on the human-only bound and ``note`` says so. With ``undecided`` (e.g. sampling
incomplete) nothing is decided: ``passed`` is None and the summary gives the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, get_args

import numpy as np

from relgate_tui.core.certification.intervals import (
    clopper_pearson_lower,
    confidence_sequence,
    confidence_sequence_end,
)

__all__ = ["ASSISTED_GATES", "GATE_ON_CHOICES", "HUMAN_GATES", "GateDecision", "GateOn", "SequentialGate",
           "ASSISTED_UNUSABLE_NOTE", "check_gate_on", "decide_gate", "sequential_gate"]

GateOn = Literal["bound", "level", "assisted", "best"]
GATE_ON_CHOICES: tuple[str, ...] = get_args(GateOn)
"""User-facing names (``relgate certify --gate-on``, JSON ``gate_on``, the TUI settings): "bound" is the default."""
HUMAN_GATES: tuple[str, ...] = ("bound", "level")
ASSISTED_GATES: tuple[str, ...] = ("assisted", "best")
"""``gate_on`` values that need a verification judge."""
ASSISTED_UNUSABLE_NOTE = ("the assisted gate needs every item judged and none with a reference answer; decided on the "
                          "human-only bound")


def check_gate_on(gate_on: str) -> GateOn:
    """``gate_on`` itself when it is one of :data:`GATE_ON_CHOICES`, else ValueError."""
    if gate_on not in GATE_ON_CHOICES:
        raise ValueError(f"gate_on must be one of {', '.join(GATE_ON_CHOICES)}, got {gate_on!r}")
    return gate_on  # type: ignore[return-value]


@dataclass(frozen=True)
class GateDecision:
    """PASS/FAIL of a reliability gate with the numbers it could be based on (see the module docstring).

    ``gate_on`` is the basis the decision was made on (an assisted gate that could not be used falls back to
    "bound", with ``note``). ``level`` and ``lower_bound`` are the human-only level x/(n + 1) and Clopper–Pearson
    bound at ``confidence``; ``assisted_lower_bound`` the judge-assisted bound (at ``confidence`` for "assisted", at
    ``confidence_each`` for "best"), ``human_only_lower_bound`` the human-only bound at ``confidence_each`` ("best").
    ``value`` is the number compared with ``threshold``; ``passed`` = value >= threshold, None when ``undecided``.
    """

    threshold: float
    gate_on: str
    level: float
    lower_bound: float
    confidence: float
    passed: bool | None
    assisted_lower_bound: float | None = None
    human_only_lower_bound: float | None = None
    confidence_each: float | None = None
    note: str | None = None
    undecided: str | None = None

    @property
    def value(self) -> float:
        if self.gate_on == "level":
            return self.level
        if self.gate_on == "assisted":
            return float(self.assisted_lower_bound)  # type: ignore[arg-type]
        if self.gate_on == "best":
            return max(float(self.human_only_lower_bound), float(self.assisted_lower_bound))  # type: ignore[arg-type]
        return self.lower_bound

    @property
    def basis_label(self) -> str:
        """Words for the compared number, with the confidence the user set: "95% lower bound" / "level"."""
        if self.gate_on == "level":
            return "level"
        if self.gate_on == "assisted":
            return f"{self.confidence:.0%} judge-assisted lower bound"
        if self.gate_on == "best":
            return f"better of the human-only and judge-assisted {self.confidence_each:.1%} lower bounds"
        return f"{self.confidence:.0%} lower bound"

    def summary(self) -> str:
        """One line: ``PASS: 95% lower bound 91.2% ≥ gate 90.0% (level 95.1%)``; the reason when undecided."""
        if self.passed is None:
            return self.undecided or "undecided"
        cmp = f"{'PASS' if self.passed else 'FAIL'}: {self.basis_label} {self.value:.1%} " \
              f"{'≥' if self.passed else '<'} gate {self.threshold:.1%}"
        if self.gate_on in ASSISTED_GATES:
            return cmp
        other = (f"level {self.level:.1%}" if self.gate_on == "bound"
                 else f"{self.confidence:.0%} lower bound {self.lower_bound:.1%}")
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
        if self.gate_on == "assisted":
            out["assisted_lower_bound"] = self.assisted_lower_bound
        elif self.gate_on == "best":
            out.update(human_only_lower_bound=self.human_only_lower_bound,
                       assisted_lower_bound=self.assisted_lower_bound, confidence_each=self.confidence_each)
        return out


def decide_gate(threshold: float, *, successes: int, n: int, confidence: float, gate_on: str = "bound",
                assisted: Callable[[float], float] | None = None, undecided: str | None = None) -> GateDecision:
    """The gate decision (module docstring) from the human-only counts — ``successes`` of ``n`` — and, for an
    assisted gate, ``assisted``: the judge-assisted lower bound at a given confidence (None when it cannot be
    used). ``undecided``: the reason no PASS/FAIL may be decided (``passed`` None)."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"the gate threshold must be in [0, 1], got {threshold!r}")
    on = check_gate_on(gate_on)
    x, n = int(successes), int(n)
    if not 0 <= x <= max(n, 0):
        raise ValueError(f"successes must be in [0, n], got {x} of {n}")
    level = x / (n + 1)
    lower = clopper_pearson_lower(x, n, confidence)
    parts: dict[str, float | None] = {}
    note = None
    if on in ASSISTED_GATES and assisted is None:
        on, note = "bound", ASSISTED_UNUSABLE_NOTE
    elif on == "assisted":
        assert assisted is not None
        parts = {"assisted_lower_bound": float(assisted(confidence))}
    elif on == "best":
        assert assisted is not None
        half = 1.0 - (1.0 - confidence) / 2.0
        parts = {"human_only_lower_bound": clopper_pearson_lower(x, n, half) if n > 0 else 0.0,
                 "assisted_lower_bound": float(assisted(half)), "confidence_each": half}
    d = GateDecision(float(threshold), on, float(level), float(lower), float(confidence), None, note=note,
                     undecided=undecided, **parts)  # type: ignore[arg-type]
    return d if undecided is not None else replace(d, passed=bool(d.value >= threshold))


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
