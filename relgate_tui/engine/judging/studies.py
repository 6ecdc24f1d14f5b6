"""The studies' inputs (papers 001–003), shared by the ``relgate judge intervals`` / ``judge irt`` / ``judge jury`` commands
and the TUI's study views (so neither front end imports the other); one-line ``UserError``/``DataError`` on bad input:

* intervals (paper 001) — :func:`load_input` (one judge × criterion × variant of a scores table → ``StudyInput``) and
  :func:`audit_input` (the same from a stored audit);
* IRT (paper 002) — :func:`build_study` (a scores table → ``IRTStudy``) and :func:`document` (its JSON document);
* jury (paper 003) — :func:`build_data` (a scores table → ``JuryData`` and the item texts) and
  :func:`check_pool_size` (the dense items × judges matrix is bounded before it is allocated).

Small samples say so (issue 24 §7): one line per claim a study's n or number of splits cannot support, printed by
``relgate judge irt`` / ``judge jury`` / ``judge intervals`` under their tables and shown by the TUI's study views.

* **IRT** (paper 002): C_V is the spread of the variants' within-category variances (Eqs. 2–3), a ratio of noisy
  variances — biased upward at small n. ``bench/irt_cv_bias.py`` fits a judge built with *one* GRM under three
  variants (a = 1.8, four thresholds, 10 seeds): mean C_V 0.21 at n = 150, 0.17 at n = 400 (such a judge fails the
  0.10 mark 80–90% of the time), 0.08 at n = 1,600 (20%). Below ``IRT_STABLE_N`` items the Phase 1 marks are indications;
  a fit that did not converge names the CLI's ``--prior map``.
* **Jury** (paper 003): the paper's one-sided exact Wilcoxon signed-rank test over S splits (shown beside the claim's
  corrected resampled t-test) cannot give p below 2^−S (every split favouring the jury): with S ≤ 4 it can never
  reach p < 0.05.
* **Intervals** (paper 001): an interval that is the whole scale always covers; when every interval of a method is
  full-scale its ✓ says nothing about the judge.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from relgate_tui.core.text import printable

__all__ = ["IRT_STABLE_N", "MAX_JUDGES", "MAX_POOL_CELLS", "NO_LOGPROBS_FIX", "audit_input", "build_data",
           "build_study", "check_pool_size", "document", "intervals_caveats", "irt_caveats", "jury_caveats",
           "load_input", "smallest_wilcoxon_p"]


IRT_STABLE_N = 1600  # n where a steady judge's C_V falls below the 0.10 mark on average (bench/irt_cv_bias.py)


def irt_caveats(study: Any, flipped: tuple[str, ...] = ()) -> list[str]:
    """Lines for an :class:`~relgate_tui.core.irt.study.IRTStudy`; ``flipped``: judges whose Phase 1 mark changes
    with the other prior (computed by the CLI, which can refit)."""
    out = []
    n = min((len(j.ids) for j in study.judges), default=0)
    if 0 < n < IRT_STABLE_N:
        out.append(f"small sample: n = {n} items — C_V is biased upward below ~{IRT_STABLE_N:,} (a judge with one "
                   "GRM under every variant measures ≈ 0.2 at n = 150–400), so read the Phase 1 marks as indications")
    if flipped:
        out.append(f"the Phase 1 mark of {', '.join(flipped)} flips with the other prior (--prior mml / map): "
                   "too few items to decide")
    if any(not j.converged for j in study.judges):
        out.append("a fit did not converge: rerun with `relgate judge irt --prior map` (the paper's priors "
                   "keep the discriminations finite)")
    return out


def smallest_wilcoxon_p(splits: int) -> float:
    """The smallest p the one-sided exact Wilcoxon signed-rank test can give over ``splits`` paired splits: every
    difference positive, probability 2^−S under the null."""
    return 0.5 ** max(0, int(splits))


def jury_caveats(study: Any) -> list[str]:
    """Lines for a :class:`~relgate_tui.core.jury.protocol.JuryStudy`."""
    p_min = smallest_wilcoxon_p(study.splits)
    if p_min >= study.claim_alpha:
        need = math.ceil(math.log2(1.0 / study.claim_alpha) + 1e-12)
        return [f"with {study.splits} splits the paper's exact Wilcoxon can never reach p < {study.claim_alpha:g} "
                f"(the smallest attainable p is {p_min:.3g}) — use at least {need} splits"]
    return []


def intervals_caveats(study: Any) -> list[str]:
    """Lines for an :class:`~relgate_tui.core.judge_intervals.study.IntervalStudy`."""
    full = max(study.scale) - min(study.scale)
    trivial = [m.name for m in study.methods
               if m.items and all(i.upper - i.lower >= full - 1e-9 for i in m.items)]
    if trivial:
        from relgate_tui.core.judge_intervals.base import INF_REASON

        inf = any(INF_REASON in getattr(m, "reasons", ()) for m in study.methods if m.name in trivial)
        why = ("too few calibration items for this α: q̂ = ∞" if inf else  # issue 33 §8: not always the calibration size
               "its calibrated width reaches the whole scale: the judge's scores do not narrow it at this α")
        return [f"every interval of {', '.join(trivial)} is the full scale {min(study.scale)}–{max(study.scale)}: "
                f"its coverage ✓ holds trivially and says nothing about the judge ({why})"]
    return []


# ---------------------------------------------------------------------------------------------- intervals (001)
def _pick(table: Any, what: str, given: str | None, values: list[str], default: str | None = None) -> str:
    from relgate_tui.errors import UserError

    if given is not None:
        if given not in values:
            raise UserError(f"--{what} {given!r} is not in the file (it has: {', '.join(values[:10])})")
        return given
    if len(values) == 1:
        return values[0]
    if default is not None and default in values:
        return default
    raise UserError(f"the file has {len(values)} {what}s ({', '.join(values[:10])}): choose one with --{what}")


def load_input(path: str, *, judge: str | None, criterion: str | None, variant: str | None, grid: Any,
               alpha: float, table: Any = None, scale: Any = None) -> tuple[Any, dict[str, str]]:
    """(StudyInput, labels) for one judge × criterion × variant of a scores file (or of ``table`` when given, e.g. a
    stored audit's, with ``path`` its label); ``scale``: the judge's scale values (None = those the log-probs
    name); one-line errors."""
    from relgate_tui.core.judge_intervals.study import prepare
    from relgate_tui.engine.judging.scores_file import load_scores

    if table is None:
        table = load_scores(path)
    if not table.rows:
        from relgate_tui.errors import DataError

        raise DataError(f"{path}: no rows")
    j = _pick(table, "judge", judge, table.judges())
    c = _pick(table, "criterion", criterion, table.select(judge=j).criteria())
    v = _pick(table, "variant", variant, table.select(judge=j, criterion=c).variants(), default="original")
    sub = table.select(judge=j, criterion=c, variant=v)
    rows = sub.rows
    inp = prepare([r.id for r in rows], [r.logprobs for r in rows], [r.human for r in rows], [r.score for r in rows],
                  grid=grid, alpha=alpha, scale=scale, where=str(path))
    return inp, {"judge": j, "criterion": c, "variant": v, "scores_file": str(path)}


NO_LOGPROBS_FIX = "run the audit with --top-logprobs 5 (or a judge's top_logprobs=5)"


def audit_input(audit: Any, *, judge: str | None, criterion: str | None, variant: str | None, grid: Any,
                alpha: float, no_logprobs_fix: str = NO_LOGPROBS_FIX) -> tuple[Any, dict[str, str]]:
    """(StudyInput, labels) of a stored audit (an ``AuditScores``), labelled with its id; a one-line
    ``UserError`` when it stored no score-token log-probabilities, ending with ``no_logprobs_fix`` (the CLI's
    option; the TUI names its setup field). Shared by the command and the TUI."""
    from relgate_tui.errors import UserError

    if not any(r.logprobs for r in audit.table.rows if judge in (None, r.judge)):
        raise UserError(f"audit {audit.audit_id}: no score-token log-probabilities stored (paper 001 needs "
                        f"them): {no_logprobs_fix}")
    inp, labels = load_input(f"audit {audit.audit_id}", judge=judge, criterion=criterion, variant=variant, grid=grid,
                             alpha=alpha, table=audit.table, scale=audit.scale)
    # answers with neither a score nor log-probs never became a row: the study counts them dropped (issue 31 item 19)
    lost = audit.dropped_by.get((labels["judge"], labels["variant"]), 0)
    if lost:
        inp = dataclasses.replace(inp, dropped=inp.dropped + lost)
    return inp, {k: v for k, v in labels.items() if k != "scores_file"} | {"audit": audit.audit_id}


# ---------------------------------------------------------------------------------------------------- IRT (002)
def build_study(table: Any, *, judge: str | None, criterion: str | None, prior: str, original: str,
                cv_ddof: int = 0) -> Any:
    """The IRT study of a scores table (raises a one-line ``UserError``/``DataError``)."""
    from relgate_tui.core.irt.study import run_irt_study
    from relgate_tui.errors import UserError

    criteria = table.criteria()
    if criterion is None:
        if len(criteria) > 1:
            raise UserError(f"{table.path}: several criteria ({', '.join(map(printable, criteria))}): "
                            "pick one with --criterion")
        criterion = criteria[0]
    elif criterion not in criteria:
        raise UserError(f"{table.path}: no rows for criterion {printable(criterion)!r}")
    rows = table.select(criterion=criterion)
    judges = rows.judges()
    if judge is not None:
        if judge not in judges:
            raise UserError(f"{table.path}: no rows for judge {printable(judge)!r} under {printable(criterion)!r}")
        judges = [judge]
    per_judge: dict[str, dict[str, dict[str, float]]] = {}
    human: dict[str, float] = {}
    raters: dict[str, tuple[float, ...]] = {}
    for r in rows.rows:
        if r.judge in judges and r.score is not None:
            per_judge.setdefault(r.judge, {}).setdefault(r.id, {})[r.variant] = r.score
        if r.human is not None:
            human.setdefault(r.id, r.human)
        if r.humans:
            raters.setdefault(r.id, r.humans)
    missing = [j for j in judges if j not in per_judge]
    if missing:
        raise UserError(f"{table.path}: judge {printable(missing[0])!r} has no scores (the IRT study needs parsed "
                        "scores)")
    return run_irt_study(criterion, per_judge, human=human or None, raters=raters or None, prior=prior,
                         original=original, cv_ddof=cv_ddof)


def document(study: Any, path: str | None, audit: Any = None, unscored_rows: int | None = None) -> dict[str, Any]:
    """The JSON document: one judge's fields at the top level, or ``judges`` keyed by name when there are several.
    From a stored audit, ``audit`` (its id and counts) replaces ``ratings_file``; ``unscored_rows`` counts the rows
    with a null score (no score for that judge, item and variant)."""
    from relgate_tui import __version__

    source = {"audit": audit.to_json()} if audit is not None else {"ratings_file": path}
    head = {"relgate_version": __version__, **source, "criterion": study.criterion}
    if unscored_rows is not None:
        head["unscored_rows"] = unscored_rows
    if len(study.judges) == 1:
        return head | study.judges[0].to_json()
    return head | {"judges": {j.judge: j.to_json() for j in study.judges}}


# --------------------------------------------------------------------------------------------------- jury (003)
def _entropy(logprobs: Any) -> float:
    """Entropy (nats) of the judge's score distribution, softmax of its score-token log-probabilities."""
    vals = [v for v in logprobs.values() if math.isfinite(v)]
    if not vals:
        return float("nan")
    top = max(vals)
    ps = [math.exp(v - top) for v in vals]
    z = sum(ps)
    return -sum(p / z * math.log(p / z) for p in ps if p > 0)


MAX_JUDGES = 64
"""Most judges in one pool (papers use 3–12; the study searches sub-juries of up to 8)."""
MAX_POOL_CELLS = 4_000_000
"""Most item × judge cells of a pool: the study works on the dense items × judges matrix, so its size is checked on
the counts of distinct items and judges before anything is allocated (a 3 MB file naming 40k items and 8k judges
would otherwise ask for gigabytes)."""


def check_pool_size(where: str, n_items: int, n_judges: int, n_scores: int) -> None:
    """One-line :class:`~relgate_tui.errors.DataError` for a pool whose dense matrix would exceed the bounds."""
    from relgate_tui.errors import DataError

    if n_judges > MAX_JUDGES:
        raise DataError(f"{where}: {n_judges:,} judges; the jury study reads pools of at most {MAX_JUDGES}")
    if n_items * n_judges > MAX_POOL_CELLS:
        raise DataError(f"{where}: {n_items:,} items × {n_judges} judges is {n_items * n_judges:,} cells for "
                        f"{n_scores:,} scores; the jury study reads pools of at most {MAX_POOL_CELLS:,} cells")


def _groups(table: Any, rows: list[Any], ids: list[str], inputs: list[str | None],
            group_by: str | None) -> tuple[str | None, list[str] | None, str | None]:
    """(grouping name, group per item, warning): ``group_by`` None = the default (input when there are input texts,
    else item-level); an item without the grouping value is its own group."""
    from relgate_tui.core.jury.groups import id_prefix, looks_grouped
    from relgate_tui.errors import UserError

    if group_by is None:
        group_by = "input" if any(inputs) else "none"
    if group_by == "none":
        seen = looks_grouped(ids)
        if seen is None:
            return None, None, None
        sep, g = seen
        example = next(i for i in ids if sep in i)
        return None, None, (f"item ids look grouped ({len(ids)} ids share {g} prefixes before {sep!r}, e.g. "
                            f"{printable(example, 30)!r}) but the splits are by item: items of one group can sit in "
                            "train and test; use --group-by id-prefix (or input, source, a field)")
    if group_by == "input":
        values: list[str | None] = list(inputs)
    elif group_by == "id-prefix":
        seen = looks_grouped(ids)
        if seen is None:
            raise UserError(f"{table.path}: --group-by id-prefix: the ids share no prefix before a separator")
        values = [id_prefix(i, seen[0]) for i in ids]
    else:
        pos = {i: k for k, i in enumerate(ids)}
        values = [None] * len(ids)
        for r in rows:
            v = r.source if group_by == "source" else r.fields.get(group_by)
            if v and values[pos[r.id]] is None:
                values[pos[r.id]] = v
        if not any(values):
            raise UserError(f"{table.path}: --group-by {printable(group_by, 40)}: no row has that field")
    groups = [f"v:{v}" if v else f"item:{i}" for v, i in zip(values, ids, strict=True)]
    return group_by, groups, None


def build_data(table: Any, criterion: str | None,
               group_by: str | None = None) -> tuple[Any, dict[str, list[str | None]]]:
    """The pool's :class:`JuryData` and texts from a scores table (raises a one-line ``UserError``); ``group_by``
    as ``--group-by`` (None: the default)."""
    import numpy as np

    from relgate_tui.core.jury.features import item_feature_matrix
    from relgate_tui.core.jury.protocol import JuryData
    from relgate_tui.errors import UserError

    criteria = table.criteria()
    if criterion is None:
        if len(criteria) > 1:
            raise UserError(f"{table.path}: several criteria ({', '.join(map(printable, criteria))}): pick one "
                            "with --criterion")
        criterion = criteria[0]
    elif criterion not in criteria:
        raise UserError(f"{table.path}: no rows for criterion {printable(criterion)!r}")
    variants = table.select(criterion=criterion).variants()
    variant = "original" if "original" in variants else variants[0]  # one prompt variant: the original if present
    rows = list(table.select(criterion=criterion, variant=variant).rows)
    ids = list(dict.fromkeys(r.id for r in rows))
    judges = list(dict.fromkeys(r.judge for r in rows))
    pos, col = {i: k for k, i in enumerate(ids)}, {j: k for k, j in enumerate(judges)}
    check_pool_size(str(table.path), len(ids), len(judges), len(rows))
    any_lp = any(r.logprobs for r in rows)
    scores = np.full((len(ids), len(judges)), np.nan)
    human = np.full(len(ids), np.nan)
    entropy = np.full((len(ids), len(judges), 1) if any_lp else (0, 0, 1), np.nan)  # only when there are log-probs
    inputs: list[str | None] = [None] * len(ids)
    outputs: list[str | None] = [None] * len(ids)
    sources: list[str] = ["all"] * len(ids)
    for r in rows:
        k, c = pos[r.id], col[r.judge]
        if r.score is not None:
            scores[k, c] = r.score
        if r.human is not None:
            human[k] = r.human
        if r.logprobs:
            entropy[k, c, 0] = _entropy(r.logprobs)
        inputs[k] = inputs[k] or r.input
        outputs[k] = outputs[k] or r.output
        if r.source:
            sources[k] = r.source
    if not any(outputs):
        raise UserError(f"{table.path}: no 'output' texts: the reliability predictors need the judged texts")
    missing_h = int(np.sum(np.isnan(human)))
    keep = ~np.isnan(human)
    grouping, groups, warning = _groups(table, rows, ids, inputs, group_by)
    x, names = item_feature_matrix(inputs, outputs)
    data = JuryData(ids=tuple(i for i, k in zip(ids, keep, strict=True) if k), judges=tuple(judges),
                    scores=scores[keep], human=human[keep], features=x[keep], feature_names=tuple(names),
                    sources=tuple(s for s, k in zip(sources, keep, strict=True) if k) if len(set(sources)) > 1
                    else None,
                    judge_features=np.nan_to_num(entropy[keep], nan=-1.0) if any_lp else None,
                    judge_feature_names=("logprob_entropy",) if any_lp else (),
                    groups=None if groups is None else tuple(g for g, k in zip(groups, keep, strict=True) if k),
                    group_by=grouping, warnings=(warning,) if warning else ())
    texts = {"input": [t for t, k in zip(inputs, keep, strict=True) if k],
             "output": [t for t, k in zip(outputs, keep, strict=True) if k]}
    if missing_h and not keep.any():
        raise UserError(f"{table.path}: no human scores: the study needs them")
    return data, texts
