"""The results' ``judge_assisted`` block (issue 22 §2–§5): the verification judge's verdicts on every item, the humans'
verdicts on the labelled ones, the judge-assisted lower bound (:func:`relgate_tui.core.ppi.reliability_bound`), the
agreement table (:func:`relgate_tui.core.agreement.agreement`) and the assisted gate.

**Population and order.** The judged items are the run's sampled items without a reference answer, listed in the
run's seeded split order (calibration items first, as the spot-check shows them; then deployment items). The labelled
items are the calibration items among them with a human or labels-file verdict, in that same order — the order the
spot-check asks for them, a seeded random permutation fixed before any label, which is what the anytime bound needs.
Y = 1 when the top answer was accepted (score 1). A **skipped** item counts as Y = 0 here (a skip may depend on the
item, so dropping it could bias the sample; counting it as a miss can only lower the bound). When every item has a
reference answer nothing is judged and the block says so; when only some do, the block bounds the items without one
(``population``), and the assisted gates are not used (the two bounds would not estimate the same thing).

**Gates** (``gate_on``): "assisted" — PASS iff the assisted bound at ``confidence`` ≥ threshold; "best" (the default
with a verification judge) — PASS iff max(human-only Clopper–Pearson bound, assisted bound) ≥ threshold, each computed
at half the error, 1 − (1 − confidence)/2. Valid by the union bound: if θ < threshold, P(PASS) ≤ δ/2 + δ/2 = δ.

:func:`recompute` rebuilds the bound from the block alone (its ``verdicts`` list), so a results file can be checked
without the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from relgate_tui.core import ppi
from relgate_tui.core.agreement import agreement, constant_judge
from relgate_tui.core.certification.intervals import clopper_pearson_lower

__all__ = ["ASSISTED_GATES", "assisted_rows", "assisted_section", "assisted_block", "apply_assisted_gate", "assisted_gate", "recompute",
           "labelled_arrays"]

ASSISTED_GATES = ("assisted", "best")
"""``--gate-on`` values that need a verification judge (module docstring, "Gates")."""


def assisted_block(prepared: Any, analysis: Any, *, confidence: float = 0.95, gate: float | None = None,
                   calls: Any = None) -> dict[str, Any] | None:
    """The ``judge_assisted`` block of a prepared run (:class:`~relgate_tui.engine.certification.certify.Prepared`) from the
    verification judge's verdicts stored in it (None without a verification judge)."""
    from relgate_tui.core.redact import public_url
    from relgate_tui.engine.judging.verify_judge import config_of, verdicts_from_document

    cfg = config_of(prepared.config)
    if cfg is None:
        return None
    verdicts = verdicts_from_document(prepared.store.read_verify_verdicts(), cfg)
    order = list(prepared.calibration_ids) + list(prepared.deployment_ids)
    rows = None if verdicts is None else assisted_rows(order, analysis, verdicts)
    mixed = any(a.has_reference for a in analysis.items if a.sampled)
    judge = {"endpoint": public_url(cfg.endpoint), "model": cfg.model}
    return assisted_section(rows, confidence=confidence, judge=judge, mixed=mixed, calls=calls, gate=gate)


def assisted_rows(order: list[str], analysis: Any, verdicts: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """One row per judged item in ``order``: id, judge verdict, P(yes), status, human verdict (None = unlabelled).
    None when some judged item has no stored verdict yet (the judge pass has not run)."""
    by_id = {a.item_id: a for a in analysis.items}
    rows: list[dict[str, Any]] = []
    for item_id in order:
        a = by_id.get(item_id)
        if a is None or not a.sampled or a.has_reference:
            continue
        v = verdicts.get(item_id)
        if v is None:
            return None
        human = None
        if a.role == "calibration" and (a.skipped or a.verified_by in ("human", "file")):
            human = 0 if a.skipped or a.score is None else int(a.score <= 1)
        rows.append({"id": item_id, "judge": int(v.f), "p_yes": v.p_yes, "status": v.status, "human": human})
    return rows


def labelled_arrays(rows: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f on all judged items, f on the labelled ones, Y on the labelled ones), labelled in row order."""
    f_all = np.array([int(r["judge"]) for r in rows], dtype=np.int64)
    lab = [r for r in rows if r.get("human") is not None]
    return (f_all, np.array([int(r["judge"]) for r in lab], dtype=np.int64),
            np.array([int(r["human"]) for r in lab], dtype=np.int64))


def recompute(block: Mapping[str, Any]) -> ppi.Bound:
    """The assisted bound from a ``judge_assisted`` block alone (its ``verdicts`` and ``confidence``)."""
    f_all, f_lab, y_lab = labelled_arrays(list(block["verdicts"]))
    return ppi.reliability_bound(f_all, f_lab, y_lab, float(block["confidence"]))


def assisted_section(rows: list[dict[str, Any]] | None, *, confidence: float, judge: Mapping[str, Any],
                     mixed: bool, calls: Any = None, gate: float | None = None) -> dict[str, Any]:
    """The ``judge_assisted`` block from :func:`assisted_rows` (``mixed``: some items of the run have references)."""
    base: dict[str, Any] = {"judge": dict(judge), "confidence": float(confidence),
                            "population": ("sampled items without a reference answer" if mixed
                                           else "every sampled item (none has a reference answer)")}
    if calls is not None:
        base["calls"] = {"made": calls.made, "cached": calls.cached, "failed": calls.failed}
    if not rows:
        return {**base, "lower_bound": None, "estimate": None, "method": ppi.METHOD, "n_labels": 0,
                "n_judged": 0, "agreement": None, "verdicts": rows or [],
                "message": ("the verification judge has not been asked yet" if rows is None
                            else "no item without a reference answer: nothing for the judge to verify")}
    f_all, f_lab, y_lab = labelled_arrays(rows)
    bound = ppi.reliability_bound(f_all, f_lab, y_lab, confidence)
    ag = agreement(f_lab, y_lab, confidence)
    block = {
        **base,
        "lower_bound": bound.lower, "estimate": bound.estimate, "method": bound.method,
        "n_labels": int(f_lab.size), "n_judged": int(f_all.size),
        "judge_yes_share": float(f_all.mean()),
        "n_judge_unparseable": sum(r["status"] == "unparseable" for r in rows),
        "n_judge_failed": sum(r["status"] == "failed" for r in rows),
        "n_no_answer": sum(r["status"] == "no_answer" for r in rows),
        "agreement": {
            "n": ag.n, "agreement_rate": ag.agreement_rate,
            "table": {"judge_yes_human_yes": ag.yes_yes, "judge_yes_human_no": ag.yes_no,
                      "judge_no_human_yes": ag.no_yes, "judge_no_human_no": ag.no_no},
            "kappa": {"estimate": ag.kappa, "lower": ag.kappa_lower, "upper": ag.kappa_upper},
            "false_accept": {"rate": ag.false_accept_rate, "n_human_no": ag.yes_no + ag.no_no,
                             "upper": ag.false_accept_upper},
        },
        "verdicts": rows,
    }
    if (constant := constant_judge(f_all)) is not None:  # issue 31 item 7: flagged in the JSON, CLI and TUI
        block["warning"] = constant
    if gate is not None:
        block["more_labels"] = ppi.more_labels_needed(f_all, f_lab, y_lab, gate, confidence)
    return block


def apply_assisted_gate(doc: dict[str, Any], block: Mapping[str, Any], gate_on: str) -> None:
    """Decide ``doc``'s gate on the assisted ("assisted") or the better ("best") bound (module docstring); leaves the
    human-only gate in place when the assisted one cannot be used, and says why in ``gate.note``."""
    gate = doc.get("gate")
    if not gate or gate_on not in ASSISTED_GATES:
        return
    threshold, confidence = float(gate["threshold"]), float(block["confidence"])
    if block.get("lower_bound") is None or block["population"].startswith("sampled items without"):
        doc["gate"] = {**gate, "note": "the assisted gate needs every item judged and none with a reference answer; "
                                       "decided on the human-only bound"}
        return
    if gate_on == "assisted":
        value, basis = float(block["lower_bound"]), f"{confidence:.0%} judge-assisted lower bound"
        parts = {"assisted_lower_bound": value}
    else:
        half = 1.0 - (1.0 - confidence) / 2.0
        human = _human_only(doc, half)
        assisted = recompute({**block, "confidence": half}).lower
        value = max(human, assisted)
        basis = f"better of the human-only and judge-assisted {half:.1%} lower bounds"
        parts = {"human_only_lower_bound": human, "assisted_lower_bound": assisted, "confidence_each": half}
    passed = None if gate.get("passed") is None else bool(value >= threshold)
    verdict = {True: "PASS", False: "FAIL", None: "undecided"}[passed]
    doc["gate"] = {**gate, "gate_on": gate_on, "value": value, **parts, "passed": passed,
                   "summary": (gate["summary"] if passed is None else
                               f"{verdict}: {basis} {value:.1%} {'≥' if passed else '<'} gate {threshold:.1%}")}
    doc["gate_on"] = gate_on
    doc["passed"] = passed


def assisted_gate(block: Mapping[str, Any] | None, view: Any, threshold: float | None) -> dict[str, Any] | None:
    """The default ("best") gate with a verification judge for a results view (the TUI), or None (no gate, no
    judge, or the assisted bound cannot be used)."""
    if block is None or threshold is None or view is None or block.get("lower_bound") is None:
        return None
    r = view.result
    doc: dict[str, Any] = {"reliability_n": r.reliability_n, "reliability_level": r.reliability_level,
                           "gate": {"threshold": threshold, "passed": True, "summary": ""}}
    apply_assisted_gate(doc, block, "best")
    return doc["gate"] if doc.get("gate_on") == "best" else None


def _human_only(doc: Mapping[str, Any], confidence: float) -> float:
    n = int(doc.get("reliability_n") or 0)
    if n == 0 or doc.get("reliability_level") is None:
        return 0.0
    successes = int(round(float(doc["reliability_level"]) * (n + 1)))
    return clopper_pearson_lower(min(successes, n), n, confidence)
