"""Faults lose nothing (issue 21 §8), on a real server: PostgreSQL stopped and restarted in the middle of a session
(every keypress kept in the fsync'd journal, sent in order exactly once when it is back — by the library and by
``relgate review label``); ``kill -9`` of a reviewer holding a claim (the item returns after the lease)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from relgate_tui.cli import main
from relgate_tui.engine.review.client import Reviewer
from relgate_tui.engine.review.store import open_store
from tests.engine.review.conftest import Backend, import_run, write_labels

ROOT = Path(__file__).resolve().parents[3]


def _publish(b: Backend, tmp_path: Path, run: str, *extra: str) -> str:
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, *b.args(None), "--json", str(out), *extra]) == 0
    return str(json.loads(out.read_text())["session"])


def test_postgres_stopped_and_restarted_mid_session(pg_backend: Backend, tmp_path: Path) -> None:
    b = pg_backend
    assert b.pg is not None
    run = import_run(tmp_path, 16)  # 8 calibration items
    sid = _publish(b, tmp_path, run, "--per-item", "1")
    url, _ = b.reviewer("alice")
    store = open_store(url)
    info = store.session(sid)
    r = Reviewer(store, info, "alice")
    done = []
    for _ in range(3):
        c = r.next_item()
        assert c is not None
        assert r.label(c.item_id, "1").committed == 1
        done.append(c.item_id)
    held = r.next_item()
    assert held is not None
    b.pg.stop()
    try:
        first = r.label(held.item_id, "1")
        assert first.unreachable.startswith("database unreachable") and first.waiting == 1
        item, sent = r.undo()  # the waiting label is undone in the journal's order, not lost
        assert item == held.item_id and sent.waiting == 2
        assert r.label(held.item_id, "2").waiting == 3
        lines = r.journal.path.read_text().splitlines()
        assert [json.loads(x)["op"] for x in lines[-3:]] == ["label", "undo", "label"]
        r.close()
        # the CLI picks the journal up: it says what waits, and sends it when the server is back
        labels = write_labels(tmp_path / "alice.jsonl", {f"q{i:03d}": "1" for i in range(16)})
        proc = subprocess.Popen([sys.executable, "-m", "relgate_tui.cli", "review", "label", sid, "--labels",
                                 str(labels), "--db", url, "--retry-for", "300"], stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "database unreachable" in line and "3 labels waiting" in line and b.passwords["alice"] not in line
    finally:
        b.pg.start()
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, rest
    assert "database back" in rest
    store2 = open_store(b.admin_url)
    try:
        labels_now = store2.labels(sid)
        assert sum(len(v) for v in labels_now.values()) == 8  # every item once: nothing lost, nothing doubled
        assert labels_now[held.item_id] == {"alice": "2"}
        assert all(labels_now[i] == {"alice": "1"} for i in done)
    finally:
        store2.close()
        store.close()


KILLED = """
import json, os, signal, sys
from relgate_tui.engine.review.store import open_store
store = open_store(sys.argv[1])
name = store.db.identity(sys.argv[3] if len(sys.argv) > 3 else None)
claim = store.claim(sys.argv[2], name)
print(json.dumps({"item": claim.item_id, "expires_at": claim.expires_at}), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_kill_9_of_a_claiming_reviewer_returns_the_item_after_the_lease(backend: Backend, tmp_path: Path) -> None:
    run = import_run(tmp_path, 2)  # one calibration item, one reviewer per item: bob's claim holds the only slot
    sid = _publish(backend, tmp_path, run, "--per-item", "1", "--lease", "30")
    url, as_name = backend.reviewer("bob")
    proc = subprocess.run([sys.executable, "-c", KILLED, url, sid, *([as_name] if as_name else [])],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == -9, proc.stderr
    held = json.loads(proc.stdout)
    carol_url, carol_as = backend.reviewer("carol")
    store = open_store(carol_url)
    try:
        carol = store.db.identity(carol_as)
        assert store.claim(sid, carol) is None  # still bob's while his lease runs
        backend.expire_leases(sid)  # the lease's end
        back = store.claim(sid, carol)
        assert back is not None and back.item_id == held["item"]
        assert store.commit_label(sid, back.item_id, carol, "1", "k") == "committed"
        assert store.labelled_by(sid) == {held["item"]: [carol]}
    finally:
        store.close()


def test_label_gives_up_with_exit_3_and_keeps_the_journal(pg_backend: Backend, tmp_path: Path, capsys) -> None:
    b = pg_backend
    assert b.pg is not None
    run = import_run(tmp_path, 4)
    sid = _publish(b, tmp_path, run, "--per-item", "1")
    url, _ = b.reviewer("alice")
    store = open_store(url)
    r = Reviewer(store, store.session(sid), "alice")
    claim = r.next_item()
    assert claim is not None
    labels = write_labels(tmp_path / "alice.jsonl", {f"q{i:03d}": "1" for i in range(4)})
    b.pg.stop()
    try:
        assert r.label(claim.item_id, "1").waiting == 1
        r.close()
        capsys.readouterr()
        assert main(["review", "label", sid, "--labels", str(labels), "--db", url, "--retry-for", "0"]) == 3
        err = capsys.readouterr().err
        assert "1 label waiting" in err and "rerun the same command" in err and b.passwords["alice"] not in err
    finally:
        b.pg.start()
    assert main(["review", "label", sid, "--labels", str(labels), "--db", url]) == 0
    assert sum(len(v) for v in store.labels(sid).values()) == 2  # the journaled label and the other item, once each
    store.close()
