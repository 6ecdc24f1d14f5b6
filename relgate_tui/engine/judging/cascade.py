"""A judge cascade (issue 38) on disk: several judges' verdicts on the same items, the cascade certificate's
document and Markdown, and the cascade on new items. The statistics are :mod:`relgate_tui.core.judge_cascade`.

**Inputs**: one :class:`~relgate_tui.engine.judging.certificate.Verdicts` per judge, in cascade order (cheapest
first) — from verdicts files, or from runs (:func:`verdicts_from_runs`: each run's verification judge, the reader of
``--from-run`` and of the Runs screen's cascade). To certify, every judge must have judged the same item ids (refused, naming the first missing ids,
otherwise); the human verdicts may be in any of the files, and a file with none is fine — but two files that give
one item different human verdicts are refused, one line per item (the first :data:`MAX_SHOWN`).

**Document** (JSON, stored like a single-judge certificate): ``verdict`` / ``sentence`` first; ``selective`` as for
one judge (``threshold`` is the list of the judges' thresholds, null = that judge decides nothing; ``coverage`` = the
share the whole cascade decides; ``agreement_lower`` the pooled exact bound; ``sequence`` the tested path); a
``cascade`` list, one entry per judge: ``judge`` (its model, else its file), ``source``, ``fingerprint``,
``threshold``, ``reached`` (items asked), ``decided``, ``decided_share``, ``decided_labelled``, ``agreement`` and
``agreement_lower`` (that judge's own decided labelled items, each on its own); ``calls_saved`` — per judge after the
first its ``calls`` and the calls ``avoided`` (items decided before it), and ``people`` (items left to people) with
``people_unlabelled`` (of those, the ones no person has labelled yet); ``decided_yes`` / ``decided_no``: the
pooled decided labelled items' agreement where the humans said yes / no, with exact lower bounds, and ``warnings``
(an always-majority judge reaching the target, most minority items missed, labelled items that do not look like a
random sample — then a PASS becomes NOT DECIDABLE; :func:`_pooled_checks`), as for one judge; ``notes`` (labels a
run's seeded-order prefix left out); ``result``: the typed :class:`~relgate_tui.core.judge_cascade.Cascade`, which
``judge apply`` reads back as its type.

**Store**: as a single judge's certificate — the id is the digest of the content
(:func:`relgate_tui.engine.judging.certificate.save_document`); :func:`load_cascade` recomputes it and refuses, in
one line, a mismatch, a FAIL, a judge's threshold outside [½, 1] or a tested sequence that does not give the
thresholds.

**Apply**: judge j's verdicts must cover the items that reach it — a later judge's file may leave out the items an
earlier judge decides (those calls are the saving); each decided item is tagged with the judge that decided it.
When the share the cascade would decide is out of line with the certificate's coverage interval, nothing is decided
and one line says so (as for one judge).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from relgate_tui.core import jsonsafe
from relgate_tui.core.judge_cascade import COST, MAX_JUDGES, Cascade, certify_cascade
from relgate_tui.core.judge_certificate import Bound, class_warnings, confidence_of
from relgate_tui.core.text import one_line
from relgate_tui.engine.judging.certificate import Verdicts, differing_field
from relgate_tui.errors import DataError, UserError

__all__ = ["MAX_SHOWN", "METHOD", "verdicts_from_runs", "merged_humans", "label_of", "compute_cascade", "render_cascade_markdown",
           "load_cascade", "apply_cascade_doc", "is_cascade"]

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


_NOT_ANSWERS = ("endpoint", "verify_judge")  # a run's identity fields that do not decide its answers' content


def _answers_identity(run: str, run_dir: str | None) -> dict[str, Any]:
    """A run's identity (its manifest's: everything that determines its samples) without the endpoint's address and
    the verification judge — what two runs must share for their judges to have judged the same answers."""
    from relgate_tui.engine.runs.listing import open_run
    from relgate_tui.engine.runs.paths import runs_dir

    store = open_run(run, runs_dir(run_dir))
    try:
        m = store.manifest
    finally:
        store.close()
    ident = m.get("identity")
    if not isinstance(ident, Mapping):  # a run written before the manifest kept its identity
        task = m.get("task")
        ident = {"task_sha256": task.get("sha256") if isinstance(task, Mapping) else None, "model": m.get("model"),
                 "seed": m.get("seed")}
    return {k: v for k, v in ident.items() if k not in _NOT_ANSWERS}


def verdicts_from_runs(runs: Sequence[str], run_dir: str | None = None) -> list[Verdicts]:
    """The judges of a cascade made from runs, in the given order (cheapest first): each run's verification judge
    (:func:`relgate_tui.engine.judging.certificate.verdicts_from_run`, with its fingerprint and its labelled prefix).
    The judges must have judged the same answers, so the runs must share their identity but for the endpoint's
    address and the verification judge (the same task file, model, seed and sampling settings); refused, one line
    naming the first differing field, otherwise — as are fewer than 2 or more than :data:`MAX_JUDGES` runs and a run
    without a verification judge."""
    from relgate_tui.engine.judging.certificate import verdicts_from_run

    if not 2 <= len(runs) <= MAX_JUDGES:
        raise UserError(f"a cascade from runs takes 2 to {MAX_JUDGES} runs (one per judge, cheapest first), "
                        f"got {len(runs)}")
    out: list[Verdicts] = []
    first: dict[str, Any] = {}
    first_id = ""
    for k, run in enumerate(runs):
        v, run_id = verdicts_from_run(run, run_dir)
        ident = _answers_identity(run, run_dir)
        if k == 0:
            first, first_id = ident, run_id
        elif ident != first:
            field = next(key for key in sorted({*first, *ident}) if first.get(key) != ident.get(key))
            what = {"task_sha256": "task file", "model": "answering model"}.get(field, field)
            raise UserError(f"run {one_line(run_id, 80)} and run {one_line(first_id, 80)} differ in their "
                            f"{one_line(what, 40)}: a cascade's judges must judge the same answers — make the runs "
                            "with the same task, model and settings, changing only the verification judge")
        out.append(v)
    return out


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


def _more_labels(cas: Cascade, min_coverage: float, c_last: np.ndarray, agree_last: np.ndarray) -> int | None:
    """Labels more that could certify ``min_coverage`` with probability ½, by the single-judge planner
    (:func:`relgate_tui.core.judge_certificate_plan.plan_labels`: P(PASS) of the whole fixed sequence, capped by the
    items that can still be labelled) read as for the last judge alone — the cascade's fallback sequence, so a
    cascade certifies at least that much — from its agreement on its most confident ``min_coverage`` share of the
    labelled items (``c_last`` / ``agree_last``: its confidence and agreement on them); None when that agreement is
    not above A or no number of labels within the items reaches ½."""
    import math

    from relgate_tui.core.judge_certificate import plan_labels

    n_lab = int(c_last.size)
    cover = max(min_coverage, 1e-3)
    order = np.argsort(-c_last, kind="stable")
    top = max(1, math.ceil(cover * n_lab)) if n_lab else 0
    observed = float(agree_last[order[:top]].mean()) if top else None
    below = float(agree_last[order[top:]].mean()) if n_lab > top else None
    if observed is not None and observed <= cas.agreement:
        return None
    expect = min(0.999, 0.5 * (1 + cas.agreement) if observed is None else observed)
    plan = plan_labels(cas.agreement, expect, cover, cas.confidence, have=n_lab, cap=max(cas.n_items, 1),
                       expect_below=below)
    return None if plan.n_half is None else max(0, plan.n_half - n_lab) or None


def _verdict(cas: Cascade, min_coverage: float, labels: Sequence[str], c_last: np.ndarray,
             agree_last: np.ndarray) -> tuple[str, str, int | None]:
    cov = cas.coverage or 0.0
    share = ", ".join(f"{lab} {_pct(s.n_decided / cas.n_items if cas.n_items else 0.0)}"
                      for lab, s in zip(labels, cas.stages, strict=True))
    head = (f"the cascade decides {_pct(cov)} of items with ≥ {_pct(cas.agreement)} agreement with your reviewers "
            f"({_pct(cas.confidence)} confidence) — {share}; {_pct(1 - cov)} go to people.")
    if cas.route != "none" and cov >= min_coverage:
        return "PASS", f"PASS: {head}", None
    more = _more_labels(cas, min_coverage, c_last, agree_last)
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
    f_last, c_last = confidence_of(p[-1], f[-1])
    h = np.asarray(humans)
    verdict, sentence, more = _verdict(cas, min_coverage, labels, c_last[h >= 0], (f_last[h >= 0] == h[h >= 0])
                                       .astype(np.int64))
    n = cas.n_items
    stages = [{"judge": lab, "source": v.source, "fingerprint": dict(v.fingerprint), "threshold": s.threshold,
               "reached": s.n_reached, "decided": s.n_decided, "decided_share": s.n_decided / n if n else None,
               "decided_labelled": s.n_decided_labelled, "agreement": s.agreement,
               "agreement_lower": s.agreement_lower}
              for lab, v, s in zip(labels, vs, cas.stages, strict=True)]
    d = _routes(cas, p, f)
    people_unlabelled = int(np.sum((d < 0) & (np.asarray(humans) < 0)))
    d_yes, d_no, warnings, not_random = _pooled_checks(p, f, humans, d, agreement, confidence)
    if not_random and verdict == "PASS":
        verdict, more = "NOT DECIDABLE", None
        sentence = f"NOT DECIDABLE: {warnings[-1]} — the guarantee needs a random sample"
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
        "decided_yes": d_yes.to_json(), "decided_no": d_no.to_json(), "warnings": warnings,
        "notes": [note for v in vs for note in v.notes],
        "result": cas.to_json(),
        "source": "cascade of " + ", ".join(v.source for v in vs),
        "fingerprint": {"cascade": [dict(v.fingerprint) for v in vs]},
    }
    return jsonsafe.jsonable(doc)


def _pooled_checks(p: Sequence[Sequence[float]], f: Sequence[Sequence[int]], humans: Sequence[int], d: np.ndarray,
                   agreement: float, confidence: float) -> tuple[Bound, Bound, list[str], bool]:
    """The single-judge certificate's honesty checks (:func:`relgate_tui.core.judge_certificate.certify`) on the
    pooled decided items of the cascade: (agreement on the decided labelled items the humans said yes / no to, each
    with its exact one-sided Clopper–Pearson lower bound; the warnings; whether the labelled items fail the
    random-sample checks). Warnings: an always-majority judge would reach the target on the decided labelled items;
    the cascade misses most minority items among them; the labelled rows' order (judge 1's file order) shows a trend
    in the last judge's confidence, its agreement or the human verdict, or the labelled items' confidence differs
    from the unlabelled ones' (:func:`relgate_tui.core.judge_certificate_checks.sample_warnings`, on the last judge:
    the one judge asked on every item while certifying)."""
    from relgate_tui.core.certification.intervals import clopper_pearson_lower
    from relgate_tui.core.judge_certificate_checks import NOT_RANDOM, sample_warnings

    fc = [confidence_of(pj, fj) for pj, fj in zip(p, f, strict=True)]
    fv, c = np.array([x[0] for x in fc]), np.array([x[1] for x in fc])
    h = np.asarray(humans)
    lab = h >= 0
    agree = fv[np.maximum(d, 0), np.arange(h.size)] == h
    decided = (d >= 0) & lab

    def bound(mask: np.ndarray) -> Bound:
        k, m = int(np.sum(agree & mask)), int(mask.sum())
        return Bound(k / m if m else None, clopper_pearson_lower(k, m, confidence) if m else None, None, k, m)

    b_yes, b_no = bound(decided & (h == 1)), bound(decided & (h == 0))
    warnings = class_warnings(b_yes, b_no, int(decided.sum()), agreement, who="the cascade")
    found = sample_warnings(c[-1][lab], (fv[-1][lab] == h[lab]).astype(np.int64), h[lab], c[-1][~lab])
    if found:
        warnings.append(f"{NOT_RANDOM}: {'; '.join(found)}")
    return b_yes, b_no, warnings, bool(found)


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
    if sel["route"] == "none":  # nothing certified: no judge is used, so there is no saving to claim
        lines.append("- no judge is certified: every item goes to people, and no judge's calls are saved")
    else:
        lines += [f"- calls of {one_line(str(c['judge']), 80)} avoided: {c['avoided']} of {doc['n_items']} "
                  f"({_pct(c['avoided_share'])})" for c in calls["judges"]]
    lines.append(f"- left to people: {calls['people']} items ({calls['people_unlabelled']} not labelled yet)")
    lines += ["", "The guarantee is agreement with *these* reviewers on all the items the cascade decides, whichever "
              "judge decides them; another judge, prompt or task needs a new certificate.", ""]
    return "\n".join(lines)


def _refuse(name: str, why: str) -> UserError:
    return UserError(f"certificate {name}: {why}; refusing to apply it")


def load_cascade(ref: str) -> tuple[dict[str, Any], Cascade, Path]:
    """A stored cascade certificate (by id or path): (its JSON, its result as the type, its file) — only when it may
    be applied, as a single judge's (:func:`relgate_tui.engine.judging.certificate.load`): its id is its content's
    digest, it is a PASS whose decided share reaches its ``min_coverage``, every judge's threshold is null or lies in
    [½, 1] (the same in ``selective`` and ``cascade``), every judge has a fingerprint, δ is split as the procedure
    splits it and each tested sequence gives its verdicts (the exact binomial test at each step, a stop at the first
    failure) and the thresholds are the last passed step of the sequence named by ``route``. Anything else: one line."""
    from relgate_tui.core.judge_certificate import binomial_p_value
    from relgate_tui.engine.judging import certificate as store

    raw, path, name = store.read_checked(ref)
    if not is_cascade(raw):
        raise UserError(f"certificate {name} is for one judge: give it one --verdicts")
    try:
        cas = Cascade.from_json(raw["result"])
    except (ValueError, TypeError, KeyError) as exc:
        raise UserError(f"certificate {name}: not a judge cascade certificate ({one_line(str(exc), 160)})") from None
    stages, sel = raw["cascade"], raw.get("selective")
    n_judges = len(cas.thresholds)
    if raw.get("verdict") != "PASS" or cas.route not in ("path", "last") or all(t is None for t in cas.thresholds):
        raise UserError(f"certificate {name} is {one_line(str(raw.get('verdict')), 20)}, not PASS: it certifies no "
                        "share of items, so there is nothing to apply")
    if not (0.0 < cas.agreement < 1.0 and 0.0 < cas.confidence < 1.0) or not 2 <= n_judges <= MAX_JUDGES:
        raise _refuse(name, "agreement and confidence must lie in (0, 1), with 2 to 5 judges")
    for k, t in enumerate(cas.thresholds, start=1):
        if t is not None and not 0.5 <= t <= 1.0:
            raise _refuse(name, f"judge {k}'s threshold {t!r} is outside [0.5, 1]")
    if (len(stages) != n_judges or not isinstance(sel, Mapping) or sel.get("threshold") != list(cas.thresholds)
            or any(not isinstance(s, Mapping) or s.get("threshold") != t or not isinstance(s.get("fingerprint"), Mapping)
                   for s, t in zip(stages, cas.thresholds, strict=False))):
        raise _refuse(name, "its judges, thresholds and fingerprints do not match its result")
    min_cov = raw.get("min_coverage")
    if not isinstance(min_cov, (int, float)) or (cas.coverage or 0.0) < min_cov:
        raise _refuse(name, "its decided share is below its min_coverage")
    if abs(cas.path_delta + cas.last_delta - (1.0 - cas.confidence)) > 1e-9:
        raise _refuse(name, "its sequences' δ do not add up to 1 − confidence")
    for steps, delta in ((cas.path, cas.path_delta), (cas.last, cas.last_delta)):
        for i, s in enumerate(steps):
            ok = 0 <= s.n_agree <= s.n_above and (binomial_p_value(s.n_agree, s.n_above, cas.agreement) <= delta
                                                  ) == s.passed and (s.passed or i == len(steps) - 1)
            if not ok:
                raise _refuse(name, f"its tested sequence does not give its verdict (step {i + 1})")
    passed = [s for s in (cas.path if cas.route == "path" else cas.last) if s.passed]
    if not passed or passed[-1].thresholds != cas.thresholds:
        raise _refuse(name, "its thresholds are not the last step its sequence passed")
    return raw, cas, path


def apply_cascade_doc(cert: Mapping[str, Any], cas: Cascade, vs: Sequence[Verdicts],
                      shift: Callable[[int, int], str | None] | None = None) -> tuple[dict[str, Any], str, str | None]:
    """(the decisions document, its head line, the shift line or None) of a stored cascade certificate ``cert``
    (:func:`load_cascade`) on new verdicts (module docstring). ``shift(decided, n)``: the line saying the share the
    cascade would decide is out of line with the certificate's coverage interval — then nothing is decided and every
    item goes to people (least confident first by the judge that would have decided it, else the last one asked)."""
    from relgate_tui.core.judge_cascade import apply_cascade

    stages = cert["cascade"]
    name = one_line(str(cert.get("id")), 60)
    if len(vs) != len(cas.thresholds):
        raise UserError(f"certificate {name} is a cascade of {len(cas.thresholds)} judges; give their "
                        f"verdicts with {len(cas.thresholds)} --verdicts, in its order")
    for k, (stage, v) in enumerate(zip(stages, vs, strict=True), start=1):
        field = differing_field(stage["fingerprint"], v.fingerprint)
        if field is not None:
            raise UserError(f"certificate {name}: judge {k} is another judge ({field} differs); certify "
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
    asked = [j for j, t in enumerate(cas.thresholds) if t is not None]
    last = asked[-1] if asked else 0
    line = shift(int(np.sum(d >= 0)), n) if shift is not None and n else None
    if line is not None:
        key = np.where(d >= 0, c[np.maximum(d, 0), np.arange(n)], c[last])
        d, people = np.full(n, -1, dtype=np.int64), np.argsort(key, kind="stable")
    labels = [str(s.get("judge")) for s in stages]
    human = [next((v.human[ix[i]] for v, ix in zip(vs, rows, strict=True) if i in ix and v.human[ix[i]] is not None),
                  None) for i in ids]
    doc: dict[str, Any] = {
        "certificate": cert.get("id"), "thresholds": list(cas.thresholds), "n_items": n,
        "n_decided": int(np.sum(d >= 0)), "n_escalated": int(people.size),
        "coverage_interval": [cas.coverage_lower, cas.coverage_upper], "shift_note": line,
        "by_judge": [{"judge": lab, "decided": int(np.sum(d == j))} for j, lab in enumerate(labels)],
        "decided": [{"id": ids[i], "verdict": int(f[d[i], i]), "confidence": float(c[d[i], i]),
                     "judge": labels[d[i]], "stage": int(d[i]) + 1} for i in np.nonzero(d >= 0)[0]],
        "escalated": [{"id": ids[i], "judge": int(f[last, i]), "p_yes": vs[last].p_yes[rows[last][ids[i]]]
                       if ids[i] in rows[last] else None, "confidence": float(c[last, i]) if np.isfinite(c[last, i])
                       else None, "human": human[i]} for i in people],
    }
    parts = ", ".join(f"{b['judge']} {b['decided']}" for b in doc["by_judge"])
    head = (f"certificate {name}: the cascade decides {doc['n_decided']} of {n} items "
            f"({doc['n_decided'] / n:.0%}: {parts}); {people.size} go to people, least confident first")
    return jsonsafe.jsonable(doc), head, line
