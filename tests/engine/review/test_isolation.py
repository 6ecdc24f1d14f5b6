"""The review database keeps R, blindness and the record under any isolation level and transaction pattern: each
reproduction a reviewer with ``psql`` could run against the store on a real PostgreSQL server (:mod:`.pgserver`),
first the direct SQL of the attack (refused), then the database's own functions (which keep the rules)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from relgate_tui.cli import main
from relgate_tui.engine.review.store import LabelRejected, open_store
from tests.engine.review.conftest import Backend, import_run, write_labels

Denied = psycopg.errors.InsufficientPrivilege
LEVELS = ("READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE")


@pytest.fixture
def pgb(pg_backend: Backend) -> Backend:
    return pg_backend


def _session(b: Backend, tmp_path: Path, n: int = 4, per_item: int = 2, classes: int = 3) -> tuple[str, list[str]]:
    """A session of the run's calibration items (half of ``n``); (its id, its items in queue order)."""
    run = import_run(tmp_path, n, classes=classes)
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, *b.args(None), "--per-item", str(per_item), "--json", str(out)]) == 0
    sid = str(json.loads(out.read_text())["session"])
    items = [r[0] for r in b.sql("SELECT item_id FROM review_items WHERE session_id = :s ORDER BY position",
                                 {"s": sid})]
    return sid, items


@contextmanager
def _tx(b: Backend, name: str, level: str = "READ COMMITTED") -> Iterator[psycopg.Connection]:
    """An open transaction of reviewer ``name`` at ``level`` (committed if nothing failed, else rolled back)."""
    url, _ = b.reviewer(name)
    with psycopg.connect(url) as c:
        c.execute(f"SET TRANSACTION ISOLATION LEVEL {level}")
        yield c


def _refused(c: psycopg.Connection, sql: str, params: tuple = ()) -> BaseException | list:
    """``sql`` in a savepoint of ``c``'s open transaction: the error it raised, else its rows (the transaction and
    its snapshot go on either way)."""
    try:
        with c.transaction():
            cur = c.execute(sql, params)
            return cur.fetchall() if cur.description else []
    except psycopg.Error as e:
        return e


def _label(b: Backend, name: str, sid: str, verdict: str = "1") -> str:
    """``name`` labels the next item of the queue through relgate (committed); returns the item."""
    store = open_store(b.reviewer(name)[0])
    try:
        got = store.claim(sid, name)
        assert got is not None
        assert store.commit_label(sid, got.item_id, name, verdict, f"k-{name}-{got.item_id}") == "committed"
        return got.item_id
    finally:
        store.close()


CLAIM = "INSERT INTO review_claims VALUES (%s, %s, %s, 'claimed', 1e18)"
CLAIM_FN = "SELECT * FROM relgate_review_claim(%s, %s, 'claimed', 1e9, true)"
LABEL = ("INSERT INTO review_labels (session_id, item_id, reviewer, verdict, client_key, created_at) "
         "VALUES (%s, %s, %s, %s, %s, 0)")


def test_a_snapshot_older_than_the_honest_labels_takes_no_third_slot(pgb: Backend, tmp_path: Path) -> None:
    sid, items = _session(pgb, tmp_path, 2 * len(LEVELS))  # one item per isolation level, R = 2
    pgb.reviewer("alice"), pgb.reviewer("bob")
    for level, item in zip(LEVELS, items, strict=True):
        with _tx(pgb, "carol", level) as c:
            c.execute("SELECT count(*) FROM review_claims").fetchall()  # carol's snapshot: the item still empty
            assert _label(pgb, "alice", sid) == item and _label(pgb, "bob", sid, "2") == item
            for sql, params in ((CLAIM, (sid, item, "carol")), (CLAIM_FN, (sid, item)),
                                (LABEL, (sid, item, "carol", "1", "kc"))):
                got = _refused(c, sql, params)
                assert isinstance(got, psycopg.Error) or got == [], (level, sql, got)
        assert sorted(pgb.sql("SELECT reviewer FROM review_labels WHERE item_id = :i", {"i": item})) == [
            ("alice",), ("bob",)], level
    assert pgb.sql("SELECT count(*) FROM review_claims WHERE reviewer = 'carol' AND (state = 'done' "
                   "OR expires_at > extract(epoch from clock_timestamp()))") == [(0,)]


def test_an_undo_after_seeing_another_label_is_refused(pgb: Backend, tmp_path: Path) -> None:
    sid, items = _session(pgb, tmp_path, 2)
    item = _label(pgb, "alice", sid, "1")
    _label(pgb, "bob", sid, "2")
    with _tx(pgb, "alice") as c:  # she may read bob's verdict (by design), so she may not take hers back
        assert isinstance(_refused(c, "DELETE FROM review_labels WHERE reviewer = 'alice'"), Denied)
        assert isinstance(_refused(c, "UPDATE review_labels SET verdict = '2' WHERE reviewer = 'alice'"), Denied)
        assert ("bob", "2") in c.execute("SELECT reviewer, verdict FROM relgate_review_labels(%s)",
                                         (sid,)).fetchall()
        got = _refused(c, "SELECT relgate_review_undo(%s, NULL)", (sid,))
        assert isinstance(got, Denied) and "stands as given" in str(got)
    store = open_store(pgb.reviewer("alice")[0])
    try:
        with pytest.raises(LabelRejected, match="another reviewer's label"):
            store.undo(sid, "alice")
    finally:
        store.close()
    assert sorted(pgb.sql("SELECT reviewer, verdict FROM review_labels WHERE item_id = :i", {"i": item})) == [
        ("alice", "1"), ("bob", "2")]


def test_parallel_transactions_of_one_reviewer_hold_one_claim(pgb: Backend, tmp_path: Path, capsys) -> None:
    sid, items = _session(pgb, tmp_path, 12, per_item=1)  # six items, one reviewer each
    url, _ = pgb.reviewer("mallory")
    conns = [psycopg.connect(url) for _ in items]
    try:
        for c, item in zip(conns, items, strict=True):  # one open transaction per item, none committed yet
            c.execute("SET lock_timeout = '200ms'")  # (the attacker's own choice: so that this test never waits)
            if isinstance(_refused(c, CLAIM, (sid, item, "mallory")), psycopg.Error):
                _refused(c, CLAIM_FN, (sid, item))
        for c in conns:
            c.commit()
    finally:
        for c in conns:
            c.close()
    assert pgb.sql("SELECT count(*) FROM review_claims WHERE reviewer = 'mallory' "
                   "AND expires_at > extract(epoch from clock_timestamp())") == [(1,)]
    labels = write_labels(tmp_path / "carol.jsonl", dict.fromkeys(items, "1"))
    capsys.readouterr()
    assert main(["review", "label", sid, "--labels", str(labels), *pgb.args("carol")]) == 0
    assert "5 labels given" in capsys.readouterr().err  # every item but the one mallory holds


def test_a_transaction_held_past_its_lease_labels_nothing(pgb: Backend, tmp_path: Path) -> None:
    sid, items = _session(pgb, tmp_path, 2)
    store = open_store(pgb.reviewer("alice")[0])
    try:
        got = store.claim(sid, "alice")
        assert got is not None
    finally:
        store.close()
    with _tx(pgb, "alice") as c:
        start = c.execute("SELECT extract(epoch from now())::float8").fetchone()[0]  # the transaction's start
        pgb.sql("UPDATE review_claims SET expires_at = :t WHERE reviewer = 'alice'", {"t": start + 0.05})
        # the lease ends while the transaction is open: wait for that moment itself (the server's clock passing it)
        while not c.execute("SELECT extract(epoch from clock_timestamp()) > %s", (start + 0.05,)).fetchone()[0]:
            c.execute("SELECT pg_sleep(0.01)")
        got = _refused(c, LABEL, (sid, items[0], "alice", "1", "ka"))
        assert isinstance(got, Denied) and "no running claim" in str(got)
    assert pgb.sql("SELECT count(*) FROM review_labels") == [(0,)]


def test_no_reviewer_can_lock_what_others_wait_for(pgb: Backend, tmp_path: Path) -> None:
    sid, _ = _session(pgb, tmp_path, 4)
    with _tx(pgb, "alice") as c:
        for sql in ("SELECT item_id FROM review_items WHERE session_id = %s FOR UPDATE",
                    "SELECT item_id FROM review_items WHERE session_id = %s FOR KEY SHARE",
                    "SELECT item_id FROM review_claims WHERE session_id = %s FOR UPDATE"):
            assert isinstance(_refused(c, sql, (sid,)), Denied), sql
        for table in ("review_items", "review_claims", "review_labels", "review_sessions", "review_reviewers"):
            got = _refused(c, f"LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE NOWAIT")
            assert isinstance(got, Denied), table
        # and what a transaction of theirs left open costs the others is bounded (the role's settings)
        assert c.execute("SHOW lock_timeout").fetchone()[0] == "10s"
        assert c.execute("SHOW idle_in_transaction_session_timeout").fetchone()[0] == "1min"
    # a role made a reviewer by hand (or by an older relgate) gets them from `review init`
    assert pgb.pg is not None
    pgb.pg.create_login("dave39", "dave-pw-39")
    pgb.sql("GRANT relgate_reviewer TO dave39")
    assert main(["review", "init", "--db", pgb.admin_url]) == 0
    with psycopg.connect(pgb.pg.url("dave39", "dave-pw-39", pgb.db)) as c:
        assert c.execute("SHOW lock_timeout").fetchone()[0] == "10s"


def test_labels_are_kept_after_pull_and_adjudication(pgb: Backend, tmp_path: Path) -> None:
    sid, items = _session(pgb, tmp_path, 4, per_item=1)  # two items, one reviewer each
    first, second = _label(pgb, "alice", sid, "1"), _label(pgb, "alice", sid, "2")
    url, _ = pgb.reviewer("judy", adjudicator=True)
    assert main(["review", "adjudicate", sid, "--decide", f"{first}=1", "--db", url]) == 0
    with _tx(pgb, "alice") as c:
        got = _refused(c, "SELECT relgate_review_undo(%s, %s)", (sid, f"k-alice-{first}"))
        assert isinstance(got, Denied) and "adjudicated" in str(got)
    assert main(["review", "pull", sid, *pgb.args(None), "--run-dir", str(tmp_path / "home" / "runs")]) == 0
    with _tx(pgb, "alice") as c:
        assert isinstance(_refused(c, "DELETE FROM review_labels"), Denied)
        got = _refused(c, "SELECT relgate_review_undo(%s, NULL)", (sid,))
        assert isinstance(got, Denied) and "was pulled" in str(got)
    for sql in ("DELETE FROM review_labels", "UPDATE review_labels SET verdict = 'none'",
                "UPDATE review_sessions SET pulled_at = NULL", "DELETE FROM review_adjudications"):
        with pytest.raises(Exception, match="never|the record"):  # not even by the owner's hand
            pgb.sql(sql)
    assert sorted(pgb.sql("SELECT item_id, verdict FROM review_labels")) == sorted([(first, "1"), (second, "2")])


def test_a_rank_beyond_the_candidates_is_refused_by_the_database(pgb: Backend, tmp_path: Path) -> None:
    sid, items = _session(pgb, tmp_path, 2, classes=3)
    with _tx(pgb, "alice") as c:
        if isinstance(_refused(c, CLAIM, (sid, items[0], "alice")), psycopg.Error):
            assert _refused(c, CLAIM_FN, (sid, items[0]))
        got = _refused(c, LABEL, (sid, items[0], "alice", "999999", "ka"))
        assert isinstance(got, psycopg.errors.CheckViolation) and "rank 999999 does not exist" in str(got)
        assert _refused(c, LABEL, (sid, items[0], "alice", "3", "ka")) == []  # the third candidate exists
    url, _ = pgb.reviewer("judy", adjudicator=True)
    with psycopg.connect(url, autocommit=True) as c, pytest.raises(psycopg.errors.CheckViolation):
        c.execute("INSERT INTO review_adjudications VALUES (%s, %s, '4', 'judy', 0)", (sid, items[0]))


def test_the_planner_tells_a_reviewer_nothing_of_the_verdicts(pgb: Backend, tmp_path: Path) -> None:
    sid, items = _session(pgb, tmp_path, 40, per_item=1)  # 20 items
    store = open_store(pgb.reviewer("alice")[0])
    try:
        for n in range(len(items)):
            got = store.claim(sid, "alice")
            assert got is not None
            store.commit_label(sid, got.item_id, "alice", "1" if n < 15 else "none", f"k{n}")
    finally:
        store.close()
    pgb.sql("ANALYZE review_labels")
    with _tx(pgb, "carol") as c:  # carol labelled nothing
        for sql in ("EXPLAIN SELECT * FROM review_labels WHERE verdict = '1'",
                    "EXPLAIN SELECT id FROM review_labels WHERE verdict = 'none'",
                    "SELECT count(*) FROM review_labels WHERE verdict = '1'"):
            assert isinstance(_refused(c, sql), Denied), sql
        assert _refused(c, "SELECT * FROM pg_stats WHERE tablename = 'review_labels'") == []
        assert _refused(c, "SELECT * FROM pg_stats_ext WHERE tablename = 'review_labels'") == []
        plans = {v: _refused(c, "EXPLAIN SELECT * FROM relgate_review_labels(%s) WHERE verdict = %s", (sid, v))
                 for v in ("1", "none", "2", "skip")}
        estimates = {re.search(r"rows=(\d+)", str(p)).group(1) for p in plans.values()}  # type: ignore[union-attr]
        assert len(estimates) == 1, plans  # the same estimate whatever the verdict
        assert _refused(c, "SELECT * FROM relgate_review_labels(%s)", (sid,)) == []
        assert isinstance(_refused(c, "SELECT * FROM review_reviewers"), Denied)


def test_a_second_decision_keeps_the_first_in_the_history(backend: Backend, tmp_path: Path) -> None:
    sid, items = _session(backend, tmp_path, 2, per_item=1)
    judges = ["judy", "jack"]
    for judge, verdict in zip(judges, ("1", "2"), strict=True):
        url, as_name = backend.reviewer(judge, adjudicator=True)
        assert main(["review", "adjudicate", sid, "--decide", f"{items[0]}={verdict}", "--db", url,
                     *(["--as", as_name] if as_name else [])]) == 0
    assert backend.sql("SELECT verdict, adjudicator FROM review_adjudications") == [("2", "jack")]
    assert backend.sql("SELECT verdict, adjudicator, replaced_by FROM review_adjudication_history") == [
        ("1", "judy", "jack")]
    if backend.is_pg:  # by hand, too: the trigger writes the history
        with psycopg.connect(backend.reviewer("judy", adjudicator=True)[0], autocommit=True) as c:
            c.execute("UPDATE review_adjudications SET verdict = 'none', adjudicator = 'judy'")
            with pytest.raises(Denied):
                c.execute("DELETE FROM review_adjudication_history")
        assert len(backend.sql("SELECT * FROM review_adjudication_history")) == 2


def test_per_item_is_bounded(backend: Backend, tmp_path: Path, capsys) -> None:
    run = import_run(tmp_path, 4)
    capsys.readouterr()
    assert main(["review", "publish", run, *backend.args(None), "--per-item", str(2**31 - 1)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "between 1 and 100" in err
    if backend.is_pg:
        with pytest.raises(Exception, match="review_sessions_settings"):
            backend.sql("INSERT INTO review_sessions VALUES ('s9', 'n', 'r', 2147483647, 600, 'postgres', 0, '{}')")
