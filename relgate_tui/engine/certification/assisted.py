"""The verification judge's section of a run (issue 22 §2–§5), typed: :class:`AssistedSection` holds the judge's
verdicts on every judged item, the humans' verdicts on the labelled ones, the judge-assisted lower bound
(:func:`relgate_tui.core.ppi.reliability_bound`), the agreement table (:func:`relgate_tui.core.agreement.agreement`)
and, with a gate, ≈ how many more labels the bound needs. :meth:`AssistedSection.to_json` is the results'
``judge_assisted`` block, written once at the edge.

**Population and order.** The judged items are the run's sampled items without a reference answer, listed in the
run's seeded split order (calibration items first, as the spot-check shows them; then deployment items). The labelled
items are the calibration items among them with a person's verdict (spot-check, labels file or team review), in that
same order — the order the spot-check asks for them, a seeded random permutation fixed before any label, which is what
the anytime bound needs. Y = 1 when the top answer was accepted (score 1). A **skipped** item counts as Y = 0 here (a
skip may depend on the item, so dropping it could bias the sample; counting it as a miss can only lower the bound).
**Only the prefix counts** (issue 33 §2, :mod:`relgate_tui.core.label_prefix`): the bound uses the labelled items up
to the first unlabelled item in that order (a skip is a label); labels after a gap — a labels file or a ``review
pull`` with pending items — are left out, and the block says how many and why (``left_out``, ``left_out_note``).
When every item has a reference answer nothing is judged and the section says so; when only some do, the section
bounds the items without one (``population``), and the assisted gates are not used (the two bounds would not
estimate the same thing).

**Gates** (``gate_on`` "assisted" and "best"): decided in :func:`relgate_tui.core.certification.gate.decide_gate`,
the one gate rule, from :meth:`AssistedSection.gate_bound`.

:func:`recompute` rebuilds the bound from a ``judge_assisted`` block alone (its ``verdicts`` list), so a results file
can be checked without the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgate_tui.core import ppi
from relgate_tui.core.agreement import Agreement, agreement, constant_judge
from relgate_tui.core.label_prefix import Prefix, prefix_arrays
from relgate_tui.core.text import one_line
from relgate_tui.engine.runs.labels import by_a_person

__all__ = ["AssistedRow", "AssistedSection", "assisted_rows", "assisted_section", "section_from_rows", "recompute",
           "labelled_arrays", "labelled_prefix_of", "no_verification_judge"]

_MIXED = "sampled items without a reference answer"
_ALL = "every sampled item (none has a reference answer)"


@dataclass(frozen=True)
class AssistedRow:
    """One judged item: its id, the judge's verdict f (1 = correct), P(yes) (None without log-probs), the judge's
    status ("ok", "unparseable", "failed", "no_answer") and the human verdict Y (None = unlabelled)."""

    id: str
    judge: int
    p_yes: float | None
    status: str
    human: int | None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "judge": self.judge, "p_yes": self.p_yes, "status": self.status, "human": self.human}


@dataclass(frozen=True)
class AssistedSection:
    """The verification judge's section (module docstring). ``rows`` None: the judge has not been asked yet; empty:
    nothing to judge. ``bound`` and ``agreement`` are None without rows; ``more_labels`` is computed only with a
    ``gate`` (None then means "not within the horizon")."""

    judge_endpoint: str
    judge_model: str
    confidence: float
    mixed: bool
    rows: tuple[AssistedRow, ...] | None
    bound: ppi.Bound | None = None
    agreement: Agreement | None = None
    gate: float | None = None
    more_labels: int | None = None
    calls: tuple[int, int, int] | None = None  # made, cached, failed
    more_labels_message: str | None = None  # ppi.labels_plan's honest line (issue 33 §6)
    bound_on: str = "task"  # ppi.POPULATIONS: θ of the task, or of the N judged items themselves (issue 33 §4)

    @property
    def population(self) -> str:
        return _MIXED if self.mixed else _ALL

    @property
    def lower_bound(self) -> float | None:
        return None if self.bound is None else self.bound.lower

    @property
    def estimate(self) -> float | None:
        return None if self.bound is None else self.bound.estimate

    @property
    def labelled(self) -> tuple[AssistedRow, ...]:
        return tuple(r for r in self.rows or () if r.human is not None)

    @property
    def n_labels(self) -> int:
        """The labels the bound uses: the labelled prefix of the seeded order (module docstring)."""
        return self.prefix.used

    @property
    def prefix(self) -> Prefix:
        """Which labels count (:func:`relgate_tui.core.label_prefix.prefix_arrays`)."""
        return labelled_prefix_of(self.rows or ())

    @property
    def n_judged(self) -> int:
        return len(self.rows or ())

    @property
    def message(self) -> str | None:
        """Why there is no bound (None when there is one)."""
        if self.rows is None:
            return "the verification judge has not been asked yet"
        if not self.rows:
            return "no item without a reference answer: nothing for the judge to verify"
        return None

    @property
    def warning(self) -> str | None:
        """A (nearly) constant verification judge (issue 31 item 7), e.g. "this judge says no to 100% of items";
        None otherwise. Shown in the JSON (``warning``), the CLI and Results."""
        if not self.rows:
            return None
        return constant_judge(np.array([r.judge for r in self.rows], dtype=np.int64))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(f on all judged items, f on the labelled ones, Y on the labelled ones), labelled in row order."""
        return labelled_arrays(self.rows or ())

    def gate_bound(self) -> Callable[[float], float] | None:
        """The judge-assisted lower bound as a function of the confidence — what ``decide_gate`` needs for the
        "assisted"/"best" gates — or None when it cannot be used (no verdicts yet, or some items have a reference
        answer)."""
        if self.bound is None or self.mixed:
            return None
        f_all, f_lab, y_lab = self.arrays()
        at, lower = self.confidence, self.bound.lower

        def bound_at(c: float) -> float:
            return lower if c == at else ppi.reliability_bound(f_all, f_lab, y_lab, c, population=self.bound_on).lower

        return bound_at

    def to_json(self) -> dict[str, Any]:
        """The results' ``judge_assisted`` block."""
        out: dict[str, Any] = {"judge": {"endpoint": self.judge_endpoint, "model": self.judge_model},
                               "confidence": float(self.confidence), "population": self.population,
                               "bound_on": self.bound_on}
        if self.calls is not None:
            out["calls"] = dict(zip(("made", "cached", "failed"), self.calls, strict=True))
        rows = [r.to_json() for r in self.rows or ()]
        if self.bound is None or self.agreement is None or not self.rows:
            return {**out, "lower_bound": None, "estimate": None, "method": ppi.METHOD, "n_labels": 0,
                    "n_judged": 0, "agreement": None, "verdicts": rows, "message": self.message}
        f_all = np.array([r.judge for r in self.rows], dtype=np.int64)
        ag = self.agreement
        out.update({
            "lower_bound": self.bound.lower, "estimate": self.bound.estimate, "method": self.bound.method,
            "n_labels": self.n_labels, "n_judged": self.n_judged,
            "judge_yes_share": float(f_all.mean()),
            "n_judge_unparseable": sum(r.status == "unparseable" for r in self.rows),
            "n_judge_failed": sum(r.status == "failed" for r in self.rows),
            "n_no_answer": sum(r.status == "no_answer" for r in self.rows),
            "agreement": {
                "n": ag.n, "agreement_rate": ag.agreement_rate,
                "table": {"judge_yes_human_yes": ag.yes_yes, "judge_yes_human_no": ag.yes_no,
                          "judge_no_human_yes": ag.no_yes, "judge_no_human_no": ag.no_no},
                "kappa": {"estimate": ag.kappa, "lower": ag.kappa_lower, "upper": ag.kappa_upper,
                          "note": ag.kappa_note},
                "false_accept": {"rate": ag.false_accept_rate, "n_human_no": ag.yes_no + ag.no_no,
                                 "upper": ag.false_accept_upper},
            },
            "verdicts": rows,
        })
        if (warning := self.warning) is not None:  # issue 31 item 7: flagged in the JSON, CLI and TUI
            out["warning"] = warning
        prefix = self.prefix
        if prefix.left_out:
            out["left_out"] = prefix.left_out
            out["left_out_note"] = prefix.note
        if self.gate is not None:
            out["more_labels"] = self.more_labels
            out["more_labels_message"] = self.more_labels_message
        return out


def no_verification_judge(imported_tool: str | None = None) -> str:
    """Why a run has no verification judge's verdicts, and what can be done instead — one sentence for the Results
    tab, the spot-check's ``j`` and a run's judge certificate (``t``, ``relgate judge certify --run``). A verification
    judge is part of a run (its identity): relgate asks it about the answers it samples, so an imported run
    (``imported_tool``: the tool whose log it is) can never have one; its judge is certified from a verdicts file."""
    if imported_tool:
        return (f"imported from {one_line(imported_tool, 20)}'s log, so it has no verification judge (relgate asks one "
                "only about answers it samples): to certify a judge on these answers, run relgate judge certify "
                "--verdicts FILE (JSONL: id, p_yes or judge 0/1, human 0/1)")
    return ("this run has no verification judge: one is part of a run, so certify again with one (Setup's "
            "Verification judge, or relgate certify --verify-judge-model NAME: a new run), or certify a judge from "
            "a verdicts file: relgate judge certify --verdicts FILE")


def assisted_section(prepared: Any, analysis: Any, *, confidence: float = 0.95, gate: float | None = None,
                     calls: Any = None) -> AssistedSection | None:  # population: the run's ``--population``
    """The section of a prepared run (:class:`~relgate_tui.engine.certification.certify.Prepared`) from the
    verification judge's verdicts stored in it (None without a verification judge)."""
    if prepared.config.verify_judge_model is None:  # no verification judge: its modules are never imported
        return None
    from relgate_tui.core.redact import public_url
    from relgate_tui.engine.judging.verify_judge import config_of, verdicts_from_document

    cfg = config_of(prepared.config)
    if cfg is None:
        return None
    verdicts = verdicts_from_document(prepared.store.read_verify_verdicts(), cfg)
    order = list(prepared.calibration_ids) + list(prepared.deployment_ids)
    rows = None if verdicts is None else assisted_rows(order, analysis, verdicts)
    mixed = any(a.has_reference for a in analysis.items if a.sampled)
    return section_from_rows(rows, confidence=confidence, judge=(public_url(cfg.endpoint), cfg.model), mixed=mixed,
                             calls=calls, gate=gate, bound_on=getattr(prepared.config, "population", "task"))


def assisted_rows(order: list[str], analysis: Any, verdicts: Mapping[str, Any]) -> tuple[AssistedRow, ...] | None:
    """One row per judged item in ``order``. None when some judged item has no stored verdict yet (the judge pass
    has not run)."""
    by_id = {a.item_id: a for a in analysis.items}
    rows: list[AssistedRow] = []
    for item_id in order:
        a = by_id.get(item_id)
        if a is None or not a.sampled or a.has_reference:
            continue
        v = verdicts.get(item_id)
        if v is None:
            return None
        human = None
        if a.role == "calibration" and (a.skipped or by_a_person(a.verified_by)):  # a team review's too
            human = 0 if a.skipped or a.score is None else int(a.score <= 1)
        rows.append(AssistedRow(item_id, int(v.f), v.p_yes, v.status, human))
    return tuple(rows)


def section_from_rows(rows: Sequence[AssistedRow] | None, *, confidence: float, judge: tuple[str, str],
                      mixed: bool, calls: Any = None, gate: float | None = None,
                      bound_on: str = "task") -> AssistedSection:
    """The section from :func:`assisted_rows` (``judge``: endpoint, model; ``mixed``: some items of the run have
    references; ``bound_on``: :data:`relgate_tui.core.ppi.POPULATIONS`). The label plan is the task bound's (for
    "items" it can only overstate the labels needed)."""
    counts = None if calls is None else (int(calls.made), int(calls.cached), int(calls.failed))
    base = AssistedSection(judge[0], judge[1], float(confidence), mixed, None if rows is None else tuple(rows),
                           gate=gate, calls=counts)
    if not rows:
        return base
    f_all, f_lab, y_lab = labelled_arrays(rows)
    plan = None if gate is None else ppi.labels_plan(f_all, f_lab, y_lab, gate, confidence)
    return AssistedSection(base.judge_endpoint, base.judge_model, base.confidence, mixed, base.rows,
                           ppi.reliability_bound(f_all, f_lab, y_lab, confidence, population=bound_on),
                           agreement(f_lab, y_lab, confidence), gate, None if plan is None else plan.more, counts,
                           None if plan is None else plan.message, bound_on)


def _pairs(rows: Sequence[AssistedRow | Mapping[str, Any]]) -> tuple[list[int], list[int | None]]:
    pairs = [(r.judge, r.human) if isinstance(r, AssistedRow) else (r["judge"], r.get("human")) for r in rows]
    return [int(f) for f, _ in pairs], [None if y is None else int(y) for _, y in pairs]


def labelled_arrays(rows: Sequence[AssistedRow | Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f on all judged items, f on the labelled prefix, Y on it), in row order (the seeded order); rows typed or
    read back from a results file. Labels after the first unlabelled item are not used (module docstring)."""
    f_all, f_lab, y_lab, _ = prefix_arrays(*_pairs(rows))
    return f_all, f_lab, y_lab


def labelled_prefix_of(rows: Sequence[AssistedRow | Mapping[str, Any]]) -> Prefix:
    """The :class:`~relgate_tui.core.label_prefix.Prefix` of ``rows`` (how many labels count, how many are left
    out)."""
    return prefix_arrays(*_pairs(rows))[3]


def recompute(block: Mapping[str, Any]) -> ppi.Bound:
    """The assisted bound from a ``judge_assisted`` block alone (its ``verdicts`` and ``confidence``)."""
    f_all, f_lab, y_lab = labelled_arrays(list(block["verdicts"]))
    return ppi.reliability_bound(f_all, f_lab, y_lab, float(block["confidence"]),
                                 population=str(block.get("bound_on") or "task"))
