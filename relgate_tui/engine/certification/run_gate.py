"""The gate belongs to the run (issue 37 §3–4): :class:`RunGate`, the threshold, basis and confidence a run was made
with — what Results, Compare, the spot-check's live panel, an export and ``relgate report`` decide it against, never
a viewer's preference — and the live panel's one plan line (:func:`plan_line`) for the run's
:class:`~relgate_tui.core.certification.gate.GateDecision`.

Setup writes the gate into the run's config (``min_reliability``, ``gate_on``, ``confidence``, ``one_look``,
``population``: the flags of ``relgate certify``). A run's stored ``results.json`` holds the gate its result was last
judged against; a run made by the TUI before the gate was in its config has it only there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from relgate_tui.core.certification.gate import (
    GATE_ON_CHOICES,
    HUMAN_GATES,
    OLD_GATE_ON,
    GateDecision,
    GateOn,
    check_gate_on,
)
from relgate_tui.core.certification.watched import plan_labels
from relgate_tui.core.text import counted

if TYPE_CHECKING:
    from relgate_tui.engine.certification.result import RunResult

__all__ = ["RunGate", "RunGateViews", "live_gate", "plan_line", "run_gate"]


@dataclass(frozen=True)
class RunGate:
    """A run's own gate: PASS/FAIL at ``threshold`` (None: no gate) on ``gate_on`` at ``confidence``."""

    threshold: float | None
    gate_on: GateOn = "bound"
    confidence: float = 0.95


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def run_gate(config: Any, stored: RunResult | None = None) -> RunGate:
    """The gate of a run whose config is ``config`` and whose typed result is ``stored`` (None: none yet): the gate
    its stored result was judged against (what ``relgate runs`` / ``report`` show), else its config's. An old name of
    the basis (``best``) is read as the gate it is now (``assisted``)."""
    on: str
    if stored is not None and "min_reliability" in stored.document:
        threshold, on, confidence = stored.min_reliability, stored.gate_on, _number(stored.confidence)
    else:
        threshold = _number(getattr(config, "min_reliability", None))
        on = str(getattr(config, "gate_on", "bound"))
        confidence = _number(getattr(config, "confidence", None))
    basis = check_gate_on(on) if on in GATE_ON_CHOICES or on in OLD_GATE_ON else "bound"
    if confidence is None or not 0.0 < confidence < 1.0:
        confidence = float(config.confidence)
    return RunGate(_number(threshold), basis, confidence)


def _level_plan(successes: int, n: int, threshold: float, items_left: int) -> str:
    """The plan on the level x/(n + 1): m more labels at the current rate r clear it when
    (x + r·m)/(n + m + 1) ≥ t, i.e. m ≥ (t·(n + 1) − x)/(r − t)."""
    rate = successes / n
    if rate <= threshold:
        return "the level is below the gate: more labels will not clear it"
    more = max(1, math.ceil((threshold * (n + 1) - successes) / (rate - threshold)))
    if more > items_left:
        return f"not within the {counted(items_left, 'item')} left to label at this rate: more labels will not clear it"
    return f"≈ {more} more labels needed (of {items_left} left)"


def plan_line(decision: GateDecision | None, *, successes: int, n: int, items_left: int,
              assisted_plan: str | None = None) -> str | None:
    """The live panel's one plan line for ``decision`` (None: no gate, or nothing to plan): "no more labels needed"
    once it passes; how many labels the one-look plan still needs; else, on the basis the decision was made on,
    "≈ m more labels needed" or "more labels will not clear it" (the anytime bound:
    :func:`~relgate_tui.core.certification.watched.plan_labels`; the judge-assisted bound: ``assisted_plan``,
    :func:`relgate_tui.core.ppi.labels_plan`'s line; the level: :func:`_level_plan`)."""
    if decision is None:
        return None
    if decision.passed:
        return "no more labels needed: the gate is cleared"
    if decision.watch == "one-look" and decision.planned is not None and n < decision.planned:
        return f"{counted(decision.planned - n, 'more label')} to the one-look plan of {decision.planned}"
    if decision.passed is None or n == 0:
        return None  # undecided: its reason is the decision line
    if decision.gate_on == "assisted":
        return assisted_plan
    if decision.gate_on == "level":
        return _level_plan(successes, n, decision.threshold, items_left)
    if decision.watch == "one-look" and n == decision.planned:
        return "decided once, at the planned labels: more labels will not change a one-look decision"
    if decision.watch == "once" and items_left == 0:
        return "every verdict is a reference answer: no label is left to give"
    return plan_labels(successes, n, decision.threshold, decision.confidence, items_left).message


def live_gate(session: Any) -> tuple[GateDecision | None, str | None]:
    """The spot-check's live panel for a :class:`~relgate_tui.engine.certification.session.Session`: the run's gate
    decision now (None without a gate; the one Results shows) and its one plan line (:func:`plan_line`)."""
    g = session.gate
    p = session.spot_progress(g.confidence)
    decision = session.gate_decision(gate=g.threshold, gate_on=g.gate_on, confidence=g.confidence)
    assisted = decision is not None and decision.gate_on == "assisted" and decision.passed is False
    section = session.assisted(g.confidence, g.threshold) if assisted else None
    return decision, plan_line(decision, successes=p.successes, n=p.n, items_left=max(0, p.total - p.done),
                               assisted_plan=None if section is None else section.more_labels_message)


class RunGateViews:
    """The gate part of a :class:`~relgate_tui.engine.certification.session.Session` (mixed into it): the run's own
    :attr:`gate` and the gate decision at any gate, as Results, the spot-check, Compare and the document decide it."""

    _run_gate: RunGate | None = None
    if TYPE_CHECKING:  # the Session's
        config: Any
        store: Any

        @property
        def alpha(self) -> float: ...

        def analysis(self, refresh: bool = False) -> Any: ...

        def assisted(self, confidence: float = 0.95, gate: float | None = None) -> Any: ...

    @property
    def gate(self) -> RunGate:
        """The run's own gate (:func:`run_gate`: what its results were judged against, else its config's): what every
        screen decides it against, never a viewer's preference."""
        if self._run_gate is None:
            from relgate_tui.engine.certification.result import read_result

            self._run_gate = run_gate(self.config, read_result(self.store))
        return self._run_gate

    def forget_gate(self) -> None:
        """Read :attr:`gate` again (after the results were written)."""
        self._run_gate = None

    def stored_gate(self) -> tuple[float | None, GateOn]:
        """``(threshold, gate_on)`` of :attr:`gate`."""
        return self.gate.threshold, self.gate.gate_on

    def gate_decision(self, *, gate: float | None, gate_on: GateOn = "bound", confidence: float = 0.95,
                      alpha: float | None = None) -> GateDecision | None:
        """The gate decision now (:func:`~relgate_tui.core.certification.gate.decide_gate`, as Results and the document
        show it; None without a gate). One core ``compute_results``: the spot-check calls it after every label."""
        a = self.alpha if alpha is None else alpha
        if gate is None:
            return None
        result = self.analysis().results(a, confidence, gate, gate_on, self.assisted_bound(gate_on, confidence, gate),
                                         self.config.one_look)
        decision: GateDecision | None = result.gate_decision
        return decision

    def assisted_bound(self, gate_on: str, confidence: float, gate: float | None) -> Any:
        """The judge-assisted bound at a confidence for an assisted gate (None for a human-only gate or none)."""
        section = None if gate is None or gate_on in HUMAN_GATES else self.assisted(confidence, gate)
        return None if section is None else section.gate_bound()
