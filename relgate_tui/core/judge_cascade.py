"""Judge cascade: a cheap judge first, stronger judges next, people last — one guarantee on the whole cascade.

The idea is "Trust or Escalate" (Jung, Brahman & Choi, ICLR 2025, §3 "cascaded selective evaluation"): judge 1
decides the items it is confident about, judge 2 the rest it is confident about, …, people get what is left. Their
procedure calibrates each judge on its own with the same target on the items that reach it; here the guarantee is on
the cascade as one selective classifier, which lets a judge's surplus agreement on easy items pay for another's
deficit on hard ones.

**Setting.** J judges in cascade order (cheapest first). On item i judge j gives the verdict f_j(i) and the
confidence c_j(i) (:func:`relgate_tui.core.judge_certificate.confidence_of`); Y(i) is the human verdict on the
labelled items. A threshold vector t = (t₁, …, t_J), t_j ∈ ℝ ∪ {∞} (∞: judge j decides nothing and is not asked),
routes item i to the first judge j with c_j(i) ≥ t_j, D_t(i) = j, or to people when there is none. Let

    A(t) = P( f_{D_t}(X) = Y | the cascade decides X )                        (agreement on ALL decided items)

over the population of items. We want t̂ with P( A(t̂) ≥ A ) ≥ 1 − δ, δ = 1 − confidence (over the draw of the
labelled items).

**Assumption (exchangeability).** The labelled items are an i.i.d. sample (a uniformly random subset) of the items
the cascade will decide, and their judges' verdicts and confidences were made the same way as on the other items.
Then, for a fixed t, given N(t) = k decided labelled items, the number agreeing K(t) ~ Bin(k, A(t)).

**Procedure (J = 1: exactly :func:`relgate_tui.core.judge_certificate.selective`, which is called).** For J ≥ 2
two sequences of threshold vectors are tested, split δ = δ_path + δ_last (:data:`LAST_SHARE` of δ to the second):

1. *The cascade path* t⁽¹⁾, t⁽²⁾, …, built from the judges' confidences and verdicts only — never from a human label
   (:func:`cascade_path`). Each judge j < J is scored against the last (strongest) judge, a label-free proxy of its
   agreement: q̂_j(i) = c_J(i) when f_j(i) = f_J(i), else 1 − c_J(i); the last judge's proxy is its own confidence,
   q̂_J = c_J. For every vector t of a grid (judges j < J: ∞ and the confidences at which they decide 1/G, 2/G, …, 1
   of the labelled items; the last judge: ∞ and its distinct confidences, thinned as in the single-judge sequence)
   the predicted agreement is PA(t) = the mean of q̂_{D_t(i)}(i) over the decided labelled items, and the cost per item

       cost(t) = κ · Σ_{j ≥ 2, t_j < ∞} share of items reaching judge j  +  share of items left to people     (C1)

   with κ = ``cost`` (default :data:`COST` = 0.2) the price of one call of a judge after the first, in people's
   labels (the first judge is free: a local model). For the levels a = 1, 1 − 0.005, …, ½ the path's step is the
   cheapest vector with PA(t) ≥ a among those with at least m decided labelled items (m = :func:`start_items` at
   1 − δ_path, as in the single-judge certificate); repeats are dropped. Fill-in: where two consecutive steps
   share the thresholds of the judges before the last, the last judge's candidates between them are inserted, and
   the first step is preceded by its ramp (the same earlier thresholds, the last judge's candidates above its own,
   from m decided labelled items on) — a confidence that saturates (PA ≈ 1 on half the items) would otherwise make
   the first step, or the next, decide many more items at once than the single-judge sequence ever adds. Along the path the predicted agreement falls and the cost falls.
2. *The last judge alone*: the single-judge sequence of judge J (:func:`selective`) at δ_last — a fallback for when
   the cheap judges mislead the path (a proxy is only as good as the last judge's calibration).

Each sequence is walked as in the single-judge certificate: at each t the exact binomial test of H₀(t): A(t) < A,
p(t) = P(Bin(N(t), A) ≥ K(t)), passes when p ≤ its δ; the walk stops at its first failure. t̂ = of the two last
passing vectors, the one of lower cost (C1) on all items (the path's when equal); none passed → the cascade decides
nothing.

*Proof.* (i) Fixed-sequence testing: within one sequence, certifying a vector with A(t) < A requires rejecting the
first true null in its order (the walk stops at its first failure), which happens with probability ≤ its δ (the
exact test is valid: P(p(t) ≤ δ | N(t)) ≤ δ under H₀(t)); no correction for the number of vectors is needed
(Learn-then-Test, Angelopoulos et al. 2021). (ii) Bonferroni over the two sequences: the probability that either
certifies a vector with A(t) < A is ≤ δ_path + δ_last = δ. (iii) t̂ is one of the certified vectors, so
P(A(t̂) < A) ≤ δ — whichever of them the cost picks, since on the complement of that event every certified vector
is valid. (iv) One test on the pooled decided items covers every judge at once: no per-stage split of δ, and the
stages need not each reach A — only their union. Caveat, as in the single-judge certificate: the path is read from
the labelled items' confidences and verdicts (never their human labels), so its order is fixed before any agreement
is looked at, but the binomial argument is exact for a sequence fixed in advance; ``bench/judge_cascade.py``
measures the achieved validity beside the target.

*Why not a per-stage split.* Certifying each stage on its own items at δ/J (or the same α on each, as the paper's
code does) makes every stage reach A on its own; on a world where the cheap judge is sure of easy items only and the
strong judge of most, the strong judge's stage then stops early (its share of hard items cannot reach A alone),
while the pooled test lets the cheap judge's easy items carry part of the strong judge's errors.

**Reported per stage** (each on its own, descriptive — the guarantee is the pooled one): the items it decides, its
decided labelled items, their agreement and its one-sided Clopper–Pearson lower bound at ``confidence``. Overall:
coverage = the share of all items the cascade decides (two-sided Clopper–Pearson interval), the pooled agreement's
lower bound, the calls of judges j ≥ 2 avoided (items decided before them) and the items left to people.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import bdtrc

from relgate_tui.core.certification.intervals import clopper_pearson_interval, clopper_pearson_lower
from relgate_tui.core.judge_certificate import candidate_sequence, confidence_of, selective, start_items

__all__ = ["COST", "LAST_SHARE", "MAX_JUDGES", "PathStep", "Stage", "Cascade", "route", "cascade_path",
           "certify_cascade", "cascade_of", "apply_cascade"]

COST = 0.2
LAST_SHARE = 0.2
MAX_JUDGES = 5
LEVEL_STEP = 0.005
PREFIX_BUDGET = 400
Route = Literal["single", "path", "last", "none"]
Thresholds = tuple[float | None, ...]


def _opt_float(v: Any, name: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{name}: expected a finite number or null, got {v!r}")
    return float(v)


def _int(v: Any, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{name}: expected an integer, got {v!r}")
    return v


def _thresholds(v: Any, name: str) -> Thresholds:
    if not isinstance(v, list):
        raise ValueError(f"{name}: expected a list, got {type(v).__name__}")
    return tuple(_opt_float(x, f"{name}[{i}]") for i, x in enumerate(v))


@dataclass(frozen=True)
class PathStep:
    """One tested vector: thresholds (None = that judge decides nothing), N labelled decided, K agreeing, p-value."""

    thresholds: Thresholds
    n_above: int
    n_agree: int
    p_value: float
    passed: bool

    def to_json(self) -> dict[str, Any]:
        return {"thresholds": list(self.thresholds), "n": self.n_above, "agree": self.n_agree,
                "p_value": self.p_value, "passed": self.passed}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PathStep:
        p = _opt_float(d.get("p_value"), "p_value")
        if p is None or not isinstance(d.get("passed"), bool):
            raise ValueError("a path step needs a p_value and a boolean passed")
        return cls(_thresholds(d.get("thresholds"), "thresholds"), _int(d.get("n"), "n"),
                   _int(d.get("agree"), "agree"), p, bool(d["passed"]))


@dataclass(frozen=True)
class Stage:
    """One judge of the certified cascade: its threshold, the items reaching it and deciding, and its own record."""

    threshold: float | None
    n_reached: int
    n_decided: int
    n_decided_labelled: int
    n_agree: int
    agreement_lower: float | None

    @property
    def agreement(self) -> float | None:
        return self.n_agree / self.n_decided_labelled if self.n_decided_labelled else None

    def to_json(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "reached": self.n_reached, "decided": self.n_decided,
                "decided_labelled": self.n_decided_labelled, "agree": self.n_agree, "agreement": self.agreement,
                "agreement_lower": self.agreement_lower}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Stage:
        return cls(_opt_float(d.get("threshold"), "threshold"), _int(d.get("reached"), "reached"),
                   _int(d.get("decided"), "decided"), _int(d.get("decided_labelled"), "decided_labelled"),
                   _int(d.get("agree"), "agree"), _opt_float(d.get("agreement_lower"), "agreement_lower"))


@dataclass(frozen=True)
class Cascade:
    """The certified cascade (module docstring). ``route``: which sequence certified t̂ ("single" for J = 1;
    "none": nothing passed and every item goes to people)."""

    agreement: float
    confidence: float
    cost: float
    start: int
    route: Route
    thresholds: Thresholds
    n_items: int
    n_labelled: int
    n_decided: int
    n_decided_labelled: int
    n_agree: int
    agreement_lower: float | None
    coverage_lower: float
    coverage_upper: float
    stages: tuple[Stage, ...]
    path: tuple[PathStep, ...]
    last: tuple[PathStep, ...]
    path_delta: float
    last_delta: float

    @property
    def coverage(self) -> float | None:
        return self.n_decided / self.n_items if self.n_items else None

    @property
    def calls_saved(self) -> tuple[int, ...]:
        """Per judge after the first: the items decided before it, whose call the cascade avoids."""
        return tuple(self.n_items - s.n_reached for s in self.stages[1:])

    @property
    def n_people(self) -> int:
        return self.n_items - self.n_decided

    def to_json(self) -> dict[str, Any]:
        return {"agreement": self.agreement, "confidence": self.confidence, "cost": self.cost, "start": self.start,
                "route": self.route, "thresholds": list(self.thresholds), "n_items": self.n_items,
                "n_labelled": self.n_labelled, "n_decided": self.n_decided,
                "n_decided_labelled": self.n_decided_labelled, "n_agree": self.n_agree,
                "agreement_lower": self.agreement_lower, "coverage_lower": self.coverage_lower,
                "coverage_upper": self.coverage_upper, "stages": [s.to_json() for s in self.stages],
                "path": [s.to_json() for s in self.path], "last": [s.to_json() for s in self.last],
                "path_delta": self.path_delta, "last_delta": self.last_delta}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Cascade:
        if not isinstance(d, Mapping):
            raise ValueError("a cascade must be a JSON object")
        route_ = d.get("route")
        if route_ not in ("single", "path", "last", "none"):
            raise ValueError(f"route: expected single, path, last or none, got {route_!r}")
        floats = {k: _opt_float(d.get(k), k) for k in ("agreement", "confidence", "cost", "coverage_lower",
                                                       "coverage_upper", "path_delta", "last_delta")}
        if any(v is None for v in floats.values()):
            raise ValueError("a cascade needs agreement, confidence, cost, coverage bounds and its deltas")
        lists: dict[str, list[Any]] = {}
        for k in ("stages", "path", "last"):
            v = d.get(k)
            if not isinstance(v, list):
                raise ValueError(f"{k}: expected a list")
            lists[k] = v
        f = {k: float(v) for k, v in floats.items() if v is not None}
        return cls(f["agreement"], f["confidence"], f["cost"], _int(d.get("start"), "start"), route_,
                   _thresholds(d.get("thresholds"), "thresholds"), _int(d.get("n_items"), "n_items"),
                   _int(d.get("n_labelled"), "n_labelled"), _int(d.get("n_decided"), "n_decided"),
                   _int(d.get("n_decided_labelled"), "n_decided_labelled"), _int(d.get("n_agree"), "n_agree"),
                   _opt_float(d.get("agreement_lower"), "agreement_lower"), f["coverage_lower"],
                   f["coverage_upper"], tuple(Stage.from_json(s) for s in lists["stages"]),
                   tuple(PathStep.from_json(s) for s in lists["path"]),
                   tuple(PathStep.from_json(s) for s in lists["last"]), f["path_delta"], f["last_delta"])


def route(c: np.ndarray, thresholds: Thresholds) -> np.ndarray:
    """D_t(i) of the module docstring for confidences ``c`` (J × n): the deciding judge's index, −1 for people."""
    out = np.full(c.shape[1], -1, dtype=np.int64)
    for j, t in enumerate(thresholds):
        if t is not None:
            out[(out < 0) & (c[j] >= t)] = j
    return out


def _prefix_grid(c: np.ndarray, groups: int) -> list[float | None]:
    """∞ (None) and the confidences at which a judge decides 1/G, 2/G, …, 1 of the labelled items."""
    if not c.size:
        return [None]
    desc = np.sort(c)[::-1]
    ks = np.unique(np.ceil(np.arange(1, groups + 1) * c.size / groups).astype(np.int64))
    values = sorted({float(v) for v in desc[ks - 1]}, reverse=True)
    return [None, *values]


def _proxy(c: np.ndarray, f: np.ndarray) -> np.ndarray:
    """q̂ of the module docstring (J × n): agreement with the last judge, weighed by its confidence."""
    last_c, last_f = c[-1], f[-1]
    q = np.where(f == last_f, last_c, 1.0 - last_c)
    q[-1] = last_c
    return q


def cascade_path(c: np.ndarray, f: np.ndarray, min_items: int, cost: float = COST,
                 floor: float = 0.5) -> list[Thresholds]:
    """The cascade path (module docstring, step 1) from the labelled items' confidences ``c`` and verdicts ``f``
    (J × n each) — no human label is read. ``floor``: the lowest predicted-agreement level."""
    n_judges, n = c.shape
    if n == 0 or n_judges < 2:
        return []
    q = _proxy(c, f)
    groups = min(40, max(2, int(PREFIX_BUDGET ** (1.0 / (n_judges - 1))) - 1))
    grids = [_prefix_grid(c[j], groups) for j in range(n_judges - 1)]
    order = np.argsort(-c[-1], kind="stable")
    last_t, last_counts = candidate_sequence(c[-1], 1)
    last_opts: list[float | None] = [None, *(float(t) for t in last_t)]
    prefixes = list(itertools.product(*grids))
    d = np.array([route(c[:-1], prefix) for prefix in prefixes])  # P × n: the prefix judges' routing
    reach_last = d < 0
    cols = np.broadcast_to(np.arange(n), d.shape)
    n_pre = np.sum(~reach_last, axis=1)
    q_pre = np.sum(np.where(reach_last, 0.0, q[np.maximum(d, 0), cols]), axis=1)
    active = np.array([[t is not None for t in prefix] for prefix in prefixes], dtype=bool)
    calls = np.zeros(len(prefixes))
    for j in range(1, n_judges - 1):  # judge j is asked on the items no earlier judge decided
        calls += active[:, j] * np.sum(reach_last | (d >= j), axis=1)
    cum_n = np.cumsum(reach_last[:, order], axis=1)[:, last_counts - 1]
    cum_q = np.cumsum(np.where(reach_last, q[-1], 0.0)[:, order], axis=1)[:, last_counts - 1]
    big_n = np.c_[n_pre, n_pre[:, None] + cum_n]
    big_q = np.c_[q_pre, q_pre[:, None] + cum_q]
    call_last = np.c_[np.zeros(len(prefixes)), np.repeat(np.sum(reach_last, axis=1)[:, None], cum_n.shape[1], 1)]
    pa_all = np.where(big_n > 0, big_q / np.maximum(big_n, 1), 0.0).ravel()
    n_all = big_n.ravel()
    cost_all = (cost * (calls[:, None] + call_last) / n + 1.0 - big_n / n).ravel()
    width = last_counts.size + 1  # vector index = prefix index × width + last option
    ok = np.nonzero(n_all >= min_items)[0]
    if not ok.size:
        return []
    by_pa = ok[np.lexsort((cost_all[ok], -pa_all[ok]))]  # predicted agreement descending, then cost ascending
    sorted_cost = cost_all[by_pa]
    before = np.r_[np.inf, np.minimum.accumulate(sorted_cost)[:-1]]
    new_min = sorted_cost < before  # running argmin; among equal costs the first (the higher PA)
    arg = np.maximum.accumulate(np.where(new_min, np.arange(by_pa.size), 0))
    levels = np.arange(1.0, floor - 1e-12, -LEVEL_STEP)
    reach = np.searchsorted(-pa_all[by_pa], -levels - 1e-12, side="right")  # vectors with PA ≥ each level
    picked = [int(by_pa[arg[r - 1]]) for r in reach if r > 0]
    steps: list[int] = []
    prev: int | None = None
    for i in dict.fromkeys(picked):  # in order, repeats dropped; then the fill-in of step 1
        pre, k = divmod(i, width)
        if prev is None:
            fill = range(k + 1)  # a ramp: the last judge's thresholds above the first step's
        elif prev // width == pre and k > prev % width:
            fill = range(prev % width + 1, k + 1)
        else:
            fill = range(k, k + 1)
        steps.extend(pre * width + kk for kk in fill if n_all[pre * width + kk] >= min_items)
        prev = i
    return [(*prefixes[i // width], last_opts[i % width]) for i in dict.fromkeys(steps)]


def _walk(c: np.ndarray, agree: np.ndarray, vectors: Sequence[Thresholds], agreement: float,
          delta: float) -> tuple[PathStep, ...]:
    """The fixed-sequence walk over ``vectors``: exact binomial test at each, stop at the first failure (the counts
    of every vector at once, in blocks of a bounded size; :func:`route` per vector, vectorised)."""
    n_judges, n = c.shape
    t_all = np.array([[np.inf if t is None else t for t in v] for v in vectors]).reshape(len(vectors), n_judges)
    counts = np.zeros((2, len(vectors)), dtype=np.int64)
    block = max(1, 4_000_000 // max(1, n))
    for lo in range(0, len(vectors), block):
        t = t_all[lo:lo + block]
        undecided = np.ones((t.shape[0], n), dtype=bool)
        for j in range(n_judges):
            mine = undecided & (c[j][None, :] >= t[:, j:j + 1])
            counts[0, lo:lo + block] += mine.sum(axis=1)
            counts[1, lo:lo + block] += (mine & (agree[:, j] == 1)[None, :]).sum(axis=1)
            undecided &= ~mine
    n_dec, k = counts
    p = np.where(k > 0, bdtrc(np.maximum(k - 1, 0), n_dec, agreement), 1.0)
    fail = np.nonzero(p > delta)[0]
    stop = int(fail[0]) + 1 if fail.size else len(vectors)
    return tuple(PathStep(tuple(vectors[i]), int(n_dec[i]), int(k[i]), float(p[i]), bool(p[i] <= delta))
                 for i in range(stop))


def _last_passed(steps: Sequence[PathStep]) -> PathStep | None:
    passed = [s for s in steps if s.passed]
    return passed[-1] if passed else None


def _cost_all(c: np.ndarray, thresholds: Thresholds, cost: float) -> float:
    d = route(c, thresholds)
    n = max(1, d.size)
    calls = sum(float(np.sum((d < 0) | (d >= j))) for j in range(1, len(thresholds)) if thresholds[j] is not None)
    return cost * calls / n + float(np.sum(d < 0)) / n


@functools.lru_cache(maxsize=256)
def _start(n: int, agreement: float, confidence: float) -> int:
    return start_items(n, agreement, confidence)  # its default in ``selective``, computed once per (n, A, δ)


def _check(agreement: float, confidence: float, cost: float, last_share: float) -> None:
    if not 0.0 < agreement < 1.0 or not 0.0 < confidence < 1.0:
        raise ValueError("agreement and confidence must be in (0, 1)")
    if not 0.0 <= cost or not math.isfinite(cost):
        raise ValueError(f"cost must be a finite number ≥ 0, got {cost!r}")
    if not 0.0 < last_share < 1.0:
        raise ValueError(f"last_share must be in (0, 1), got {last_share!r}")


def cascade_of(c: ArrayLike, f: ArrayLike, human: ArrayLike, agreement: float = 0.90, confidence: float = 0.95,
               cost: float = COST, last_share: float = LAST_SHARE) -> Cascade:
    """The certified cascade (module docstring) from confidences ``c`` and verdicts ``f`` (J × n, cascade order)
    and human verdicts ``human`` (n; 0/1, or −1 = unlabelled)."""
    _check(agreement, confidence, cost, last_share)
    cc = np.atleast_2d(np.asarray(c, dtype=np.float64))
    ff = np.atleast_2d(np.asarray(f, dtype=np.int64))
    h = np.asarray(human, dtype=np.int64)
    n_judges, n = cc.shape
    if ff.shape != cc.shape or h.shape != (n,) or not 1 <= n_judges <= MAX_JUDGES:
        raise ValueError(f"1 to {MAX_JUDGES} judges, each with one confidence and one verdict per item")
    if not np.isin(h, (-1, 0, 1)).all() or not np.isin(ff, (0, 1)).all() or not np.isfinite(cc).all():
        raise ValueError("verdicts must be 0/1, human verdicts 0/1/−1, confidences finite")
    lab = h >= 0
    cl, agree = cc[:, lab], (ff[:, lab] == h[lab]).astype(np.int64).T  # agree: n_lab × J
    delta = 1.0 - confidence
    if n_judges == 1:
        n_lab = int(lab.sum())
        sel = selective(cl[0], agree[:, 0], cc[0], agreement, confidence, _start(n_lab, agreement, confidence))
        single = tuple(PathStep((s.threshold,), s.n_above, s.n_agree, s.p_value, s.passed) for s in sel.steps)
        chosen: Thresholds = (sel.threshold,)
        route_: Route = "single" if sel.threshold is not None else "none"
        return _result(cc, ff, h, chosen, route_, agreement, confidence, cost, sel.start, single, (), delta, 0.0)
    d_last = delta * last_share
    d_path = delta - d_last
    m = _start(int(lab.sum()), agreement, 1.0 - d_path)
    path = _walk(cl, agree, cascade_path(cl, ff[:, lab], m, cost), agreement, d_path)
    last_sel = selective(cl[-1], agree[:, -1], cc[-1], agreement, 1.0 - d_last,
                         _start(int(lab.sum()), agreement, 1.0 - d_last))
    none: Thresholds = (None,) * (n_judges - 1)
    last = tuple(PathStep((*none, s.threshold), s.n_above, s.n_agree, s.p_value, s.passed) for s in last_sel.steps)
    options: list[tuple[float, int, Thresholds, Route]] = []
    for rank, (steps, name) in enumerate(((path, "path"), (last, "last"))):
        best = _last_passed(steps)
        if best is not None:
            options.append((_cost_all(cc, best.thresholds, cost), rank, best.thresholds, name))  # type: ignore[arg-type]
    if not options:
        return _result(cc, ff, h, (None,) * n_judges, "none", agreement, confidence, cost, m, path, last, d_path,
                       d_last)
    _, _, chosen, route_ = min(options)
    return _result(cc, ff, h, chosen, route_, agreement, confidence, cost, m, path, last, d_path, d_last)


def _result(c: np.ndarray, f: np.ndarray, h: np.ndarray, thresholds: Thresholds, route_: Route, agreement: float,
            confidence: float, cost: float, start: int, path: tuple[PathStep, ...], last: tuple[PathStep, ...],
            d_path: float, d_last: float) -> Cascade:
    n = c.shape[1]
    d = route(c, thresholds)
    lab = h >= 0
    stages = []
    reached = np.ones(n, dtype=bool)
    k_all = 0
    for j, t in enumerate(thresholds):
        mine = d == j
        ml = mine & lab
        k = int(np.sum(f[j][ml] == h[ml]))
        k_all += k
        n_reached = int(reached.sum()) if t is not None else 0
        stages.append(Stage(t, n_reached, int(mine.sum()), int(ml.sum()), k,
                            clopper_pearson_lower(k, int(ml.sum()), confidence) if ml.any() else None))
        reached &= ~mine
    n_dec = int(np.sum(d >= 0))
    n_dec_lab = int(np.sum((d >= 0) & lab))
    lower = clopper_pearson_lower(k_all, n_dec_lab, confidence) if n_dec_lab else None
    lo, hi = clopper_pearson_interval(n_dec, n, confidence) if n else (0.0, 1.0)
    return Cascade(float(agreement), float(confidence), float(cost), int(start), route_, tuple(thresholds), int(n),
                   int(lab.sum()), n_dec, n_dec_lab, k_all, lower, float(lo), float(hi), tuple(stages), path, last,
                   float(d_path), float(d_last))


def certify_cascade(p_yes: Sequence[ArrayLike], human: ArrayLike, *, judges: Sequence[ArrayLike | None] | None = None,
                    agreement: float = 0.90, confidence: float = 0.95, cost: float = COST,
                    last_share: float = LAST_SHARE) -> Cascade:
    """The cascade of judges with P(yes) ``p_yes[j]`` (and verdicts ``judges[j]`` when given apart; see
    :func:`confidence_of`) on the same items, in cascade order; ``human``: 0/1, −1 = unlabelled."""
    given = list(judges) if judges is not None else [None] * len(p_yes)
    if len(given) != len(p_yes):
        raise ValueError("one verdict list (or None) per judge")
    pairs = [confidence_of(p, j) for p, j in zip(p_yes, given, strict=True)]
    return cascade_of(np.array([c for _, c in pairs]), np.array([f for f, _ in pairs]), human, agreement,
                      confidence, cost, last_share)


def apply_cascade(c: ArrayLike, thresholds: Thresholds) -> tuple[np.ndarray, np.ndarray]:
    """A certified cascade on new items (confidences J × n): (the deciding judge of each item, −1 for people; the
    items for people, least confident first by the last judge that was asked, ties in input order)."""
    cc = np.atleast_2d(np.asarray(c, dtype=np.float64))
    if cc.shape[0] != len(thresholds):
        raise ValueError(f"{len(thresholds)} judges certified, confidences of {cc.shape[0]} given")
    d = route(cc, thresholds)
    asked = [j for j, t in enumerate(thresholds) if t is not None]
    rest = np.nonzero(d < 0)[0]
    key = cc[asked[-1]][rest] if asked else np.zeros(rest.size)
    return d, rest[np.argsort(key, kind="stable")]
