"""Issue 29 N17, N19: ``runs rm`` of a symlink is a one-line refusal (not a raw rmtree error, the target kept);
``review adjudicate --decide ITEM=VERDICT`` splits on the last ``=`` (item ids may contain ``=``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.engine.runs.listing import list_runs


def _import(tmp_path: Path, ids: list[str]) -> str:
    p = tmp_path / "s.jsonl"
    with p.open("w", encoding="utf-8") as f:
        for i, item in enumerate(ids):
            samples = ["7", "7", "8"] if i % 2 else ["1", "1", "2"]
            f.write(json.dumps({"id": item, "question": "q?", "model": "m", "samples": samples}) + "\n")
    runs = tmp_path / "home" / "runs"
    assert main(["import", "samples", str(p), "--run-dir", str(runs), "--quiet"]) == 0
    (run,) = list_runs(runs)
    return run.run_id


def test_runs_rm_of_a_symlink_is_one_line_and_keeps_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    run = _import(tmp_path, ["a", "b"])
    target = tmp_path / "home" / "runs" / run
    link = tmp_path / "link"
    link.symlink_to(target)
    capsys.readouterr()
    assert main(["runs", "rm", str(link)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refusing to delete" in err[0] and "rmtree" not in err[0], err
    assert (target / "manifest.json").is_file() and link.is_symlink()
    assert main(["runs", "rm", run]) == 0  # the run itself is still removable by name
    assert not target.exists()


def test_decide_splits_on_the_last_equals_sign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RELGATE_DB", raising=False)
    item = "k=v=w"
    run = _import(tmp_path, [item, "plain"])
    db = ["--db", f"sqlite:///{tmp_path / 'review.sqlite3'}"]
    assert main(["review", "init", *db]) == 0
    assert main(["review", "publish", run, *db, "--json", str(tmp_path / "pub.json")]) == 0
    sid = json.loads((tmp_path / "pub.json").read_text())["session"]
    for who, rank in (("r1", 1), ("r2", 2)):
        labels = tmp_path / f"{who}.jsonl"
        labels.write_text("".join(json.dumps({"id": i, "rank": rank}) + "\n" for i in (item, "plain")))
        assert main(["review", "label", sid, *db, "--as", who, "--labels", str(labels), "--quiet"]) == 0
    out = tmp_path / "adj.json"
    assert main(["review", "adjudicate", sid, *db, "--as", "judy", "--json", str(out)]) == 0
    assert item in [d["item"] for d in json.loads(out.read_text())["disputed"]]
    capsys.readouterr()
    assert main(["review", "adjudicate", sid, *db, "--as", "judy", "--decide", f"{item}=2", "--json", str(out)]) == 0
    assert f"{item} → 2" in capsys.readouterr().err
    assert item not in [d["item"] for d in json.loads(out.read_text())["disputed"]]
