"""``kill -9`` under load on a real PostgreSQL: eight labellers, one database role each, in READ COMMITTED,
REPEATABLE READ and SERIALIZABLE (``default_transaction_isolation`` through ``PGOPTIONS``), work one session while
labellers are killed with SIGKILL and restarted: each by its own hand at its first label sent in its first two lives
(before or after the commit, by a fixed seed, so the kills happen whatever the machine's speed), and eight more
from outside at fixed-seed moments. Each labeller is ``Reviewer`` over its journal, as ``relgate review label``
runs it (a process forked from the test's, so that a restart costs no import); a verdict is a fixed function of
(reviewer, item), so a label changed anywhere would show. At the end every item holds exactly R distinct
reviewers, every label a journal saw committed is in the database with its verdict, and after the pull a rerun of
every labeller (replaying its journal) and an undo change nothing."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

from relgate_tui.cli import main
from relgate_tui.engine.review.store import LabelRejected, open_store
from tests.engine.review.conftest import Backend, import_run

LEVELS = ("read\\ committed", "repeatable\\ read", "serializable")

def _labeller(url: str, sid: str, home: str, level: str, log: str, die: str = "") -> None:
    """One labeller's life (a forked process: nothing to import): replay the journal, then label until the queue
    holds nothing more for it. ``die`` "before" / "after": SIGKILL itself at its first label sent, before the
    database saw it (the journal holds it) or once it is committed (the journal does not know yet)."""
    os.environ.update(RELGATE_HOME=home, PGOPTIONS=f"-c default_transaction_isolation={level}")
    os.environ.pop("RELGATE_DB", None)
    try:
        from relgate_tui.engine.review.client import Reviewer

        store = open_store(url)
        name = store.db.identity(None)
        r = Reviewer(store, store.session(sid), name)
        if die:
            for method in ("commit_label", "commit_label_and_claim"):
                real = getattr(store, method)

                def dying(*args: Any, _real: Any = real, **kw: Any) -> Any:
                    if die == "before":
                        os.kill(os.getpid(), signal.SIGKILL)
                    got = _real(*args, **kw)
                    os.kill(os.getpid(), signal.SIGKILL)
                    return got

                setattr(store, method, dying)
        r.flush()  # what a killed run left in the journal goes first
        while (claim := r.next_item()) is not None:
            sent = r.label(claim.item_id, _verdict(name, claim.item_id, max(1, len(claim.item.candidates))),
                           claim_next=True)
            if sent.unreachable or sent.rejected:
                raise RuntimeError(f"{name}: {sent.unreachable or sent.rejected}")
        r.close()
        store.close()
    except BaseException as e:
        Path(log).write_text(repr(e))
        os._exit(1)
    os._exit(0)


def _verdict(name: str, item: str, n: int) -> str:
    return str(1 + int(hashlib.sha256(f"{name}/{item}".encode()).hexdigest(), 16) % n)


def test_eight_labellers_killed_at_random_keep_r_and_the_record(pg_backend: Backend, tmp_path: Path) -> None:
    b = pg_backend
    run = import_run(tmp_path, 48)  # 24 items, three candidates each
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, *b.args(None), "--per-item", "2", "--json", str(out)]) == 0
    sid = json.loads(out.read_text())["session"]
    names = [f"load{k}" for k in range(8)]
    urls = {n: b.reviewer(n)[0] for n in names}
    home = tmp_path / "home"

    fork = multiprocessing.get_context("fork")

    rng = random.Random(39)
    # each labeller's first two lives end by its own SIGKILL at its first label sent (before or after the commit,
    # by a fixed seed): whatever the machine's speed, whoever labels first dies twice
    deaths = {k: [rng.choice(("before", "after")) for _ in range(2)] for k in range(len(names))}

    def start(k: int) -> Any:
        die = deaths[k].pop(0) if deaths[k] else ""
        p = fork.Process(target=_labeller, args=(urls[names[k]], sid, str(home), LEVELS[k % len(LEVELS)],
                                                 str(tmp_path / f"{names[k]}.log"), die), daemon=True)
        p.start()
        return p

    def failed(k: int) -> str:
        log = tmp_path / f"{names[k]}.log"
        return log.read_text() if log.exists() else ""

    procs = {k: start(k) for k in range(len(names))}
    kills = 0
    try:
        for _ in range(8):  # and eight SIGKILLs from outside at fixed-seed moments (wherever the labeller is)
            time.sleep(rng.uniform(0.05, 0.3))
            k = rng.randrange(len(names))
            if procs[k].is_alive():
                os.kill(procs[k].pid, signal.SIGKILL)
            procs[k].join()
        deadline = time.monotonic() + 240
        while any(p.exitcode != 0 for p in procs.values()):  # a killed labeller is restarted until it finishes
            assert time.monotonic() < deadline, "the labellers did not finish"
            for k, p in procs.items():
                p.join(timeout=0.05)
                if p.exitcode == -signal.SIGKILL:
                    kills += 1
                    procs[k] = start(k)
                elif p.exitcode not in (None, 0):
                    raise AssertionError((names[k], failed(k)))
    finally:
        for p in procs.values():
            if p.is_alive():
                p.kill()
                p.join()

    def labels() -> list[tuple[str, str, str, str]]:
        return sorted(b.sql("SELECT item_id, reviewer, verdict, client_key FROM review_labels WHERE session_id = :s",
                            {"s": sid}))

    rows = labels()
    items = [r[0] for r in b.sql("SELECT item_id FROM review_items WHERE session_id = :s", {"s": sid})]
    by_item: dict[str, list[str]] = {}
    for item, reviewer, _, _ in rows:
        by_item.setdefault(item, []).append(reviewer)
    assert {i: sorted(set(by_item.get(i, []))) == sorted(by_item.get(i, [])) and len(by_item.get(i, [])) == 2
            for i in items} == dict.fromkeys(items, True)
    for item, reviewer, verdict, _ in rows:  # nobody's label was changed on the way
        assert verdict == _verdict(reviewer, item, 3)
    # no label lost: every key a journal marked committed (or found committed before) is in the database
    stored = {key for _, _, _, key in rows}
    committed = set()
    for path in (home / "review").glob("journal-*.jsonl"):
        for line in path.read_text().splitlines():
            ev = json.loads(line)
            if ev.get("op") == "sent" and ev.get("outcome") in ("committed", "duplicate"):
                committed.add(ev["key"])
    assert committed and committed <= stored
    assert kills >= 2  # at least the first labeller's two deaths

    # after the pull nothing is withdrawn or changed: rerun every labeller (its journal replays), try an undo
    assert main(["review", "pull", sid, *b.args(None), "--run-dir", str(home / "runs")]) == 0
    for k in range(len(names)):
        deaths[k] = []
        p = start(k)
        p.join(timeout=120)
        assert p.exitcode == 0, (names[k], failed(k))
    store = open_store(urls[names[0]])
    try:
        try:
            store.undo(sid, names[0])
            raise AssertionError("an undo after the pull was taken")
        except LabelRejected as e:
            assert "pulled" in str(e) or "another reviewer" in str(e)
    finally:
        store.close()
    assert labels() == rows
