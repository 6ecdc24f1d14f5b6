"""Paper 002's four numbers, all functions of the latent quality θ (§3.2: never of α or β).

Phase 1 — intrinsic consistency (no humans):

- **Prompt consistency C_V** (Eqs. 2–3). For variant p, D_p(k) = {j : Y_pj = k} and K_p = {k : D_p(k) ≠ ∅};
  V̄_p = 1/(|K_p| − 1) · Σ_{k∈K_p} Var_{j∈D_p(k)}(θ̂_j)  (Eq. 2) and C_V = σ_V / μ_V over the variants (Eq. 3).
  Eq. 2 divides by |K_p| − 1 although the text says "average"; it is implemented as written (for a binary criterion
  V̄_p is then the *sum* of the two within-class variances). θ̂_j is the EAP estimate. The paper does not say which
  variance it takes (notes §2.6); ``ddof`` chooses: 0 (the default, population variances and σ_V the population
  standard deviation over the variants) or 1 (sample variances and sample standard deviation). A category with a
  single sample contributes 0 under either (with ddof = 1 its variance is undefined, not a spread). The choice moves
  C_V by 10–26% on real judges. Lower is more consistent; acceptable: C_V ≤ 0.10 (the paper's tables; §3.4 writes
  < 0.1).
- **Marginal reliability ρ** (Eq. 4): ρ = Var_j(θ̂_j) / (Var_j(θ̂_j) + E_j[σ_j²]), σ_j² the posterior variance of θ_j
  (ddof = 0). Acceptable: ρ ≥ 0.70 (tables; §3.4 writes > 0.7).

Phase 2 — human alignment (original prompt):

- **Discrimination breadth ratio** (Eqs. 5–6): θ_range = median(θ_j | Y_j = max Y) − median(θ_j | Y_j = min Y) over
  the observed ratings, and θ_ratio = θ_range(LLM) / θ_range(human). < 1 hypersensitive, ≈ 1 near-human, > 1
  insensitive (the paper gives no tolerance for "≈ 1"; ``near_tolerance`` sets it).
- **D_W** (Eq. 7): the 1-Wasserstein distance between the empirical distributions of θ̂ from the LLM and from humans.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import wasserstein_distance

CV_MAX = 0.10
RHO_MIN = 0.70


CV_DDOF = (0, 1)


def _var(x: np.ndarray, ddof: int) -> float:
    """Variance with ``ddof``; 0 for a single value (no spread to estimate)."""
    return float(np.var(x, ddof=ddof)) if x.size > ddof else 0.0


def within_category_variance(theta: np.ndarray, ratings: np.ndarray, ddof: int = 0) -> float:
    """V̄_p of Eq. 2 for one variant: Σ_k Var(θ̂ | Y_p = k) / (|K_p| − 1), over the samples the variant rated."""
    ok = ~np.isnan(ratings)
    th, y = theta[ok], ratings[ok]
    cats = np.unique(y)
    if cats.size < 2:
        raise ValueError("Eq. 2 needs at least two rating values")
    return float(sum(_var(th[y == k], ddof) for k in cats) / (cats.size - 1))


def prompt_consistency(theta: np.ndarray, ratings: np.ndarray, ddof: int = 0) -> tuple[float, tuple[float, ...]]:
    """(C_V, V̄_p per variant) from θ̂ (n) and ratings (n × variants) — Eqs. 2–3; ``ddof`` 0 or 1 for every
    variance and for σ_V (module docstring)."""
    if ddof not in CV_DDOF:
        raise ValueError(f"ddof must be 0 or 1, not {ddof!r}")
    v = np.array([within_category_variance(theta, ratings[:, p], ddof) for p in range(ratings.shape[1])])
    # round-off floor: a variance below 1e-12 of θ's mean square is floating-point noise (e.g. a constant θ that is
    # not exactly representable), not spread — without it C_V of a constant θ would be 0 or ~1 depending on its unit
    floor = 1e-12 * max(float(np.mean(np.square(theta[np.isfinite(theta)]))) if np.isfinite(theta).any() else 0.0,
                        np.finfo(float).tiny)
    v = np.where(v <= floor, 0.0, v)
    mu = float(v.mean())
    cv = float(_var(v, ddof) ** 0.5 / mu) if mu > 0 else (0.0 if np.all(v == 0) else float("inf"))
    return cv, tuple(float(x) for x in v)


def marginal_reliability(theta: np.ndarray, theta_var: np.ndarray) -> float:
    """ρ of Eq. 4."""
    var = float(np.var(theta))
    noise = float(np.mean(theta_var))
    return var / (var + noise) if var + noise > 0 else float("nan")


def theta_range(theta: np.ndarray, ratings: np.ndarray) -> float:
    """Eq. 6: median θ of the samples at the highest observed rating minus that at the lowest."""
    ok = ~np.isnan(ratings)
    th, y = theta[ok], ratings[ok]
    return float(np.median(th[y == y.max()]) - np.median(th[y == y.min()]))


def wasserstein_1(theta_a: np.ndarray, theta_b: np.ndarray) -> float:
    """D_W of Eq. 7 (W_1 between the two empirical distributions; symmetric, 0 for identical samples)."""
    return float(wasserstein_distance(theta_a, theta_b))


def score_level_curve(theta: np.ndarray, human: np.ndarray) -> list[tuple[float, float, int]]:
    """The score-level plot's points (§6.3): per human score value, (score, median θ̂, count), in score order."""
    ok = ~np.isnan(human)
    th, h = theta[ok], human[ok]
    return [(float(v), float(np.median(th[h == v])), int(np.sum(h == v))) for v in np.unique(h)]


def is_monotone(curve: Sequence[tuple[float, float, int]]) -> bool:
    """Whether the median θ rises (weakly) with the human score: a calibration mismatch at worst, not a validity gap."""
    ys = [y for _, y, _ in curve]
    return all(b >= a for a, b in zip(ys, ys[1:], strict=False))


def phase1_diagnosis(c_v: float, rho: float) -> tuple[bool, str]:
    """(pass, sentence) of the paper's §3.4.1 diagnostic interpretation."""
    ok_cv, ok_rho = c_v <= CV_MAX, rho >= RHO_MIN
    if ok_cv and ok_rho:
        return True, (f"passes Phase 1: consistent across prompt variants (C_V {c_v:.2f} ≤ {CV_MAX:.2f}) and "
                      f"reliable (ρ {rho:.2f} ≥ {RHO_MIN:.2f})")
    if not ok_rho:
        return False, (f"fundamental model limitation: ρ {rho:.2f} < {RHO_MIN:.2f} — much of the spread of its "
                       "ratings is measurement error, whatever the prompt")
    return False, (f"prompt sensitivity: reliable (ρ {rho:.2f}) but inconsistent across prompt variants "
                   f"(C_V {c_v:.2f} > {CV_MAX:.2f}) — fix the prompt (more detailed instructions), not the model")


def phase2_labels(ratio: float, near_tolerance: float = 0.10) -> tuple[str, str]:
    """(label, sentence) for θ_ratio (§3.4.2)."""
    if not np.isfinite(ratio):
        return "undefined", "θ_ratio is undefined (the human θ range is zero)"
    if ratio < 1 - near_tolerance:
        return "hypersensitive", (f"hypersensitive (θ_ratio {ratio:.2f} < 1): it perceives a narrower quality range "
                                  "than humans and fails to separate samples humans rate differently")
    if ratio > 1 + near_tolerance:
        return "insensitive", (f"insensitive (θ_ratio {ratio:.2f} > 1): it spreads qualities wider than humans "
                               "perceive them")
    return "near-human", f"near-human discrimination breadth (θ_ratio {ratio:.2f} ≈ 1)"
