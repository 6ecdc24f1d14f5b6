"""``relgate compare RUN_A RUN_B``: exit 0 not worse / 1 worse / 3 undecided / 2 error (issue 15 §2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.engine.runs.listing import list_runs

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


def _import(tmp_path: Path, name: str, model: str, n: int, wrong: set[int] = frozenset()) -> str:
    p = tmp_path / f"{name}.jsonl"
    with p.open("w", encoding="utf-8") as f:
        for i in range(n):
            answer = str(100 + i)
            given = "7" if i in wrong else answer
            f.write(json.dumps({"id": f"q{i}", "question": f"q{i}?", "answer": answer, "model": model,
                                "samples": [given, given, "5"]}) + "\n")
    before = {r.run_id for r in list_runs(tmp_path / "runs")}
    assert main(["import", "samples", str(p), "--run-dir", str(tmp_path / "runs"), "--quiet"]) == 0
    (new,) = {r.run_id for r in list_runs(tmp_path / "runs")} - before
    return new


def _compare(tmp_path: Path, a: str, b: str, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "cmp.json"
    rc = main(["compare", a, b, "--run-dir", str(tmp_path / "runs"), "--json", str(out), *extra])
    return rc, (json.loads(out.read_text(encoding="utf-8")) if out.exists() else {})


def test_b_equal_a_passes_with_enough_items(tmp_path: Path, capsys) -> None:
    a = _import(tmp_path, "a", "model-a", 100)
    b = _import(tmp_path, "b", "model-b", 100)
    rc, doc = _compare(tmp_path, a, b, "--margin", "0.05")
    assert rc == 0 and doc["decision"] == "not_worse" and doc["n"] == 100 and doc["matched_by"] == "id"
    assert doc["table"] == {"both_right": 100, "b_lost": 0, "b_won": 0, "both_wrong": 0}
    assert doc["lost"] == [] and doc["won"] == [] and doc["set_size"]["mean_difference"] == 0


def test_b_equal_a_is_undecided_with_too_few_items(tmp_path: Path, capsys) -> None:
    a = _import(tmp_path, "a", "model-a", 20)
    b = _import(tmp_path, "b", "model-b", 20)
    capsys.readouterr()
    rc, doc = _compare(tmp_path, a, b, "--margin", "0.05")
    assert rc == 3 and doc["decision"] == "undecided" and doc["more_items_to_decide"] == 86 - 20
    assert "66 more paired items" in capsys.readouterr().err


def test_b_worse_exits_1_and_lists_lost_items(tmp_path: Path) -> None:
    a = _import(tmp_path, "a", "model-a", 60)
    b = _import(tmp_path, "b", "model-b", 60, wrong=set(range(0, 60, 2)))
    rc, doc = _compare(tmp_path, a, b)
    assert rc == 1 and doc["decision"] == "worse"
    assert sorted(doc["lost"]) == sorted(f"q{i}" for i in range(0, 60, 2)) and doc["won"] == []
    rc, doc = _compare(tmp_path, b, a, "--margin", "0")
    assert rc == 0 and len(doc["won"]) == 30


def test_lm_eval_runs_pair_by_document_hash(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for name in ("addition", "addition_seeded"):
        assert main(["import", "lm-eval", str(FIX / "lm_eval" / name), "--run-dir", str(runs), "--quiet"]) == 0
    ids = sorted(r.run_id for r in list_runs(runs))
    rc, doc = _compare(tmp_path, ids[0], ids[1])
    assert rc in (0, 1, 3) and doc["matched_by"] == "doc_hash" and doc["n"] == 12


@pytest.mark.parametrize("args", [["nope", "nada"], ["x", "y", "--margin", "2"]])
def test_errors_exit_2(tmp_path: Path, capsys, args: list[str]) -> None:
    assert main(["compare", *args, "--run-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
