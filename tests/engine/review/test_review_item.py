"""A published item read once into a typed view (issue 28 §5): the candidates the labelling screen, the adjudicator's
queue and ``review adjudicate`` show; a malformed payload (untrusted text from the database) is read, never a crash."""

from __future__ import annotations

from relgate_tui.engine.review.item import review_item


def test_the_payload_becomes_a_typed_item():
    v = review_item("q1", {"question": "2+2?", "choices": ["3", "4"], "references": ["4"], "n_samples": 5,
                           "candidates": [{"rank": 1, "answer": "4", "count": 4, "share": 0.8, "example": "It is 4"},
                                          {"rank": 2, "answer": "5", "count": 1, "share": 0.2}]})
    assert (v.item_id, v.question, v.choices, v.references, v.n_samples) == ("q1", "2+2?", ("3", "4"), ("4",), 5)
    assert [(c.rank, c.answer, c.count) for c in v.candidates] == [(1, "4", 4), (2, "5", 1)]
    assert v.samples == (("It is 4", "4"), ("", "5"))


def test_a_malformed_payload_is_read_not_a_crash():
    v = review_item("q2", {"candidates": [{"rank": "x"}, "junk", None, {"rank": 1, "answer": "a", "count": 1,
                                                                     "share": 1.0}], "n_samples": "many"})
    assert [c.answer for c in v.candidates] == ["a"] and v.n_samples == 0 and v.question == ""
    assert review_item("q3", "not a mapping").candidates == ()  # type: ignore[arg-type]


def test_a_claim_and_an_item_read_from_the_store_are_typed(tmp_path, monkeypatch):
    """The store hands out the typed view (issue 28 §5): no caller reads the payload's dictionary."""
    import json

    from relgate_tui.cli import main
    from relgate_tui.engine.certification.views import ItemView
    from relgate_tui.engine.review.store import open_store
    from tests.engine.review.conftest import import_run

    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    db = f"sqlite:///{tmp_path / 'team.sqlite3'}"
    run = import_run(tmp_path, 2)
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, "--db", db, "--json", str(out)]) == 0
    sid = json.loads(out.read_text())["session"]
    store = open_store(db)
    try:
        claim = store.claim(sid, "carol")
        assert claim is not None and isinstance(claim.item, ItemView) and not hasattr(claim, "payload")
        assert claim.item.item_id == claim.item_id and claim.item.question == f"q{int(claim.item_id[1:])}?"
        assert [(c.rank, c.count) for c in claim.item.candidates] == [(1, 3), (2, 2), (3, 1)]
        assert store.item(sid, claim.item_id) == claim.item
    finally:
        store.close()
