"""Issue 29's attack round on team review, rerun (N2–N8, N11, N13, N14, N18, N21): a reviewer with ``psql`` can do
nothing the queue forbids — each attack is refused (one line on the command line) and nothing is lost. On a real
PostgreSQL server where it concerns the server (:mod:`.pgserver`)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

import psycopg
import pytest

from relgate_tui.cli import main
from relgate_tui.engine.review import store as store_mod
from relgate_tui.engine.review.client import Reviewer
from relgate_tui.engine.review.journal import journal_path
from relgate_tui.engine.review.store import open_store
from tests.engine.review.conftest import Backend, import_run, write_labels
from tests.engine.review.test_security import _conn, _session

Denied = psycopg.errors.InsufficientPrivilege


@pytest.fixture
def pgb(pg_backend: Backend) -> Backend:
    return pg_backend


def _items(c: psycopg.Connection, sid: str) -> list[str]:
    return [r[0] for r in c.execute("SELECT item_id FROM review_items WHERE session_id = %s ORDER BY position",
                                    (sid,)).fetchall()]


def _claim_sql(c: psycopg.Connection, sid: str, item: str, who: str, expires: float = 1e18) -> list:
    """A claim by hand, the one way a reviewer may write one: the database's function (as the role that logged in,
    whoever ``who`` names); its rows: (item, lease end), none when the item is full."""
    return c.execute("SELECT * FROM relgate_review_claim(%s, %s, 'claimed', %s, true)", (sid, item, expires)).fetchall()


def _insert_claim(c: psycopg.Connection, sid: str, item: str, who: str, state: str = "claimed") -> None:
    c.execute("INSERT INTO review_claims VALUES (%s, %s, %s, %s, 1e18)", (sid, item, who, state))


def _label_sql(c: psycopg.Connection, sid: str, item: str, who: str, verdict: str = "1", key: str = "k") -> None:
    c.execute("INSERT INTO review_labels (session_id, item_id, reviewer, verdict, client_key, created_at) "
              "VALUES (%s, %s, %s, %s, %s, 0)", (sid, item, who, verdict, key))


def test_n2_set_role_to_the_group_fills_no_second_slot(pgb: Backend, tmp_path: Path, capsys) -> None:
    sid = _session(pgb, tmp_path, 4)
    with _conn(pgb, "alice") as c:
        item = _items(c, sid)[0]
        _claim_sql(c, sid, item, "alice")
        _label_sql(c, sid, item, "alice", key="ka")  # her own label, through the rules
        c.execute("SET ROLE relgate_reviewer")
        with pytest.raises(Denied, match="permission denied for table review_claims"):
            _insert_claim(c, sid, item, "relgate_reviewer")
        with pytest.raises(Denied, match="logged in"):
            _label_sql(c, sid, item, "relgate_reviewer", key="kg")
    assert pgb.sql("SELECT reviewer FROM review_labels") == [("alice",)]
    with pytest.raises(Exception, match="group role is never a reviewer"):  # not even by the owner's hand
        pgb.sql("INSERT INTO review_claims VALUES (:s, :i, 'relgate_reviewer', 'claimed', 1e18)", {"s": sid, "i": item})
    pgb.sql("ALTER ROLE relgate_reviewer LOGIN")  # made a login role by hand: init makes it a group again
    assert main(["review", "init", "--db", pgb.admin_url]) == 0
    assert pgb.sql("SELECT rolname FROM pg_roles WHERE rolname LIKE 'relgate_%' AND rolcanlogin") == []
    capsys.readouterr()
    assert main(["review", "grant", "relgate_reviewer", "--db", pgb.admin_url]) == 2
    assert main(["review", "grant", "relgate_adjudicator", "--db", pgb.admin_url]) == 2
    assert capsys.readouterr().err.count("\n") == 2


def test_n3_own_label_in_an_open_transaction_shows_nothing(pgb: Backend, tmp_path: Path) -> None:
    sid = _session(pgb, tmp_path, 4)
    pgb.reviewer("bob")
    with _conn(pgb, "alice") as c:
        item = _items(c, sid)[0]
        _claim_sql(c, sid, item, "alice")
        _label_sql(c, sid, item, "alice", "2", "ka")
    url, _ = pgb.reviewer("bob")
    with psycopg.connect(url) as c:  # one transaction: claim, label, look, roll back
        _claim_sql(c, sid, item, "bob")
        _label_sql(c, sid, item, "bob", "1", "kb")
        seen = c.execute("SELECT reviewer, verdict FROM relgate_review_labels(%s) WHERE item_id = %s",
                         (sid, item)).fetchall()
        c.execute("SAVEPOINT s")  # a subtransaction changes nothing
        seen_sub = c.execute("SELECT reviewer FROM relgate_review_labels(%s) WHERE item_id = %s",
                             (sid, item)).fetchall()
        c.rollback()
    assert seen == [("bob", "1")] and seen_sub == [("bob",)]
    with _conn(pgb, "bob") as c:
        assert c.execute("SELECT count(*) FROM review_labels").fetchone()[0] == 0
        _claim_sql(c, sid, item, "bob")
        _label_sql(c, sid, item, "bob", "1", "kb")  # committed: from the next transaction on, he may compare
        assert sorted(c.execute("SELECT reviewer, verdict FROM relgate_review_labels(%s)", (sid,)).fetchall()) == [
            ("alice", "2"), ("bob", "1")]


def test_n4_no_forged_done_claims_and_no_endless_lease(pgb: Backend, tmp_path: Path) -> None:
    sid = _session(pgb, tmp_path, 8)  # four items, R = 2
    with _conn(pgb, "alice") as c:
        items = _items(c, sid)
        with pytest.raises(Denied, match="done only with its label"):
            c.execute("SELECT * FROM relgate_review_claim(%s, %s, 'done', 0, true)", (sid, items[0]))
        for item in items:
            _claim_sql(c, sid, item, "alice", 1e18)
        with pytest.raises(Denied, match="permission denied for table review_claims"):
            _insert_claim(c, sid, items[1], "bob", "done")
    with _conn(pgb, "bob") as c:
        for item in items:
            _claim_sql(c, sid, item, "bob", 1e18)
    # the leases end at most the session's lease (600 s) after the server's now, whatever the client asked
    longest = pgb.sql("SELECT max(expires_at - extract(epoch from now())) FROM review_claims")[0][0]
    assert longest <= 600.5
    # one running claim per reviewer: alice and bob hold one item each, carol gets every item at once
    assert pgb.sql("SELECT count(*) FROM review_claims WHERE expires_at > extract(epoch from now())") == [(2,)]
    labels = write_labels(tmp_path / "carol.jsonl", {i: "1" for i in items})
    assert main(["review", "label", sid, "--labels", str(labels), *pgb.args("carol")]) == 0
    out = tmp_path / "st.json"
    assert main(["review", "status", sid, *pgb.args(None), "--json", str(out)]) == 0
    # no phantom label; the one item alice and bob both still hold (their last claims) has no slot for carol
    assert json.loads(out.read_text())["labels"] == len(items) - 1
    assert pgb.sql("SELECT count(*) FROM review_labels") == [(len(items) - 1,)]
    assert main(["review", "pull", sid, *pgb.args(None), "--run-dir", str(tmp_path / "home" / "runs")]) == 0


def test_n5_a_label_needs_a_running_claim_a_free_slot_and_a_verdict(pgb: Backend, tmp_path: Path) -> None:
    sid = _session(pgb, tmp_path, 4)  # R = 2
    with _conn(pgb, "alice") as c:
        item = _items(c, sid)[0]
        with pytest.raises(Denied, match="no running claim"):
            _label_sql(c, sid, item, "alice")
        _claim_sql(c, sid, item, "alice")
        with pytest.raises(psycopg.errors.CheckViolation):
            _label_sql(c, sid, item, "alice", "0x1")
        _label_sql(c, sid, item, "alice", "1", "ka")
    with _conn(pgb, "bob") as c:
        _claim_sql(c, sid, item, "bob")
        _label_sql(c, sid, item, "bob", "2", "kb")
    with _conn(pgb, "carol") as c:  # a third reviewer: no slot to claim, no label without one
        assert _claim_sql(c, sid, item, "carol") == []  # no free slot: nothing claimed
        with pytest.raises(Denied, match="no running claim"):
            _label_sql(c, sid, item, "carol", "1", "kc")
    assert sorted(pgb.sql("SELECT reviewer, verdict FROM review_labels")) == [("alice", "1"), ("bob", "2")]


def test_n5_a_malformed_stored_verdict_is_named_not_fatal(tmp_path: Path, monkeypatch, capsys) -> None:
    """The embedded store has no CHECK (one machine's trust domain): a verdict written into the file by hand is
    left out of the figures, named with its item and reviewer, and pull works."""
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    db = tmp_path / "review.sqlite3"
    b = Backend("sqlite", f"sqlite:///{db}")
    run = import_run(tmp_path, 4)
    assert main(["review", "publish", run, "--db", b.admin_url, "--json", str(tmp_path / "p.json")]) == 0
    sid = json.loads((tmp_path / "p.json").read_text())["session"]
    for name in ("alice", "bob"):
        assert main(["review", "label", sid, "--labels", str(write_labels(tmp_path / f"{name}.jsonl", {
            "q000": "1", "q001": "1", "q002": "1", "q003": "1"})), *b.args(name)]) == 0
    with sqlite3.connect(db) as c:
        item = c.execute("SELECT item_id FROM review_labels WHERE reviewer = 'bob' LIMIT 1").fetchone()[0]
        c.execute("UPDATE review_labels SET verdict = '0x1' WHERE reviewer = 'bob' AND item_id = ?", (item,))
    capsys.readouterr()
    assert main(["review", "pull", sid, "--db", b.admin_url, "--run-dir", str(tmp_path / "home" / "runs")]) == 0
    err = capsys.readouterr().err
    assert f"label of item {item} by bob left out: not a verdict: '0x1'" in err


def test_n6_owner_checks_on_sessions_items_and_adjudications(pgb: Backend, tmp_path: Path) -> None:
    sid = _session(pgb, tmp_path, 4)
    url, _ = pgb.reviewer("judy", adjudicator=True)
    with psycopg.connect(url, autocommit=True) as c:
        item = _items(c, sid)[0]
        with pytest.raises(Denied, match="logged in"):
            c.execute("INSERT INTO review_adjudications VALUES (%s, %s, '1', 'postgres', 0)", (sid, item))
        with pytest.raises(Denied, match="session judy published"):
            c.execute("INSERT INTO review_items VALUES (%s, 'evil', 99, '{}', 1, 0)", (sid,))
        with pytest.raises(Denied, match="logged in"):
            c.execute("INSERT INTO review_sessions VALUES ('s1', 'n', 'r', 2, 600, 'postgres', 0, '{}')")
        with pytest.raises(psycopg.errors.CheckViolation):
            c.execute("INSERT INTO review_sessions VALUES ('a/../../x', 'n', 'r', 2, 600, 'judy', 0, '{}')")
        with pytest.raises(psycopg.errors.CheckViolation):
            c.execute("INSERT INTO review_sessions VALUES ('s2', 'n', 'r', 2, 1e18, 'judy', 0, '{}')")
        c.execute("INSERT INTO review_adjudications VALUES (%s, %s, '1', 'judy', 0)", (sid, item))
    assert pgb.sql("SELECT adjudicator FROM review_adjudications") == [("judy",)]
    assert pgb.sql("SELECT count(*) FROM review_items WHERE item_id = 'evil'") == [(0,)]


def test_n7_a_session_id_never_becomes_a_path(backend: Backend, tmp_path: Path, capsys) -> None:
    run = import_run(tmp_path, 4)
    assert main(["review", "publish", run, *backend.args(None), "--json", str(tmp_path / "p.json")]) == 0
    sid = json.loads((tmp_path / "p.json").read_text())["session"]
    evil = "a/../../../../../../x"
    assert evil not in str(journal_path("db", evil, "alice", tmp_path)) and "/" not in journal_path(
        "db", evil, "alice", tmp_path).name
    ins = ("INSERT INTO review_sessions SELECT :e, name, run_id, per_item, lease_seconds, created_by, created_at, "
           "run_info, pulled_at FROM review_sessions WHERE id = :s")
    if backend.is_pg:
        with pytest.raises(Exception, match="review_sessions_safe_id"):
            backend.sql(ins, {"e": evil, "s": sid})
        return
    backend.sql(ins, {"e": evil, "s": sid})  # the embedded file written by hand
    capsys.readouterr()
    labels = write_labels(tmp_path / "l.jsonl", {})
    assert main(["review", "label", "a/", "--labels", str(labels), *backend.args("alice")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path.parent / "x").exists() and not list(Path("/").glob("x*.jsonl"))
    assert main(["review", "status", sid, *backend.args(None)]) == 0  # the honest session still works


def test_n8_leases_run_on_the_server_clock(pgb: Backend, tmp_path: Path, monkeypatch) -> None:
    sid = _session(pgb, tmp_path, 4)
    assert main(["review", "publish", import_run(tmp_path, 2, "one"), *pgb.args(None), "--per-item", "1",
                 "--json", str(tmp_path / "one.json")]) == 0
    one = json.loads((tmp_path / "one.json").read_text())["session"]  # one item, one reviewer
    alice, bob = open_store(pgb.reviewer("alice")[0]), open_store(pgb.reviewer("bob")[0])
    try:
        held = alice.claim(one, "alice")
        assert held is not None
        real = time.time

        class Clock:  # bob's machine runs 700 s ahead, then an hour behind
            offset = 700.0

            @staticmethod
            def time() -> float:
                return real() + Clock.offset

        monkeypatch.setattr(store_mod, "time", Clock)
        assert bob.claim(one, "bob") is None  # alice's lease runs on the server's clock
        assert alice.commit_label(one, held.item_id, "alice", "1", "ka") == "committed"
        Clock.offset = -3600.0
        got = bob.claim(sid, "bob")
        assert got is not None and got.expires_at > real() + 500  # a client an hour behind holds its item
        assert bob.commit_label(sid, got.item_id, "bob", "1", "kb") == "committed"
    finally:
        alice.close()
        bob.close()


def test_n11_a_key_value_dsn_is_refused_without_echoing_it(capsys) -> None:
    capsys.readouterr()
    assert main(["review", "status", "x", "--db", "host=127.0.0.1 user=alice password=SECRETpw99"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SECRETpw99" not in err and "not a database URL" in err


def test_n13_a_wrong_password_is_said_at_once(pgb: Backend, tmp_path: Path, capsys) -> None:
    sid = _session(pgb, tmp_path, 4)
    bad = pgb.reviewer("alice")[0].replace(pgb.passwords["alice"], "Wr0ngPassw0rd")
    labels = write_labels(tmp_path / "l.jsonl", {"q000": "1"})
    capsys.readouterr()
    # a retry window far beyond the test's: the refusal comes from the first answer, not from giving up
    assert main(["review", "label", sid, "--labels", str(labels), "--db", bad, "--retry-for", "5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refused the login" in err and "password authentication failed" in err
    assert "unreachable" not in err and "Wr0ngPassw0rd" not in err


def test_n14_a_malformed_journal_entry_is_set_aside(backend: Backend, tmp_path: Path, capsys) -> None:
    run = import_run(tmp_path, 4)
    assert main(["review", "publish", run, *backend.args(None), "--json", str(tmp_path / "p.json")]) == 0
    sid = json.loads((tmp_path / "p.json").read_text())["session"]
    store = open_store(backend.reviewer("alice")[0])
    name = store.db.identity(backend.reviewer("alice")[1])
    r = Reviewer(store, store.session(sid), name)
    path = r.journal.path
    r.close()
    with path.open("a") as f:
        f.write(json.dumps({"op": "label", "key": "k1", "item": "q000"}) + "\n")  # no verdict
        f.write("{not json\n")
        f.write(json.dumps({"op": "label", "key": "k2", "item": "q001", "verdict": "0x1"}) + "\n")
    store.close()
    labels = write_labels(tmp_path / "l.jsonl", {f"q{i:03d}": "1" for i in range(4)})
    capsys.readouterr()
    assert main(["review", "label", sid, "--labels", str(labels), *backend.args("alice")]) == 0
    err = capsys.readouterr().err
    assert err.count("is malformed") == 3 and "set aside in" in err
    assert len(path.with_name(path.name + ".bad").read_text().splitlines()) == 3
    assert main(["review", "label", sid, "--labels", str(labels), *backend.args("alice")]) == 0
    assert "malformed" not in capsys.readouterr().err  # told once: the lines are set aside for good


def test_n18_an_adjudicator_reads_no_label_of_an_item_still_open(pgb: Backend, tmp_path: Path) -> None:
    sid = _session(pgb, tmp_path, 4)  # two items, R = 2
    url, _ = pgb.reviewer("judy", adjudicator=True)
    with _conn(pgb, "alice") as c:
        first, second = _items(c, sid)
        for item in (first, second):
            _claim_sql(c, sid, item, "alice")
            _label_sql(c, sid, item, "alice", "1", f"ka{item}")
    with _conn(pgb, "bob") as c:
        _claim_sql(c, sid, first, "bob")
        _label_sql(c, sid, first, "bob", "2", "kb")
    with psycopg.connect(url, autocommit=True) as c:
        seen = c.execute("SELECT item_id, reviewer FROM relgate_review_labels(%s) ORDER BY 1, 2", (sid,)).fetchall()
    assert seen == [(first, "alice"), (first, "bob")]  # the full item only: the open one may still take her label


def test_n21_the_label_id_is_a_bigint_reviewers_cannot_advance(pgb: Backend, tmp_path: Path) -> None:
    _session(pgb, tmp_path, 4)
    assert pgb.sql("SELECT data_type FROM information_schema.columns WHERE table_name = 'review_labels' "
                   "AND column_name = 'id'") == [("bigint",)]
    with _conn(pgb, "alice") as c, pytest.raises(Denied):
        c.execute("SELECT nextval('review_labels_id_seq')")
    with _conn(pgb, "alice") as c, pytest.raises(Denied):
        c.execute("SELECT setval('review_labels_id_seq', 9223372036854775806)")


def test_version_1_is_migrated_by_the_owner_and_refused_to_reviewers(pgb: Backend, tmp_path: Path,
                                                                     capsys) -> None:
    sid = _session(pgb, tmp_path, 4)
    pgb.reviewer("alice")
    pgb.sql("UPDATE review_meta SET value = '1' WHERE key = 'schema_version'")
    capsys.readouterr()
    assert main(["review", "status", sid, *pgb.args("alice")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "version 1" in err and "review init" in err
    assert main(["review", "init", "--db", pgb.admin_url]) == 0
    assert "migrated the review schema from version 1 to 3" in capsys.readouterr().err
    assert main(["review", "status", sid, *pgb.args("alice")]) == 0
    # a row that breaks a rule stops the migration with one line
    pgb.sql("ALTER TABLE review_labels DISABLE TRIGGER USER")
    pgb.sql("ALTER TABLE review_labels DROP CONSTRAINT review_labels_verdict")
    pgb.sql("INSERT INTO review_labels (id, session_id, item_id, reviewer, verdict, client_key, created_at) "
            "SELECT 1, session_id, item_id, 'x', '0x1', 'bad', 0 FROM review_items WHERE session_id = :s LIMIT 1",
            {"s": sid})
    pgb.sql("ALTER TABLE review_labels ENABLE TRIGGER USER")
    pgb.sql("UPDATE review_meta SET value = '1' WHERE key = 'schema_version'")
    capsys.readouterr()
    assert main(["review", "init", "--db", pgb.admin_url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be migrated" in err and "review_labels_verdict" in err


def test_an_embedded_version_1_store_and_its_old_journal_are_carried_over(tmp_path: Path, monkeypatch) -> None:
    """The embedded store migrates itself (one machine: no owner to wait for); a journal of the older relgate, named
    by the session id, is renamed to its digest name and what waited in it is sent."""
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    db = tmp_path / "review.sqlite3"
    url = f"sqlite:///{db}"
    run = import_run(tmp_path, 4)
    assert main(["review", "publish", run, "--db", url, "--json", str(tmp_path / "p.json")]) == 0
    sid = json.loads((tmp_path / "p.json").read_text())["session"]
    with sqlite3.connect(db) as c:
        c.execute("UPDATE review_meta SET value = '1' WHERE key = 'schema_version'")
        c.execute("ALTER TABLE review_labels DROP COLUMN written_in")
    store = open_store(url)
    try:
        new = journal_path(store.db.public, sid, "alice")
        digest = hashlib.sha256(f"{store.db.public}\0{sid}\0alice".encode()).hexdigest()[:16]
        old = new.with_name(f"journal-{sid}-{digest}.jsonl")
        item = store.item_ids(sid)[0]
        old.parent.mkdir(parents=True, exist_ok=True)
        old.write_text(json.dumps({"op": "label", "key": "k-old", "item": item, "verdict": "1", "ts": 1.0}) + "\n")
        r = Reviewer(store, store.session(sid), "alice")
        assert r.journal.path == new and not old.exists() and r.waiting == 1
        assert r.flush().committed == 1
        r.close()
        assert store.labels(sid) == {item: {"alice": "1"}}
    finally:
        store.close()
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM review_meta WHERE key = 'schema_version'").fetchone() == ("3",)
