"""The smaller review defects: agreement with the final label under the strict policy, an item id with a NUL, a
journal line nested 100 000 deep, a URL whose port is not a number, ``runs rm`` of a directory outside the data
dir."""

from __future__ import annotations

import json
from pathlib import Path

from relgate_tui.cli import main
from relgate_tui.engine.review.client import Reviewer
from relgate_tui.engine.review.store import open_store
from tests.engine.review.conftest import Backend, import_run, write_labels


def _publish(b: Backend, tmp_path: Path, run: str) -> str:
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, *b.args(None), "--json", str(out)]) == 0
    return str(json.loads(out.read_text())["session"])


def test_an_undecided_dispute_is_no_agreement_with_the_final_label(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    b = Backend("sqlite", f"sqlite:///{tmp_path / 'r.sqlite3'}")
    sid = _publish(b, tmp_path, import_run(tmp_path, 16))  # eight items, R = 2
    items = open_store(b.admin_url).item_ids(sid)
    agreed, disputed = items[:2], items[2:]
    write_labels(tmp_path / "alice.jsonl", dict.fromkeys(items, "1"))
    write_labels(tmp_path / "bob.jsonl", {**dict.fromkeys(agreed, "1"), **dict.fromkeys(disputed, "none")})
    for name in ("alice", "bob"):
        assert main(["review", "label", sid, "--labels", str(tmp_path / f"{name}.jsonl"), *b.args(name)]) == 0
    out = tmp_path / "st.json"
    assert main(["review", "status", sid, *b.args(None), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert len(doc["counted_as_misses"]) == 6 and doc["final"][disputed[0]] == "none"
    for name in ("alice", "bob"):  # the six undecided disputes agree with nobody: both agree on the two decided
        assert doc["reviewers"][name]["agreement_with_final"]["value"] == 1.0
        assert doc["reviewers"][name]["agreement_with_final"]["n"] == 2


def test_an_item_id_with_a_nul_is_left_out_not_the_run(backend: Backend, tmp_path: Path, capsys) -> None:
    p = tmp_path / "nul.jsonl"
    with p.open("w", encoding="utf-8") as f:
        for i in range(8):
            f.write(json.dumps({"id": f"q{i}" + ("\x00x" if i < 4 else ""), "question": f"q{i}?", "model": "m",
                                "samples": ["1", "1", "2"]}) + "\n")
    runs = tmp_path / "home" / "runs"
    assert main(["import", "samples", str(p), "--run-dir", str(runs), "--quiet"]) == 0
    (run,) = [d.name for d in runs.iterdir() if d.is_dir()]
    capsys.readouterr()
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, *backend.args(None), "--json", str(out)]) == 0
    err = capsys.readouterr().err
    n = json.loads(out.read_text())["items"]
    store = open_store(backend.admin_url)
    try:
        ids = store.item_ids(json.loads(out.read_text())["session"])
    finally:
        store.close()
    assert n == len(ids) >= 1 and not any("\x00" in i for i in ids)
    assert "left out: the id holds a NUL character" in err and "\x00" not in err


def test_a_journal_line_nested_100k_deep_is_set_aside(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    b = Backend("sqlite", f"sqlite:///{tmp_path / 'r.sqlite3'}")
    sid = _publish(b, tmp_path, import_run(tmp_path, 4))
    store = open_store(b.admin_url)
    r = Reviewer(store, store.session(sid), "alice")
    path = r.journal.path
    r.close()
    store.close()
    with path.open("a") as f:
        f.write("[" * 100_000 + "]" * 100_000 + "\n")
    capsys.readouterr()
    labels = write_labels(tmp_path / "l.jsonl", {"q000": "1"})
    assert main(["review", "label", sid, "--labels", str(labels), *b.args("alice")]) == 0
    err = capsys.readouterr().err
    assert "is malformed" in err and "RecursionError" not in err and "unexpected" not in err


def test_a_port_that_is_not_a_number_is_one_clean_line(capsys) -> None:
    capsys.readouterr()
    assert main(["review", "status", "x", "--db", "postgresql://alice:S3cretPw@127.0.0.1:notaport/relgate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "port is not a number" in err and "invalid literal" not in err
    assert "S3cretPw" not in err


def test_runs_rm_refuses_a_directory_outside_the_data_dir(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    import_run(tmp_path, 4)
    (src,) = [d for d in (tmp_path / "home" / "runs").iterdir() if d.is_dir()]
    elsewhere = tmp_path / "elsewhere" / src.name
    elsewhere.parent.mkdir()
    src.rename(elsewhere)
    capsys.readouterr()
    assert main(["runs", "rm", str(elsewhere)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "only runs in the data dir" in err
    assert elsewhere.is_dir()


def test_undo_keeps_the_record_on_either_store(backend: Backend, tmp_path: Path) -> None:
    """The embedded store keeps the database's rule: undo only while no other reviewer labelled the item, never
    after the pull; the reviewer is told why, and nothing is undone."""
    sid = _publish(backend, tmp_path, import_run(tmp_path, 4))  # two items, R = 2
    stores, revs = [], {}
    try:
        for name in ("alice", "bob"):
            url, as_name = backend.reviewer(name)
            store = open_store(url)
            stores.append(store)
            revs[name] = Reviewer(store, store.session(sid), store.db.identity(as_name))
        for name in ("alice", "bob"):
            claim = revs[name].next_item()
            assert claim is not None and revs[name].label(claim.item_id, "1").committed == 1
        item, sent = revs["alice"].undo()
        assert item is None and len(sent.rejected) == 1 and "another reviewer's label" in sent.rejected[0]
        claim = revs["alice"].next_item()  # her second item, alone on it: undo works until the pull
        assert claim is not None and revs["alice"].label(claim.item_id, "2").committed == 1
        assert revs["alice"].undo()[0] == claim.item_id
        assert revs["alice"].label(claim.item_id, "2").committed == 1
        assert main(["review", "pull", sid, *backend.args(None), "--run-dir", str(tmp_path / "home" / "runs")]) == 0
        item, sent = revs["alice"].undo()
        assert item is None and "was pulled" in sent.rejected[0]
        assert stores[0].labelled_by(sid) == {**{i: sorted(["alice", "bob"]) for i in stores[0].item_ids(sid)[:1]},
                                              claim.item_id: ["alice"]}
    finally:
        for r in revs.values():
            r.close()
        for s in stores:
            s.close()
