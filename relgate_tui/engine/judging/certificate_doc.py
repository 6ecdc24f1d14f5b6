"""The judge certificate as a document (issue 30 §1, issue 41 §5): one typed record every output and the store share.

:class:`CertificateDoc` holds the typed :class:`~relgate_tui.core.judge_certificate.JudgeCertificate` and what the
outputs add to it: the agreement curve, the source, the judge's fingerprint, the pairwise extras, notes (labels left
out) and the id. Its JSON (:meth:`CertificateDoc.to_json`) is the certificate's fields at the top level — ``verdict``
and ``sentence`` first — then ``curve``, ``source``, ``fingerprint``, ``pairwise``, ``notes``, ``methods`` and
``id``; :meth:`CertificateDoc.from_json` reads it back as the type (every reader — the store, ``judge apply``, the
screen — uses the type, never keys).

**The id is the content's digest** (:func:`content_id`): ``jc-`` + the first 24 hex digits of SHA-256 over the
canonical JSON (sorted keys, no spaces) of the document without its id. The store recomputes it on every load, so a
certificate cannot be edited or swapped for another under its name.
"""

from __future__ import annotations

import hashlib
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from relgate_tui.core import jsonsafe
from relgate_tui.core.judge_certificate import JudgeCertificate, Plan, agreement_curve, certify, confidence_of
from relgate_tui.core.text import one_line
from relgate_tui.core.typed_json import Record, from_plain

__all__ = ["METHOD", "Curve", "CertificateDoc", "content_id", "certificate_document", "compute", "render_markdown",
           "plan_line", "plan_json"]

METHOD = ("fixed-sequence exact binomial tests over the labelled items' distinct confidences, most confident first, "
          "from the first with ≥ start labelled items at or above it; stop at the first failure")
RG_METHOD = ("Rogan–Gladen; interval: Bonferroni over two-sided Clopper–Pearson intervals for TPR, TNR and the "
             "judge's apparent pass rate, each at 1 − (1 − confidence)/3, extremes over the box's corners")
UNIT_METHOD = ("the input is the unit: one labelled item drawn per input (seeded, before any agreement is read); the "
               "sequence tests those, independent across inputs")
_CERT_FIELDS = frozenset(JudgeCertificate.__dataclass_fields__)


@dataclass(frozen=True)
class Curve(Record):
    """Agreement against coverage on the labelled items (:func:`~relgate_tui.core.judge_certificate.agreement_curve`)."""

    coverage: tuple[float, ...]
    agreement: tuple[float, ...]
    lower: tuple[float, ...]


@dataclass(frozen=True)
class CertificateDoc(Record):
    """A certificate with its curve, source, fingerprint, pairwise extras, notes and id (module docstring)."""

    certificate: JudgeCertificate
    curve: Curve
    source: str
    fingerprint: dict[str, Any]
    pairwise: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()
    methods: dict[str, str] = field(default_factory=dict)
    id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = self.certificate.to_json()
        out.update(curve=self.curve.to_json(), source=self.source, fingerprint=jsonsafe.jsonable(self.fingerprint),
                   pairwise=jsonsafe.jsonable(self.pairwise), notes=list(self.notes), methods=dict(self.methods),
                   id=self.id)
        return out

    @classmethod
    def from_json(cls, obj: Any) -> CertificateDoc:
        if not isinstance(obj, dict):
            raise ValueError("the document: expected an object")
        cert = {k: v for k, v in obj.items() if k in _CERT_FIELDS}
        rest = {k: v for k, v in obj.items() if k not in _CERT_FIELDS}
        return typing.cast(CertificateDoc, from_plain(cls, {**rest, "certificate": cert}))

    def with_id(self) -> CertificateDoc:
        """This document with its id set to its content's digest."""
        from dataclasses import replace

        return replace(self, id=content_id(self.to_json()))


def content_id(plain: Mapping[str, Any]) -> str:
    """``jc-`` + 24 hex digits of SHA-256 over the canonical JSON of ``plain`` without its ``id`` (module docstring)."""
    body = json.dumps({k: v for k, v in plain.items() if k != "id"}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)
    return "jc-" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:24]


def compute(verdicts: Any, *, agreement: float = 0.90, confidence: float = 0.95, min_coverage: float = 0.50,
            require_consistency: float | None = None) -> CertificateDoc:
    """The certificate document of ``verdicts`` (an engine ``Verdicts``): what the CLI stores and the TUI shows."""
    groups = getattr(verdicts, "groups", None)
    cert = certify(list(verdicts.p_yes), verdicts.human_codes, judge=list(verdicts.judge),
                   votes=list(verdicts.votes) if verdicts.votes else None, group=list(groups) if groups else None,
                   agreement=agreement, confidence=confidence, min_coverage=min_coverage,
                   require_consistency=require_consistency, left_out=int(getattr(verdicts, "left_out", 0) or 0))
    return certificate_document(cert, verdicts)


def _curve(verdicts: Any, confidence: float) -> Curve:
    f, c = confidence_of(list(verdicts.p_yes), list(verdicts.judge))
    h = np.asarray(verdicts.human_codes)
    lab = h >= 0
    cov, ag, lo = agreement_curve(c[lab], (f[lab] == h[lab]).astype(np.int64), confidence)
    return Curve(tuple(cov.tolist()), tuple(ag.tolist()), tuple(lo.tolist()))


def certificate_document(cert: JudgeCertificate, verdicts: Any) -> CertificateDoc:
    """The document of ``cert`` computed from ``verdicts`` (an engine ``Verdicts``); its id set (:func:`content_id`)."""
    methods = {"selective": METHOD, "corrected_pass_rate": RG_METHOD, "plan": cert.plan.method}
    if cert.unit == "group":
        methods["unit"] = UNIT_METHOD
    doc = CertificateDoc(cert, _curve(verdicts, cert.selective.confidence), str(verdicts.source),
                         jsonsafe.jsonable(dict(verdicts.fingerprint)),
                         jsonsafe.jsonable(dict(verdicts.extras)) if verdicts.extras else None,
                         tuple(getattr(verdicts, "notes", ()) or ()), methods)
    return doc.with_id()


def plan_line(plan: Plan) -> str:
    """The planner in one sentence (CLI, Markdown, TUI): labels for P(PASS) of the whole procedure ½ and 0.9."""
    head = (f"planner: with {plan.expect:.0%} expected agreement on the most confident items, the whole procedure "
            f"certifies {plan.coverage:.0%} coverage at ≥ {plan.agreement:.0%} agreement "
            f"({plan.confidence:.0%} confidence) with")
    within = f"{plan.cap} items" if plan.cap is not None else f"{plan.limit} labelled items"
    if plan.expect <= plan.agreement:
        return f"{head} no number of labels: the expected agreement is not above the target"
    if plan.n_half is None:
        cap = f" (P(PASS) {plan.p_cap:.2f} with all {plan.cap})" if plan.p_cap is not None else ""
        return f"{head} probability ½ not within {within}{cap}; it never exceeds {plan.ceiling:.2f}"
    half = f"{plan.n_half} labelled items with probability ½ ({plan.p_half:.2f})"
    if plan.n_ninety is not None:
        ninety = f"{plan.n_ninety} with probability 0.9 ({plan.p_ninety:.2f})"
    elif plan.ceiling < 0.9:
        ninety = f"never with probability 0.9 (P(PASS) stays ≤ {plan.ceiling:.2f}: its first test must pass)"
    else:
        ninety = f"probability 0.9 not within {within}"
    return f"{head} {half}, {ninety} — exact, items like these"


def plan_json(plan: Plan) -> dict[str, Any]:
    return plan.to_json()


def _pct(v: Any) -> str:
    return "—" if v is None else f"{100 * v:.1f}%"


def render_markdown(doc: CertificateDoc) -> str:
    """The certificate for people: the verdict sentence first, then the figures."""
    cert = doc.certificate
    sel = cert.selective
    t = sel.threshold
    lines = [one_line(cert.sentence, 400), "", f"# Judge certificate {one_line(str(doc.id or ''), 40)}", "",
             f"- source: {one_line(doc.source, 200)}; {cert.n_items} items, {cert.n_labelled} labelled",
             f"- target: ≥ {_pct(sel.agreement)} agreement with your reviewers at {_pct(sel.confidence)} "
             f"confidence; PASS needs ≥ {_pct(cert.min_coverage)} of items decided",
             f"- threshold on the judge's confidence: {'none (the judge may decide nothing)' if t is None else f'{t:.4f}'}",
             f"- decided: {_pct(sel.coverage.value)} of items [{_pct(sel.coverage.lower)}, "
             f"{_pct(sel.coverage.upper)}]; agreement lower bound on them {_pct(sel.agreement_lower)}",
             f"- accuracy {_pct(cert.accuracy.value)} (≥ {_pct(cert.accuracy.lower)}), "
             f"TPR {_pct(cert.tpr.value)} (≥ {_pct(cert.tpr.lower)}), "
             f"TNR {_pct(cert.tnr.value)} (≥ {_pct(cert.tnr.lower)}); "
             f"base rate: the humans say yes to {_pct(cert.base_rate.value)}",
             f"- on the decided labelled items: agreement {_pct(cert.decided_yes.value)} (≥ "
             f"{_pct(cert.decided_yes.lower)}, n = {cert.decided_yes.n}) where the humans said yes, "
             f"{_pct(cert.decided_no.value)} (≥ {_pct(cert.decided_no.lower)}, n = {cert.decided_no.n}) where they "
             "said no",
             ]
    if cert.unit == "group":
        lines.append(f"- unit: {UNIT_METHOD} ({cert.n_labelled} inputs of {cert.n_labelled_given} labelled items)")
    if cert.kappa is not None:
        lines.append(f"- Cohen's κ {cert.kappa:.3f}" + (f" [{cert.kappa_lower:.3f}, {cert.kappa_upper:.3f}]"
                                                        if cert.kappa_lower is not None and cert.kappa_upper is not None
                                                        else ""))
    rg = cert.corrected_pass_rate
    corrected = "cannot be corrected" if rg.value is None else _pct(rg.value)
    lines.append(f"- judge pass rate {_pct(rg.apparent)}, corrected (Rogan–Gladen) {corrected} "
                 f"[{_pct(rg.lower)}, {_pct(rg.upper)}]" + (f" — {rg.note}" if rg.note else ""))
    if cert.consistency is not None:
        c = cert.consistency
        lines.append(f"- consistency: repeated verdicts agree on {_pct(c.share.value)} of {c.n_items} items "
                     f"[{_pct(c.share.lower)}, {_pct(c.share.upper)}]")
    pw = doc.pairwise
    if pw:
        lines.append(f"- pairwise audit: position-flip rate {_pct(pw.get('position_flip_rate'))}, cycle share "
                     f"{_pct(pw.get('cycle_share'))} (paper 000); shown, not part of the verdict")
    for w in cert.warnings:
        lines.append(f"- warning: {one_line(w, 400)}")
    for n in doc.notes:
        lines.append(f"- note: {one_line(n, 400)}")
    if cert.next_step:
        lines.append(f"- next step: {one_line(cert.next_step, 400)}")
    lines.append("- " + plan_line(cert.plan))
    lines.append("- judge: " + ", ".join(f"{key} {one_line(str(v), 80)}" for key, v in doc.fingerprint.items()
                                         if v is not None))
    lines += ["", "The guarantee is agreement with *these* reviewers on items like the labelled ones (a random sample "
              "of the task's items); a new judge, prompt or task needs a new certificate.", ""]
    return "\n".join(lines)
