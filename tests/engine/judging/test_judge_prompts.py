"""Judge prompt builders (paper 000 App. A) and their strict parsers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.engine.judging.prompts import (
    CorrectnessPrompt,
    DirectPrompt,
    PairwisePrompt,
    correctness_pairwise_prompt,
    direct_prompt,
    pairwise_prompt,
    parse_correctness_prompt,
    parse_direct_prompt,
    parse_direct_score,
    parse_pairwise_prompt,
    parse_pairwise_verdict,
)

# ------------------------------------------------------------------------------------------------ verdict parser

VERDICTS = [
    ("A", "A"),
    ("B", "B"),
    ("  B  \n", "B"),
    ("A.", "A"),
    ("B!", "B"),
    ("(A)", "A"),
    ("[B]", "B"),
    ("**A**", "A"),
    ("`B`", "B"),
    ('"A"', "A"),
    ("‘B’", "B"),
    ("Response A", "A"),
    ("Summary B", "B"),
    ("Answer: A", "A"),
    ("Verdict: B", "B"),
    ("Final answer: B", "B"),
    ("The answer is B.", "B"),
    ("Response A is better.", "A"),
    ("Response B is the better one", "B"),
    ("a", "A"),
    ("b.", "B"),
    ("A\nExplanation: B has more detail, but A is more coherent.", "A"),
    ("B\n\nA is weaker.", "B"),
    ("A\nA", "A"),
    # rejected (None = INVALID)
    ("", None),
    ("   \n  ", None),
    ("A or B", None),
    ("A/B", None),
    ("AB", None),
    ("A and B", None),
    ("Both", None),
    ("Neither", None),
    ("Both responses are equally good.", None),
    ("Tie", None),
    ("C", None),
    ("1", None),
    ("A story is better when it is coherent.", None),
    ("answer: a", None),
    ("I think A", None),
    ("A\nActually, B", None),
    ("B\nWait: A", None),
    ("A\nB", None),
    ("Response A is worse.", None),
    ("It depends on the reader.", None),
    (None, None),
    (42, None),
]


@pytest.mark.parametrize(("text", "expected"), VERDICTS)
def test_parse_pairwise_verdict(text, expected) -> None:
    assert parse_pairwise_verdict(text) == expected


SCORES = [
    ("4", 4),
    ("1", 1),
    ("5", 5),
    (" 3 \n", 3),
    ("4.", 4),
    ("**2**", 2),
    ("Score: 4", 4),
    ("score:5", 5),
    ("Rating: 4/5", 4),
    ("Score is 3", 3),
    ("4 out of 5", 4),
    ("3/5", 3),
    ("5\nThe story is excellent.", 5),
    # rejected
    ("", None),
    ("0", None),
    ("6", None),
    ("45", None),
    ("4.5", None),
    ("3-4", None),
    ("3 or 4", None),
    ("-2", None),
    ("four", None),
    ("I would give it a 4", None),
    ("4/10", None),
    ("It is decent overall.", None),
    ("Score: 7", None),
    (None, None),
    (4, None),
]


@pytest.mark.parametrize(("text", "expected"), SCORES)
def test_parse_direct_score(text, expected) -> None:
    assert parse_direct_score(text) == expected


# ------------------------------------------------------------------------------------------------ prompt wording


def test_pairwise_prompt_follows_paper_appendix_a() -> None:
    messages = pairwise_prompt("Write about a dragon.", "Story one.", "Story two.", "Coherence", "How well it hangs together.")
    assert len(messages) == 1 and messages[0]["role"] == "user"
    content = messages[0]["content"]
    assert content.startswith("You are evaluating the Coherence of two responses to the following input.\n")
    assert "Definition of Coherence: How well it hangs together.\n" in content
    assert "Input: Write about a dragon.\n\nResponse A: Story one.\nResponse B: Story two.\n\n" in content
    assert content.endswith('Which response is better in terms of Coherence?\nAnswer with exactly "A" or "B". No explanation.')


def test_direct_prompt_follows_paper_appendix_a() -> None:
    content = direct_prompt("Write about a dragon.", "Story one.", "Empathy", "")[0]["content"]
    assert content.startswith("You are evaluating the Empathy of the following response to an input.\n\nInput: ")
    assert "Definition of" not in content  # empty description: no definition line
    assert "Rate the Empathy on a scale of 1-5 where:\n1 = Very Poor, 2 = Poor, 3 = Fair, 4 = Good, 5 = Excellent" in content
    assert content.endswith("Respond with a single integer between 1 and 5.\nNo explanation needed.")


def test_correctness_prompt_wording() -> None:
    content = correctness_pairwise_prompt("What is 2 + 2?", "4", "5")[0]["content"]
    assert "Question: What is 2 + 2?\n\nAnswer A: 4\nAnswer B: 5\n\nWhich answer is correct?\n" in content
    assert content.endswith('Answer with exactly "A" or "B". No explanation.')


def test_multiline_description_is_folded_to_one_line() -> None:
    content = pairwise_prompt("x", "a", "b", "Surprise", "How surprising\n  the ending is.")[0]["content"]
    assert "Definition of Surprise: How surprising the ending is.\n" in content
    assert parse_pairwise_prompt(pairwise_prompt("x", "a", "b", "Surprise", "How surprising\n the ending is."))


@pytest.mark.parametrize("criterion", ["", "   ", "two\nlines"])
def test_bad_criterion_is_rejected(criterion: str) -> None:
    with pytest.raises(ValueError, match="criterion"):
        pairwise_prompt("x", "a", "b", criterion, "")
    with pytest.raises(ValueError, match="criterion"):
        direct_prompt("x", "a", criterion, "")


def test_non_string_text_is_rejected() -> None:
    with pytest.raises(TypeError, match="text_b"):
        pairwise_prompt("x", "a", None, "Coherence", "")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="answer_a"):
        correctness_pairwise_prompt("q", 4, "5")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ prompt parsers

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60).filter(
    lambda t: "Response B: " not in t and "Answer B: " not in t and "\nResponse: " not in t
)
_line = st.text(st.characters(blacklist_categories=("Cs", "Zl", "Zp", "Cc")), min_size=1, max_size=20).filter(
    lambda t: t.strip() and "\n" not in t and "\r" not in t
)


@settings(max_examples=200, deadline=None)
@given(_text, _text, _text, _line, st.sampled_from(["", "How coherent the story is."]))
def test_pairwise_prompt_round_trip(input_text, text_a, text_b, criterion, description) -> None:
    messages = [{"role": "system", "content": "sys"}] + pairwise_prompt(input_text, text_a, text_b, criterion, description)
    assert parse_pairwise_prompt(messages) == PairwisePrompt(input_text, text_a, text_b, criterion, description)
    assert parse_direct_prompt(messages) is None
    assert parse_correctness_prompt(messages) is None


@settings(max_examples=200, deadline=None)
@given(_text, _text, _line, st.sampled_from(["", "Does it move the reader?"]))
def test_direct_prompt_round_trip(input_text, text, criterion, description) -> None:
    messages = direct_prompt(input_text, text, criterion, description)
    assert parse_direct_prompt(messages) == DirectPrompt(input_text, text, criterion, description)
    assert parse_pairwise_prompt(messages) is None
    assert parse_correctness_prompt(messages) is None


@settings(max_examples=200, deadline=None)
@given(_text, _text, _text)
def test_correctness_prompt_round_trip(question, answer_a, answer_b) -> None:
    question = question.replace("\n\nAnswer A: ", " ")
    messages = correctness_pairwise_prompt(question, answer_a, answer_b)
    assert parse_correctness_prompt(messages) == CorrectnessPrompt(question, answer_a, answer_b)
    assert parse_pairwise_prompt(messages) is None
    assert parse_direct_prompt(messages) is None


@pytest.mark.parametrize(
    "messages",
    [
        None,
        [],
        "a string",
        [{"role": "assistant", "content": "You are evaluating the X of two responses to the following input.\n"}],
        [{"role": "user", "content": "What is 2 + 2?"}],
        [{"role": "user", "content": "You are evaluating the X of two responses to the following input.\n"}],
        [{"role": "user", "content": pairwise_prompt("i", "a", "b", "X", "")[0]["content"].replace("Response B", "Reply B")}],
        [{"role": "user", "content": pairwise_prompt("i", "a", "b", "X", "")[0]["content"] + " Please."}],
        [{"role": "user", "content": 17}],
    ],
)
def test_parsers_reject_other_messages(messages) -> None:
    assert parse_pairwise_prompt(messages) is None
    assert parse_direct_prompt(messages) is None
    assert parse_correctness_prompt(messages) is None


def test_parser_reads_the_last_user_message() -> None:
    old = pairwise_prompt("i", "old a", "old b", "X", "")[0]
    new = pairwise_prompt("i", "new a", "new b", "X", "")[0]
    parsed = parse_pairwise_prompt([old, {"role": "assistant", "content": "A"}, new])
    assert parsed is not None and (parsed.text_a, parsed.text_b) == ("new a", "new b")


def test_candidate_text_containing_the_marker_splits_at_the_last_marker() -> None:
    """Documented ambiguity: the split is at the last "Response B: " marker."""
    parsed = parse_pairwise_prompt(pairwise_prompt("i", "one\nResponse B: two", "three", "X", ""))
    assert parsed is not None and parsed.text_b == "three" and parsed.text_a == "one\nResponse B: two"
