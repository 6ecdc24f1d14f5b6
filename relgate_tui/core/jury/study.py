"""The jury-on-demand study: splits, predictors, tuning, baselines, statistics (paper 003 §3.5, §4.3).

See :mod:`relgate_tui.core.jury.protocol` for the definitions this module applies.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgate_tui.core.jury.features import TOPICS, EmbeddingFeatures, TfidfCorpus, group_of, tfidf_embeddings
from relgate_tui.core.jury.groups import group_splits, item_splits
from relgate_tui.core.jury.predictors import BinCache, fit_predictor, reliability_labels, roc_auc
from relgate_tui.core.jury.protocol import (
    BASELINES,
    Comparison,
    JuryData,
    JuryStudy,
    MethodResult,
    _mean_available,
    corrected_t_greater,
    jury_scores,
    kendall,
    normalise,
    paired_delta,
    wilcoxon_greater,
)
from relgate_tui.errors import DataError

MAX_ASSIGNMENTS = 64


class JuryInputError(DataError):
    """A pool the study cannot run on (one line saying why)."""


def default_tolerances(judge_norm: np.ndarray, human_norm: np.ndarray) -> tuple[float, ...]:
    """The per-task tolerance set (§4.3: {0, 0.25} on 1–5 scales, {0} on 3-point ones): with a judge grid step h,
    {0, h} when the grid has at least 5 points, else {0}; when the human scores are not on the judge grid (means of
    raters), {h/2, h} — an exact match is then impossible."""
    vals = np.unique(judge_norm[np.isfinite(judge_norm)])
    step = float(np.min(np.diff(vals))) if vals.size > 1 else 1.0
    on_grid = np.all(np.abs(np.round(human_norm[np.isfinite(human_norm)] / step) * step
                            - human_norm[np.isfinite(human_norm)]) < 1e-6)
    if not on_grid:
        return (step / 2, step)
    return (0.0, step) if vals.size >= 5 else (0.0,)


def validate(data: JuryData) -> None:
    n, j = data.scores.shape
    if j < 2:
        raise JuryInputError(f"{j} judge: a jury needs a pool of at least two judges")
    ok = np.isfinite(data.human)
    if not ok.any():
        raise JuryInputError("no human scores: reliability labels need them")
    if np.unique(data.human[ok]).size < 2:
        raise JuryInputError(f"every human score is {data.human[ok][0]:g}: Kendall's τ is undefined on constant "
                             "human scores")
    if n < 50:
        raise JuryInputError(f"{n} items: a 60/20/20 protocol needs at least 50")
    empty = [data.judges[c] for c in range(j) if np.all(np.isnan(data.scores[:, c]))]
    if empty:
        raise JuryInputError(f"judge {empty[0]!r} has no scores")
    if data.groups is not None:
        if len(data.groups) != n:
            raise JuryInputError(f"{len(data.groups)} group labels for {n} items")
        g = len(set(data.groups))
        if g < 10:
            raise JuryInputError(f"{g} groups ({data.group_by}): a grouped 60/20/20 protocol needs at least 10 "
                                 "(split by item, or group by a finer field)")


def splits_of(data: JuryData, count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The protocol's (train, validation, test) index parts: grouped when ``data.groups`` is set (:mod:`.groups`)."""
    n = data.scores.shape[0]
    return item_splits(n, count, seed) if data.groups is None else group_splits(data.groups, count, seed)


def _tune(r_all: np.ndarray, s: np.ndarray, h: np.ndarray, ks: Sequence[int],
          n_tol: int) -> tuple[int, tuple[int, ...], float]:
    """(K, tolerance index per judge, validation τ) maximising validation Kendall τ. ``r_all`` is items × judges ×
    tolerances."""
    j = s.shape[1]

    def score(assign: tuple[int, ...]) -> tuple[float, int]:
        r = r_all[:, np.arange(j), list(assign)]
        ys = jury_scores(r, s, ks)
        best = max(ks, key=lambda k: (kendall(ys[k], h), -k))
        return kendall(ys[best], h), best

    if n_tol ** j <= MAX_ASSIGNMENTS:
        best_assign, best_tau, best_k = (0,) * j, -2.0, ks[0]
        for a in itertools.product(range(n_tol), repeat=j):
            t, k = score(a)
            if t > best_tau:
                best_assign, best_tau, best_k = a, t, k
        return best_k, best_assign, best_tau
    results = []
    for start in (0, n_tol - 1):  # coordinate ascent from both ends
        assign = [start] * j
        best_tau, best_k = score(tuple(assign))
        improved = True
        while improved:
            improved = False
            for c in range(j):
                for t in range(n_tol):
                    if t == assign[c]:
                        continue
                    trial = assign.copy()
                    trial[c] = t
                    tau, k = score(tuple(trial))
                    if tau > best_tau + 1e-12:
                        assign, best_tau, best_k, improved = trial, tau, k, True
        results.append((best_tau, best_k, tuple(assign)))
    tau, k, assign_t = max(results, key=lambda r: r[0])
    return k, assign_t, tau


def run_jury_study(
    data: JuryData,
    *,
    texts: Mapping[str, Sequence[str | None]] | None = None,
    embeddings: Mapping[str, tuple[np.ndarray, np.ndarray | None]] | None = None,
    splits: int = 10,
    seed: int = 0,
    tolerances: Sequence[float] | None = None,
    judge_scale: tuple[float, float] | None = None,
    n_search: int = 3,
    claim_alpha: float = 0.05,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
) -> JuryStudy:
    """Run the whole protocol. ``texts`` (component → texts) feeds the TF-IDF fallback embeddings when no
    ``embeddings`` (component → (item embeddings, topic anchor embeddings)) are given."""
    validate(data)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # many small fits and SVDs: one thread each is fastest (see predictors)
        return _run(data, texts, embeddings, splits, seed, tolerances, judge_scale, n_search, claim_alpha, progress,
                    workers)


def _run(data: JuryData, texts: Mapping[str, Sequence[str | None]] | None,
         embeddings: Mapping[str, tuple[np.ndarray, np.ndarray | None]] | None, splits: int, seed: int,
         tolerances: Sequence[float] | None, judge_scale: tuple[float, float] | None, n_search: int,
         claim_alpha: float, progress: Callable[[int, int], None] | None, workers: int = 1) -> JuryStudy:
    n, nj = data.scores.shape
    lo, hi = judge_scale or (float(np.nanmin(data.scores)), float(np.nanmax(data.scores)))
    s_norm = normalise(data.scores, lo, hi)
    h_norm = np.full(n, np.nan)
    sources = data.sources or ("all",) * n
    for src in dict.fromkeys(sources):
        idx = np.array([i for i, x in enumerate(sources) if x == src])
        hv = data.human[idx]
        h_norm[idx] = normalise(hv, float(np.nanmin(hv)), float(np.nanmax(hv)))
    tols = tuple(tolerances) if tolerances is not None else default_tolerances(s_norm, h_norm)
    ks = list(range(2, max(2, min(8, nj - 1)) + 1))
    groups = list(dict.fromkeys(group_of(f) for f in data.feature_names))
    if embeddings or texts:
        groups.append("embedding")
    if data.judge_features is not None:
        groups.append("logprob")
    method_taus: dict[str, list[float]] = {m: [] for m in ("jury", *BASELINES, *(f"judge:{j}" for j in data.judges))}
    method_ns: dict[str, list[int]] = {m: [] for m in method_taus}
    per_source: dict[str, dict[str, list[float]]] = {m: {} for m in method_taus}
    k_chosen: list[int] = []
    tol_chosen: list[tuple[float, ...]] = []
    aucs: dict[str, list[float | None]] = {j: [] for j in data.judges}
    examples: list[dict] = []
    corpora = ({comp: TfidfCorpus([t or "" for t in tx], TOPICS) for comp, tx in texts.items() if any(tx)}
               if texts and not embeddings else None)  # tokenised once, not per split
    ctx = _SplitContext(data, corpora, embeddings, s_norm, h_norm, tols, tuple(ks), tuple(sources), n_search, seed)
    for split_no, out in enumerate(_outcomes(ctx, splits_of(data, splits, seed), workers, progress)):
        k_chosen.append(out["k"])
        tol_chosen.append(out["tolerances"])
        for name, auc in out["aucs"].items():
            aucs[name].append(auc)
        for name, tau in out["taus"].items():
            method_taus[name].append(tau)
            method_ns[name].append(out["ns"][name])
            for src, t in out["per_source"][name].items():
                per_source[name].setdefault(src, []).append(t)
        if split_no == 0:
            examples = out["examples"]
    methods = {m: MethodResult(m, tuple(method_taus[m]), tuple(method_ns[m]),
                               {src: tuple(v) for src, v in per_source[m].items()} if len(per_source[m]) > 1 else {})
               for m in method_taus}
    comparisons = tuple(Comparison(b, wilcoxon_greater(method_taus["jury"], method_taus[b]),
                                   paired_delta(method_taus["jury"], method_taus[b]),
                                   corrected_t_greater(method_taus["jury"], method_taus[b]))
                        for b in method_taus if b != "jury")
    auc_mean = {j: (float(np.mean([a for a in v if a is not None])) if any(a is not None for a in v) else None)
                for j, v in aucs.items()}
    return JuryStudy(judges=data.judges, n_items=n, splits=splits, seed=seed, methods=methods,
                     k_per_split=tuple(k_chosen), tolerance_per_split=tuple(tol_chosen), auc_per_judge=auc_mean,
                     comparisons=comparisons, feature_groups=tuple(groups), example_items=tuple(examples),
                     claim_alpha=claim_alpha, group_by=data.group_by if data.groups is not None else None,
                     n_groups=len(set(data.groups)) if data.groups is not None else None,
                     warnings=data.warnings)


@dataclass(frozen=True)
class _SplitContext:
    """Everything one split needs (picklable: splits may run in worker processes)."""

    data: JuryData
    corpora: Mapping[str, TfidfCorpus] | None   # the texts of the TF-IDF fallback (when no embeddings)
    embeddings: Mapping[str, tuple[np.ndarray, np.ndarray | None]] | None
    s_norm: np.ndarray
    h_norm: np.ndarray
    tols: tuple[float, ...]
    ks: tuple[int, ...]
    sources: tuple[str, ...]
    n_search: int
    seed: int


def _outcomes(ctx: _SplitContext, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], workers: int,
              progress: Callable[[int, int], None] | None) -> list[dict[str, Any]]:
    """Every split's outcome, in split order: one after the other, or on ``workers`` processes (each split is seeded
    on its own, so the result is the same). ``progress`` is called as splits finish; an exception it raises stops."""
    if workers <= 1 or len(parts) < 2:
        out = []
        for i, part in enumerate(parts):
            out.append(_one_split(ctx, i, *part))
            if progress is not None:
                progress(i + 1, len(parts))
        return out
    from concurrent.futures import ProcessPoolExecutor, as_completed

    results: dict[int, dict[str, Any]] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_one_split_limited, ctx, i, *part): i for i, part in enumerate(parts)}
        try:
            for done, fut in enumerate(as_completed(futures), start=1):
                results[futures[fut]] = fut.result()
                if progress is not None:
                    progress(done, len(parts))
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
    return [results[i] for i in range(len(parts))]


def _one_split_limited(ctx: _SplitContext, split_no: int, tr: np.ndarray, va: np.ndarray,
                       te: np.ndarray) -> dict[str, Any]:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _one_split(ctx, split_no, tr, va, te)


def _one_split(ctx: _SplitContext, split_no: int, tr: np.ndarray, va: np.ndarray, te: np.ndarray) -> dict[str, Any]:
    """Train the predictors on ``tr``, tune K and the tolerances on ``va``, score every method on ``te``."""
    data, s_norm, h_norm, tols, sources = ctx.data, ctx.s_norm, ctx.h_norm, ctx.tols, ctx.sources
    n, nj = data.scores.shape
    x = data.features
    extra = _embedding_block(ctx.corpora, ctx.embeddings, tr)
    if extra is not None:
        x = np.hstack([x, extra])
    r_all = np.zeros((n, nj, len(tols)))
    bins = BinCache()
    for c in range(nj):
        xc = x if data.judge_features is None else np.hstack([x, data.judge_features[:, c, :]])
        for t_i, tol in enumerate(tols):
            y = reliability_labels(s_norm[:, c], h_norm, tol)
            pred = fit_predictor(c, tol, xc[tr], y[tr], xc[va], y[va], n_search=ctx.n_search,
                                 seed=ctx.seed * 1000 + split_no * 97 + c * 7 + t_i, bins=bins)
            r_all[:, c, t_i] = pred.predict(xc)
    k, assign, _ = _tune(r_all[va], s_norm[va], h_norm[va], list(ctx.ks), len(tols))
    r = r_all[:, np.arange(nj), list(assign)]
    aucs = {data.judges[c]: roc_auc(reliability_labels(s_norm[te, c], h_norm[te], tols[assign[c]]), r[te, c])
            for c in range(nj)}
    preds = {"jury": jury_scores(r[te], s_norm[te], [k])[k]}
    preds |= _baselines(s_norm, h_norm, tr, va, te)
    for c, name in enumerate(data.judges):
        preds[f"judge:{name}"] = s_norm[te, c]
    taus: dict[str, float] = {}
    ns: dict[str, int] = {}
    per_source: dict[str, dict[str, float]] = {}
    for name, yhat in preds.items():
        taus[name] = kendall(yhat, h_norm[te])
        ns[name] = int(np.sum(np.isfinite(yhat)))
        per_source[name] = {}
        for src in dict.fromkeys(sources[i] for i in te):
            sel = np.array([sources[i] == src for i in te])
            per_source[name][src] = kendall(yhat[sel], h_norm[te][sel])
    examples = _examples(data, te[:200], r[te[:200]], s_norm[te[:200]], k) if split_no == 0 else []
    return {"k": k, "tolerances": tuple(tols[a] for a in assign), "aucs": aucs, "taus": taus, "ns": ns,
            "per_source": per_source, "examples": examples}


def _embedding_block(corpora: Mapping[str, TfidfCorpus] | None,
                     embeddings: Mapping[str, tuple[np.ndarray, np.ndarray | None]] | None,
                     train: np.ndarray) -> np.ndarray | None:
    blocks = []
    ef = EmbeddingFeatures()
    if embeddings:
        for comp, (emb, anchors) in embeddings.items():
            blocks.append(ef.fit_transform(np.asarray(emb, float), anchors, train, comp)[0])
    elif corpora:
        for comp, corpus in corpora.items():
            emb, anchors = tfidf_embeddings(corpus, train)
            blocks.append(ef.fit_transform(emb, anchors, train, comp)[0])
    return np.hstack(blocks) if blocks else None


def _baselines(s: np.ndarray, h: np.ndarray, tr: np.ndarray, va: np.ndarray, te: np.ndarray) -> dict[str, np.ndarray]:
    nj = s.shape[1]
    val_tau = np.array([kendall(s[va, c], h[va]) for c in range(nj)])
    out = {"average-all": _mean_available(s[te], np.ones(nj))}
    order = np.argsort(-val_tau, kind="stable")
    best_k, best = 2, -2.0
    for k in range(2, nj + 1):
        w = np.zeros(nj)
        w[order[:k]] = 1.0
        t = kendall(_mean_available(s[va], w), h[va])
        if t > best:
            best_k, best = k, t
    w = np.zeros(nj)
    w[order[:best_k]] = 1.0
    out["average-top-k"] = _mean_available(s[te], w)
    means = np.nanmean(s[tr], axis=0)
    filled = np.where(np.isnan(s), means[None, :], s)
    ok = np.isfinite(h[tr])
    coef, *_ = np.linalg.lstsq(filled[tr][ok], h[tr][ok], rcond=None)
    out["weighted-regression"] = filled[te] @ coef
    soft = np.exp(val_tau - val_tau.max())
    out["weighted-tau"] = _mean_available(s[te], soft / soft.sum())
    return out


def _examples(data: JuryData, idx: np.ndarray, r: np.ndarray, s: np.ndarray, k: int) -> list[dict]:
    """Why each item's jury sat: its members, their predicted reliabilities, weights and scores."""
    out = []
    yhat = jury_scores(r, s, [k])[k]
    for row, i in enumerate(idx):
        rr = np.where(np.isnan(s[row]), -np.inf, r[row])
        members = [int(c) for c in np.argsort(-rr, kind="stable")[:k] if np.isfinite(rr[c])]
        total = sum(r[row, c] for c in members) or 1.0
        out.append({"id": data.ids[i], "human": float(data.human[i]), "score": float(yhat[row]),
                    "jury": [{"judge": data.judges[c], "reliability": float(r[row, c]),
                              "weight": float(r[row, c] / total), "score": float(data.scores[i, c])}
                             for c in members],
                    "not_scored": [data.judges[c] for c in range(s.shape[1]) if np.isnan(s[row, c])]})
    return out
