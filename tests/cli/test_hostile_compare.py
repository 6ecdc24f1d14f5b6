"""Issue 23 §7: `relgate compare` checks that paired items ask the same question (a hash per item) and refuses, in
one line, two runs that only share ids."""

from __future__ import annotations

import json
from pathlib import Path

from relgate_tui.cli import main
from relgate_tui.engine.runs.listing import list_runs


def _import(tmp_path: Path, name: str, question: str) -> str:
    p = tmp_path / f"{name}.jsonl"
    with p.open("w", encoding="utf-8") as f:
        for i in range(40):
            answer = str(100 + i)
            f.write(json.dumps({"id": f"q{i}", "question": question.format(i=i), "answer": answer,
                                "samples": [answer, answer, "5"]}) + "\n")
    before = {r.run_id for r in list_runs(tmp_path / "runs")}
    assert main(["import", "samples", str(p), "--run-dir", str(tmp_path / "runs"), "--quiet"]) == 0
    (new,) = {r.run_id for r in list_runs(tmp_path / "runs")} - before
    return new


def test_runs_that_share_ids_but_not_questions_are_refused(tmp_path: Path, capsys) -> None:
    a = _import(tmp_path, "arith", "What is {i} + 100?")
    b = _import(tmp_path, "capitals", "Which city is capital number {i}?")
    same = _import(tmp_path, "arith_again", "What is {i} + 100?")
    capsys.readouterr()
    out = tmp_path / "cmp.json"
    assert main(["compare", a, b, "--run-dir", str(tmp_path / "runs"), "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ask different questions" in err and "40 of 40" in err
    assert not out.exists()
    assert main(["compare", a, same, "--run-dir", str(tmp_path / "runs"), "--json", str(out), "--quiet"]) in (0, 3)
    assert json.loads(out.read_text())["n"] == 40
