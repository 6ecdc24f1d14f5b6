"""The Intervals header counts an audit answer that gave neither a score nor log-probs as dropped (issue 31 item 19):
100 answers, one unparseable without log-probs, read "99 items (1 dropped)", not "99 items (0 dropped)" — in the
study input the TUI view and ``judge-intervals --audit`` both build (``audit_input``), for that judge × variant only."""

from __future__ import annotations

import math

from relgate_tui.core.judge_intervals.study import run_study
from relgate_tui.engine.judging.as_scores import AuditScores
from relgate_tui.engine.judging.scores_file import table_from_records
from relgate_tui.engine.judging.studies import audit_input


def _logprobs(score: int) -> dict[str, float]:
    return {str(k): (math.log(0.7) if k == score else math.log(0.075)) for k in range(1, 6)}


def _audit(n_rows: int, dropped_by: dict[tuple[str, str], int]) -> AuditScores:
    records = [{"id": f"i{i:03d}", "judge": "j", "criterion": "c", "variant": v, "score": 1 + i % 5,
                "logprobs": _logprobs(1 + i % 5), "human": 1 + (i + (i % 3 == 0)) % 5}
               for v in ("original", "strict") for i in range(n_rows)]
    table = table_from_records(records, "audit a1")
    lost = sum(dropped_by.values())
    return AuditScores("a1", "/audits/a1", table, answers=len(records) + lost, unparseable=lost, dropped=lost,
                       missing=0, without_logprobs=0, scale=(1, 2, 3, 4, 5), dropped_by=dropped_by)


def test_an_answer_without_score_or_logprobs_is_counted_dropped_in_its_cell() -> None:
    audit = _audit(99, {("j", "original"): 1})
    inp, labels = audit_input(audit, judge="j", criterion=None, variant="original", grid="auto", alpha=0.1)
    assert (inp.n, inp.dropped) == (99, 1)
    study = run_study(inp, methods=["cqr"], seeds=[1], labels=labels)
    assert (study.n_items, study.dropped) == (99, 1)
    assert study.to_json()["dropped_rows"] == 1
    other, _ = audit_input(audit, judge="j", criterion=None, variant="strict", grid="auto", alpha=0.1)
    assert (other.n, other.dropped) == (99, 0)  # the other variant's answers all became rows
