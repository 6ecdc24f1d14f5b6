"""A judge cascade (issue 38) on disk: several judges' verdicts on the same items, the cascade certificate's
document and Markdown, and the cascade on new items. The statistics are :mod:`relgate_tui.core.judge_cascade`.

**Inputs**: one :class:`~relgate_tui.engine.judging.certificate.Verdicts` per judge, in cascade order (cheapest
first). To certify, every judge must have judged the same item ids (refused, naming the first missing ids,
otherwise); the human verdicts may be in any of the files, and a file with none is fine — but two files that give
one item different human verdicts are refused, one line per item (the first :data:`MAX_SHOWN`).

**Document** (JSON, stored like a single-judge certificate): ``verdict`` / ``sentence`` first; ``selective`` as for
one judge (``threshold`` is the list of the judges' thresholds, null = that judge decides nothing; ``coverage`` = the
share the whole cascade decides; ``agreement_lower`` the pooled exact bound; ``sequence`` the tested path); a
``cascade`` list, one entry per judge: ``judge`` (its model, else its file), ``source``, ``fingerprint``,
``threshold``, ``reached`` (items asked), ``decided``, ``decided_share``, ``decided_labelled``, ``agreement`` and
``agreement_lower`` (that judge's own decided labelled items, each on its own); ``calls_saved`` — per judge after the
first its ``calls`` and the calls ``avoided`` (items decided before it), and ``people`` (items left to people) with
``people_unlabelled`` (of those, the ones no person has labelled yet); ``result``: the typed
:class:`~relgate_tui.core.judge_cascade.Cascade`, which ``judge apply`` reads back as its type.

**Apply**: judge j's verdicts must cover the items that reach it — a later judge's file may leave out the items an
earlier judge decides (those calls are the saving); each decided item is tagged with the judge that decided it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from relgate_tui.core import jsonsafe
from relgate_tui.core.judge_cascade import COST, MAX_JUDGES, Cascade, certify_cascade
from relgate_tui.core.judge_certificate import confidence_of
from relgate_tui.core.text import one_line
from relgate_tui.engine.judging.certificate import Verdicts, differing_field
from relgate_tui.errors import DataError, UserError

__all__ = ["MAX_SHOWN", "METHOD", "merged_humans", "label_of", "compute_cascade", "render_cascade_markdown",
           "apply_cascade_doc", "is_cascade"]

MAX_SHOWN = 20
METHOD = ("a judge cascade certified as one: a label-free path of threshold vectors (cheapest cascade at each "
          "predicted agreement) and the last judge alone, each walked as a fixed sequence of exact binomial tests "
          "on all decided labelled items (δ split between the two); stop at the first failure")


def label_of(v: Verdicts) -> str:
    """A judge's name in the outputs: its model when known, else its file."""
    model = v.fingerprint.get("model")
    if model:
        return one_line(str(model), 80)
    src = v.source.removeprefix("verdicts file ")
    return one_line(os.path.basename(src) or src, 80)


def _same_ids(vs: Sequence[Verdicts]) -> None:
    first = set(vs[0].ids)
    for j, v in enumerate(vs[1:], start=2):
        other = set(v.ids)
        if other != first:
            missing = sorted(first - other)[:3]
            extra = sorted(other - first)[:3]
            parts = ([f"lacks {len(first - other)} of judge 1's items (e.g. {', '.join(map(repr, missing))})"]
                     if missing else []) + ([f"has {len(other - first)} items judge 1 lacks (e.g. "
                                             f"{', '.join(map(repr, extra))})"] if extra else [])
            raise UserError(f"judge {j} ({one_line(v.source, 120)}) {' and '.join(parts)}: every judge of a cascade "
                            "must judge the same items to certify it")


def merged_humans(vs: Sequence[Verdicts]) -> list[int]:
    """The human verdict of each of judge 1's items (−1: unlabelled) from any file; :class:`DataError` naming each
    item whose files disagree."""
    per: list[dict[str, int | None]] = [dict(zip(v.ids, v.human, strict=True)) for v in vs]
    out: list[int] = []
    errors: list[str] = []
    for item in vs[0].ids:
        given = [(v.source, h[item]) for v, h in zip(vs, per, strict=True) if h.get(item) is not None]
        values = {x for _, x in given}
        if len(values) > 1 and len(errors) < MAX_SHOWN:
            said = ", ".join(f"{one_line(src, 300)} says {x}" for src, x in given)
            errors.append(f"item {one_line(item, 60)!r}: the human verdicts differ ({said})")
        out.append(-1 if not given else int(given[0][1] or 0))
    if errors:
        raise DataError("\n".join(errors))
    return out


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def _more_labels(cas: Cascade, min_coverage: float) -> int | None:
    """Labels more that could certify ``min_coverage`` (with probability ½, the single-judge planner), when the
    first failed vector of the cascade's sequences agreed with the humans more than A on its labelled items (the
    failure may be too few labels); None when no failure looks like that."""
    from relgate_tui.core.judge_certificate import plan_labels

    failed = [s for s in (*cas.path, *cas.last) if not s.passed and s.n_above]
    observed = max((s.n_agree / s.n_above for s in failed), default=None)
    if observed is None or observed <= cas.agreement:
        return None
    plan = plan_labels(cas.agreement, min(observed, 0.999), max(min_coverage, 1e-3), cas.confidence)
    return None if plan.n_half is None else max(0, plan.n_half - cas.n_labelled) or None


def _verdict(cas: Cascade, min_coverage: float, labels: Sequence[str]) -> tuple[str, str, int | None]:
    cov = cas.coverage or 0.0
    share = ", ".join(f"{lab} {_pct(s.n_decided / cas.n_items if cas.n_items else 0.0)}"
                      for lab, s in zip(labels, cas.stages, strict=True))
    head = (f"the cascade decides {_pct(cov)} of items with ≥ {_pct(cas.agreement)} agreement with your reviewers "
            f"({_pct(cas.confidence)} confidence) — {share}; {_pct(1 - cov)} go to people.")
    if cas.route != "none" and cov >= min_coverage:
        return "PASS", f"PASS: {head}", None
    more = _more_labels(cas, min_coverage)
    if cas.n_labelled < cas.start or more:
        tail = f"; about {more} more would reach {_pct(min_coverage)} coverage with probability ½" if more else ""
        return "NOT DECIDABLE", (f"NOT DECIDABLE: {cas.n_labelled} labelled items are too few to certify the cascade "
                                 f"at {_pct(min_coverage)} coverage{tail}"), more
    if cas.route == "none":
        return "FAIL", (f"FAIL: no cascade of these judges is certified ≥ {_pct(cas.agreement)} agreement "
                        f"with your reviewers ({_pct(cas.confidence)} confidence)"), None
    return "FAIL", (f"FAIL: the cascade decides only {_pct(cov)} of items with ≥ {_pct(cas.agreement)} agreement, "
                    f"below the required {_pct(min_coverage)}"), None


def compute_cascade(vs: Sequence[Verdicts], *, agreement: float = 0.90, confidence: float = 0.95,
                    min_coverage: float = 0.50, cost: float = COST) -> dict[str, Any]:
    """The cascade certificate document (module docstring) of judges ``vs`` in cascade order (at least two)."""
    if not 2 <= len(vs) <= MAX_JUDGES:
        raise UserError(f"a cascade has 2 to {MAX_JUDGES} judges, got {len(vs)}")
    _same_ids(vs)
    humans = merged_humans(vs)
    index = [dict(zip(v.ids, range(len(v.ids)), strict=True)) for v in vs]
    order = [[ix[i] for i in vs[0].ids] for ix in index]
    p = [[v.p_yes[k] for k in o] for v, o in zip(vs, order, strict=True)]
    f = [[v.judge[k] for k in o] for v, o in zip(vs, order, strict=True)]
    cas = certify_cascade(p, humans, judges=f, agreement=agreement, confidence=confidence, cost=cost)
    labels = [label_of(v) for v in vs]
    verdict, sentence, more = _verdict(cas, min_coverage, labels)
    n = cas.n_items
    stages = [{"judge": lab, "source": v.source, "fingerprint": dict(v.fingerprint), "threshold": s.threshold,
               "reached": s.n_reached, "decided": s.n_decided, "decided_share": s.n_decided / n if n else None,
               "decided_labelled": s.n_decided_labelled, "agreement": s.agreement,
               "agreement_lower": s.agreement_lower}
              for lab, v, s in zip(labels, vs, cas.stages, strict=True)]
    d = _routes(cas, p, f)
    people_unlabelled = int(np.sum((d < 0) & (np.asarray(humans) < 0)))
    doc = {
        "verdict": verdict, "sentence": sentence, "n_items": n, "n_labelled": cas.n_labelled,
        "agreement": agreement, "confidence": confidence, "min_coverage": min_coverage,
        "selective": {
            "threshold": list(cas.thresholds), "coverage": cas.coverage, "coverage_lower": cas.coverage_lower,
            "coverage_upper": cas.coverage_upper, "n_decided": cas.n_decided,
            "n_decided_labelled": cas.n_decided_labelled, "agreement_lower": cas.agreement_lower,
            "agreement_guaranteed": agreement if cas.route != "none" else None, "method": METHOD,
            "start": cas.start, "route": cas.route,
            "sequence": [s.to_json() for s in cas.path], "last_judge_sequence": [s.to_json() for s in cas.last],
        },
        "cascade": stages,
        "calls_saved": {
            "judges": [{"judge": lab, "calls": s.n_reached, "avoided": saved, "avoided_share": saved / n if n else None}
                       for lab, s, saved in zip(labels[1:], cas.stages[1:], cas.calls_saved, strict=True)],
            "people": cas.n_people, "people_unlabelled": people_unlabelled, "cost": cost,
        },
        "more_labels": more,
        "result": cas.to_json(),
        "source": "cascade of " + ", ".join(v.source for v in vs),
        "fingerprint": {"cascade": [dict(v.fingerprint) for v in vs]},
    }
    return jsonsafe.jsonable(doc)


def _routes(cas: Cascade, p: Sequence[Sequence[float]], f: Sequence[Sequence[int]]) -> np.ndarray:
    from relgate_tui.core.judge_cascade import route

    c = np.array([confidence_of(pj, fj)[1] for pj, fj in zip(p, f, strict=True)])
    return route(c, cas.thresholds)


def is_cascade(doc: Mapping[str, Any]) -> bool:
    return isinstance(doc.get("cascade"), list) and isinstance(doc.get("result"), Mapping)


def render_cascade_markdown(doc: Mapping[str, Any]) -> str:
    """The cascade certificate for people: the verdict sentence first, then one line per judge."""
    sel, calls = doc["selective"], doc["calls_saved"]
    lines = [one_line(doc["sentence"], 600), "", f"# Judge cascade certificate {one_line(str(doc.get('id') or ''), 40)}",
             "", f"- {doc['n_items']} items, {doc['n_labelled']} labelled; target ≥ {_pct(doc['agreement'])} agreement "
             f"with your reviewers on everything the cascade decides, at {_pct(doc['confidence'])} confidence; PASS "
             f"needs ≥ {_pct(doc['min_coverage'])} of items decided",
             f"- decided: {_pct(sel['coverage'])} of items [{_pct(sel['coverage_lower'])}, "
             f"{_pct(sel['coverage_upper'])}]; agreement lower bound on them {_pct(sel['agreement_lower'])} "
             f"(certified by the {'path' if sel['route'] == 'path' else 'last judge alone' if sel['route'] == 'last' else 'no'} sequence)"]
    for k, s in enumerate(doc["cascade"], start=1):
        t = "decides nothing" if s["threshold"] is None else f"threshold {s['threshold']:.4f}"
        lines.append(f"- judge {k} {one_line(str(s['judge']), 80)}: {t}; asked on {s['reached']} items, decides "
                     f"{s['decided']} ({_pct(s['decided_share'])}); agrees on {_pct(s['agreement'])} of its "
                     f"{s['decided_labelled']} decided labelled items (≥ {_pct(s['agreement_lower'])} on its own)")
    for c in calls["judges"]:
        lines.append(f"- calls of {one_line(str(c['judge']), 80)} avoided: {c['avoided']} of {doc['n_items']} "
                     f"({_pct(c['avoided_share'])})")
    lines.append(f"- left to people: {calls['people']} items ({calls['people_unlabelled']} not labelled yet)")
    lines += ["", "The guarantee is agreement with *these* reviewers on all the items the cascade decides, whichever "
              "judge decides them; another judge, prompt or task needs a new certificate.", ""]
    return "\n".join(lines)


def apply_cascade_doc(cert: Mapping[str, Any], vs: Sequence[Verdicts]) -> tuple[dict[str, Any], str]:
    """(the decisions document, its head line) of a stored cascade certificate on new verdicts (module docstring)."""
    from relgate_tui.core.judge_cascade import apply_cascade

    try:
        cas = Cascade.from_json(cert["result"])
    except ValueError as exc:
        raise UserError(f"certificate {cert.get('id')}: not a judge cascade certificate ({exc})") from None
    stages = cert["cascade"]
    if len(vs) != len(cas.thresholds) or len(stages) != len(vs):
        raise UserError(f"certificate {cert.get('id')} is a cascade of {len(cas.thresholds)} judges; give their "
                        f"verdicts with {len(cas.thresholds)} --verdicts, in its order")
    for k, (stage, v) in enumerate(zip(stages, vs, strict=True), start=1):
        fp = stage.get("fingerprint") if isinstance(stage, Mapping) else None
        field = differing_field(fp if isinstance(fp, Mapping) else {}, v.fingerprint)
        if field is not None:
            raise UserError(f"certificate {cert.get('id')}: judge {k} is another judge ({field} differs); certify "
                            "this cascade first")
    ids = vs[0].ids
    rows = [dict(zip(v.ids, range(len(v.ids)), strict=True)) for v in vs]
    n, n_judges = len(ids), len(vs)
    c = np.zeros((n_judges, n))
    f = np.zeros((n_judges, n), dtype=np.int64)
    undecided = np.ones(n, dtype=bool)
    for j, (v, ix) in enumerate(zip(vs, rows, strict=True)):
        t = cas.thresholds[j]
        if t is None:
            continue
        lacking = [ids[i] for i in np.nonzero(undecided)[0] if ids[i] not in ix]
        if lacking:
            raise UserError(f"judge {j + 1} ({one_line(v.source, 120)}) lacks {len(lacking)} items that reach it "
                            f"(e.g. {', '.join(repr(one_line(x, 40)) for x in lacking[:3])})")
        at = [ix.get(i) for i in ids]
        known = np.array([k is not None for k in at])
        p = [v.p_yes[k] if k is not None else 0.5 for k in at]
        g = [v.judge[k] if k is not None else 0 for k in at]
        f[j], c[j] = confidence_of(p, g)
        c[j][~known] = -np.inf  # never decides an item it did not judge (those were decided before it)
        undecided &= ~(c[j] >= t)
    d, people = apply_cascade(c, cas.thresholds)
    labels = [str(s.get("judge")) if isinstance(s, Mapping) else f"judge {k}" for k, s in enumerate(stages, 1)]
    asked = [j for j, t in enumerate(cas.thresholds) if t is not None]
    last = asked[-1] if asked else 0
    human = [next((v.human[ix[i]] for v, ix in zip(vs, rows, strict=True) if i in ix and v.human[ix[i]] is not None),
                  None) for i in ids]
    doc: dict[str, Any] = {
        "certificate": cert.get("id"), "thresholds": list(cas.thresholds), "n_items": n,
        "n_decided": int(np.sum(d >= 0)), "n_escalated": int(people.size),
        "by_judge": [{"judge": lab, "decided": int(np.sum(d == j))} for j, lab in enumerate(labels)],
        "decided": [{"id": ids[i], "verdict": int(f[d[i], i]), "confidence": float(c[d[i], i]),
                     "judge": labels[d[i]], "stage": int(d[i]) + 1} for i in np.nonzero(d >= 0)[0]],
        "escalated": [{"id": ids[i], "judge": int(f[last, i]), "p_yes": vs[last].p_yes[rows[last][ids[i]]]
                       if ids[i] in rows[last] else None, "confidence": float(c[last, i]) if np.isfinite(c[last, i])
                       else None, "human": human[i]} for i in people],
    }
    parts = ", ".join(f"{b['judge']} {b['decided']}" for b in doc["by_judge"])
    head = (f"certificate {cert.get('id')}: the cascade decides {doc['n_decided']} of {n} items "
            f"({doc['n_decided'] / n:.0%}: {parts}); {people.size} go to people, least confident first")
    return jsonsafe.jsonable(doc), head
