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
