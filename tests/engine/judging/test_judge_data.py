"""Judge-audit data: the bundled HANNA set and one-line loader errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.engine.judging.data import AuditDataError, bundled_audit_sets, load_audit_set


def test_bundled_hanna_has_96_prompts_of_11_stories_with_six_criteria() -> None:
    hanna = load_audit_set("hanna")
    assert len(hanna.inputs) == 96
    assert all(len(i.candidates) == 11 for i in hanna.inputs)
    assert set(hanna.criteria) == {"Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"}
    scores = [c.human["Coherence"] for i in hanna.inputs for c in i.candidates]
    assert min(scores) >= 1.0 and max(scores) <= 5.0 and len(set(scores)) > 5
    assert hanna.criterion_name("coherence") == "Coherence"
    assert "makes sense" in hanna.criterion_description("Coherence")
    assert [s.name for s in bundled_audit_sets()] == ["hanna"]


def _write(tmp_path: Path, rows: list) -> Path:
    path = tmp_path / "audit.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


GOOD = {"id": "x1", "input": "prompt", "criteria": {"Quality": "overall"},
        "candidates": [{"id": "a", "text": "A", "human": {"Quality": 4}}, {"id": "b", "text": "B"}]}


def test_user_file_loads(tmp_path: Path) -> None:
    audit = load_audit_set(str(_write(tmp_path, [GOOD, {**GOOD, "id": "x2", "criteria": {}}])))
    assert [i.id for i in audit.inputs] == ["x1", "x2"] and audit.criteria == {"Quality": "overall"}
    assert audit.inputs[0].candidates[0].human == {"Quality": 4.0}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["{not json"], ":1: bad JSON"),
        ([{**GOOD, "id": None}], ":1: id: missing"),
        ([GOOD, GOOD], ":2: id: duplicate input id"),
        ([{**GOOD, "input": 3}], ":1: input: missing or not a string"),
        ([{**GOOD, "candidates": [{"id": "a", "text": "A"}]}], ":1: candidates: expected a list of at least 2"),
        ([{**GOOD, "candidates": [{"id": "a"}, {"id": "b", "text": "B"}]}], ":1: candidates[0]: expected an object"),
        ([{**GOOD, "candidates": [{"id": "a", "text": "A", "human": {"Q": "high"}}, {"id": "b", "text": "B"}]}],
         ":1: candidates[0].human.Q: expected a finite number"),
        ([{**GOOD, "candidates": [{"id": "a", "text": "A"}, {"id": "a", "text": "B"}]}], ":1: candidates: duplicate"),
        ([{**GOOD, "criteria": ["x"]}], ":1: criteria: expected an object"),
        ([], "empty audit data file"),
    ],
)
def test_bad_audit_files_give_one_line_errors(tmp_path: Path, rows: list, message: str) -> None:
    path = _write(tmp_path, rows)
    with pytest.raises(AuditDataError) as err:
        load_audit_set(str(path))
    assert message in str(err.value) and "\n" not in str(err.value) and "audit.jsonl" in str(err.value)


def test_unknown_set_and_criterion(tmp_path: Path) -> None:
    with pytest.raises(AuditDataError, match="no such audit data file"):
        load_audit_set(str(tmp_path / "missing.jsonl"))
    with pytest.raises(AuditDataError, match="unknown criterion"):
        load_audit_set("hanna").criterion_description("Fluency")
