"""The evaluation protocol of paper 001 (§4): many seeded 50/50 splits, every method, before and after adjustment.

Split ``s`` puts the first ⌈n/2⌉ indices of ``numpy.random.RandomState(s).permutation(n)`` in the **test** half and
the rest in the calibration half (seeds 1–30 by default, so results line up item by item with other tools using this
convention). Per method: mean ± sd over seeds of coverage (share of test labels inside) and width (mean u − l), before
and after boundary adjustment; the share of seeds whose coverage ≥ 1 − α; per seed, the exact two-sided binomial test
of the covered count against 1 − α (the median p-value is reported, Table 8 style); midpoint scores (§3.4) against
the raw score and the weighted average by MSE, MAE, Spearman ρ and Kendall τ; a calibration-size curve (25/50/75/100%
of the calibration half, its first items in permutation order); calibrate-on-A / test-on-B (:func:`shift_study`).

**Uninformative methods.** An interval that spans the whole label range (after adjustment) is valid but says
nothing. A method whose intervals span the scale for most test items (share > :data:`UNINFORMATIVE_SHARE`, mean over
seeds) is flagged ``uninformative`` with the reason; its ✓ for coverage stands, but it is no finding.

``ordinal_grid`` runs the ordinal methods on the label grid's classes (13 on thirds; ``ordinal.on_label_grid``).

**Fit share.** The learned methods train on the first part of the calibration half and calibrate on the rest
(``base``). ``fit_share`` sets the first part's share; the default is 80% — but at least min(50, half) items are left
to calibrate on, so small files stay near 50/50. Measured (DialSummEval's real three-rater labels with a simulated
judge, 1,400 items, 10 seeds, after adjustment, 80/20 against 50/50): on coherence R2CCP −7%, CHR −9%, boosted LCP
−6%, boosted CQR −4%, LVD −4%, CQR +8%; on consistency R2CCP 0%, LVD +1%, boosted +4%, CQR +9%; coverage ≥ 92.5%
throughout. The audit of issue 20 found R2CCP −8–9% on real judges; the simulated judge is simpler than a real one,
so its learners gain less from more fit points. 0.8 is the default for that; CQR-type methods may prefer 0.5.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from relgate_tui.core.rating_scale import check_scale
from relgate_tui.core.text import counted
from relgate_tui.errors import DataError

from .base import Bounds, SplitData, single_thread
from .features import feature_vector, weighted_average
from .grid import Grid, adjust, make_grid, off_grid
from .methods import METHODS, MIN_FIT, ORDINAL, family
from .ordinal import on_label_grid

CURVE_FRACTIONS = (0.25, 0.5, 0.75, 1.0)
FIT_SHARE = 0.8  # share of the calibration half that trains the learned methods by default (module docstring)
MIN_CONFORMAL = 50  # …but the default leaves at least this many (or half the calibration half) to calibrate on
UNINFORMATIVE_SHARE = 0.5  # a method is uninformative when more than this share of its intervals span the scale


@dataclass(frozen=True)
class StudyInput:
    """Items with a human label and log-probs: ids, z (n × K), labels y, raw judge scores (NaN when absent)."""

    ids: tuple[str, ...]
    z: np.ndarray
    y: np.ndarray
    raw: np.ndarray
    scale: tuple[int, ...]
    grid: Grid
    dropped: int = 0          # rows without log-probs or without a human label

    @property
    def n(self) -> int:
        return len(self.ids)


def prepare(ids: Sequence[str], logprobs: Sequence[Mapping[int, float] | None], humans: Sequence[float | None],
            raw: Sequence[float | None], *, grid: str | Sequence[float] = "auto", alpha: float = 0.1,
            scale: Sequence[int] | None = None, where: str = "scores") -> StudyInput:
    """Arrays for the study; a :class:`DataError` of one line for a file this study cannot use."""
    hv = [math.nan if h is None else float(h) for h in humans]
    rv = [math.nan if r is None else float(r) for r in raw]
    keep = [i for i in range(len(ids)) if logprobs[i] and math.isfinite(hv[i])]
    if not any(lp for lp in logprobs):
        raise DataError(f"{where}: no log-probabilities: intervals need the judge's score-token log-probs "
                        "(a 'logprobs' object or lp_1 … lp_K columns)")
    if not keep:
        raise DataError(f"{where}: no item has both log-probabilities and a human rating")
    if scale is None:
        scale = sorted({int(k) for i in keep for k in (logprobs[i] or {})})
    check_scale(scale, where, "log-prob scale")  # before any grid or feature is built from it
    scale = tuple(int(v) for v in scale)
    if len(scale) < 2:
        raise DataError(f"{where}: the log-probs cover a single scale value ({scale}); need at least two")
    y = np.array([hv[i] for i in keep])
    if np.unique(np.round(y, 6)).size < 2:
        raise DataError(f"{where}: every human rating is {y[0]:g} (one class only): coverage would be trivial")
    lo, hi = float(min(scale)), float(max(scale))
    if y.min() < lo - 1e-9 or y.max() > hi + 1e-9:
        bad = y[(y < lo - 1e-9) | (y > hi + 1e-9)][0]
        raise DataError(f"{where}: human rating {bad:g} lies outside the judge's scale {lo:g}–{hi:g}")
    try:
        g = make_grid(grid, y, lo, hi)
    except ValueError as exc:
        raise DataError(f"{where}: {exc}") from None
    if g is None:
        from .grid import _regular

        ex = y[off_grid(y, _regular(lo, hi, 12, "twelfths"))]
        ex_txt = f"e.g. {ex[0]:g} " if ex.size else ""
        raise DataError(f"{where}: human ratings off the grid: {ex_txt}is on no grid of step 1, 1/2, 1/3 or 1/4 "
                        f"from {lo:g} to {hi:g} (give --grid LIST)")
    bad_idx = off_grid(y, g)
    if bad_idx.size:
        raise DataError(f"{where}: {counted(int(bad_idx.size), 'human rating')} off the {g.name} grid "
                        f"(e.g. {y[bad_idx[0]]:g})")
    n = len(keep)
    need = math.ceil(1.0 / alpha)
    if n < need:
        raise DataError(f"{where}: {counted(n, 'usable item')} < 1/α = {need}: no conformal interval can be finite")
    z = np.vstack([feature_vector(logprobs[i] or {}, scale) for i in keep])
    rawv = np.array([rv[i] for i in keep])
    return StudyInput(tuple(str(ids[i]) for i in keep), z, g.snap_labels(y), rawv, scale, g, len(ids) - n)


# ---- results ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    coverage_mean: float
    coverage_sd: float
    width_mean: float
    width_sd: float
    share_covered: float      # share of seeds with coverage ≥ 1 − α
    binom_p_median: float     # median over seeds of the two-sided binomial p-value (H0: coverage = 1 − α)


@dataclass(frozen=True)
class PointMetrics:
    mse: float
    mae: float
    spearman: float
    kendall: float


@dataclass(frozen=True)
class ItemInterval:
    id: str
    human: float
    lower: float
    upper: float
    adj_lower: float
    adj_upper: float


@dataclass(frozen=True)
class MethodResult:
    name: str
    family: str
    raw: Summary
    adjusted: Summary
    never_dropped: bool                 # adjusted coverage ≥ unadjusted on every split (Theorem 1)
    midpoint: PointMetrics
    midpoint_adjusted: PointMetrics
    seconds_mean: float
    reasons: tuple[str, ...]
    items: tuple[ItemInterval, ...]     # the first seed's test items
    full_scale_share: float = 0.0       # share of (adjusted) test intervals spanning the whole label range
    scale_span: tuple[float, float] = (1.0, 5.0)

    @property
    def uninformative(self) -> bool:
        return self.full_scale_share > UNINFORMATIVE_SHARE

    @property
    def uninformative_reason(self) -> str | None:
        if not self.uninformative:
            return None
        lo, hi = self.scale_span
        return (f"uninformative: {100 * self.full_scale_share:.0f}% of its intervals span the whole scale "
                f"{lo:g}–{hi:g} (valid, but they say nothing about the item)")

    def to_json(self) -> dict[str, Any]:
        def s(x: Summary) -> dict[str, Any]:
            return {"coverage_mean": x.coverage_mean, "coverage_sd": x.coverage_sd, "width_mean": x.width_mean,
                    "width_sd": x.width_sd, "share_seeds_covered": x.share_covered,
                    "binom_p_median": x.binom_p_median}
        return {**s(self.raw), "family": self.family, "adjusted": s(self.adjusted),
                "adjusted_never_lower": self.never_dropped, "seconds_mean": self.seconds_mean,
                "full_scale_share": self.full_scale_share, "uninformative": self.uninformative,
                "uninformative_reason": self.uninformative_reason,
                "reasons": list(self.reasons), "items": [vars(i) for i in self.items]}


@dataclass(frozen=True)
class CurvePoint:
    method: str
    fraction: float
    n_calibration: int
    coverage_mean: float
    coverage_sd: float
    width_mean: float
    width_sd: float


@dataclass(frozen=True)
class IntervalStudy:
    n_items: int
    dropped: int
    alpha: float
    seeds: tuple[int, ...]
    scale: tuple[int, ...]
    grid: Grid
    adjust_lambda: float
    methods: tuple[MethodResult, ...]
    raw_score: PointMetrics | None
    weighted: PointMetrics
    curve: tuple[CurvePoint, ...] = ()
    shift: tuple[ShiftResult, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    ordinal_grid: bool = False
    fit_share: float | None = None

    def method(self, name: str) -> MethodResult:
        return next(m for m in self.methods if m.name == name)

    def to_json(self) -> dict[str, Any]:
        return {
            **dict(self.labels),
            "n_items": self.n_items, "dropped_rows": self.dropped, "alpha": self.alpha, "seeds": list(self.seeds),
            "scale": list(self.scale),
            "grid": {"name": self.grid.name, "step": self.grid.step, "values": list(self.grid.values)},
            "adjust_lambda": self.adjust_lambda,
            "ordinal_classes": "label grid" if self.ordinal_grid else "scale",
            "fit_share": "default" if self.fit_share is None else self.fit_share,
            "methods": {m.name: m.to_json() for m in self.methods},
            "scores": {
                "raw": None if self.raw_score is None else vars(self.raw_score),
                "weighted": vars(self.weighted),
                "midpoint": {m.name: vars(m.midpoint) for m in self.methods},
                "midpoint_adjusted": {m.name: vars(m.midpoint_adjusted) for m in self.methods},
            },
            "calibration_curve": [vars(c) for c in self.curve],
            "shift": [vars(s) for s in self.shift],
        }


@dataclass(frozen=True)
class ShiftResult:
    """Calibrate on A (all of it), test on B (all of it): mean ± sd over the seeds' fit/conformal splits of A."""

    method: str
    coverage_mean: float
    coverage_sd: float
    width_mean: float
    width_sd: float
    adj_coverage_mean: float
    adj_width_mean: float


# ---- running ----------------------------------------------------------------------------------------------------


def split_indices(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(test, calibration) indices: the first ⌈n/2⌉ of RandomState(seed).permutation(n) are the test half."""
    perm = np.random.RandomState(seed).permutation(n)
    k = math.ceil(n / 2)
    return perm[:k], perm[k:]


def fit_size(m: int, fit_share: float | None) -> int:
    """Items of a calibration half of ``m`` that train the learned methods: ⌊m·fit_share⌋ (at least one conformal
    item left); the default (None) is ⌊0.8·m⌋ but leaves min(50, ⌊m/2⌋) or more to calibrate on."""
    if fit_share is None:
        return min(int(math.floor(m * FIT_SHARE + 1e-9)), m - min(MIN_CONFORMAL, m // 2)) if m else 0
    if not 0.0 < fit_share < 1.0:
        raise ValueError(f"fit share must be in (0, 1), got {fit_share:g}")
    return min(int(math.floor(m * fit_share + 1e-9)), max(m - 1, 0))


def split_data(inp: StudyInput, cal_idx: np.ndarray, z_test: np.ndarray,
               fit_share: float | None = None) -> SplitData:
    """Fit part = the first :func:`fit_size` calibration items (permutation order), conformal part = the rest (see
    ``base``)."""
    k = fit_size(len(cal_idx), fit_share)
    fit, conf = cal_idx[:k], cal_idx[k:]
    return SplitData(inp.z[fit], inp.y[fit], inp.z[conf], inp.y[conf], z_test, np.asarray(inp.scale, dtype=float),
                     inp.grid.values[0], inp.grid.values[-1], inp.grid.step if inp.grid.name != "list" else None)


def run_method(name: str, d: SplitData, alpha: float, seed: int,
               grid_values: Sequence[float] | None = None) -> Bounds:
    """One method on one split; too few fit points for a learned method gives the full scale with the reason.
    ``grid_values``: ordinal methods classify on these label-grid values (``ordinal.on_label_grid``)."""
    m = d.z_test.shape[0]
    if name in ORDINAL and grid_values is not None and len(grid_values) != len(d.scale):
        d = on_label_grid(d, grid_values)
    if name not in ORDINAL and d.z_fit.shape[0] < MIN_FIT:
        return Bounds(np.full(m, d.lo), np.full(m, d.hi),
                      f"{counted(int(d.z_fit.shape[0]), 'fit point')} < {MIN_FIT}: the model cannot be learned; "
                      "full scale")
    return METHODS[name](d, alpha, seed)


def _covered(y: np.ndarray, lo: np.ndarray, up: np.ndarray) -> np.ndarray:
    return (lo <= y + 1e-9) & (y <= up + 1e-9)


def _point(pred: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float]:
    from scipy.stats import kendalltau, spearmanr

    ok = np.isfinite(pred)
    if ok.sum() < 2:
        return (math.nan,) * 4
    p, t = pred[ok], y[ok]
    err = p - t
    if np.ptp(p) == 0 or np.ptp(t) == 0:
        rho = tau = math.nan
    else:
        rho = float(spearmanr(p, t).statistic)
        tau = float(kendalltau(p, t).statistic)
    return float(np.mean(err ** 2)), float(np.mean(np.abs(err))), rho, tau


def _mean_metrics(rows: list[tuple[float, float, float, float]]) -> PointMetrics:
    a = np.array(rows, dtype=float)
    with np.errstate(all="ignore"):
        means = [float(np.nanmean(a[:, j])) if np.isfinite(a[:, j]).any() else math.nan for j in range(4)]
    return PointMetrics(*means)


def _sd(x: np.ndarray) -> float:
    return float(x.std(ddof=1)) if x.size > 1 else 0.0


def _summary(cov: list[float], wid: list[float], k_cov: list[int], n_test: int, alpha: float) -> Summary:
    from scipy.stats import binomtest

    c, w = np.array(cov), np.array(wid)
    pvals = [binomtest(k, n_test, 1 - alpha).pvalue for k in k_cov]
    return Summary(float(c.mean()), _sd(c), float(w.mean()), _sd(w), float(np.mean(c >= 1 - alpha - 1e-12)),
                   float(np.median(pvals)))


def _one_seed(inp: StudyInput, methods: Sequence[str], alpha: float, seed: int, lam: float,
              keep_items: bool, ordinal_grid: bool = False, fit_share: float | None = None) -> dict[str, Any]:
    """Every method on split ``seed``: coverage, width, covered count, midpoint metrics, seconds, reason, items."""
    test, cal = split_indices(inp.n, seed)
    yt = inp.y[test]
    out: dict[str, Any] = {"n_test": len(test), "raw": _point(inp.raw[test], yt),
                           "weighted": _point(weighted_average(inp.z[test], inp.scale), yt), "m": {}}
    d = split_data(inp, cal, inp.z[test], fit_share)
    for m in methods:
        t0 = time.perf_counter()
        b = run_method(m, d, alpha, seed, inp.grid.values if ordinal_grid else None)
        sec = time.perf_counter() - t0
        lo, up = adjust(b.lower, b.upper, inp.grid, 0.0)        # clipped to the label range
        alo, aup = adjust(b.lower, b.upper, inp.grid, lam)
        c, ac = _covered(yt, lo, up), _covered(yt, alo, aup)
        rec = {"cov": float(c.mean()), "wid": float(np.mean(up - lo)), "k": int(c.sum()),
               "acov": float(ac.mean()), "awid": float(np.mean(aup - alo)), "ak": int(ac.sum()),
               "mid": _point((lo + up) / 2, yt), "amid": _point((alo + aup) / 2, yt), "sec": sec,
               "why": b.reason, "never": not bool(np.any(c & ~ac)), "items": (),
               "full": float(np.mean((alo <= inp.grid.values[0] + 1e-9) & (aup >= inp.grid.values[-1] - 1e-9)))}
        if keep_items:
            rec["items"] = tuple(ItemInterval(inp.ids[i], float(inp.y[i]), float(lo[j]), float(up[j]),
                                              float(alo[j]), float(aup[j])) for j, i in enumerate(test))
        out["m"][m] = rec
    return out


def _one_seed_limited(args: tuple[Any, ...]) -> dict[str, Any]:
    with single_thread():
        return _one_seed(*args)


Progress = Callable[[int, int], None]


def run_study(inp: StudyInput, *, methods: Sequence[str], alpha: float = 0.1, seeds: Sequence[int] = range(1, 31),
              lam: float | None = None, curve_methods: Sequence[str] | None = None,
              labels: Mapping[str, str] | None = None, workers: int = 1,
              progress: Progress | None = None, ordinal_grid: bool = False,
              fit_share: float | None = None) -> IntervalStudy:
    """The whole comparison. ``lam`` = adjustment threshold (None = full, half the grid step; 0 = none);
    ``ordinal_grid``: ordinal methods on the label grid's classes; ``fit_share``: the share of the calibration half
    that trains the learned methods (module docstring).

    Seeds run in ``workers`` processes (1 = in this process); BLAS is limited to one thread per worker (the
    matrices are small, and oversubscribed BLAS threads made LVD ten times slower on a busy 2-core machine).
    ``progress(done, total)`` is called after each seed of the comparison and then after each seed of the
    calibration-size curve (``total`` = seeds, or twice the seeds with a curve); an exception it raises (e.g. a
    cancelled TUI worker's) ends the study there.
    """
    lam_v = inp.grid.full_lambda if lam is None else float(lam)
    seeds = tuple(int(s) for s in seeds)
    methods = tuple(methods)
    if not seeds:
        raise ValueError("at least one seed is needed")
    if curve_methods is None:
        curve_methods = ("r2ccp",) if "r2ccp" in methods else tuple(methods[:1])
    total = len(seeds) * (2 if curve_methods else 1)
    jobs = [(inp, methods, alpha, s, lam_v, k == 0, ordinal_grid, fit_share) for k, s in enumerate(seeds)]
    per_seed: list[dict[str, Any]] = []
    if workers > 1 and len(seeds) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            for rec in pool.map(_one_seed_limited, jobs):
                per_seed.append(rec)
                if progress is not None:
                    progress(len(per_seed), total)
    else:
        for j in jobs:
            per_seed.append(_one_seed_limited(j))
            if progress is not None:
                progress(len(per_seed), total)
    n_test = per_seed[0]["n_test"]
    results = []
    for m in methods:
        rs = [p["m"][m] for p in per_seed]
        why = tuple(dict.fromkeys(r["why"] for r in rs if r["why"]))
        results.append(MethodResult(
            m, family(m), _summary([r["cov"] for r in rs], [r["wid"] for r in rs], [r["k"] for r in rs], n_test,
                                   alpha),
            _summary([r["acov"] for r in rs], [r["awid"] for r in rs], [r["ak"] for r in rs], n_test, alpha),
            all(r["never"] for r in rs), _mean_metrics([r["mid"] for r in rs]),
            _mean_metrics([r["amid"] for r in rs]), float(np.mean([r["sec"] for r in rs])), why, rs[0]["items"],
            float(np.mean([r["full"] for r in rs])), (inp.grid.values[0], inp.grid.values[-1])))
    raw_pm = _mean_metrics([p["raw"] for p in per_seed]) if np.isfinite(inp.raw).sum() >= 2 else None
    curve: tuple[CurvePoint, ...] = ()
    if curve_methods:
        step = None if progress is None else (lambda k, _n: progress(len(seeds) + k, total))
        with single_thread():
            curve = calibration_curve(inp, methods=curve_methods, alpha=alpha, seeds=seeds, progress=step,
                                      ordinal_grid=ordinal_grid, fit_share=fit_share)
    return IntervalStudy(inp.n, inp.dropped, alpha, seeds, inp.scale, inp.grid, lam_v, tuple(results), raw_pm,
                         _mean_metrics([p["weighted"] for p in per_seed]), curve, (), dict(labels or {}),
                         ordinal_grid, fit_share)


def calibration_curve(inp: StudyInput, *, methods: Sequence[str], alpha: float, seeds: Sequence[int],
                      fractions: Sequence[float] = CURVE_FRACTIONS,
                      progress: Progress | None = None, ordinal_grid: bool = False,
                      fit_share: float | None = None) -> tuple[CurvePoint, ...]:
    """Coverage and width (before adjustment) using the first ⌈f·m⌉ items of each split's calibration half.

    Seeds are the outer loop (each run depends only on its method, fraction and seed, so the order changes no
    number): ``progress(k, len(seeds))`` is called after the k-th seed."""
    cells: dict[tuple[str, float], tuple[list[float], list[float], list[int]]] = {
        (m, float(f)): ([], [], []) for m in methods for f in fractions}
    for k, seed in enumerate(seeds, 1):
        test, cal = split_indices(inp.n, seed)
        for (m, f), (cov, wid, n_cal) in cells.items():
            sub = cal[: max(1, math.ceil(f * len(cal)))]
            n_cal.append(len(sub))
            b = run_method(m, split_data(inp, sub, inp.z[test], fit_share), alpha, seed,
                           inp.grid.values if ordinal_grid else None)
            lo, up = adjust(b.lower, b.upper, inp.grid, 0.0)
            cov.append(float(_covered(inp.y[test], lo, up).mean()))
            wid.append(float(np.mean(up - lo)))
        if progress is not None:
            progress(k, len(seeds))
    out = []
    for (m, f), (cov, wid, n_cal) in cells.items():
        c, w = np.array(cov), np.array(wid)
        out.append(CurvePoint(m, f, n_cal[-1] if n_cal else 0, float(c.mean()), _sd(c), float(w.mean()), _sd(w)))
    return tuple(out)


def shift_study(a: StudyInput, b: StudyInput, *, methods: Sequence[str], alpha: float = 0.1,
                seeds: Sequence[int] = range(1, 31), lam: float | None = None,
                ordinal_grid: bool = False, fit_share: float | None = None) -> tuple[ShiftResult, ...]:
    """Calibrate on every item of A (fit/conformal parts from each seed's permutation of A), test on every item of B.

    A and B must share the scale; B's labels are adjusted on A's grid (coverage is counted on B's labels).
    """
    if tuple(a.scale) != tuple(b.scale):
        raise DataError(f"calibration scale {a.scale} differs from test scale {b.scale}")
    lam_v = a.grid.full_lambda if lam is None else float(lam)
    with single_thread():
        return _shift(a, b, methods, alpha, seeds, lam_v, ordinal_grid, fit_share)


def _shift(a: StudyInput, b: StudyInput, methods: Sequence[str], alpha: float, seeds: Sequence[int],
           lam_v: float, ordinal_grid: bool = False, fit_share: float | None = None) -> tuple[ShiftResult, ...]:
    out = []
    for m in methods:
        cov, wid, acov, awid = [], [], [], []
        for seed in seeds:
            perm = np.random.RandomState(seed).permutation(a.n)
            bnd = run_method(m, split_data(a, perm, b.z, fit_share), alpha, seed,
                             a.grid.values if ordinal_grid else None)
            lo, up = adjust(bnd.lower, bnd.upper, a.grid, 0.0)
            alo, aup = adjust(bnd.lower, bnd.upper, a.grid, lam_v)
            cov.append(float(_covered(b.y, lo, up).mean()))
            wid.append(float(np.mean(up - lo)))
            acov.append(float(_covered(b.y, alo, aup).mean()))
            awid.append(float(np.mean(aup - alo)))
        c, w = np.array(cov), np.array(wid)
        out.append(ShiftResult(m, float(c.mean()), _sd(c), float(w.mean()),
                               _sd(w), float(np.mean(acov)),
                               float(np.mean(awid))))
    return tuple(out)
