"""A judge scores file as the answers of a direct audit: every analysis on outputs people already have, with zero
model calls (issue 9 item 5).

Each row of the file (:mod:`~relgate_tui.engine.judging.scores_file`: ``id``, ``judge``, ``criterion``, ``variant``,
``score``, ``human``, ``logprobs``…) is one judged item: one candidate of its own input, scored once by its judge under
its prompt variant. A row without ``score`` but with ``logprobs`` is scored by its most likely scale value (the
greedy reading of the rating token); a row with neither is unscored. The result has one study cell per judge ×
variant with the direct study (conformal Likert sets over the rows with a human rating) and each row's score-token
log-probabilities; ``calls`` are all zero.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from relgate_tui.engine.judging import direct
from relgate_tui.engine.judging.results import AuditResult, StudyCell
from relgate_tui.errors import UserError


def _score(row: Any) -> tuple[float, ...]:
    if row.score is not None:
        return (float(row.score),)
    if row.logprobs:
        return (float(max(row.logprobs.items(), key=lambda kv: (kv[1], -kv[0]))[0]),)
    return ()


def audit_from_scores(table: Any, *, criterion: str | None = None, alpha: float = 0.10, seed: int = 0) -> AuditResult:
    """The direct-study audit result of a loaded :class:`~relgate_tui.engine.judging.scores_file.ScoresTable`."""
    criteria = table.criteria()
    if criterion is None:
        if len(criteria) != 1:
            raise UserError(f"{table.path}: several criteria ({', '.join(criteria)}); choose one with --criterion")
        criterion = criteria[0]
    match = [c for c in criteria if c.casefold() == criterion.casefold()]
    if not match:
        raise UserError(f"{table.path}: no rows for criterion {criterion!r} (have: {', '.join(criteria)})")
    criterion = match[0]
    rows_c = table.select(criterion=criterion)
    ids = rows_c.ids()
    # the judge's scale: 1–5 unless its scores or log-probs go higher (paper 000's sets then give a note, no table)
    scale = max((5, *rows_c.scale(), *(math.ceil(r.score) for r in rows_c.rows if r.score is not None)))
    cells = []
    judges = rows_c.judges()
    for judge in judges:
        for variant in rows_c.variants():
            rows = rows_c.select(judge=judge, variant=variant).rows
            if not rows:
                continue
            scored = [direct.ScoredCandidate(r.id, r.id, _score(r), r.human,
                                             (dict(r.logprobs),) if r.logprobs is not None else ())
                      for r in rows]
            cells.append(StudyCell(judge, variant, None, direct.analyse(scored, alpha, seed, scale=scale)))
    if not cells:
        raise UserError(f"{table.path}: no rows to analyse")
    source = str(table.path)
    return AuditResult(
        data=Path(source).name, criterion=criterion, protocol="direct", reps=1, seed=seed, alpha=alpha,
        n_inputs=len(ids), candidates_per_input=tuple(1 for _ in ids),
        judges=tuple({"name": j, "model": j, "endpoint": None, "source": source} for j in judges),
        cells=tuple(cells), calls={j: {"made": 0, "cached": 0, "failed": 0} for j in judges})
