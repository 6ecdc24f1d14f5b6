"""Adaptive prediction sets (paper 004 eq. 6.2 and 6.7; SPEC §3.4) for the certification results.

The calibration score is the cumulative-probability score s_cp (eq. 6.2): the total share of the classes ranked at
or above the accepted one (+∞ for "none acceptable"); q̂ is its conformal quantile with the same k = ⌈(n+1)(1−α)⌉
rule as M* (+∞ when k > n); a deployment item's adaptive set is its fewest top classes whose shares reach q̂ (every
observed class when none does — with INVALID samples the shares sum to less than 1). An item whose acceptable class
has s_cp <= q̂ is always covered (cumulative shares strictly increase), so P(covered) >= 1 − α is split conformal's
guarantee on s_cp; the reported coverage counts the displayed sets, which also cover some items with s_cp > q̂.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.certification.base import readonly
from relgate_tui.core.certification.intervals import Proportion, wilson_proportion
from relgate_tui.core.certification.quantile import conformal_rank

if TYPE_CHECKING:
    from relgate_tui.core.certification.base import ItemRecord

__all__ = ["AdaptiveSets", "adaptive_arrays", "adaptive_inputs", "adaptive_results"]


@dataclass(frozen=True)
class AdaptiveSets:
    """Adaptive prediction sets (eq. 6.7) at α: ``threshold`` q̂ = the conformal quantile of the calibration
    cumulative-probability scores (eq. 6.2; +∞ when k > n), each deployment item's set = its fewest top classes whose
    shares reach q̂; their average size and, with references, their coverage (Wilson)."""

    threshold: float
    average_set_size: float
    coverage: Proportion | None


def adaptive_arrays(cal_cp: ArrayLike | None, n_cal: int, dep_cum: ArrayLike | None, dep_cp: ArrayLike | None,
                     m: int) -> dict[str, np.ndarray | None]:
    if cal_cp is None or dep_cum is None:
        return {}
    cp = np.sort(np.asarray(cal_cp, dtype=np.float64).ravel())
    if cp.size != n_cal or np.isnan(cp).any():
        raise ValueError(f"calibration_cp_scores must have one value per calibration score ({n_cal})")
    cum = np.asarray(dep_cum, dtype=np.float64).reshape(m, -1) if m else np.zeros((0, 1))
    dcp = np.full(m, np.nan) if dep_cp is None else np.asarray(dep_cp, dtype=np.float64).ravel()
    if dcp.size != m:
        raise ValueError(f"deployment_cp_scores must have one entry per deployment item ({m})")
    return {"calibration_cp_scores": readonly(cp), "deployment_cumulative": readonly(cum),
            "deployment_cp_scores": readonly(dcp)}


def _padded(rows: Sequence[tuple[float, ...]]) -> np.ndarray:
    width = max((len(r) for r in rows), default=0) + 1
    out = np.full((len(rows), width), np.inf)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def adaptive_inputs(calibration: Sequence[ItemRecord], deployment: Sequence[ItemRecord]) -> dict[str, Any]:
    """Adaptive-set arrays from the records, when every scored calibration record knows its class shares."""
    scored = [r for r in calibration if not r.skipped and r.score is not None]
    cps = [r.cp_score for r in scored]
    if not scored or any(c is None for c in cps) or any(not r.cumulative_shares and r.n_classes for r in deployment):
        return {}
    return {
        "calibration_cp_scores": np.array(cps, dtype=np.float64),
        "deployment_cumulative": _padded([r.cumulative_shares for r in deployment]),
        "deployment_cp_scores": np.array([math.nan if r.cp_score is None else r.cp_score for r in deployment]),
    }


def adaptive_results(calibration_cp_scores: np.ndarray | None, deployment_cumulative: np.ndarray | None,
                     deployment_n_classes: np.ndarray, deployment_scores: np.ndarray, alpha: float,
                     confidence: float) -> AdaptiveSets | None:
    """The adaptive sets at α from a certification input's arrays (:class:`~.certify.CertificationInput`)."""
    if calibration_cp_scores is None or deployment_cumulative is None:
        return None
    scores = calibration_cp_scores
    k = conformal_rank(scores.size, alpha)
    q = math.inf if k > scores.size else float(scores[k - 1])
    ncls = deployment_n_classes
    sizes = np.minimum((deployment_cumulative < q).sum(axis=1) + 1, ncls) if ncls.size else ncls
    rank = deployment_scores  # covered: the acceptable class's rank is within the displayed set
    coverage = None
    if ncls.size and (~np.isnan(rank)).any():
        known = ~np.isnan(rank)
        hit = np.isfinite(rank[known]) & (rank[known] <= sizes[known])
        coverage = wilson_proportion(int(np.count_nonzero(hit)), int(known.sum()), confidence)
    return AdaptiveSets(float(q), float(sizes.mean()) if sizes.size else math.nan, coverage)
