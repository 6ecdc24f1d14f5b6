"""Canonicalizers (SPEC §3.1): adversarial phrasings, including every one that broke the public anchor (SPEC §9)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.core.canon import (
    canonicalize_references,
    get_canonicalizer,
    parse_number,
    suggest_canonicalizer,
)
from relgate_tui.core.types import INVALID

NUMERIC = get_canonicalizer("numeric")
MCQ = get_canonicalizer("mcq")
TEXT = get_canonicalizer("text")

NUMERIC_CASES = [
    # plain forms and normalisation of decimals
    ("42", "42"),
    ("42.0", "42"),
    ("42.00", "42"),
    ("+42", "42"),
    ("0.50", "0.5"),
    ("007", "7"),
    # answer markers
    ("The answer is 42.", "42"),
    ("#### 42", "42"),
    ("Natalia sold 48/2 = 24 clips in May.\n#### 72", "72"),
    ("**42**", "42"),
    ("Answer: **-17**", "-17"),
    ("Final answer: 1,000", "1000"),
    ("The result is 12.", "12"),
    ("So the answer is 3.5.", "3.5"),
    # SPEC §9: "42 (since 6*7)" must not become 7
    ("42 (since 6*7)", "42"),
    ("The answer is 42 (since 6*7)", "42"),
    ("The total is 42 (6 times 7).", "42"),
    ("6*7 = 42", "42"),
    ("The answer is 6*7 = 42", "42"),
    ("I think it's 41", "41"),
    # reasoning then a number: the last number of the final line
    ("First 3 apples plus 4 apples, so 7 apples.\nSo she has 7 apples.", "7"),
    ("12 apples cost $3 each, so 36", "36"),
    ("She earns 18 * 2 = 36 dollars per day, and 36 * 7 = 252 per week.", "252"),
    # LaTeX (SPEC §9: \boxed{\frac12} must not become 2)
    ("\\boxed{\\frac{1}{2}}", "0.5"),
    ("\\boxed{\\frac12}", "0.5"),
    ("\\boxed{\\dfrac{3}{4}}", "0.75"),
    ("\\boxed{-\\frac{3}{4}}", "-0.75"),
    ("\\frac{-3}{4}", "-0.75"),
    ("The answer is $\\boxed{1\\,000}$", "1000"),
    ("\\boxed{x = 12}", "12"),
    ("We get 5 and 6, so \\boxed{11} is the sum; check: 5+6=11", "11"),
    ("\\boxed{\\frac{1}{3}}", "1/3"),
    ("\\boxed{\\text{42 apples}}", "42"),
    # signs (SPEC §9: the Unicode minus was lost)
    ("\u22125", "-5"),
    ("The temperature is \u22125 degrees.", "-5"),
    ("The answer is \u2013 7", "-7"),
    ("From 10-20 items it is 20", "20"),
    # thousands separators, exact big integers (SPEC §9)
    ("1,234,567", "1234567"),
    ("The answer is 1,000.", "1000"),
    ("12345678901234567890", "12345678901234567890"),
    ("The product is 123456789012345678901234567890.", "123456789012345678901234567890"),
    ("1\u2009234\u2009567", "1234567"),
    ("1, 2, 3", "3"),
    # currency, percent (one rule: % dropped), fractions, scientific notation
    ("$1,234.50", "1234.5"),
    ("It costs \\$18.", "18"),
    ("The answer is 50%", "50"),
    ("50 percent", "50"),
    ("0.5", "0.5"),
    ("Therefore, 2/4 of them", "0.5"),
    ("-3/4", "-0.75"),
    ("1.5e3", "1500"),
    ("1.5 × 10^3", "1500"),
    (".5", "0.5"),
    # no number at all
    ("I'm not sure.", INVALID),
    ("", INVALID),
    ("   \n ", INVALID),
    ("The answer cannot be determined.", INVALID),
    ("1/0", INVALID),
]


@pytest.mark.parametrize(("answer", "expected"), NUMERIC_CASES)
def test_numeric(answer: str, expected: str) -> None:
    assert NUMERIC(answer) == expected


def test_numeric_has_forty_adversarial_cases() -> None:
    assert len(NUMERIC_CASES) >= 40


def test_percent_rule_keeps_50_percent_and_half_apart() -> None:
    assert NUMERIC("The answer is 50%") != NUMERIC("0.5")
    assert NUMERIC("50%") == NUMERIC("50")


def test_big_integers_do_not_round_trip_through_float() -> None:
    big = "98765432109876543211"
    assert NUMERIC(f"The answer is {big}.") == big
    assert float(big) != int(big)  # a float round-trip would have lost it


def test_numeric_references_use_the_same_canonicalizer() -> None:
    assert canonicalize_references(NUMERIC, ["1,000"]) == {"1000"}
    assert canonicalize_references(NUMERIC, ["72", "72.0", "not a number"]) == {"72"}
    assert NUMERIC("#### 1000") in canonicalize_references(NUMERIC, ["1,000"])


CHOICES = ("London", "Paris", "Berlin", "Madrid")

MCQ_CASES = [
    # SPEC §9: "definitely" must not give D; "A train…" is not option A
    ("The answer is definitely B", (), "B"),
    ("A train leaves the station at 5pm. The answer is C.", (), "C"),
    ("A train leaves the station at 5pm.", (), INVALID),
    ("I'd go with (B) because (A) is wrong", (), "B"),
    ("Let me think. Option A is wrong. The answer is B.", (), "B"),
    ("(B)", (), "B"),
    ("B)", (), "B"),
    ("B.", (), "B"),
    ("B:", (), "B"),
    ("B", (), "B"),
    ("b", (), "B"),
    ("(c)", (), "C"),
    ("c)", (), "C"),
    ("answer is B", (), "B"),
    ("the answer is c", (), "C"),
    ("My answer: b", (), "B"),
    ("Answer: (C)", (), "C"),
    ("Final answer: (A)", (), "A"),
    ("Answer: A", (), "A"),
    ("A", (), "A"),
    ("A. London", CHOICES, "A"),
    ("The correct answer is: D", (), "D"),
    ("The correct option is D.", (), "D"),
    ("**C**", (), "C"),
    ("**Answer: B**", (), "B"),
    ("Option C", (), "C"),
    ("[C]", (), "C"),
    ("B is correct", (), "B"),
    ("B: Paris", CHOICES, "B"),
    ("C, because Berlin is the capital", CHOICES, "C"),
    ("I choose D.", (), "D"),
    ("I think it's B.", (), "B"),
    ("Definitely D", (), "D"),
    ("The answer is a good question to ask.", (), INVALID),
    ("Hmm, I'm not sure", (), INVALID),
    ("", (), INVALID),
    # option letters A–J and the item's option count
    ("The answer is J", (), "J"),
    ("(H)", (), "H"),
    ("The answer is E", CHOICES, INVALID),
    ("(F)", CHOICES, INVALID),
    # option text against the item's choices
    ("Paris", CHOICES, "B"),
    ("paris.", CHOICES, "B"),
    ("The answer is Paris.", CHOICES, "B"),
    ("I'll go with Berlin", CHOICES, "C"),
    ("The capital of France is Paris.", CHOICES, "B"),
    ("Paris", (), INVALID),
    ("It is either Paris or Berlin.", CHOICES, INVALID),
    # option texts that look like letters, numbers or formulas (real MMLU items): the letter reading wins,
    # and option texts are compared with their symbols
    ("C", ("2c", "c", "0.8c", "0.5c"), "C"),
    ("C", ("a < c", "a < b", "a > b", "a == b"), "C"),
    ("The answer is C.", ("a < c", "a < b", "a > b", "a == b"), "C"),
    ("a < b", ("a < c", "a < b", "a > b", "a == b"), "B"),
    ("-1", ("0", "1", "-1", "12"), "C"),
    ("4 × t = 12", ("4 + t = 12", "4 - t = 12", "4 / t = 12", "4 × t = 12"), "D"),
    ("None of the options seems right to me.", ("None", "x", "y", "z"), INVALID),
]


@pytest.mark.parametrize(("answer", "choices", "expected"), MCQ_CASES)
def test_mcq(answer: str, choices: tuple[str, ...], expected: str) -> None:
    assert MCQ(answer, choices) == expected


def test_mcq_has_forty_adversarial_cases() -> None:
    assert len(MCQ_CASES) >= 40


def test_mcq_reference_may_be_letter_or_option_text() -> None:
    assert canonicalize_references(MCQ, ["B"], CHOICES) == {"B"}
    assert canonicalize_references(MCQ, ["Paris"], CHOICES) == {"B"}
    assert canonicalize_references(MCQ, ["Paris", "B"], CHOICES) == {"B"}


TEXT_CASES = [
    ("Paris", "paris"),
    ("PARIS", "paris"),
    ("Paris.", "paris"),
    ("  Paris  ", "paris"),
    ("The answer is Paris.", "paris"),
    ("the answer is:  PARIS!! ", "paris"),
    ("Answer: Paris", "paris"),
    ("Final answer: Paris", "paris"),
    ("The Eiffel Tower.", "eiffel tower"),
    ("Eiffel   Tower", "eiffel tower"),
    ("An apple", "apple"),
    ("a dog", "dog"),
    ("Answer: the Beatles", "beatles"),
    ("The Beatles", "beatles"),
    ("Beatles!", "beatles"),
    ("Jean-Paul Sartre", "jean paul sartre"),
    ("Jean Paul Sartre", "jean paul sartre"),
    ("\"Hamlet\"", "hamlet"),
    ("'Hamlet'", "hamlet"),
    ("*Hamlet*", "hamlet"),
    ("Hamlet?", "hamlet"),
    ("(Hamlet)", "hamlet"),
    ("ÉCOLE", "école"),
    ("Straße", "strasse"),
    ("ＰＡＲＩＳ", "paris"),
    ("3.5", "3.5"),
    ("3,5", "3,5"),
    ("42", "42"),
    ("The year 1969.", "year 1969"),
    ("New York City", "new york city"),
    ("new-york city", "new york city"),
    ("The United States of America", "united states of america"),
    ("united states of america.", "united states of america"),
    ("Mount Everest", "mount everest"),
    ("mount  everest.", "mount everest"),
    ("H2O", "h2o"),
    ("Answer is: water", "water"),
    ("the answer is the moon", "moon"),
    ("Yes.", "yes"),
    ("No!", "no"),
    ("", INVALID),
    ("   ", INVALID),
    ("!!!", INVALID),
    ("The", INVALID),
    ("Answer:", INVALID),
]


@pytest.mark.parametrize(("answer", "expected"), TEXT_CASES)
def test_text(answer: str, expected: str) -> None:
    assert TEXT(answer) == expected


def test_text_has_forty_adversarial_cases() -> None:
    assert len(TEXT_CASES) >= 40


REGEX_CASES = [
    (r"regex:Answer:\s*(\w+)", "blah blah Answer: Foo.", "foo"),
    (r"regex:Answer:\s*(\w+)", "Answer:Bar", "bar"),
    (r"regex:Answer:\s*(\w+)", "answer: lower case does not match", INVALID),
    (r"regex:(?i)answer:\s*(\w+)", "answer: Lower", "lower"),
    (r"regex:Answer:\s*(\w+)", "no cue at all", INVALID),
    (r"regex:Answer:\s*(\w+)", "", INVALID),
    (r"regex:<ans>(.*?)</ans>", "reasoning... <ans>The Moon</ans>", "moon"),
    (r"regex:<ans>(.*?)</ans>", "<ans></ans>", INVALID),
    (r"regex:<ans>(.*?)</ans>", "<ans> Paris. </ans> and <ans>Rome</ans>", "paris"),
    (r"regex:<ans>(.*?)</ans>", "<ans>unterminated", INVALID),
    (r"regex:\d+", "I count 17 sheep", "17"),
    (r"regex:\d+", "none here", INVALID),
    (r"regex:\d+", "1,000 and more", "1"),
    (r"regex:[A-D]", "pick C", "c"),
    (r"regex:\b[A-D]\b", "Definitely B", "b"),
    (r"regex:\b[A-D]\b", "definitely", INVALID),
    (r"regex:(yes|no)", "I'd say yes.", "yes"),
    (r"regex:(yes|no)", "maybe", INVALID),
    (r"regex:(?i)(yes|no)", "NO!", "no"),
    (r"regex:(?:x)?(y)?z", "z", INVALID),  # the only group did not participate, the whole match is used
    (r"regex:label=(\w+)", "label=positive", "positive"),
    (r"regex:label=(\w+)", "label=", INVALID),
    (r"regex:label=(\w+)", "LABEL=negative", INVALID),
    (r"regex:\[\[(.+?)\]\]", "The result is [[Jean-Paul]]", "jean paul"),
    (r"regex:\[\[(.+?)\]\]", "[[ The Beatles ]]", "beatles"),
    (r"regex:\[\[(.+?)\]\]", "[[ ]] [[x]]", INVALID),
    (r"regex:^(\w+)", "  leading spaces", INVALID),
    (r"regex:^\s*(\w+)", "  leading spaces", "leading"),
    (r"regex:(\w+)$", "ends with word", "word"),
    (r"regex:(\w+)$", "ends with punctuation!", INVALID),
    (r"regex:Category:\s*([A-Za-z ]+)", "Category: Science Fiction\nmore", "science fiction"),
    (r"regex:Category:\s*([A-Za-z ]+)", "Category: 123", INVALID),
    (r"regex:score\s*=\s*(\d)", "score = 4", "4"),
    (r"regex:score\s*=\s*(\d)", "score=5/5", "5"),
    (r"regex:score\s*=\s*(\d)", "score: 5", INVALID),
    (r"regex:(\u00e9t\u00e9)", "en \u00e9t\u00e9", "\u00e9t\u00e9"),
    (r"regex:(\w+)@", "mail bob@example.org", "bob"),
    (r"regex:final:\s*(.+)", "final: The Moon.", "moon"),
    (r"regex:final:\s*(.+)", "final: !!!", INVALID),
    (r"regex:final:\s*(.+)", "final:    An Answer", "answer"),
    (r"regex:(\d+)\s*%", "up 50 %", "50"),
]


@pytest.mark.parametrize(("spec", "answer", "expected"), REGEX_CASES)
def test_regex(spec: str, answer: str, expected: str) -> None:
    assert get_canonicalizer(spec)(answer) == expected


def test_regex_has_forty_adversarial_cases() -> None:
    assert len(REGEX_CASES) >= 40


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("regex:(unclosed", "invalid regex canonicalizer pattern"),
        ("regex:", "pattern after 'regex:' is empty"),
        ("numbers", "unknown canonicalizer"),
        ("", "empty canonicalizer"),
    ],
)
def test_bad_specs_give_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        get_canonicalizer(spec)
    assert "\n" not in str(err.value)


def test_suggest_canonicalizer() -> None:
    assert suggest_canonicalizer(["B"], has_choices=True) == "mcq"
    assert suggest_canonicalizer(["1,000", "-3", "0.5"], has_choices=False) == "numeric"
    assert suggest_canonicalizer(["Paris", "42"], has_choices=False) == "text"
    assert suggest_canonicalizer([], has_choices=False) == "text"


def test_parse_number_requires_the_whole_string() -> None:
    assert parse_number("1,000") == 1000
    assert parse_number("\\frac{1}{2}") == parse_number("0.5")
    assert parse_number("42 apples") is None


# --- laws -------------------------------------------------------------------------------------------------------

answers = st.one_of(
    st.text(max_size=80),
    st.text(alphabet="0123456789,.-+/%$ eE\\{}()frac boxed#*\u2212ABCDabcd:answeris\n", max_size=60),
)


@settings(max_examples=400, deadline=None)
@given(answers)
def test_no_input_raises_and_outputs_are_strings(answer: str) -> None:
    for canon in (NUMERIC, MCQ, TEXT, get_canonicalizer(r"regex:(\w+)")):
        assert isinstance(canon(answer), str)
        assert isinstance(canon(answer, CHOICES), str)


@settings(max_examples=400, deadline=None)
@given(answers)
def test_canonicalizing_is_idempotent(answer: str) -> None:
    for canon, choices in ((NUMERIC, ()), (MCQ, ()), (MCQ, CHOICES), (TEXT, ())):
        once = canon(answer, choices)
        if once != INVALID:
            assert canon(once, choices) == once, (canon.spec, answer, once)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(10**40), max_value=10**40), st.integers(min_value=1, max_value=10**6))
def test_numeric_is_exact_for_rationals(p: int, q: int) -> None:
    from fractions import Fraction

    from relgate_tui.core.canon import format_number

    text = format_number(Fraction(p, q))
    assert NUMERIC(text) == text
    assert NUMERIC(f"The answer is {text}.") == text
