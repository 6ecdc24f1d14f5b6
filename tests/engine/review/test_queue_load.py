"""The queue's exactness under load (issue 21 §3): the claim and the label write only while the item still has a
slot, counted by the writing statement itself after the item's row lock — never from the scan's older snapshot.

A claim written from a stale scan (the slots filled between the scan and the lock) would hand an item to R + 1
reviewers; the statements are checked directly on a full item, and eight reviewers working one session at once must
leave exactly R labels on every item."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from relgate_tui.engine.review import queries as Q
from relgate_tui.engine.review.client import Reviewer
from relgate_tui.engine.review.store import open_store
from tests.engine.review.conftest import Backend, import_run
from tests.engine.review.test_store import _publish


def test_a_full_item_takes_no_claim_and_no_label_even_from_a_stale_scan(backend: Backend, tmp_path: Path) -> None:
    run = import_run(tmp_path, 2)  # one calibration item, R = 2
    sid = _publish(backend, tmp_path, run)
    stores = {n: open_store(backend.args(n)[1]) for n in ("alice", "bob", "carol")}
    try:
        names = {n: stores[n].db.identity(backend.reviewer(n)[1]) for n in stores}
        item = stores["alice"].claim(sid, names["alice"])
        assert item is not None and stores["bob"].claim(sid, names["bob"]) is not None
        assert stores["carol"].claim(sid, names["carol"]) is None  # the scan sees it full
        now = time.time()
        params = {"sid": sid, "item": item.item_id, "me": names["carol"], "now": now, "per_item": 2, "wait": True}

        def write(c):  # what a claimer whose scan predates bob's claim would execute next, and a label of carol's
            claim = c.execute(Q.upsert_claim(c.dialect.name, if_room=True),
                              {**params, "state": "claimed", "lease": 600.0}).first()
            label = c.execute(Q.INSERT_LABEL, {**params, "verdict": "1", "key": "k-carol"}).first()
            return claim, label

        assert stores["carol"].db.run("write", write) == (None, None)
        assert stores["alice"].labelled_by(sid) == {}
    finally:
        for s in stores.values():
            s.close()


def test_eight_reviewers_at_once_leave_exactly_r_labels_on_every_item(backend: Backend, tmp_path: Path) -> None:
    run = import_run(tmp_path, 60)  # 30 calibration items
    sid = _publish(backend, tmp_path, run)
    names = [f"rev{k}" for k in range(8)]
    stores = {n: open_store(backend.args(n)[1]) for n in names}
    rejected: list[str] = []
    counts: dict[str, int] = {}
    start = threading.Barrier(len(names))

    def work(n: str) -> None:
        store = stores[n]
        reviewer = Reviewer(store, store.session(sid), store.db.identity(backend.reviewer(n)[1]))
        start.wait()
        done = 0
        while (claim := reviewer.next_item()) is not None:
            sent = reviewer.label(claim.item_id, "1")
            rejected.extend(sent.rejected)
            done += sent.committed
        counts[n] = done
        reviewer.close()

    try:
        threads = [threading.Thread(target=work, args=(n,)) for n in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        by = stores[names[0]].labelled_by(sid)
        items = stores[names[0]].item_ids(sid)
    finally:
        for s in stores.values():
            s.close()
    assert rejected == []  # nobody was handed an item whose slots were already taken
    assert {i: len(set(by.get(i, []))) for i in items} == {i: 2 for i in items}
    assert sum(counts.values()) == 2 * len(items) == sum(len(v) for v in by.values())


def test_a_label_claims_the_next_item_in_its_transaction_and_undo_brings_the_item_back(backend: Backend,
                                                                                       tmp_path: Path) -> None:
    run = import_run(tmp_path, 6)  # three calibration items
    sid = _publish(backend, tmp_path, run)
    store = open_store(backend.args("alice")[1])
    try:
        reviewer = Reviewer(store, store.session(sid), store.db.identity(backend.reviewer("alice")[1]))
        items = store.item_ids(sid)
        first = reviewer.next_item()
        assert first is not None and first.item_id == items[0]
        sent = reviewer.label(first.item_id, "1", claim_next=True)
        assert sent.committed == 1 and reviewer.current is not None and reviewer.current.item_id == items[1]
        assert reviewer.next_item().item_id == items[1]  # handed out without a second claim
        # label the second, then undo it: the queue is asked again and the undone item comes back, not the third
        reviewer.label(items[1], "2", claim_next=True)
        undone, _ = reviewer.undo()
        assert undone == items[1] and reviewer.next_item().item_id == items[1]
        # passing an item over: the prefetched claim is not handed out when it is excluded
        reviewer.label(items[1], "1", claim_next=True)
        assert reviewer.current is not None and reviewer.current.item_id == items[2]
        assert reviewer.next_item(exclude={items[2]}) is None
        assert store.labelled_by(sid) == {items[0]: [reviewer.name], items[1]: [reviewer.name]}
        reviewer.close()
    finally:
        store.close()
