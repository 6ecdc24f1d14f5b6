"""Issue 29 N1: no ``--json`` of a review command may write over the embedded review store (or its journals).

The attack: ``relgate review status S --json <data dir>/review.sqlite3`` replaced the store with the status JSON —
every session, label and adjudication gone. Each command is refused with one line and the store still opens."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.engine.runs.outputs import check_output_path
from relgate_tui.errors import UserError
from tests.engine.review.conftest import import_run


def _sessions(db: Path) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM review_sessions").fetchone()[0])


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """The embedded store in the data dir (no --db), with one published session. Returns (store file, session)."""
    home = tmp_path / "home"
    monkeypatch.setenv("RELGATE_HOME", str(home))
    monkeypatch.delenv("RELGATE_DB", raising=False)
    run = import_run(tmp_path, 6)
    assert main(["review", "init"]) == 0
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, "--json", str(out)]) == 0
    db = home / "review.sqlite3"
    assert db.is_file()
    return db, str(json.loads(out.read_text())["session"])


def _table_names(db: Path) -> set[str]:
    with sqlite3.connect(db) as con:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


@pytest.mark.parametrize("command", ["status", "adjudicate", "publish"])
def test_a_review_json_over_the_embedded_store_is_refused(store: tuple[Path, str], tmp_path: Path, capsys,
                                                          command: str) -> None:
    db, sid = store
    before = db.read_bytes()
    tables = _table_names(db)
    argv = {"status": ["review", "status", sid], "adjudicate": ["review", "adjudicate", sid],
            "publish": ["review", "publish", "nonexistent-run"]}[command]
    capsys.readouterr()
    assert main([*argv, "--json", str(db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "database" in err[0] and str(db) in err[0], err
    assert db.read_bytes()[:16] == b"SQLite format 3\x00"
    assert _table_names(db) == tables
    assert len(db.read_bytes()) == len(before)
    assert main(["review", "status", sid, "--json", str(tmp_path / "ok.json")]) == 0  # the store still works


def test_the_store_is_refused_through_a_symlink_and_its_wal_companion(store: tuple[Path, str], tmp_path: Path) -> None:
    db, _ = store
    link = tmp_path / "innocent.json"
    link.symlink_to(db)
    with pytest.raises(UserError, match="refusing"):
        check_output_path(link)
    with pytest.raises(UserError, match="database"):
        check_output_path(db.with_name(db.name + "-wal"))
    journals = db.parent / "review"
    journals.mkdir(exist_ok=True)
    with pytest.raises(UserError, match="journals"):
        check_output_path(journals / "journal-x.jsonl")
    check_output_path(tmp_path / "fine.json")  # an ordinary output is still allowed
