"""Who may do what on PostgreSQL (issue 21 §7), on a real server: row-level security makes a reviewer their
database role; blind labelling; the adjudicator queue is closed to reviewers; no password anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from relgate_tui.cli import main
from relgate_tui.engine.review.db import ReviewDenied
from relgate_tui.engine.review.store import open_store
from tests.conftest import InProcessCli
from tests.engine.review.conftest import Backend, import_run, write_labels


@pytest.fixture
def pgb(pg_backend: Backend) -> Backend:
    """Roles and row-level security exist on PostgreSQL only."""
    return pg_backend


def _session(b: Backend, tmp_path: Path, n: int = 8) -> str:
    run = import_run(tmp_path, n)
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, *b.args(None), "--json", str(out)]) == 0
    return str(json.loads(out.read_text())["session"])


def _conn(b: Backend, name: str) -> psycopg.Connection:
    url, _ = b.reviewer(name)
    return psycopg.connect(url, autocommit=True)


def test_a_reviewer_cannot_insert_a_label_as_another_role(pgb: Backend, tmp_path: Path) -> None:
    sid = _session(pgb, tmp_path)
    pgb.reviewer("bob")
    with _conn(pgb, "alice") as c:
        item = c.execute("SELECT item_id FROM review_items WHERE session_id = %s LIMIT 1", (sid,)).fetchone()[0]
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="role that logged in|row-level security"):
            c.execute("INSERT INTO review_labels (session_id, item_id, reviewer, verdict, client_key, created_at) "
                      "VALUES (%s, %s, 'bob', '1', 'forged', 0)", (sid, item))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute("INSERT INTO review_adjudications VALUES (%s, %s, '1', 'alice', 0)", (sid, item))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute("UPDATE review_items SET payload = '{}'")
    # --as is refused on PostgreSQL: a reviewer is the role they connect as
    assert main(["review", "label", sid, "--labels", str(write_labels(tmp_path / "x.jsonl", {})),
                 "--db", pgb.reviewer("alice")[0], "--as", "bob"]) == 2


def test_labelling_is_blind(pgb: Backend, tmp_path: Path) -> None:
    sid = _session(pgb, tmp_path, 4)  # two calibration items
    a_store, b_store = open_store(pgb.reviewer("alice")[0]), open_store(pgb.reviewer("bob")[0])
    try:
        first = a_store.claim(sid, "alice")
        assert first is not None
        a_store.commit_label(sid, first.item_id, "alice", "1", "ka")
        # bob has not labelled the item: alice's label is invisible to him, whatever he asks the database
        assert b_store.labels(sid) == {}
        with _conn(pgb, "bob") as c:
            assert c.execute("SELECT count(*) FROM review_labels").fetchone()[0] == 0
            assert c.execute("SELECT relgate_review_visible(%s, %s)", (sid, first.item_id)).fetchone()[0] is False
        assert "verdict" not in repr(first.item) and "alice" not in repr(first.item)  # the item as shown
        got = b_store.claim(sid, "bob")
        assert got is not None and got.item_id == first.item_id
        b_store.commit_label(sid, got.item_id, "bob", "2", "kb")
        # once he labelled it, he may compare
        assert b_store.labels(sid) == {first.item_id: {"alice": "1", "bob": "2"}}
    finally:
        a_store.close()
        b_store.close()


def test_a_reviewer_cannot_read_the_adjudicator_queue(pgb: Backend, tmp_path: Path, capsys) -> None:
    sid = _session(pgb, tmp_path)
    store = open_store(pgb.reviewer("alice")[0])
    try:
        with pytest.raises(ReviewDenied, match="relgate_adjudicator"):
            store.adjudications(sid)
        with pytest.raises(ReviewDenied):
            store.adjudicate(sid, store.item_ids(sid)[0], "1", "alice")
    finally:
        store.close()
    with _conn(pgb, "alice") as c, pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.execute("SELECT * FROM review_adjudications")
    capsys.readouterr()
    assert main(["review", "adjudicate", sid, *pgb.args("alice")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "relgate_adjudicator" in err
    assert main(["review", "pull", sid, *pgb.args("alice")]) == 2


def test_no_password_anywhere_after_a_full_session(pgb: Backend, tmp_path: Path, incli: InProcessCli) -> None:
    run = import_run(tmp_path, 12)
    outputs: list[str] = []

    def cli(*args: str, ok: bool = True) -> None:
        # stdout and stderr as a user sees them: read at file descriptors 1 and 2, warnings and log records included
        proc = incli(tmp_path / "home", *args, cwd=tmp_path)
        outputs.extend([proc.stdout, proc.stderr])
        assert (proc.returncode == 0) is ok, proc.stderr

    pgb.reviewer("judy", adjudicator=True)
    cli("review", "publish", run, *pgb.args(None), "--json", str(tmp_path / "pub.json"))
    sid = json.loads((tmp_path / "pub.json").read_text())["session"]
    items = [f"q{i:03d}" for i in range(12)]
    for name, v in (("alice", "1"), ("bob", "2")):
        cli("review", "label", sid, "--labels", str(write_labels(tmp_path / f"{name}.jsonl", dict.fromkeys(items, v))),
            *pgb.args(name))
        cli("review", "status", sid, *pgb.args(name), "--json", str(tmp_path / f"st-{name}.json"))
    first = json.loads((tmp_path / "st-bob.json").read_text())["disputed"][0]
    cli("review", "adjudicate", sid, *pgb.args("judy"), "--decide", f"{first}=1", "--json", "-")
    cli("review", "status", sid, *pgb.args("judy"), "--json", "-")
    cli("review", "pull", sid, *pgb.args(None), "--run-dir", str(tmp_path / "home" / "runs"))
    cli("report", run, "--run-dir", str(tmp_path / "home" / "runs"), "--format", "json")
    cli("review", "adjudicate", sid, *pgb.args("alice"), ok=False)
    # a wrong password and a dead port: the error lines name neither password
    bad = pgb.reviewer("alice")[0].replace(pgb.passwords["alice"], "Wr0ngSecretPassw0rd")
    cli("review", "status", sid, "--db", bad, ok=False)
    dead = pgb.reviewer("alice")[0].replace(f":{pgb.pg.port}/", ":9/")  # type: ignore[union-attr]
    cli("review", "status", sid, "--db", dead, ok=False)
    secrets = [pgb.pg.password, *pgb.passwords.values(), "Wr0ngSecretPassw0rd"]  # type: ignore[union-attr]
    assert any("unreachable" in o for o in outputs)
    for text in outputs:
        for s in secrets:
            assert s not in text
    for path in (tmp_path / "home").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for s in secrets:
                assert s.encode() not in data, path
    engine = sa.create_engine(pgb.admin_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as c:
            for table in ("review_meta", "review_sessions", "review_items", "review_claims", "review_labels",
                          "review_adjudications"):
                dump = json.dumps([list(map(str, r)) for r in c.execute(sa.text(f"SELECT * FROM {table}")).all()])
                for s in secrets:
                    assert s not in dump, table
    finally:
        engine.dispose()


def test_the_password_may_come_from_the_environment_or_pgpass(pgb: Backend, tmp_path: Path, monkeypatch,
                                                              capsys) -> None:
    sid = _session(pgb, tmp_path, 4)
    assert pgb.pg is not None
    url, _ = pgb.reviewer("alice")
    bare = url.replace(f":{pgb.passwords['alice']}@", "@")
    assert pgb.passwords["alice"] not in bare
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    capsys.readouterr()
    assert main(["review", "status", sid, "--db", bare]) == 2  # no password anywhere: refused, one line
    assert capsys.readouterr().err.count("\n") == 1
    monkeypatch.setenv("PGPASSWORD", pgb.passwords["alice"])
    assert main(["review", "status", sid, "--db", bare]) == 0
    monkeypatch.delenv("PGPASSWORD")
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{pgb.pg.port}:{pgb.db}:alice:{pgb.passwords['alice']}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    assert main(["review", "status", sid, "--db", bare]) == 0
    out = capsys.readouterr()
    assert pgb.passwords["alice"] not in out.out + out.err
