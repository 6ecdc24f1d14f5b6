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
    # issue 33 §6: 66 more paired items would decide it, but every shared item is paired already — no count
    # larger than the items left (the former "about 66 more" promised items these runs do not have)
    assert rc == 3 and doc["decision"] == "undecided" and doc["more_items_to_decide"] is None
    err = capsys.readouterr().err
    assert "no shared item left unpaired: these two runs cannot decide it (≈ 66 more paired items" in err


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


# ------------------------------------------------------------------------ issue 24 §1: ids that match across tools
def _lm_eval_and_inspect(tmp_path: Path, *, strip_own_ids: bool = False) -> tuple[str, str]:
    """The same addition items logged by lm-eval and by Inspect, imported; ``strip_own_ids`` drops the documents'
    own ``id`` from the lm-eval log (an lm-eval task whose documents carry none: ids are lm-eval's doc_id)."""
    runs = tmp_path / "runs"
    source = FIX / "lm_eval" / "addition"
    if strip_own_ids:
        copy = tmp_path / "lm_eval_no_ids"
        copy.mkdir()
        for f in source.iterdir():
            text = f.read_text(encoding="utf-8")
            if f.name.startswith("samples_"):
                rows = [json.loads(line) for line in text.splitlines() if line.strip()]
                for r in rows:
                    r["doc"].pop("id")
                text = "".join(json.dumps(r) + "\n" for r in rows)
            (copy / f.name).write_text(text, encoding="utf-8")
        source = copy
    assert main(["import", "lm-eval", str(source), "--run-dir", str(runs), "--quiet"]) == 0
    assert main(["import", "inspect", str(FIX / "inspect" / "addition_zstd.eval"), "--run-dir", str(runs),
                 "--quiet"]) == 0
    by_tool = {r.model: r.run_id for r in list_runs(runs)}
    return by_tool["sim-mid"], by_tool["openai-api/relgate/sim-mid"]


def test_lm_eval_and_inspect_logs_of_the_same_items_pair_them_all(tmp_path: Path) -> None:
    lm, inspect = _lm_eval_and_inspect(tmp_path)
    inspect_doc = json.loads(next((tmp_path / "runs").glob(f"{inspect}/results.json")).read_text(encoding="utf-8"))
    rc, doc = _compare(tmp_path, lm, inspect)
    assert rc in (0, 1, 3) and doc["matched_by"] == "id"
    assert doc["n_shared"] == doc["n"] == len(inspect_doc["items"]) == 8  # every Inspect item has its lm-eval pair
    assert doc["n_shared_by_question"] == 8  # question text agrees with the ids


def test_when_ids_pair_nothing_the_message_names_both_id_spaces_and_offers_question_text(tmp_path: Path,
                                                                                          capsys) -> None:
    lm, inspect = _lm_eval_and_inspect(tmp_path, strip_own_ids=True)
    capsys.readouterr()
    rc, _ = _compare(tmp_path, lm, inspect)
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert "A's ids: 0, 1, 2 …" in err and "B's ids: add3-0001, add3-0002, add3-0005 …" in err
    assert "8 items pair by question text: --match question" in err
    rc, doc = _compare(tmp_path, lm, inspect, "--match", "question")
    assert rc in (0, 1, 3) and doc["matched_by"] == "question" and doc["n"] == 8
