"""Judge certificate (issue 30): may this judge grade instead of a person, and on which items.

Input: per item the judge's P(yes) ``p`` (from log-probs, or the share of "yes" among repeated calls), optionally the
repeated 0/1 ``votes``, and the human's 0/1 verdict or nothing (unlabelled). The judge's verdict is
f = 1{p ≥ ½}; its confidence c = max(p, 1 − p) ∈ [½, 1] (a 0/1 judge without votes has c = 1 everywhere).
"Agree" means f = human.

**Selective verification (the headline; the idea of "Trust or Escalate", Jung, Brahman & Choi, ICLR 2025).**
For a threshold t let A(t) = P(f = Y | c ≥ t) be the judge's agreement with the humans on the population's items it
is at least t confident about (c < ½ is possible when the verdict was given apart from P(yes):
:func:`confidence_of`). We want t̂ with

    P( A(t̂) ≥ A ) ≥ confidence            (over the draw of the labelled items)

and the judge decides the items with c ≥ t̂; the rest go to people. Procedure (fixed-sequence testing):

1. Candidates: the distinct confidences of the labelled items, from the most confident down, thinned so that each
   next candidate adds at least ``step`` = max(1, ⌈n/200⌉) labelled items, and starting at the first one with at
   least ``m`` labelled items at or above it (:func:`start_items`): the fewest items on which an agreement of
   (1 + A)/2 — half the errors A allows — passes the test (116 at A = 0.9 and 95%), at least :data:`MIN_ITEMS` and at
   most max(:data:`MIN_ITEMS`, n/4). A smaller start would make the walk stop at the first unlucky error among a
   handful of items (with 30 items one error already fails at A = 0.9); m depends on A, δ and n only.
2. At each candidate t: N(t) labelled items have c ≥ t, K(t) of them agree; the exact binomial test of
   H₀(t): A(t) < A has p-value P(Bin(N, A) ≥ K) (``scipy.stats.binomtest(K, N, A, alternative="greater")``).
3. Walk down while p ≤ δ = 1 − confidence; stop at the first failure. t̂ = the last candidate that passed;
   none passed → the judge may decide nothing (t̂ = None).

*Proof sketch.* Given N(t) = k the k items with c ≥ t are an i.i.d. sample of the items with c ≥ t, so
K(t) ~ Bin(k, A(t)) and, under H₀(t), P(p(t) ≤ δ) ≤ δ (the exact binomial test is valid, conservative for A(t) < A).
In a fixed sequence an error (reporting a t̂ with A(t̂) < A) requires rejecting the first true null in the order,
because the walk stops at its first failure; that single test errs with probability ≤ δ — no multiplicity correction
is needed however many candidates there are (fixed-sequence testing; Learn-then-Test, Angelopoulos et al. 2021).
Caveat stated, not hidden: the candidates and the start are read from the labelled items' *confidences* (never from
their agreements), so the order is fixed before any agreement is looked at, but the argument above is exact only for a
sequence fixed in advance; ``bench/judge_certificate.py`` measures the achieved validity (calibrated, overconfident
and non-monotone judges) beside the target. p(t) ≤ δ ⇔ the one-sided Clopper–Pearson lower bound of K/N at
``confidence`` is ≥ A, so the reported ``agreement_lower`` at t̂ is that bound (≥ A by construction).

Coverage = the share of *all* items (labelled and unlabelled) with c ≥ t̂, with its two-sided Clopper–Pearson
interval (the items as an i.i.d. sample of the task's items).

**Agreement on all labelled items.** Accuracy P(f = Y), TPR = P(f = 1 | Y = 1), TNR = P(f = 0 | Y = 0), each with its
one-sided Clopper–Pearson lower bound (exact given the number of items in its denominator); the base rate P(Y = 1)
with its two-sided interval; Cohen's κ with its bootstrap interval (:func:`relgate_tui.core.agreement.agreement`).
A judge is *nearly constant* when one verdict covers ≥ :data:`CONSTANT_SHARE` of the items: a warning names it.

**Corrected pass rate (Rogan–Gladen 1978).** The judge's apparent pass rate q on all items is corrected for its errors:
π = (q + TNR − 1)/(TPR + TNR − 1); a value outside [0, 1] is not clipped but reported as "cannot be
corrected". Interval: Bonferroni — two-sided Clopper–Pearson intervals for
TPR, TNR (labelled items) and q (all judged items) each at level 1 − (1 − confidence)/3, so all three hold together
with probability ≥ confidence; π is linear-fractional in (q, TPR, TNR), hence its extremes over that box are at its
8 corners when TPR + TNR − 1 > 0 on the whole box; otherwise the interval is [0, 1] (the judge cannot be corrected;
"no better than chance" only when the 95% one-sided bounds themselves allow TPR + TNR ≤ 1).

**Consistency.** With repeated votes: the share of items whose votes all agree (two-sided Clopper–Pearson interval).

**Per class.** Among the decided labelled items (c ≥ t̂): the agreement on the items the humans said "yes" to and on
those they said "no" to, each with its exact one-sided lower bound. A warning when A is not above what a judge that
always gives the decided items' majority verdict would reach, and when the judge misses most of the minority items
among the decided ones.

**Planner** (:mod:`relgate_tui.core.judge_certificate_plan`): P(PASS) of the whole procedure, exact under its stated
premise; it drives NOT DECIDABLE, capped by the items that can still be labelled.

**Units and sampling** (:mod:`relgate_tui.core.judge_certificate_checks`): with ``group`` the unit is the group (one
labelled item drawn per group); the labelled items' order and confidences are checked against a random sample, and a
certificate whose labelled items do not look like one is NOT DECIDABLE, never PASS.

Every result type is a :class:`~relgate_tui.core.typed_json.Record` (``to_json`` / ``from_json``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import bdtrc, betaincinv

from relgate_tui.core.agreement import agreement as judge_agreement
from relgate_tui.core.certification.intervals import clopper_pearson_interval, clopper_pearson_lower
from relgate_tui.core.judge_certificate_checks import GROUP_SEED, NOT_RANDOM, one_per_group, sample_warnings
from relgate_tui.core.judge_certificate_plan import (
    MIN_ITEMS,
    Plan,
    binomial_p_value,
    candidate_sequence,
    plan_labels,
    start_items,
)
from relgate_tui.core.typed_json import Record

__all__ = ["MIN_ITEMS", "CONSTANT_SHARE", "Bound", "Step", "Selective", "CorrectedRate", "Consistency", "Plan",
           "JudgeCertificate", "binomial_p_value", "start_items", "candidate_sequence", "selective", "corrected_pass_rate",
           "consistency", "plan_labels", "certify", "verdict_sentence", "apply_threshold", "confidence_of", "class_warnings",
           "agreement_curve"]

CONSTANT_SHARE = 0.98
Verdict = Literal["PASS", "FAIL", "NOT DECIDABLE"]


@dataclass(frozen=True)
class Bound(Record):
    """A proportion ``value`` = successes/n with an exact lower bound (one-sided unless ``upper`` is given)."""

    value: float | None
    lower: float | None
    upper: float | None
    successes: int
    n: int


@dataclass(frozen=True)
class Step(Record):
    """One candidate of the fixed sequence: threshold t, N(t) labelled items with c ≥ t, K(t) agreeing, p-value."""

    threshold: float
    n_above: int
    n_agree: int
    p_value: float
    passed: bool


@dataclass(frozen=True)
class Selective(Record):
    """Selective verification (module docstring). ``threshold`` None: the judge may decide nothing."""

    agreement: float
    confidence: float
    start: int
    threshold: float | None
    n_decided_labelled: int
    agreement_lower: float | None
    coverage: Bound
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class CorrectedRate(Record):
    """Rogan–Gladen corrected pass rate with its Bonferroni interval; ``apparent`` is the judge's raw pass rate."""

    apparent: float | None
    value: float | None
    lower: float
    upper: float
    note: str | None


@dataclass(frozen=True)
class Consistency(Record):
    """Share of items with ≥ 2 votes whose votes all agree."""

    share: Bound
    n_items: int


@dataclass(frozen=True)
class JudgeCertificate(Record):
    """Everything ``relgate judge certify`` reports (module docstring). ``unit``: "item", or "group" when one labelled
    item per group was drawn (``n_labelled`` then counts the drawn items, ``n_labelled_given`` every label);
    ``decided_yes`` / ``decided_no``: agreement on the decided labelled items the humans said yes / no to;
    ``plan``: the planner at the observed agreement; ``next_step``: what to do when not PASS."""

    verdict: Verdict
    sentence: str
    n_items: int
    n_labelled: int
    min_coverage: float
    selective: Selective
    accuracy: Bound
    tpr: Bound
    tnr: Bound
    base_rate: Bound
    kappa: float | None
    kappa_lower: float | None
    kappa_upper: float | None
    judge_yes_share: float | None
    warnings: tuple[str, ...]
    corrected_pass_rate: CorrectedRate
    consistency: Consistency | None
    more_labels: int | None
    decided_yes: Bound
    decided_no: Bound
    plan: Plan
    next_step: str | None
    unit: Literal["item", "group"]
    n_labelled_given: int


def _cp_lower(k: int, n: int, confidence: float) -> float | None:
    return clopper_pearson_lower(int(k), int(n), confidence) if n else None


def _bound(k: int, n: int, confidence: float) -> Bound:
    return Bound(k / n if n else None, _cp_lower(k, n, confidence), None, int(k), int(n))


def _two_sided(k: int, n: int, confidence: float) -> Bound:
    if not n:
        return Bound(None, 0.0, 1.0, 0, 0)
    lo, hi = clopper_pearson_interval(int(k), int(n), confidence)
    return Bound(k / n, lo, hi, int(k), int(n))


def _check_levels(agreement: float, confidence: float) -> None:
    if not 0.0 < agreement < 1.0:
        raise ValueError(f"agreement must be in (0, 1), got {agreement!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def selective(c_labelled: ArrayLike, agree: ArrayLike, c_all: ArrayLike, agreement: float = 0.90,
              confidence: float = 0.95, min_items: int | None = None) -> Selective:
    """Fixed-sequence selective verification (module docstring); ``c_all`` = every item's confidence (coverage);
    ``min_items``: the start m (default :func:`start_items`)."""
    _check_levels(agreement, confidence)
    c = np.asarray(c_labelled, dtype=np.float64)
    z = np.asarray(agree, dtype=np.int64)
    call = np.asarray(c_all, dtype=np.float64)
    if c.shape != z.shape or c.ndim != 1:
        raise ValueError("confidences and agreements must be two 1-D arrays of one length")
    delta = 1.0 - confidence
    m = start_items(int(c.size), agreement, confidence) if min_items is None else min_items
    thresholds, counts = candidate_sequence(c, m)
    # items with c ≥ t are the first N(t) in descending order of c (ties included by construction of N(t))
    agreed = np.r_[0, np.cumsum(z[np.argsort(-c, kind="stable")])][counts]
    pvals = bdtrc(agreed - 1, counts, agreement) if counts.size else np.empty(0)
    pvals = np.where(agreed > 0, pvals, 1.0)
    fail = np.nonzero(pvals > delta)[0]
    stop = int(fail[0]) + 1 if fail.size else int(counts.size)
    steps = tuple(Step(t, k, g, pv, pv <= delta) for t, k, g, pv in zip(
        thresholds[:stop].tolist(), counts[:stop].tolist(), agreed[:stop].tolist(), pvals[:stop].tolist(), strict=True))
    n_pass = stop - 1 if fail.size else stop
    if n_pass == 0:
        return Selective(agreement, confidence, m, None, 0, None, _two_sided(0, int(call.size), confidence), steps)
    t_hat = float(thresholds[n_pass - 1])
    last = steps[n_pass - 1]
    lower = _cp_lower(last.n_agree, last.n_above, confidence)
    covered = int(np.sum(call >= t_hat))
    return Selective(agreement, confidence, m, t_hat, last.n_above, lower,
                     _two_sided(covered, int(call.size), confidence), steps)


def corrected_pass_rate(judge_all: ArrayLike, judge_labelled: ArrayLike, human: ArrayLike,
                        confidence: float = 0.95) -> CorrectedRate:
    """Rogan–Gladen corrected pass rate with its Bonferroni interval (module docstring)."""
    fa = np.asarray(judge_all, dtype=np.int64)
    f = np.asarray(judge_labelled, dtype=np.int64)
    y = np.asarray(human, dtype=np.int64)
    pos, neg = int(np.sum(y == 1)), int(np.sum(y == 0))
    tp, tn = int(np.sum((f == 1) & (y == 1))), int(np.sum((f == 0) & (y == 0)))
    apparent = float(fa.mean()) if fa.size else None
    if not (fa.size and pos and neg):
        return CorrectedRate(apparent, None, 0.0, 1.0, "needs labelled items of both verdicts and judged items")
    se, sp, q = tp / pos, tn / neg, float(fa.mean())
    level = 1.0 - (1.0 - confidence) / 3.0
    box = (clopper_pearson_interval(int(fa.sum()), int(fa.size), level), clopper_pearson_interval(tp, pos, level),
           clopper_pearson_interval(tn, neg, level))
    if box[1][0] + box[2][0] - 1.0 <= 0:
        chance = (clopper_pearson_lower(tp, pos, confidence) + clopper_pearson_lower(tn, neg, confidence) <= 1.0)
        note = ("the judge's TPR + TNR may be ≤ 1 (no better than chance): its pass rate cannot be corrected" if chance
                else f"too few labelled items of one verdict ({pos} yes, {neg} no) to bound TPR + TNR above 1 at "
                     "the corrected rate's level: its pass rate cannot be corrected")
        return CorrectedRate(apparent, None, 0.0, 1.0, note)
    value = (q + sp - 1.0) / (se + sp - 1.0)
    corners = [(x + b - 1.0) / (a + b - 1.0) for x in box[0] for a in box[1] for b in box[2]]
    if not 0.0 <= value <= 1.0:
        return CorrectedRate(apparent, None, max(0.0, min(1.0, min(corners))), max(0.0, min(1.0, max(corners))),
                             f"the corrected value {value:.3f} lies outside [0, 1] (the judge's errors do not fit "
                             "its pass rate): it cannot be corrected")
    clip = lambda v: min(1.0, max(0.0, v))  # noqa: E731
    return CorrectedRate(apparent, value, clip(min(corners)), clip(max(corners)), None)


def consistency(votes: list[tuple[int, ...]] | tuple[tuple[int, ...], ...],
                confidence: float = 0.95) -> Consistency | None:
    """Share of items (with ≥ 2 votes) whose repeated verdicts all agree; None without repeats."""
    rep = [v for v in votes if len(v) >= 2]
    if not rep:
        return None
    same = sum(1 for v in rep if len(set(v)) == 1)
    return Consistency(_two_sided(same, len(rep), confidence), len(rep))


def confidence_of(p_yes: ArrayLike, judge: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The judge's verdict f and its confidence c = P(f): f = 1{p ≥ ½} and c = max(p, 1 − p) from P(yes) alone; when
    the verdict was given apart (the parsed reply beside log-probs), c = p for a "yes" and 1 − p for a "no", so a
    verdict its own log-probs doubt has c < ½ and is the least confident of all."""
    p = np.asarray(p_yes, dtype=np.float64)
    f = (p >= 0.5).astype(np.int64) if judge is None else np.asarray(judge, dtype=np.int64)
    return f, np.round(np.where(f == 1, p, 1.0 - p), 12)  # 1 − ⅓ and ⅔ are one confidence, not two


def apply_threshold(p_yes: ArrayLike, judge: ArrayLike | None, threshold: float | None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A certificate on new items: (confidences, indices the judge decides — c ≥ t̂ —, indices escalated to people,
    least confident first; ties in input order). ``threshold`` None: every item is escalated."""
    f, c = confidence_of(p_yes, judge)
    decided = np.zeros(c.size, dtype=bool) if threshold is None else c >= threshold
    rest = np.nonzero(~decided)[0]
    return c, np.nonzero(decided)[0], rest[np.argsort(c[rest], kind="stable")]


def agreement_curve(c_labelled: ArrayLike, agree: ArrayLike, confidence: float = 0.95, points: int = 100
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Agreement against coverage on the labelled items, for the chart: at k = the ⌈j n/points⌉ most confident
    (j = 1..points), the share k/n, the observed agreement K/k and its one-sided Clopper–Pearson lower bound —
    descriptive (each point on its own, not the certificate's sequence)."""
    c = np.asarray(c_labelled, dtype=np.float64)
    z = np.asarray(agree, dtype=np.int64)
    n = c.size
    if not n:
        return np.empty(0), np.empty(0), np.empty(0)
    cum = np.cumsum(z[np.argsort(-c, kind="stable")])
    ks = np.unique(np.ceil(np.arange(1, points + 1) * n / points).astype(np.int64))
    got = cum[ks - 1]
    lower = np.where(got > 0, betaincinv(np.maximum(got, 1), ks - got + 1, 1.0 - confidence), 0.0)
    return ks / n, got / ks, lower


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def verdict_sentence(verdict: Verdict, sel: Selective, reason: str | None) -> str:
    """The first line of every output (issue 30 §2): a claim about the task's items like the labelled ones."""
    head = (f"the judge decides {_pct(sel.coverage.value or 0.0)} of items with ≥ {_pct(sel.agreement)} agreement with "
            f"your reviewers on items like the labelled ones ({_pct(sel.confidence)} confidence); "
            f"{_pct(1 - (sel.coverage.value or 0.0))} go to people.")
    if verdict == "PASS":
        return f"PASS: {head}"
    return f"{verdict}: {reason}" if reason else f"{verdict}: {head}"


def class_warnings(b_yes: Bound, b_no: Bound, n_decided: int, agreement: float, who: str = "the judge") -> list[str]:
    """The per-class warnings on ``n_decided`` decided labelled items, of which ``b_yes.n`` the humans said yes to:
    a judge that always gives the majority verdict would reach the target ``agreement``; ``who`` (the judge, the
    cascade) misses most of the minority class among the items it decides."""
    warnings: list[str] = []
    if n_decided:
        share_yes = b_yes.n / n_decided
        word, maj = ("yes", share_yes) if share_yes >= 0.5 else ("no", 1.0 - share_yes)
        if maj >= agreement:
            warnings.append(f"a judge that always says {word} would agree on {_pct(maj)} of the decided labelled items: "
                            f"the target {_pct(agreement)} is not above that — read the per-class agreement, or "
                            "raise the target")
        minority, name = (b_no, "no") if word == "yes" else (b_yes, "yes")
        if minority.n and (minority.value or 0.0) < 0.5:
            warnings.append(f"{who} misses {minority.n - minority.successes} of the {minority.n} items the humans "
                            f"said {name} to among those it decides: it decides mostly by the majority verdict")
    return warnings


def _per_class(sel: Selective, cl: np.ndarray, yl: np.ndarray, agree: np.ndarray,
               confidence: float) -> tuple[Bound, Bound, list[str]]:
    """Agreement on the decided labelled items the humans said yes / no to, and the warnings of the docstring."""
    decided = np.zeros(cl.size, dtype=bool) if sel.threshold is None else cl >= sel.threshold
    yes, no = decided & (yl == 1), decided & (yl == 0)
    b_yes = _bound(int(agree[yes].sum()), int(yes.sum()), confidence)
    b_no = _bound(int(agree[no].sum()), int(no.sum()), confidence)
    return b_yes, b_no, class_warnings(b_yes, b_no, int(decided.sum()), sel.agreement)


def certify(p_yes: ArrayLike, human: ArrayLike, *, judge: ArrayLike | None = None, votes: list[tuple[int, ...]] | None = None,
            group: ArrayLike | None = None, agreement: float = 0.90, confidence: float = 0.95,
            min_coverage: float = 0.50, require_consistency: float | None = None, min_items: int | None = None,
            check_sample: bool = True, left_out: int = 0) -> JudgeCertificate:
    """The judge certificate of items with P(yes) ``p_yes`` and human verdicts ``human`` (0/1, or -1 = unlabelled),
    listed in the order they were labelled (a file's order, a run's seeded order); ``judge``: the verdicts when given
    apart from P(yes) (:func:`confidence_of`); ``group``: one key per item — items sharing a key are dependent and
    the group is the unit (module docstring); ``check_sample``: run the random-sample checks; ``left_out``: labels
    the caller left out (after the first gap of a seeded order), named when no label is usable."""
    _check_levels(agreement, confidence)
    if not 0.0 <= min_coverage <= 1.0:
        raise ValueError(f"min_coverage must be in [0, 1], got {min_coverage!r}")
    p = np.asarray(p_yes, dtype=np.float64)
    h = np.asarray(human, dtype=np.int64)
    if p.shape != h.shape or p.ndim != 1 or not np.all((p >= 0) & (p <= 1)) or not np.isin(h, (-1, 0, 1)).all():
        raise ValueError("p_yes must be in [0, 1] and human in {-1, 0, 1}, one value each per item")
    if judge is not None and (np.shape(judge) != p.shape or not np.isin(judge, (0, 1)).all()):
        raise ValueError("judge verdicts must be 0/1, one per item")
    f, c = confidence_of(p, judge)
    lab = h >= 0
    if group is not None:
        g = np.asarray(group)
        use = np.zeros(p.size, dtype=bool)
        use[one_per_group(g, lab, GROUP_SEED)] = True
        units = int(np.unique(g).size)
    else:
        use, units = lab, int(p.size)
    fl, yl, cl = f[use], h[use], c[use]
    n_lab = int(use.sum())
    agree = (fl == yl).astype(np.int64)
    sel = selective(cl, agree, c, agreement, confidence, min_items)
    pos, neg = int(np.sum(yl == 1)), int(np.sum(yl == 0))
    acc = _bound(int(agree.sum()), n_lab, confidence)
    tpr = _bound(int(np.sum((fl == 1) & (yl == 1))), pos, confidence)
    tnr = _bound(int(np.sum((fl == 0) & (yl == 0))), neg, confidence)
    base = _two_sided(pos, n_lab, confidence)
    ag = judge_agreement(fl, yl, confidence) if n_lab else None
    yes_share = float(f.mean()) if f.size else None
    warnings: list[str] = []
    if yes_share is not None and max(yes_share, 1 - yes_share) >= CONSTANT_SHARE:
        word, share = ("yes", yes_share) if yes_share >= 0.5 else ("no", 1 - yes_share)
        warnings.append(f"this judge says {word} to {_pct(share)} of items: its agreement mostly reflects the base "
                        f"rate ({_pct(base.value) if base.value is not None else 'unknown'} acceptable)")
    d_yes, d_no, class_warnings = _per_class(sel, cl, yl, agree, confidence)
    warnings += class_warnings
    cons = consistency(votes, confidence) if votes is not None else None
    m = start_items(n_lab, agreement, confidence) if min_items is None else min_items
    verdict, reason, more, plan, step = _decide(sel, acc, n_lab, units, min_coverage, cons, require_consistency, cl,
                                                agree, m, left_out)
    found = sample_warnings(cl, agree, yl, c[~lab]) if check_sample and group is None else ()
    if found:
        line = f"{NOT_RANDOM}: {'; '.join(found)}"
        warnings.append(line)
        if verdict == "PASS":
            verdict, reason, more = "NOT DECIDABLE", f"{line} — the guarantee needs a random sample", None
            step = ("label a random sample of the items (shuffle the file before labelling, or label in a run's "
                    "seeded order) and certify again")
    return JudgeCertificate(verdict, verdict_sentence(verdict, sel, reason), int(p.size), n_lab, float(min_coverage),
                            sel, acc, tpr, tnr, base, ag.kappa if ag else None, ag.kappa_lower if ag else None,
                            ag.kappa_upper if ag else None, yes_share, tuple(warnings),
                            corrected_pass_rate(f, fl, yl, confidence), cons, more, d_yes, d_no, plan, step,
                            "group" if group is not None else "item", int(lab.sum()))


_MORE_ITEMS = ("more labels need more items: label deployment items in the spot-check (or add labelled rows), or "
               "certify a lower --min-coverage and send the escalated items to review with "
               "`relgate judge apply CERT --run RUN --publish`")


def _decide(sel: Selective, acc: Bound, n_lab: int, units: int, min_coverage: float, cons: Consistency | None,
            require: float | None, cl: np.ndarray, agree: np.ndarray, min_items: int,
            left_out: int = 0) -> tuple[Verdict, str | None, int | None, Plan, str | None]:
    """(verdict, reason, more labels, plan, next step). PASS when the certified coverage (point estimate) reaches
    ``min_coverage`` and any consistency requirement holds; NOT DECIDABLE when it does not but the judge's record on
    its ``min_coverage`` most confident labelled items is above A (or nothing is labelled) and more labels could
    certify it — the planner, P(PASS) of the whole procedure capped by the ``units`` that can be labelled, says how
    many, or that every item is labelled; FAIL otherwise, with the reason."""
    a, conf = sel.agreement, sel.confidence
    cover = max(min_coverage, 1e-3)
    order = np.argsort(-cl, kind="stable")
    top = max(1, math.ceil(cover * n_lab)) if n_lab else 0
    observed = float(agree[order[:top]].mean()) if top else None
    below = float(agree[order[top:]].mean()) if n_lab > top else None
    expect = min(0.999, 0.5 * (1 + a) if observed is None else max(observed, 1e-3))
    cov = sel.coverage.value or 0.0
    passed = sel.threshold is not None and cov >= min_coverage
    none = ("no labelled item yet" if not left_out else
            f"no usable labelled item yet ({left_out} later label{'s' if left_out != 1 else ''} left out: the first "
            "item of the seeded order is not labelled)")
    plan = plan_labels(a, expect, cover, conf, have=0 if passed else n_lab, cap=max(units, 1), expect_below=below)
    if require is not None:
        if cons is None:
            return "FAIL", "consistency was required but the items have no repeated verdicts", None, plan, None
        if (cons.share.value or 0.0) < require:
            return ("FAIL", f"the judge's repeated verdicts agree on {_pct(cons.share.value or 0.0)} of items, "
                    f"below the required {_pct(require)}", None, plan, None)
    if passed:
        return "PASS", None, None, plan, None
    if observed is None or observed > a:
        assumed = "" if observed is not None else f" (assuming {_pct(expect)} agreement on the most confident items)"
        if plan.n_half is not None:
            more = plan.n_half - n_lab
            have = none if not n_lab else f"{n_lab} labelled items are too few"
            return ("NOT DECIDABLE", f"{have} to certify {_pct(min_coverage)} coverage; about {more} more of the "
                    f"{units - n_lab} unlabelled would reach it with probability ½{assumed}", more, plan,
                    f"label about {more} more items in their seeded order (the spot-check) and certify again")
        if plan.ceiling < 0.5:
            return ("FAIL", f"at the observed agreement {_pct(expect)} the whole procedure passes with probability at "
                    f"most {plan.ceiling:.2f} however many items are labelled (its first test must pass); lower the "
                    "target or improve the judge", None, plan, None)
        if n_lab >= units:
            why = f"all {units} items are labelled and the judge's certified share is below {_pct(min_coverage)}"
        else:
            why = (f"{none}; " if not n_lab else "") + (
                   f"even with all {units} items labelled the procedure would reach {_pct(min_coverage)} coverage "
                   f"with probability {plan.p_cap or 0.0:.2f} only{assumed}")
        return "NOT DECIDABLE", why, None, plan, _MORE_ITEMS
    if sel.threshold is None:
        why = (f"no confidence level where the judge's agreement is certified ≥ {_pct(sel.agreement)} "
               f"(it agrees on {_pct(acc.value or 0.0)} of labelled items)")
    else:
        why = (f"the judge decides only {_pct(cov)} of items with ≥ {_pct(sel.agreement)} agreement, below the "
               f"required {_pct(min_coverage)}")
    return "FAIL", why, None, plan, None
