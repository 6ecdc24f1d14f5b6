"""A stored audit as a judge scores table: papers 001–003 on a live or stored audit, zero model calls (issues 12–14).

:func:`audit_scores` reads a stored audit (:mod:`.store`: its directory, or its id under ``<data dir>/audits``) and
returns a :class:`~relgate_tui.engine.judging.scores_file.ScoresTable` with one row per (candidate, judge, criterion, prompt
variant) of its direct study, built from the stored answers only (no endpoint is contacted):

* ``id`` — ``"<input id>/<candidate id>"`` (e.g. ``P13/S7``);
* ``score`` — the parsed 1–K score of **repetition 0** (:func:`.direct.parse`, by the audit's prompt and scale). Papers 001 and 002 model one judge
  run per item, so the first repetition is used, never the mean of several (which would be a different, smoother
  predictor than the papers study); further repetitions are ignored;
* ``logprobs`` — the scale values' merged log-probabilities at the rating token of that same answer
  (:func:`.direct.locate`: the core's locator, the token carrying the parsed score), when the judge returned
  log-probs and the token was found;
* ``human`` — the data set's human score of the candidate under the audit's criterion; ``input`` / ``output`` — the
  input (prompt / source) and the candidate's text; ``source`` — the data set's name.

An unparseable answer has neither a ``score`` nor a rating token, so it gives no row at all. Both are counted in
:class:`AuditScores` (``unparseable``, ``dropped`` — equal since the one locator reads the parsed score), as are
planned answers that are not stored (``missing``: an unfinished audit, or requests that failed for good), and every
answer without a rating token with its one-line reason (``no_rating_token``: reason → count; the summary line names
the commonest). ``scale`` (1–K) and ``prompt`` are the audit's. A pairwise-only audit has no scores: a one-line
error.

The candidate texts and human scores come from the audit's data set, which must be unchanged since the audit (its
SHA-256 is in the manifest): otherwise the texts could belong to other answers, and that is refused in one line.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relgate_tui.engine.judging import direct, geval
from relgate_tui.engine.judging.ask import Answer, Key
from relgate_tui.engine.judging.scores_file import MAX_TEXT_CHARS, ScoresTable, table_from_records
from relgate_tui.engine.judging.store import AuditStore, audits_dir
from relgate_tui.errors import DataError


@dataclass(frozen=True)
class AuditScores:
    """The scores table of a stored audit and what was left out of it."""

    audit_id: str
    path: str
    table: ScoresTable
    answers: int       # stored repetition-0 direct answers read (of the planned judges × variants × candidates)
    unparseable: int   # of those, answers with no parseable score (no ``score`` in their row)
    dropped: int       # of the unparseable, those without log-probs either: no row
    missing: int       # planned repetition-0 direct answers not stored
    without_logprobs: int  # rows with no log-probs (paper 001 drops them)
    scale: tuple[int, ...] = direct.SCALE  # the audit's scale 1–K
    prompt: str = geval.DEFAULT_PROMPT
    no_rating_token: Mapping[str, int] = field(default_factory=dict)  # reason → answers without a rating token
    # (judge, variant) → (unparseable, answers read): what each judge × prompt variant gave no score for
    unparseable_by: Mapping[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    # (judge, variant) → answers with neither a score nor log-probs (no row): a study of that cell counts them dropped
    dropped_by: Mapping[tuple[str, str], int] = field(default_factory=dict)

    @property
    def records(self) -> Sequence[dict[str, Any]]:
        """The table's rows as scores-file records (``relgate audits --scores``), each built when read from the
        columnar table (issue 29: no second copy of every row as a dict)."""
        return _Records(self.table.rows)

    def scores_jsonl(self) -> bytes:
        """The table as a judge scores file (JSONL, one record per row; :func:`load_scores` reads it back)."""
        return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in self.records).encode()

    def summary(self) -> str:
        """One line for the user: rows, and every answer that did not become a full row."""
        n = sum(self.no_rating_token.values())
        top = sorted(self.no_rating_token.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        reasons = f": {'; '.join(f'{r} ({c})' for r, c in top)}" if top else ""
        return (f"audit {self.audit_id}: {len(self.table)} rows from {self.answers} stored answers (repetition 0); "
                f"{self.unparseable} unparseable ({self.dropped} of them without log-probs, no row); "
                f"{self.missing} planned answers not stored; {self.without_logprobs} rows without log-probs; "
                f"{n} items without a rating token{reasons}")

    def to_json(self) -> dict[str, Any]:
        return {"id": self.audit_id, "path": self.path, "rows": len(self.table), "answers": self.answers,
                "unparseable": self.unparseable, "dropped": self.dropped, "missing": self.missing,
                "rows_without_logprobs": self.without_logprobs, "prompt": self.prompt,
                "scale": [min(self.scale), max(self.scale)], "no_rating_token": dict(self.no_rating_token)}


class _Records(Sequence[dict[str, Any]]):
    """A table's rows as scores-file records, each built when read (:meth:`ScoreRow.to_record`)."""

    def __init__(self, rows: Sequence[Any]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, k: Any) -> Any:
        return [r.to_record() for r in self._rows[k]] if isinstance(k, slice) else self._rows[k].to_record()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (r.to_record() for r in self._rows)


def resolve_audit(id_or_path: str | os.PathLike[str]) -> Path:
    """An audit directory given as a path, or as an id under ``<data dir>/audits`` (one-line error otherwise)."""
    path = Path(id_or_path)
    if path.is_dir():
        return path
    text = str(id_or_path)
    if text and "/" not in text and os.sep not in text and text not in (".", ".."):
        candidate = audits_dir() / text
        if candidate.is_dir():
            return candidate
    raise DataError(f"{text[:200]}: no such stored audit (neither a directory nor an id in {audits_dir()}; "
                    "`relgate audits` lists them)")




def _clean_logprobs(lps: Mapping[int, float] | None) -> dict[str, float] | None:
    """Keep only valid log-probabilities (≤ 0 or −∞; tiny positive rounding clamped to 0)."""
    if not lps:
        return None
    out = {str(k): min(float(v), 0.0) for k, v in lps.items() if not math.isnan(v) and v <= 1e-6}
    return out or None


def audit_scores(id_or_path: str | os.PathLike[str]) -> AuditScores:
    """The stored audit's direct answers as a :class:`ScoresTable` (see the module docstring). Zero model calls."""
    from relgate_tui.engine.judging.audit import plan_audit

    path = resolve_audit(id_or_path)
    store = AuditStore.open(path)
    spec = store.spec()
    plan = plan_audit(spec)
    if spec.protocol not in ("direct", "both"):
        raise DataError(f"{path}: audit protocol is {spec.protocol}: the studies need direct (Likert) scores; run the "
                        "audit with --protocol direct or both")
    store.check_data(plan, "its texts and human scores no longer match the stored answers")
    first: dict[tuple[str, Key], Answer] = {}
    labels = {j.label for j in spec.judges}
    for a in store.answers():
        if a.rep == 0 and a.key[:1] == (direct.KIND,) and a.judge in labels:
            first[(a.judge, a.key)] = a
    items = {(inp.id, c.id): (inp, c) for inp in plan.inputs for c in inp.candidates}
    records: list[dict[str, Any]] = []
    answers = unparseable = dropped = missing = no_lp = 0
    reasons: Counter[str] = Counter()
    per_cell: dict[tuple[str, str], tuple[int, int]] = {}
    dropped_by: Counter[tuple[str, str]] = Counter()
    for judge in spec.judges:
        for req in plan.requests:
            if req.key[0] != direct.KIND:
                continue
            answer = first.get((judge.label, req.key))
            if answer is None:
                missing += 1
                continue
            answers += 1
            _, variant, input_id, cand_id = req.key
            inp, cand = items[(input_id, cand_id)]
            score = direct.parse(answer.text, spec.prompt, spec.scale)
            bad, seen = per_cell.get((judge.label, variant), (0, 0))
            per_cell[(judge.label, variant)] = (bad + (score is None), seen + 1)
            found = direct.locate(answer.logprobs, answer.text, spec.prompt, spec.scale)
            lps = _clean_logprobs(found.logprobs)
            if lps is None:
                reasons[found.reason or "no valid log-probabilities at the rating token"] += 1
            if score is None:
                unparseable += 1
                if lps is None:
                    dropped += 1
                    dropped_by[(judge.label, variant)] += 1
                    continue
            if lps is None:
                no_lp += 1
            rec: dict[str, Any] = {"id": f"{input_id}/{cand_id}", "judge": judge.label, "criterion": plan.criterion,
                                   "variant": variant, "input": inp.input[:MAX_TEXT_CHARS],
                                   "output": cand.text[:MAX_TEXT_CHARS], "source": plan.audit_set.name}
            if score is not None:
                rec["score"] = score
            if lps is not None:
                rec["logprobs"] = lps
            human = cand.human.get(plan.criterion)
            if human is not None:
                rec["human"] = human
            records.append(rec)
    if not records:
        raise DataError(f"{path}: no scored answers stored ({answers} answers, {unparseable} unparseable, "
                        f"{missing} planned answers missing)")
    table = table_from_records(records, f"audit {store.id}")
    del records  # the table holds the rows, column by column
    return AuditScores(store.id, str(path), table, answers, unparseable, dropped, missing, no_lp,
                       geval.scale_values(spec.scale), spec.prompt, dict(reasons), per_cell, dict(dropped_by))
