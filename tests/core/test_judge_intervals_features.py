"""Paper 001 features: rating tokens, merged log-probs, the rating-token locator, the weighted average."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.core.judge_intervals.features import (
    FLOOR_LOGPROB,
    SPANS,
    feature_vector,
    find_rating,
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


def test_locator_falls_back_to_the_last_in_scale_number_that_is_not_a_denominator_or_range_end():
    # "3 out of 5" rates 3: the denominator is not the rating (the first version of this test expected 5)
    toks = _toks("I", " would", " give", " it", " 3", " out", " of", " 5", top={"3": -0.1, "4": -1.5})
    loc = locate_rating(toks, SCALE)
    assert loc.index == 4 and loc.score == 3 and loc.reason is None
    toks = _toks("On", " a", " scale", " of", " 1", "-", "5", ",", " it", " is", " a", " 4", " (", "1", " to", " 5",
                 ")", top={"4": -0.2})
    assert locate_rating(toks, SCALE).index == 11
    toks = _toks("4", "/", "5", top={"4": -0.2, "5": -2.0})
    assert locate_rating(toks, SCALE).index == 0


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


# ---- token streams as real judges write them (bench/REAL_JUDGES.md) ----------------------------------------------
QWEN_TOP = [("4", -0.93), ("5", -1.28), ("3", -1.45), ("2", -3.00), ("1", -3.22), ("6", -7.94)]
SMOL_TOP = [("1", -1.55), ("No", -1.96), ("5", -2.30), ("4", -2.72), ("3", -2.72), ("2", -3.62), (" ", -4.0)]


@pytest.mark.parametrize("span", SPANS)
def test_qwen_answers_a_bare_digit_as_its_first_token(span):
    loc = locate_rating([("4", -0.93, QWEN_TOP)], SCALE, span=span)
    assert (loc.index, loc.score, loc.reason) == (0, 4, None)
    assert loc.logprobs == {1: -3.22, 2: -3.00, 3: -1.45, 4: -0.93, 5: -1.28}  # "6" is off the scale


@pytest.mark.parametrize(("tokens", "reason"), [
    ([("1", -1.55, SMOL_TOP), (".", -0.4, None), (" Poor", -0.2, None), ("\n", -0.1, None)], "no rating found"),
    ([("No", -1.96, SMOL_TOP), (",", -0.5, None), (" I", -0.3, None), ("'m", -0.2, None)], "no rating found"),
    ([("1", -1.55, SMOL_TOP), (".", -0.4, None), (" Poor", -0.2, None), ("\n", -0.1, None), ("2", -0.1, None),
      (".", -0.1, None), (" Fair", -0.1, None)], "no rating found"),
])
def test_smollm2_reciting_the_legend_or_refusing_has_no_rating_token(tokens, reason):
    """"1. Poor" is the legend's first line, not a rating: a list marker is never the rating (a reason instead)."""
    for span in SPANS:
        loc = locate_rating(tokens, SCALE, span=span)
        assert loc.logprobs is None and reason in loc.reason


def test_geval_answer_the_final_score_not_a_digit_inside_the_reasoning():
    text = ("Step 1: Read the input; it asks for 3 things.\nStep 2: The response covers 2 of them.\n"
            "Step 3: Assign a score from 1 to 5.\nScore: 4")
    pieces = re.findall(r"\s*(?:[^\W_]+|[^\w\s]+)|\s+", text)
    toks = [(p, -0.01, {" 4": -0.3, " 3": -1.5, "4": -2.5} if i == len(pieces) - 1 else {p: -0.01})
            for i, p in enumerate(pieces)]
    loc = locate_rating(toks, SCALE)
    assert loc.index == len(pieces) - 1 and loc.score == 4 and loc.reason is None
    assert math.exp(loc.logprobs[4]) == pytest.approx(math.exp(-0.3) + math.exp(-2.5))
    # the G-Eval form echoed with its range, and markdown around the cue
    for form in ("Score (1-5): 4", "**Score:** 4", "Final score is 4", "Evaluation:\n1. Read it.\nScore: 4",
                 "On a rating of 1 to 5, I'd say 4", "Score 1-5: 4"):
        found = find_rating("Step 1: fine.\nStep 2: 3 events.\n" + form, SCALE)
        assert found.score == 4 and found.reason is None, form
    # no cue and only step numbers: no rating (never "Step 3")
    assert find_rating("Step 1: read.\nStep 2: compare.\nStep 3: done.", SCALE).reason == "no rating found in the answer"
    # a form: without a cue the number must be on the last line (a digit inside the reasoning never is the score)
    reasoning = "Step 1: it asks for 3 things.\nStep 2: it gives 2 of them.\n"
    assert find_rating(reasoning + "I cannot settle on a score.", SCALE).score == 2
    assert "no number on its last line" in find_rating(reasoning + "I cannot settle on a score.", SCALE,
                                                       span="form").reason
    assert find_rating(reasoning + "4", SCALE, span="form").score == 4
    assert find_rating(reasoning + "Score: 4\nThat is all.", SCALE, span="form").score == 4


def test_first_line_reads_only_the_span_of_the_strict_score_only_parser():
    assert find_rating("\n4\nThe story has 5 parts.", SCALE, span="first-line").score == 4
    assert find_rating("4\nThe story has 5 parts.", SCALE).score == 5  # the whole answer: its last number
    assert find_rating("Score: 4\nActually, Score: 2", SCALE, span="first-line").score == 4
    assert find_rating("Rating: 7/10", tuple(range(1, 11)), span="first-line").score == 7
    with pytest.raises(ValueError):
        find_rating("4", SCALE, span="everywhere")


def test_scale_1_to_10_locates_a_two_digit_token():
    toks = [("Score", -0.1, None), (":", -0.1, None), (" 10", -0.2, {" 10": -0.2, " 9": -1.7, "10": -3.0, " 1": -6.0})]
    loc = locate_rating(toks, tuple(range(1, 11)))
    assert loc.score == 10 and set(loc.logprobs) == {1, 9, 10}
    assert math.exp(loc.logprobs[10]) == pytest.approx(math.exp(-0.2) + math.exp(-3.0))


_WORDS_AND_DIGITS = st.lists(st.one_of(st.sampled_from(["Step", "the", "story", "has", "events", ".", ",", "\n", ":",
                                                         "1.", "(", ")", "/", "-", "out of", "to"]),
                                       st.integers(0, 12).map(str)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(_WORDS_AND_DIGITS, st.integers(1, 10), st.sampled_from(["Score: {}", "Score (1-10): {}", "**Score:** {}"]))
def test_a_final_score_form_wins_over_any_reasoning_without_a_cue(words, k, form):
    text = " ".join(words) + "\n" + form.format(k)
    scale = tuple(range(1, 11))
    for span in ("answer", "form"):
        found = find_rating(text, scale, span=span)
        assert found.score == k and found.reason is None
        assert text[found.start:].startswith(str(k))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.sampled_from(SPANS))
def test_find_rating_never_raises_and_points_at_its_number(text, span):
    found = find_rating(text, SCALE, span=span)
    assert (found.reason is None) == (found.start is not None)
    if found.start is not None:
        assert int(re.match(r"[0-9]+", text[found.start:]).group()) == found.score and found.score in SCALE
    assert find_rating("Score: \u0664", SCALE).reason is not None  # an Arabic-Indic 4 is not read as a rating
