"""Paper 001 features: rating tokens, merged log-probs, the rating-token locator, the weighted average."""

import math

import numpy as np
import pytest

from relgate_tui.core.judge_intervals.features import (
    FLOOR_LOGPROB,
    feature_vector,
    locate_rating,
    merge_logprobs,
    rating_value,
    softmax_rows,
    weighted_average,
)

SCALE = (1, 2, 3, 4, 5)


def test_weighted_average_of_the_notes_worked_logits():
    z = np.array([[-12.69, -9.06, -5.06, -1.06, -0.44], [-11.67, -7.67, -3.67, -0.55, -0.92]])
    w = weighted_average(z, SCALE)
    assert w[0] == pytest.approx(4.6394, abs=5e-5)
    assert w[1] == pytest.approx(4.3716, abs=5e-5)
    # without renormalisation the paper's printed 4.64 / 4.37 would not come out (notes §2.11)
    raw = np.exp(z) @ np.arange(1, 6)
    assert raw[0] == pytest.approx(4.6253, abs=5e-4)


def test_rating_value_merges_surface_forms():
    assert [rating_value(t) for t in (" 4", "4", "four", "Four", "**4", "4.", " ")] == [4, 4, 4, 4, 4, 4, None]
    assert rating_value("forty") is None


def test_merge_sums_probabilities_of_equivalent_tokens():
    m = merge_logprobs({" 4": math.log(0.3), "4": math.log(0.2), "four": math.log(0.1), "5": math.log(0.4),
                        "x": -0.1, "7": -0.2}, SCALE)
    assert set(m) == {4, 5}
    assert math.exp(m[4]) == pytest.approx(0.6)
    assert math.exp(m[5]) == pytest.approx(0.4)


def test_absent_tokens_are_floored_below_every_listed_one():
    z = feature_vector({4: -0.1, 5: -2.5}, SCALE)
    assert z[3] == -0.1 and z[4] == -2.5
    assert np.all(z[:3] == FLOOR_LOGPROB)
    z2 = feature_vector({4: -0.1, 5: -30.0}, SCALE)   # a listed token below the floor: absent ones go lower still
    assert np.all(z2[:3] == -31.0)
    assert np.allclose(softmax_rows(z).sum(), 1.0)


def _toks(*parts, top=None):
    return [(p, -0.1, top if p.strip().isdigit() else None) for p in parts]


def test_locator_takes_the_final_score_after_the_cue_not_a_quoted_scale():
    top = {"4": -0.2, " 4": -2.0, "3": -1.9, "5": -3.0}
    toks = _toks("Rate", " from", " 1", " to", " 5", ".", " The", " summary", " is", " fine", ".", " Score", ":", " 4",
                 top=top)
    loc = locate_rating(toks, SCALE)
    assert loc.reason is None and loc.index == 13 and loc.score == 4
    assert math.exp(loc.logprobs[4]) == pytest.approx(math.exp(-0.2) + math.exp(-2.0))
    assert set(loc.logprobs) == {3, 4, 5}


def test_locator_falls_back_to_the_last_in_scale_number():
    toks = _toks("I", " would", " give", " it", " 3", " out", " of", " 5", top={"5": -0.3, "4": -1.5})
    loc = locate_rating(toks, SCALE)
    assert loc.index == 7 and loc.score == 5 and loc.reason is None


@pytest.mark.parametrize(("tokens", "reason"), [
    ([], "no tokens"),
    ([("Looks", -0.1, None), (" good", -0.1, None)], "no rating found"),
    ([("Score", -0.1, None), (":", -0.1, None), (" 9", -0.1, {"9": -0.1})], "outside the scale"),
    ([("Score", -0.1, None), (":", -0.1, None), (" 4", -0.1, None)], "no top log-probabilities"),
    ([("Score", -0.1, None), (":", -0.1, None), (" 4", -0.1, {"x": -0.1})], "4"),
])
def test_locator_gives_a_reason_per_item(tokens, reason):
    loc = locate_rating(tokens, SCALE)
    if reason == "4":   # the token's own log-prob is a candidate even when top_logprobs omits it
        assert loc.reason is None and set(loc.logprobs) == {4}
    else:
        assert loc.logprobs is None and reason in loc.reason


def test_locator_refuses_a_rating_split_across_tokens():
    toks = [("Score", -0.1, None), (":", -0.1, None), (" 1", -0.1, {"1": -0.1}), ("0", -0.1, {"0": -0.1})]
    loc = locate_rating(toks, tuple(range(1, 11)))
    assert loc.logprobs is None and "spans several tokens" in loc.reason


@pytest.mark.parametrize("top", [[("4",)], 17, [("4", "x"), ("5", -0.2)]])
def test_locator_survives_malformed_top_logprobs(top):
    loc = locate_rating([("Score", -0.1, None), (":", -0.1, None), (" 4", None, top)], SCALE)
    assert loc.reason is None or "malformed" in loc.reason or "no scale token" in loc.reason
