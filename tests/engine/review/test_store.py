"""The review store and commands on both backends (issue 21 §2, §3, §5): publish → label → status → pull; the
queue (R distinct reviewers, leases, the race for the last slot), undo, exactly-once journal, schema versions."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.engine.review.client import Reviewer
from relgate_tui.engine.review.store import LabelRejected, open_store
from tests.engine.review.conftest import Backend, import_run, write_labels

STATUS_KEYS = {"session", "items", "labels", "per_item", "reviewers", "agreement", "disputed", "adjudicated",
               "final"}


def _publish(backend: Backend, tmp_path: Path, run: str, *extra: str) -> str:
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, *backend.args(None), "--json", str(out), *extra]) == 0
    doc = json.loads(out.read_text())
    assert set(doc) >= {"session", "items"}
    return str(doc["session"])


def _status(backend: Backend, tmp_path: Path, sid: str, *extra: str, who: str | None = None) -> dict:
    out = tmp_path / "status.json"
    assert main(["review", "status", sid, *backend.args(who), "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_two_reviewers_label_every_item_twice(backend: Backend, tmp_path: Path, capsys) -> None:
    run = import_run(tmp_path, 20)
    sid = _publish(backend, tmp_path, run)
    items = [f"q{i:03d}" for i in range(20)]
    a = {i: "1" for i in items}
    b = {i: ("2" if n % 4 == 0 else "1") for n, i in enumerate(items)}
    c = {i: "none" for i in items}
    for name, verdicts in (("alice", a), ("bob", b), ("carol", c)):
        assert main(["review", "label", sid, "--labels", str(write_labels(tmp_path / f"{name}.jsonl", verdicts)),
                     *backend.args(name)]) == 0
    doc = _status(backend, tmp_path, sid)
    assert set(doc) >= STATUS_KEYS
    cal = [i for i in doc["per_item"]]
    assert doc["items"] == len(cal) == 10  # the run's calibration half
    assert doc["labels"] == 2 * len(cal)
    assert all(sorted(v) == ["alice", "bob"] for v in doc["per_item"].values())  # carol found nothing left
    assert set(doc["reviewers"]) == {"alice", "bob"}
    ag = doc["agreement"]
    assert set(ag) >= {"fleiss_kappa", "krippendorff_alpha", "pairs"}
    assert all("ci" in ag[k] for k in ("fleiss_kappa", "krippendorff_alpha"))
    assert ag["pairs"][0]["a"] == "alice" and "ci" in ag["pairs"][0]["cohen_kappa"]
    disputed = sorted(i for i in cal if b[i] != a[i])
    assert doc["disputed"] == [i for i in cal if i in disputed] and doc["adjudicated"] == []
    assert doc["final"] == {i: ("none" if i in disputed else "1") for i in cal}


def test_race_for_the_last_slot(backend: Backend, tmp_path: Path) -> None:
    run = import_run(tmp_path, 2)  # one calibration item
    sid = _publish(backend, tmp_path, run)
    stores = {n: open_store(backend.args(n)[1]) for n in ("alice", "bob", "carol")}
    try:
        names = {n: stores[n].db.identity(backend.reviewer(n)[1]) for n in stores}
        first = stores["alice"].claim(sid, names["alice"])
        assert first is not None
        assert stores["alice"].commit_label(sid, first.item_id, names["alice"], "1", "k-alice") == "committed"
        # bob and carol race for the last slot at the same moment: one gets it, the other is told there is none
        got: dict[str, object] = {}
        barrier = threading.Barrier(2)

        def take(n: str) -> None:
            barrier.wait()
            got[n] = stores[n].claim(sid, names[n])

        threads = [threading.Thread(target=take, args=(n,)) for n in ("bob", "carol")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [n for n, c in got.items() if c is not None]
        assert len(winners) == 1
        loser = "carol" if winners == ["bob"] else "bob"
        # the winner's lease runs out (600 s) and the loser takes the slot; the winner's late label is refused
        assert stores[loser].claim(sid, names[loser]) is None  # the winner's lease runs
        backend.expire_leases(sid, names[winners[0]])
        late = stores[loser].claim(sid, names[loser])
        assert late is not None and late.item_id == first.item_id
        with pytest.raises(LabelRejected, match="already has its 2 reviewers"):
            stores[winners[0]].commit_label(sid, first.item_id, names[winners[0]], "2", "k-late")
        assert stores[loser].commit_label(sid, first.item_id, names[loser], "2", "k-loser") == "committed"
        by = stores["alice"].labelled_by(sid)
        assert sorted(by[first.item_id]) == sorted(["alice", loser])
    finally:
        for s in stores.values():
            s.close()


def test_undo_own_last_label_and_exactly_once_resend(backend: Backend, tmp_path: Path) -> None:
    run = import_run(tmp_path, 6)
    sid = _publish(backend, tmp_path, run)
    store = open_store(backend.args("alice")[1])
    try:
        name = store.db.identity(backend.reviewer("alice")[1])
        info = store.session(sid)
        r = Reviewer(store, info, name)
        first = r.next_item()
        assert first is not None
        assert r.label(first.item_id, "1").committed == 1
        second = r.next_item()
        assert second is not None and second.item_id != first.item_id
        assert r.label(second.item_id, "none").committed == 1
        item, sent = r.undo()
        assert item == second.item_id and sent.waiting == 0
        assert set(store.labelled_by(sid)) == {first.item_id}
        again = r.next_item()
        assert again is not None and again.item_id == second.item_id  # the undone item comes back to its reviewer
        # a label committed but not marked sent (a crash in between) is resent once: recognised, not doubled
        r.journal.append({"op": "label", "key": "crash-key", "item": again.item_id, "verdict": "2", "ts": 1.0})
        assert store.commit_label(sid, again.item_id, name, "2", "crash-key") == "committed"
        sent = r.flush()
        assert sent.committed == 1 and sent.waiting == 0
        labels = store.labels(sid)
        assert labels[again.item_id] == {name: "2"} and sum(len(v) for v in labels.values()) == 2
        r.close()
    finally:
        store.close()


@pytest.mark.parametrize("policy", ["strict", "majority"])
def test_pull_equals_a_local_run_with_the_same_final_labels(backend: Backend, tmp_path: Path, policy: str) -> None:
    run = import_run(tmp_path, 24)
    per_item = "3" if policy == "majority" else "2"
    sid = _publish(backend, tmp_path, run, "--per-item", per_item)
    items = sorted(_status(backend, tmp_path, sid)["per_item"])
    votes = {
        "alice": {i: "1" for i in items},
        "bob": {i: ("2" if n % 3 == 0 else "1") for n, i in enumerate(items)},
        "carol": {i: ("none" if n % 4 == 0 else "1") for n, i in enumerate(items)},
    }
    names = ["alice", "bob", "carol"][: int(per_item)]
    for name in names:
        assert main(["review", "label", sid, "--labels", str(write_labels(tmp_path / f"{name}.jsonl", votes[name])),
                     *backend.args(name)]) == 0
    doc = _status(backend, tmp_path, sid, "--policy", policy)
    assert doc["disputed"], "the test needs disputes"
    expected = {}
    for i in items:
        given = [votes[n][i] for n in names]
        top = max(set(given), key=given.count)
        agreed = len(set(given)) == 1
        if policy == "strict":
            expected[i] = given[0] if agreed else "none"
        else:
            expected[i] = top if 2 * given.count(top) > len(given) else "none"
    assert doc["final"] == expected
    assert main(["review", "pull", sid, "--policy", policy, *backend.args(None)]) == 0
    runs = tmp_path / "home" / "runs"
    pulled = json.loads((runs / run / "results.json").read_text())
    # the same samples in another data dir, certified locally with the same final labels as a labels file
    local_root = tmp_path / "local"
    local_root.mkdir()
    final_file = write_labels(tmp_path / "final.jsonl", expected)
    assert main(["import", "samples", str(tmp_path / "s.jsonl"), "--run-dir", str(local_root / "runs"),
                 "--labels", str(final_file), "--quiet"]) == 0
    local = json.loads((local_root / "runs" / run / "results.json").read_text())
    def comparable(doc: dict) -> dict:
        """The document without what names where the labels came from (the review section, the import record,
        the calls of the invocation) and without each item's label source."""
        out = {k: v for k, v in doc.items() if k not in ("review", "imported_from", "calls")}
        out["items"] = [{k: v for k, v in it.items() if k not in ("verified_by", "flags", "doc_hash")}
                        for it in doc["items"]]
        return out

    assert comparable(pulled) == comparable(local)
    assert {it["verified_by"] for it in pulled["items"] if it["role"] == "calibration"} == {f"review:{sid}"}
    assert pulled["review"]["policy"] == policy
    assert pulled["review"]["counted_as_misses"] == [i for i in doc["counted_as_misses"]]
    labels = [json.loads(x) for x in (runs / run / "labels.jsonl").read_text().splitlines()]
    assert {ev["source"] for ev in labels} == {f"review:{sid}"}
    # pulling again changes nothing
    assert main(["review", "pull", sid, "--policy", policy, *backend.args(None)]) == 0
    assert len((runs / run / "labels.jsonl").read_text().splitlines()) == len(labels)
    report = (tmp_path / "r.md")
    assert main(["report", run, "--run-dir", str(runs), "--output", str(report)]) == 0
    n = len(doc["counted_as_misses"])
    assert f"{n} disputed item{'s counted as misses' if n != 1 else ' counted as a miss'}" in report.read_text()


def test_adjudication_settles_a_dispute(backend: Backend, tmp_path: Path, capsys) -> None:
    run = import_run(tmp_path, 8)
    sid = _publish(backend, tmp_path, run)
    items = sorted(_status(backend, tmp_path, sid)["per_item"])
    write_labels(tmp_path / "a.jsonl", {i: "1" for i in items})
    write_labels(tmp_path / "b.jsonl", {i: "2" for i in items})
    for name in ("alice", "bob"):
        assert main(["review", "label", sid, "--labels", str(tmp_path / f"{name[0]}.jsonl"), *backend.args(name)]) == 0
    capsys.readouterr()
    if backend.is_pg:
        backend.reviewer("judy", adjudicator=True)
    judge = "judy" if backend.is_pg else None
    assert main(["review", "adjudicate", sid, *backend.args(judge), "--json", "-"]) == 0
    queue = json.loads(capsys.readouterr().out)
    assert sorted(d["item"] for d in queue["disputed"]) == items
    assert all(set(d["labels"].values()) == {"1", "2"} for d in queue["disputed"])
    assert main(["review", "adjudicate", sid, *backend.args(judge), "--decide", f"{items[0]}=2"]) == 0
    doc = _status(backend, tmp_path, sid)
    assert doc["adjudicated"] == [items[0]] and doc["final"][items[0]] == "2"
    assert items[0] not in doc["disputed"] and len(doc["disputed"]) == len(items) - 1


def test_a_newer_schema_is_refused_in_one_line(backend: Backend, tmp_path: Path, capsys) -> None:
    import sqlalchemy as sa

    store = open_store(backend.admin_url)
    store.db.run("bump", lambda c: c.execute(sa.text("UPDATE review_meta SET value = '99' "
                                                     "WHERE key = 'schema_version'")))
    store.close()
    capsys.readouterr()
    assert main(["review", "status", "nope", "--db", backend.admin_url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "schema version 99" in err and "upgrade relgate" in err


def test_unknown_session_and_bad_url_are_one_line(backend: Backend, tmp_path: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["review", "status", "doesnotexist", *backend.args(None)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["review", "status", "x", "--db", "mysql://u:pw@h/db"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pw" not in err.replace("postgresql", "")


def test_a_rank_beyond_the_candidates_is_refused(backend: Backend, tmp_path: Path, capsys) -> None:
    run = import_run(tmp_path, 4, classes=2)  # two candidates per item
    sid = _publish(backend, tmp_path, run)
    store = open_store(backend.args("alice")[1])
    try:
        name = store.db.identity(backend.reviewer("alice")[1])
        claim = store.claim(sid, name)
        assert claim is not None and len(claim.item.candidates) == 2
        r = Reviewer(store, store.session(sid), name)
        sent = r.label(claim.item_id, "3")
        assert sent.committed == 0 and "rank 3 does not exist" in sent.rejected[0] and r.waiting == 0
        r.close()
    finally:
        store.close()
    judge = "judy" if backend.is_pg else None
    if backend.is_pg:
        backend.reviewer("judy", adjudicator=True)
    capsys.readouterr()
    assert main(["review", "adjudicate", sid, *backend.args(judge), "--decide", f"{claim.item_id}=3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rank 3 does not exist" in err
