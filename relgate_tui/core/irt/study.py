"""The two-phase IRT study of one LLM judge on one criterion (paper 002, §3.4), from long-format ratings.

Input: per sample id, the judge's rating under each prompt variant, and optionally the human rating (the mean over
raters, used to group samples for θ_range) and the per-rater ratings (each rater is one GRM "item" of the human
fit; with a single human rating per sample, that rating is the one item).

Choices the paper leaves open (notes §2.6–2.7), made here and reported in the JSON:

- Phase 2 uses the θ̂ of the Phase 1 joint fit (θ is shared across variants, so the joint fit is the paper's model)
  and groups samples by their *original-prompt* rating for θ_range; max/min are the observed extremes.
- The human θ comes from a GRM fitted on the human ratings of the same samples, one item per rater. It needs at
  least two raters per sample (``raters``, a file's ``humans``): fitted on a single item (one ``human`` number per
  sample), the GRM's discrimination is not identified — the likelihood is flat in a, MML stops at its start value,
  MAP returns the prior, and θ_ratio runs from 4.7 to 0.6 as a goes from 0.3 to 8 (issue 20). So with fewer than two
  raters Phase 2 reports no θ_ratio and no D_W, only the one-line reason :data:`PHASE2_NEEDS_RATERS`; the
  score-level curve of the LLM's θ̂ by human score (identified: it uses the judge's fit only) is still given.
- With exactly two raters the human GRM is still not identified with one discrimination per rater: on one true
  model (a = 1.5, 1.5) fits that report convergence give a from 0.5 to 8.6 (issue 33), a ridge of the likelihood.
  Two raters are therefore fitted as *exchangeable* (one shared discrimination, :data:`HUMAN_MODEL_TWO`); three or
  more are fitted freely. Exchangeability is checked, not assumed (issue 41 §6): exchangeable raters have a
  symmetric joint table, P(r₁ = a, r₂ = b) = P(r₁ = b, r₂ = a), and Bowker's test of symmetry (1948) —
  X² = Σ_{a<b} (n_ab − n_ba)² / (n_ab + n_ba), χ² with one degree of freedom per pair with n_ab + n_ba > 0
  (:func:`symmetry_test`) — refusing Phase 2 at p < :data:`EXCHANGEABLE_ALPHA` with the one-line reason (true
  discriminations 0.7 and 3.0 were reported as a shared 1.05–1.28 before). ``human_model`` in the JSON (``human_fit.model``) and the Markdown say which.
- Phase 2 is computed for every judge whose fits converged, whether or not it passed Phase 1 (as the paper's tables
  do), and the JSON says whether Phase 1 passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from relgate_tui.core.irt.grm import GRMFit, IRTInputError, fit_grm
from relgate_tui.core.irt.metrics import (
    CV_DDOF,
    CV_MAX,
    RHO_MIN,
    is_monotone,
    marginal_reliability,
    phase1_diagnosis,
    phase2_labels,
    prompt_consistency,
    score_level_curve,
    theta_range,
    wasserstein_1,
)
from relgate_tui.core.rating_scale import check_scale

PHASE2_NEEDS_RATERS = ("Phase 2 needs several human raters per sample (a `humans` list): with one human score the "
                       "human θ scale is not identified, so θ_ratio and D_W are not reported")


HUMAN_MODEL_TWO = ("two raters: equal discriminations assumed (exchangeable raters) — with two raters the free "
                   "discriminations lie on a ridge of the likelihood and θ_ratio, D_W would be partly arbitrary")
HUMAN_MODEL_FREE = "three or more raters: one discrimination per rater"
EXCHANGEABLE_ALPHA = 0.01


def symmetry_test(r1: Sequence[float] | np.ndarray, r2: Sequence[float] | np.ndarray) -> tuple[float, int, float]:
    """Bowker's test of symmetry of the two raters' joint table (module docstring): (X², degrees of freedom,
    p-value); (0, 0, 1) when no rating pair differs."""
    from scipy.stats import chi2

    a, b = np.asarray(r1, dtype=float), np.asarray(r2, dtype=float)
    cats = np.unique(np.r_[a, b])
    ia, ib = np.searchsorted(cats, a), np.searchsorted(cats, b)
    table = np.zeros((cats.size, cats.size))
    np.add.at(table, (ia, ib), 1.0)
    upper = np.triu_indices(cats.size, k=1)
    nab, nba = table[upper], table.T[upper]
    used = (nab + nba) > 0
    df = int(used.sum())
    if not df:
        return 0.0, 0, 1.0
    stat = float(np.sum((nab[used] - nba[used]) ** 2 / (nab[used] + nba[used])))
    return stat, df, float(chi2.sf(stat, df))


@dataclass(frozen=True)
class JudgeIRT:
    """Phase 1 and Phase 2 of one judge (``None`` where a number could not be computed; ``reason`` says why)."""

    judge: str
    criterion: str
    ids: tuple[str, ...]
    variants: tuple[str, ...]
    original: str
    scale: tuple[float, ...]
    fit: GRMFit
    c_v: float | None
    v_bar: tuple[float, ...]
    rho: float | None
    phase1_pass: bool | None
    phase1_sentence: str
    human_fit: GRMFit | None = None
    theta_range_llm: float | None = None
    theta_range_human: float | None = None
    theta_ratio: float | None = None
    d_w: float | None = None
    phase2_label: str | None = None
    phase2_sentence: str | None = None
    curve_llm: tuple[tuple[float, float, int], ...] = ()
    curve_human: tuple[tuple[float, float, int], ...] = ()
    monotone: bool | None = None
    reason: str | None = None
    notes: tuple[str, ...] = field(default=())
    cv_ddof: int = 0
    human_model: str | None = None

    @property
    def converged(self) -> bool:
        return self.fit.converged and (self.human_fit is None or self.human_fit.converged)

    def to_json(self) -> dict:
        """The study's JSON (non-finite numbers become null at the edge, core/jsonsafe.py)."""
        pos = {v: i for i, v in enumerate(self.fit.items)}
        variants = {v: {"a": self.fit.a[pos[v]], "b": self.fit.thresholds_on_scale(pos[v], self.scale),
                        "categories": list(self.fit.categories[pos[v]]),
                        "v_bar": self.v_bar[pos[v]] if self.v_bar else None} for v in self.variants}
        return {
            "judge": self.judge, "criterion": self.criterion, "n_samples": len(self.ids),
            "original_variant": self.original, "scale": list(self.scale),
            "variants": variants,
            "samples": [{"id": i, "theta": float(t), "theta_var": float(s)}
                        for i, t, s in zip(self.ids, self.fit.theta, self.fit.theta_var, strict=True)],
            "c_v": self.c_v, "rho": self.rho, "phase1_pass": self.phase1_pass, "phase1": self.phase1_sentence,
            "c_v_ddof": self.cv_ddof,
            "thresholds": {"c_v_max": CV_MAX, "rho_min": RHO_MIN},
            "theta_range_llm": self.theta_range_llm, "theta_range_human": self.theta_range_human,
            "theta_ratio": self.theta_ratio, "d_w": self.d_w, "phase2_label": self.phase2_label,
            "phase2": self.phase2_sentence,
            "score_levels": {"llm": [{"human": h, "median_theta": m, "n": n} for h, m, n in self.curve_llm],
                             "human": [{"human": h, "median_theta": m, "n": n} for h, m, n in self.curve_human],
                             "monotone": self.monotone},
            "converged": self.converged, "loglik": self.fit.loglik, "iterations": self.fit.iterations,
            "loglik_trace": list(self.fit.trace), "prior": self.fit.prior, "fit_message": self.fit.message,
            "human_fit": None if self.human_fit is None else {
                "items": list(self.human_fit.items), "a": list(self.human_fit.a), "converged": self.human_fit.converged,
                "loglik": self.human_fit.loglik, "message": self.human_fit.message, "model": self.human_model},
            "reason": self.reason, "notes": list(self.notes),
        }


@dataclass(frozen=True)
class IRTStudy:
    """The IRT study of one or more judges on one criterion."""

    criterion: str
    judges: tuple[JudgeIRT, ...]

    def to_json(self) -> dict:
        return {"criterion": self.criterion, "judges": {j.judge: j.to_json() for j in self.judges}}

    def to_markdown(self) -> str:
        def f(x: float | None, nd: int = 2) -> str:
            return "—" if x is None or not np.isfinite(x) else f"{x:.{nd}f}"

        lines = [f"# IRT diagnostics of LLM judges — {self.criterion}", "",
                 "| judge | n | C_V (≤ 0.10) | ρ (≥ 0.70) | Phase 1 | θ_ratio | D_W | converged |",
                 "|---|---|---|---|---|---|---|---|"]
        for j in self.judges:
            p1 = {True: "pass", False: "fail", None: "—"}[j.phase1_pass]
            lines.append(f"| {j.judge} | {len(j.ids)} | {f(j.c_v)} | {f(j.rho)} | {p1} | {f(j.theta_ratio)} | "
                         f"{f(j.d_w)} | {'yes' if j.converged else 'no'} |")
        lines.append("")
        for j in self.judges:
            lines.append(f"- **{j.judge}**: {j.phase1_sentence}"
                         + (f"; {j.phase2_sentence}" if j.phase2_sentence else "")
                         + (f" (human fit: {j.human_model})" if j.human_model else "")
                         + (f" ({j.reason})" if j.reason else ""))
        return "\n".join(lines) + "\n"


def judge_irt(
    judge: str,
    criterion: str,
    ratings: Mapping[str, Mapping[str, float]],
    *,
    human: Mapping[str, float] | None = None,
    raters: Mapping[str, Sequence[float]] | None = None,
    original: str = "original",
    prior: str = "mml",
    near_tolerance: float = 0.10,
    cv_ddof: int = 0,
) -> JudgeIRT:
    """Phase 1 and Phase 2 for one judge. ``ratings[id][variant]`` is the judge's rating; ``human[id]`` the human
    score (mean over raters); ``raters[id]`` the per-rater ratings (same length for every id, at least two for
    Phase 2); ``cv_ddof`` the variance convention of C_V (0 or 1, :mod:`.metrics`). Raises :class:`IRTInputError`
    (one line) when the judge's ratings cannot be fitted."""
    if cv_ddof not in CV_DDOF:
        raise IRTInputError(f"C_V ddof must be 0 or 1, not {cv_ddof!r}")
    ids = tuple(ratings)
    variants = tuple(dict.fromkeys(v for per in ratings.values() for v in per))
    if not variants:
        raise IRTInputError(f"judge {judge!r}: no ratings")
    if original not in variants:
        original = variants[0]
    y = np.array([[ratings[i].get(v, np.nan) for v in variants] for i in ids], dtype=float)
    observed = y[~np.isnan(y)]
    if observed.size and np.unique(observed).size == 1:
        raise IRTInputError(f"judge {judge!r} gave every sample the same rating ({observed[0]:g}) under every "
                            "variant: there is nothing to fit")
    scale = tuple(float(v) for v in np.unique(observed))
    if scale and all(float(v).is_integer() for v in scale):
        lo, hi = check_scale(scale, f"judge {judge!r}", "rating scale")  # before the fit or range(min, max)
        scale = tuple(float(v) for v in range(lo, hi + 1))
    fit = fit_grm(y, variants, prior=prior)
    base = JudgeIRT(judge=judge, criterion=criterion, ids=ids, variants=variants, original=original, scale=scale,
                    fit=fit, c_v=None, v_bar=(), rho=None, phase1_pass=None,
                    phase1_sentence="no metrics: the fit did not converge", cv_ddof=cv_ddof)
    if not fit.converged:
        return replace(base, reason=fit.message)
    notes = []
    if len(variants) >= 2:
        c_v, v_bar = prompt_consistency(fit.theta, y, cv_ddof)
    else:
        c_v, v_bar = None, ()
        notes.append("one prompt variant only: C_V needs several, so Phase 1 is undecided")
    rho = marginal_reliability(fit.theta, fit.theta_var)
    if c_v is None:
        passed, sentence = None, f"ρ {rho:.2f}; C_V needs several prompt variants"
    else:
        passed, sentence = phase1_diagnosis(c_v, rho)
    result = replace(base, c_v=c_v, v_bar=v_bar, rho=rho, phase1_pass=passed, phase1_sentence=sentence,
                     notes=tuple(notes))
    if human is None or not any(i in human for i in ids):
        return result
    return _phase2(result, y, human, raters, near_tolerance, prior)


def _phase2(result: JudgeIRT, y: np.ndarray, human: Mapping[str, float],
            raters: Mapping[str, Sequence[float]] | None, near_tolerance: float, prior: str) -> JudgeIRT:
    o = result.variants.index(result.original)
    keep = [k for k, i in enumerate(result.ids) if i in human and not np.isnan(y[k, o])]
    if len(keep) < 10:
        return replace(result, reason=f"Phase 2 needs at least 10 samples with a human score and an "
                                      f"original-prompt rating (have {len(keep)})")
    h = np.array([human[result.ids[k]] for k in keep], dtype=float)
    th_llm = result.fit.theta[keep]
    curve_llm = tuple(score_level_curve(th_llm, h))
    curves = replace(result, curve_llm=curve_llm, monotone=is_monotone(curve_llm))
    if not raters or not all(result.ids[k] in raters for k in keep):
        return replace(curves, reason=PHASE2_NEEDS_RATERS)
    widths = {len(raters[result.ids[k]]) for k in keep}
    if len(widths) != 1:
        return replace(curves, reason="Phase 2: samples have different numbers of human raters")
    if widths.pop() < 2:
        return replace(curves, reason=PHASE2_NEEDS_RATERS)
    hy = np.array([list(raters[result.ids[k]]) for k in keep], dtype=float)
    items = tuple(f"rater{r + 1}" for r in range(hy.shape[1]))
    two = hy.shape[1] == 2
    if two:
        stat, df, p = symmetry_test(hy[:, 0], hy[:, 1])
        if p < EXCHANGEABLE_ALPHA:
            return replace(curves, reason=(f"Phase 2: the two human raters are not exchangeable (Bowker's symmetry "
                                           f"test X² = {stat:.1f}, {df} df, p = {p:.1e}), which a two-rater fit "
                                           "assumes; add a third rater for a free fit"))
    try:
        human_fit = fit_grm(hy, items, prior=prior, equal_discrimination=two)
    except IRTInputError as exc:
        return replace(result, reason=f"Phase 2: the human ratings cannot be fitted: {exc}")
    if not human_fit.converged:
        return replace(result, human_fit=human_fit, reason=f"Phase 2: the human fit did not converge: "
                                                           f"{human_fit.message}")
    r_llm = theta_range(th_llm, y[keep, o])
    r_hum = theta_range(human_fit.theta, h)
    ratio = r_llm / r_hum if r_hum != 0 else float("nan")
    label, sentence = phase2_labels(ratio, near_tolerance)
    return replace(curves, human_fit=human_fit, human_model=HUMAN_MODEL_TWO if two else HUMAN_MODEL_FREE,
                   theta_range_llm=r_llm, theta_range_human=r_hum, theta_ratio=ratio,
                   d_w=wasserstein_1(th_llm, human_fit.theta), phase2_label=label, phase2_sentence=sentence,
                   curve_human=tuple(score_level_curve(human_fit.theta, h)))


def run_irt_study(criterion: str, per_judge: Mapping[str, Mapping[str, Mapping[str, float]]], *,
                  human: Mapping[str, float] | None = None, raters: Mapping[str, Sequence[float]] | None = None,
                  prior: str = "mml", original: str = "original", cv_ddof: int = 0) -> IRTStudy:
    """:func:`judge_irt` for every judge in ``per_judge`` (judge → id → variant → rating)."""
    return IRTStudy(criterion, tuple(judge_irt(j, criterion, r, human=human, raters=raters, prior=prior,
                                               original=original, cv_ddof=cv_ddof) for j, r in per_judge.items()))
