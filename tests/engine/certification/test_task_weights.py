"""The task file's optional ``weight`` (likelihood ratio p_test(x)/p_cal(x), weighted conformal): loading, the run's
copy of the items, and one-line errors naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.engine.certification.tasks import TaskError, dump_items, load_task


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_weights_load_from_jsonl_and_csv_and_survive_the_runs_copy(tmp_path: Path) -> None:
    task = load_task(str(_jsonl(tmp_path / "t.jsonl", [
        {"id": 1, "question": "q1", "answer": "a", "weight": 0.5},
        {"id": 2, "question": "q2", "answer": "b", "weight": 3},
        {"id": 3, "question": "q3", "answer": "c", "weight": 0},
    ])))
    assert [it.weight for it in task.items] == [0.5, 3.0, 0.0]
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(dump_items(task.items))
    assert load_task(str(copy)).items == task.items
    csv = tmp_path / "t.csv"
    csv.write_text("id,question,answer,weight\n1,q1,a,0.25\n2,q2,b, 4e0 \n", encoding="utf-8")
    assert [it.weight for it in load_task(str(csv)).items] == [0.25, 4.0]
    plain = load_task(str(_jsonl(tmp_path / "p.jsonl", [{"id": 1, "question": "q"}, {"id": 2, "question": "r"}])))
    assert [it.weight for it in plain.items] == [None, None] and b"weight" not in dump_items(plain.items)


@pytest.mark.parametrize(("rows", "line", "why"), [
    ([{"id": 1, "question": "q", "weight": -1}], 1, "must be ≥ 0"),
    ([{"id": 1, "question": "q", "weight": "heavy"}], 1, "expected a number"),
    ([{"id": 1, "question": "q", "weight": True}], 1, "expected a number, got bool"),
    ([{"id": 1, "question": "q", "weight": [1]}], 1, "expected a number, got list"),
    ([{"id": 1, "question": "q", "weight": 1}, {"id": 2, "question": "r"}], 2, "missing (line 1 has a weight"),
    ([{"id": 1, "question": "q"}, {"id": 2, "question": "r", "weight": 2}], 2, "given, but line 1 has none"),
])
def test_bad_weights_are_one_line_errors(tmp_path: Path, rows: list[dict], line: int, why: str) -> None:
    path = _jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(TaskError) as err:
        load_task(str(path))
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{path}:{line}: weight: ") and why in msg


@pytest.mark.parametrize("text", ["NaN", "Infinity", "1e999", "-Infinity"])
def test_non_finite_weights_are_refused_in_json_and_csv(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": 1, "question": "q", "weight": ' + text + "}\n", encoding="utf-8")
    with pytest.raises(TaskError, match=r"bad\.jsonl:1: weight: must be"):
        load_task(str(path))
    csv = tmp_path / "bad.csv"
    csv.write_text(f"id,question,weight\n1,q,{text}\n", encoding="utf-8")
    with pytest.raises(TaskError, match=r"bad\.csv:2: weight: must be"):
        load_task(str(csv))
