"""Inter-reviewer agreement on the nominal label "accepted rank r | none acceptable" (issue 21 §4).

Input: ``labels`` item → reviewer → verdict code (:mod:`.verdicts`); a skip is a missing value. Every figure is a
function of per-item category counts, so the 95% interval is a percentile bootstrap over *items* (B resamples of the
items with replacement, a fixed seed: the same labels give the same intervals) computed as weighted sums — one
matrix product per figure, not B recomputations.

* **Cohen's κ** per pair of reviewers (Cohen 1960) over the items both labelled:
  κ = (p_o − p_e) / (1 − p_e), p_o the share of agreeing items, p_e = Σ_c p_a(c) p_b(c).
* **Fleiss' κ** (Fleiss 1971) over the items with exactly R labels (the design's number of raters m = R):
  P_u = (Σ_c n_uc² − m) / (m(m − 1)), P̄ = mean P_u, p_c = Σ_u n_uc / (N m), P_e = Σ_c p_c²,
  κ = (P̄ − P_e) / (1 − P_e) — as statsmodels' ``fleiss_kappa(method="fleiss")``.
* **Krippendorff's α**, nominal (Krippendorff 2011, "Computing Krippendorff's alpha-reliability", eqs. for the
  coincidence matrix) over the pairable items (≥ 2 labels; any number of reviewers per item):
  α = 1 − (n − 1) Σ_u (m_u² − Σ_c n_uc²)/(m_u − 1) / (n² − Σ_c n_c²), n_c = Σ_u n_uc, n = Σ_c n_c.
* Each reviewer's **agreement with the final labels**: the share of their (non-skip) labels equal to the item's
  final label, over items whose final label is not a skip.

A figure is ``None`` when undefined (no items, or no variation: 1 − p_e = 0); its interval is ``None`` when fewer
than half of the resamples define it, and ``None`` with a ``note`` when every resample gives the same figure (perfect
agreement, a constant reviewer): a percentile bootstrap then has zero width, which is no 95% interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from relgate_tui.core.review.verdicts import SKIP

__all__ = ["Estimate", "PairAgreement", "ReviewerAgreement", "Agreement", "agreement", "agreement_json", "BOOTSTRAP_B"]

BOOTSTRAP_B = 2000
_LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    """A figure with its 95% percentile-bootstrap interval over items and the number of items behind it."""

    value: float | None
    ci: tuple[float, float] | None
    n: int
    note: str | None = None


@dataclass(frozen=True)
class PairAgreement:
    a: str
    b: str
    cohen_kappa: Estimate


@dataclass(frozen=True)
class ReviewerAgreement:
    reviewer: str
    labels: int
    with_final: Estimate


@dataclass(frozen=True)
class Agreement:
    fleiss_kappa: Estimate
    krippendorff_alpha: Estimate
    pairs: tuple[PairAgreement, ...]
    reviewers: tuple[ReviewerAgreement, ...]
    categories: tuple[str, ...]
    bootstrap: int


def _estimate(point: float, boot: np.ndarray, n: int) -> Estimate:
    value = float(point) if np.isfinite(point) else None
    finite = boot[np.isfinite(boot)]
    ci = None
    if value is not None and finite.size * 2 >= boot.size and finite.size:
        lo, hi = np.quantile(finite, [(1 - _LEVEL) / 2, (1 + _LEVEL) / 2])
        if hi - lo <= 1e-12:  # every resample the same: a zero-width "95%" interval would claim certainty
            return Estimate(value, None, n, degenerate_note(value))
        ci = (float(lo), float(hi))
    return Estimate(value, ci, n)


def degenerate_note(value: float) -> str:
    """Why a bootstrap gives no interval when every resample gives the same figure (issue 33 §8)."""
    return (f"no interval: every bootstrap resample gives {value:.3g} (perfect agreement or a constant reviewer); "
            "the bootstrap cannot measure the uncertainty of a figure the data never vary")


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 1e-15, num / np.where(den > 1e-15, den, 1.0), np.nan)
    return np.asarray(out, dtype=float)


def fleiss_kappa(counts: np.ndarray, m: int, w: np.ndarray) -> np.ndarray:
    """Fleiss' κ of the count table ``counts`` (items × categories, every row summing to ``m``) under item weights
    ``w`` (resamples × items; a row of ones is the plain estimate)."""
    if counts.shape[0] == 0 or m < 2:
        return np.full(w.shape[0], np.nan)
    p_u = (np.square(counts).sum(axis=1) - m) / (m * (m - 1.0))
    total = w.sum(axis=1)
    p_bar = _ratio(w @ p_u, total)
    p_c = _ratio(w @ counts, (total * m)[:, None])
    p_e = np.square(p_c).sum(axis=1)
    return _ratio(p_bar - p_e, 1.0 - p_e)


def krippendorff_alpha(counts: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Krippendorff's nominal α of the count table (pairable items × categories) under item weights ``w``."""
    if counts.shape[0] == 0:
        return np.full(w.shape[0], np.nan)
    m_u = counts.sum(axis=1)
    d_u = (np.square(m_u) - np.square(counts).sum(axis=1)) / (m_u - 1.0)
    n_c = w @ counts
    n = n_c.sum(axis=1)
    return 1.0 - (n - 1.0) * _ratio(w @ d_u, np.square(n) - np.square(n_c).sum(axis=1))


def cohen_kappa(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cohen's κ of two one-hot label matrices (shared items × categories) under item weights ``w``."""
    if a.shape[0] == 0:
        return np.full(w.shape[0], np.nan)
    total = w.sum(axis=1)
    p_o = _ratio(w @ (a * b).sum(axis=1), total)
    p_a = _ratio(w @ a, total[:, None])
    p_b = _ratio(w @ b, total[:, None])
    p_e = (p_a * p_b).sum(axis=1)
    return _ratio(p_o - p_e, 1.0 - p_e)


def agreement(labels: Mapping[str, Mapping[str, str]], per_item: int, final: Mapping[str, str] | None = None, *,
              bootstrap: int = BOOTSTRAP_B, seed: int = 0) -> Agreement:
    """Every agreement figure of the module docstring, each with its bootstrap interval over items."""
    items = sorted(i for i, by in labels.items() if any(v != SKIP for v in by.values()))
    reviewers = sorted({r for i in items for r, v in labels[i].items() if v != SKIP})
    categories = tuple(sorted({v for i in items for v in labels[i].values() if v != SKIP},
                              key=lambda c: (not c.isdigit(), int(c) if c.isdigit() else 0, c)))
    col = {c: j for j, c in enumerate(categories)}
    n_items, n_cat = len(items), len(categories)
    counts = np.zeros((n_items, n_cat))
    onehot = {r: np.zeros((n_items, n_cat)) for r in reviewers}
    for u, item in enumerate(items):
        for r, v in labels[item].items():
            if v != SKIP:
                counts[u, col[v]] += 1
                onehot[r][u, col[v]] = 1.0
    ones = np.ones((1, n_items))
    rng = np.random.default_rng(seed)
    boots = (rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=bootstrap).astype(float)
             if n_items and bootstrap > 0 else np.zeros((0, n_items)))
    both = np.vstack([ones, boots])

    m_u = counts.sum(axis=1)
    full = m_u == per_item
    fk = fleiss_kappa(counts[full], per_item, both[:, full])
    pairable = m_u >= 2
    ka = krippendorff_alpha(counts[pairable], both[:, pairable])

    pairs = []
    for a, b in combinations(reviewers, 2):
        shared = (onehot[a].sum(axis=1) > 0) & (onehot[b].sum(axis=1) > 0)
        if not shared.any():
            continue
        ck = cohen_kappa(onehot[a][shared], onehot[b][shared], both[:, shared])
        pairs.append(PairAgreement(a, b, _estimate(ck[0], ck[1:], int(shared.sum()))))

    per_reviewer = []
    final = final or {}
    target = np.zeros((n_items, n_cat))
    for u, item in enumerate(items):
        f = final.get(item)
        if f is not None and f in col:  # a final label no reviewer gave matches nobody (its row stays zero)
            target[u, col[f]] = 1.0
    has_final = np.array([final.get(i) not in (None, SKIP) for i in items], dtype=bool)
    for r in reviewers:
        mine = (onehot[r].sum(axis=1) > 0) & has_final
        agree = (onehot[r] * target).sum(axis=1)
        n = int(mine.sum())
        if n:
            sub = both[:, mine]
            frac = _ratio(sub @ agree[mine], sub.sum(axis=1))
            est = _estimate(frac[0], frac[1:], n)
        else:
            est = Estimate(None, None, 0)
        per_reviewer.append(ReviewerAgreement(r, int((onehot[r].sum(axis=1) > 0).sum()), est))
    return Agreement(_estimate(fk[0], fk[1:], int(full.sum())), _estimate(ka[0], ka[1:], int(pairable.sum())),
                     tuple(pairs), tuple(per_reviewer), categories, bootstrap)


def agreement_json(a: Agreement) -> dict[str, object]:
    """The ``agreement`` object of ``relgate review status --json``."""

    def est(e: Estimate) -> dict[str, object]:
        return {"value": e.value, "ci": list(e.ci) if e.ci else None, "n": e.n, "ci_note": e.note}

    return {
        "fleiss_kappa": est(a.fleiss_kappa),
        "krippendorff_alpha": est(a.krippendorff_alpha),
        "pairs": [{"a": p.a, "b": p.b, "cohen_kappa": est(p.cohen_kappa)} for p in a.pairs],
        "with_final": {r.reviewer: {"labels": r.labels, **est(r.with_final)} for r in a.reviewers},
        "categories": list(a.categories),
        "ci_method": f"95% percentile bootstrap over items, {a.bootstrap} resamples, seed 0",
    }


