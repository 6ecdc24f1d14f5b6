"""The reliability gate (issue 11 §4): PASS/FAIL on the lower confidence bound by default, never silently on the
point estimate.

With ``gate_on="bound"`` (default) PASS iff the one-sided Clopper–Pearson lower bound L at ``confidence`` satisfies
L >= threshold. Guarantee: if the true top-answer coverage p is <= threshold, then P(PASS) = P(L >= threshold) <=
P(L >= p) = P_p(X >= x*) <= 1 − confidence, where x* is the smallest count whose bound reaches p (by definition of
the Clopper–Pearson bound, P_p(X >= x) <= 1 − confidence exactly when L(x) >= p; core/intervals.py). With
``gate_on="level"`` PASS iff the reliability level 1 − α* = #{s <= 1}/(n + 1) (paper 004 Def. 2.4) clears the
threshold; a model exactly at the threshold then passes about half of the time (43–48% at n = 50), which is why it
is offered but never the default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relgate_tui.core.certification.intervals import confidence_sequence, confidence_sequence_end

__all__ = ["GATE_ON_CHOICES", "GateDecision", "SequentialGate", "decide_gate", "sequential_gate"]

GATE_ON_CHOICES: tuple[str, ...] = ("bound", "level")
"""User-facing names (``relgate certify --gate-on``, JSON ``gate_on``): "bound" (= ``lower_bound``) is the default."""


@dataclass(frozen=True)
class GateDecision:
    """PASS/FAIL of a reliability gate, with both numbers it could be based on (see the module docstring).

    ``gate_on`` is "bound" (the one-sided lower confidence bound at ``confidence``; the default) or "level" (the
    point estimate 1 − α*). ``value`` is the number compared with ``threshold``; ``passed`` = value >= threshold.
    Guarantee of the bound gate: if the true top-answer coverage is <= threshold, P(passed) <= 1 − confidence.
    """

    threshold: float
    gate_on: str
    level: float
    lower_bound: float
    confidence: float
    passed: bool

    @property
    def value(self) -> float:
        return self.lower_bound if self.gate_on == "bound" else self.level

    @property
    def basis_label(self) -> str:
        """Words for the compared number, with the confidence the user set: "95% lower bound" / "level"."""
        return f"{self.confidence:.0%} lower bound" if self.gate_on == "bound" else "level"

    def summary(self) -> str:
        """One line: ``PASS: 95% lower bound 91.2% ≥ gate 90.0% (level 95.1%)``."""
        other = (f"level {self.level:.1%}" if self.gate_on == "bound"
                 else f"{self.confidence:.0%} lower bound {self.lower_bound:.1%}")
        return (f"{'PASS' if self.passed else 'FAIL'}: {self.basis_label} {self.value:.1%} "
                f"{'≥' if self.passed else '<'} gate {self.threshold:.1%} ({other})")


def _gate_on(gate_basis: str) -> str:
    if gate_basis in ("lower_bound", "bound"):
        return "bound"
    if gate_basis == "level":
        return "level"
    raise ValueError(f"gate_basis must be 'bound' (lower_bound) or 'level', got {gate_basis!r}")


def decide_gate(
    threshold: float, level: float, lower_bound: float, confidence: float, gate_on: str = "bound"
) -> GateDecision:
    """The gate decision on ``lower_bound`` (``gate_on="bound"``, default) or on ``level``."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"the gate threshold must be in [0, 1], got {threshold!r}")
    on = _gate_on(gate_on)
    value = lower_bound if on == "bound" else level
    return GateDecision(float(threshold), on, float(level), float(lower_bound), float(confidence),
                        bool(value >= threshold))


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
