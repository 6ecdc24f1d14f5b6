"""The judge certificate as a document (issue 30 §1): the JSON every output and the store share, and its Markdown.

The JSON is made once, here, from the typed :class:`~relgate_tui.core.judge_certificate.JudgeCertificate`:
``verdict`` and ``sentence`` first, ``n_labelled``, ``selective`` {``threshold`` (on the judge's confidence c; null
when the judge may decide nothing), ``coverage`` (with its interval), ``agreement_lower``, the tested sequence},
``accuracy`` / ``tpr`` / ``tnr`` ({``value``, ``lower``}), ``base_rate``, ``kappa``, ``corrected_pass_rate``,
``consistency``, ``warnings``, ``more_labels``, ``plan`` and the judge's ``fingerprint``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from relgate_tui.core import jsonsafe
from relgate_tui.core.judge_certificate import JudgeCertificate, agreement_curve, certify, confidence_of, plan_labels
from relgate_tui.core.text import one_line

__all__ = ["certificate_document", "compute", "render_markdown", "plan_line", "plan_json"]

METHOD = ("fixed-sequence exact binomial tests over the labelled items' distinct confidences, most confident first, "
          "from the first with ≥ start labelled items at or above it; stop at the first failure")
RG_METHOD = ("Rogan–Gladen; interval: Bonferroni over two-sided Clopper–Pearson intervals for TPR, TNR and the "
             "judge's apparent pass rate, each at 1 − (1 − confidence)/3, extremes over the box's corners")


def _b(b: Any) -> dict[str, Any]:
    out = {"value": b.value, "lower": b.lower, "n": b.n}
    if b.upper is not None:
        out["upper"] = b.upper
    return out


def compute(verdicts: Any, *, agreement: float = 0.90, confidence: float = 0.95, min_coverage: float = 0.50,
            require_consistency: float | None = None) -> dict[str, Any]:
    """The certificate document of ``verdicts`` (an engine ``Verdicts``): what the CLI stores and the TUI shows."""
    cert = certify(list(verdicts.p_yes), verdicts.human_codes, judge=list(verdicts.judge),
                   votes=list(verdicts.votes) if verdicts.votes else None, agreement=agreement,
                   confidence=confidence, min_coverage=min_coverage, require_consistency=require_consistency)
    return certificate_document(cert, verdicts)


def _curve(verdicts: Any, confidence: float) -> dict[str, list[float]]:
    f, c = confidence_of(list(verdicts.p_yes), list(verdicts.judge))
    h = np.asarray(verdicts.human_codes)
    lab = h >= 0
    cov, ag, lo = agreement_curve(c[lab], (f[lab] == h[lab]).astype(np.int64), confidence)
    return {"coverage": cov.tolist(), "agreement": ag.tolist(), "lower": lo.tolist()}


def _expect(curve: Mapping[str, list[float]], coverage: float, agreement: float) -> float:
    """The planner's expected agreement: the observed agreement on the ``coverage`` most confident labelled items
    (halfway between A and 1 without labels), at most 0.999."""
    at = [a for c, a in zip(curve["coverage"], curve["agreement"], strict=True) if c >= coverage]
    return min(0.999, at[0] if at else 0.5 * (1.0 + agreement))


def certificate_document(cert: JudgeCertificate, verdicts: Any) -> dict[str, Any]:
    """The JSON document of ``cert`` computed from ``verdicts`` (an engine ``Verdicts``)."""
    sel = cert.selective
    curve = _curve(verdicts, sel.confidence)
    plan = plan_labels(sel.agreement, _expect(curve, cert.min_coverage, sel.agreement),
                       max(cert.min_coverage, 1e-3), sel.confidence)
    doc = {
        "verdict": cert.verdict,
        "sentence": cert.sentence,
        "n_items": cert.n_items,
        "n_labelled": cert.n_labelled,
        "agreement": sel.agreement,
        "confidence": sel.confidence,
        "min_coverage": cert.min_coverage,
        "selective": {
            "threshold": sel.threshold, "coverage": sel.coverage.value, "coverage_lower": sel.coverage.lower,
            "coverage_upper": sel.coverage.upper, "n_decided": sel.coverage.successes,
            "n_decided_labelled": sel.n_decided_labelled, "agreement_lower": sel.agreement_lower,
            "agreement_guaranteed": sel.agreement if sel.threshold is not None else None, "method": METHOD,
            "start": sel.start,
            "sequence": [{"threshold": s.threshold, "n": s.n_above, "agree": s.n_agree, "p_value": s.p_value,
                          "passed": s.passed} for s in sel.steps],
        },
        "accuracy": _b(cert.accuracy), "tpr": _b(cert.tpr), "tnr": _b(cert.tnr), "base_rate": _b(cert.base_rate),
        "kappa": {"value": cert.kappa, "lower": cert.kappa_lower, "upper": cert.kappa_upper},
        "judge_yes_share": cert.judge_yes_share,
        "corrected_pass_rate": {"apparent": cert.corrected_pass_rate.apparent, "value": cert.corrected_pass_rate.value,
                                "lower": cert.corrected_pass_rate.lower, "upper": cert.corrected_pass_rate.upper,
                                "method": RG_METHOD, "note": cert.corrected_pass_rate.note},
        "consistency": None if cert.consistency is None else {**_b(cert.consistency.share),
                                                              "n_items": cert.consistency.n_items},
        "warnings": list(cert.warnings),
        "more_labels": cert.more_labels,
        "plan": plan_json(plan),
        "pairwise": dict(verdicts.extras) if verdicts.extras else None,
        "curve": curve,
        "source": verdicts.source,
        "fingerprint": dict(verdicts.fingerprint),
    }
    return jsonsafe.jsonable(doc)


def plan_line(plan: Any) -> str:
    """The planner in one sentence (CLI, Markdown, TUI)."""
    head = (f"planner: with {plan.expect:.0%} expected agreement, reaching {plan.coverage:.0%} coverage at "
            f"≥ {plan.agreement:.0%} agreement ({plan.confidence:.0%} confidence) takes")
    if plan.n_half is None:
        why = "never: the expected agreement is not above the target" if plan.expect <= plan.agreement else \
            f"more than {plan.limit} labelled items"
        return f"{head} {why}"
    ninety = f"{plan.n_ninety}" if plan.n_ninety is not None else f"more than {plan.limit}"
    return f"{head} {plan.n_half} labelled items with probability ½, {ninety} with probability 0.9"


def plan_json(plan: Any) -> dict[str, Any]:
    return {"agreement": plan.agreement, "expect": plan.expect, "coverage": plan.coverage,
            "confidence": plan.confidence, "labels_half": plan.n_half, "labels_ninety": plan.n_ninety,
            "method": "exact binomial power of one test at the target coverage"}


def _pct(v: Any) -> str:
    return "—" if v is None else f"{100 * v:.1f}%"


def render_markdown(doc: Mapping[str, Any]) -> str:
    """The certificate for people: the verdict sentence first, then the figures."""
    sel = doc["selective"]
    t = sel["threshold"]
    lines = [one_line(doc["sentence"], 400), "", f"# Judge certificate {one_line(str(doc.get('id') or ''), 40)}", "",
             f"- source: {one_line(str(doc['source']), 200)}; {doc['n_items']} items, {doc['n_labelled']} labelled",
             f"- target: ≥ {_pct(doc['agreement'])} agreement with your reviewers at {_pct(doc['confidence'])} "
             f"confidence; PASS needs ≥ {_pct(doc['min_coverage'])} of items decided",
             f"- threshold on the judge's confidence: {'none (the judge may decide nothing)' if t is None else f'{t:.4f}'}",
             f"- decided: {_pct(sel['coverage'])} of items [{_pct(sel['coverage_lower'])}, "
             f"{_pct(sel['coverage_upper'])}]; agreement lower bound on them {_pct(sel['agreement_lower'])}",
             f"- accuracy {_pct(doc['accuracy']['value'])} (≥ {_pct(doc['accuracy']['lower'])}), "
             f"TPR {_pct(doc['tpr']['value'])} (≥ {_pct(doc['tpr']['lower'])}), "
             f"TNR {_pct(doc['tnr']['value'])} (≥ {_pct(doc['tnr']['lower'])}); "
             f"base rate: the humans say yes to {_pct(doc['base_rate']['value'])}",
             ]
    k = doc["kappa"]
    if k["value"] is not None:
        lines.append(f"- Cohen's κ {k['value']:.3f}" + (f" [{k['lower']:.3f}, {k['upper']:.3f}]"
                                                        if k["lower"] is not None else ""))
    rg = doc["corrected_pass_rate"]
    lines.append(f"- judge pass rate {_pct(rg['apparent'])}, corrected (Rogan–Gladen) {_pct(rg['value'])} "
                 f"[{_pct(rg['lower'])}, {_pct(rg['upper'])}]" + (f" — {rg['note']}" if rg["note"] else ""))
    if doc["consistency"] is not None:
        c = doc["consistency"]
        lines.append(f"- consistency: repeated verdicts agree on {_pct(c['value'])} of {c['n_items']} items "
                     f"[{_pct(c['lower'])}, {_pct(c['upper'])}]")
    pw = doc.get("pairwise")
    if pw:
        lines.append(f"- pairwise audit: position-flip rate {_pct(pw.get('position_flip_rate'))}, cycle share "
                     f"{_pct(pw.get('cycle_share'))} (paper 000); shown, not part of the verdict")
    for w in doc["warnings"]:
        lines.append(f"- warning: {one_line(w, 300)}")
    from relgate_tui.core.judge_certificate import Plan

    p = doc["plan"]
    lines.append("- " + plan_line(Plan(p["agreement"], p["expect"], p["coverage"], p["confidence"], p["labels_half"],
                                       p["labels_ninety"], 100_000)))
    fp = doc["fingerprint"]
    lines.append("- judge: " + ", ".join(f"{key} {one_line(str(v), 80)}" for key, v in fp.items() if v is not None))
    lines += ["", "The guarantee is agreement with *these* reviewers on items like these; a new judge, prompt or task "
              "needs a new certificate.", ""]
    return "\n".join(lines)
