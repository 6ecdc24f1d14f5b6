"""Canonicalizer laws (issue 11 §1): properties that hold for every input of a kind, checked with hypothesis, the
optional ``math`` canonicalizer (skipped without math-verify), and GSM8K's gold solutions (skipped without the
shared data)."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from relgate_tui.core.canon import format_number, get_canonicalizer, parse_number
from relgate_tui.core.types import INVALID
from relgate_tui.errors import UserError

NUMERIC = get_canonicalizer("numeric")
MCQ = get_canonicalizer("mcq")
TEXT = get_canonicalizer("text")

rationals = st.builds(
    Fraction, st.integers(min_value=-(10**30), max_value=10**30), st.integers(min_value=1, max_value=10**6)
)
LEAD_INS = ["The answer is ", "So the answer is ", "Final answer: ", "Therefore, the final answer is ",
            "**Answer:** ", "After checking each step, the answer is "]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(rationals)
def test_format_then_parse_is_the_identity(value: Fraction) -> None:
    assert parse_number(format_number(value)) == value


@settings(max_examples=200, deadline=None)
@given(rationals, st.sampled_from(LEAD_INS), st.sampled_from(["", ".", " .", "!"]))
def test_a_numeric_lead_in_never_changes_the_class(value: Fraction, lead: str, end: str) -> None:
    bare = format_number(value)
    assert NUMERIC(lead + bare + end) == NUMERIC(bare) == bare


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1000, max_value=10**15), st.sampled_from([",", " ", "\u202f"]))
def test_thousands_separators_do_not_change_the_number(n: int, sep: str) -> None:
    grouped = f"{n:,}".replace(",", sep)
    assert NUMERIC(grouped) == NUMERIC(f"The answer is {grouped}.") == str(n)


_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
        "seventeen eighteen nineteen".split()  # fmt: skip
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _spell(n: int) -> str:
    """English words for 0 ≤ n < 10⁹ (an independent speller for the law below)."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return _ONES[n // 100] + " hundred" + (" and " + _spell(n % 100) if n % 100 else "")
    for size, name in ((10**6, "million"), (1000, "thousand")):
        if n >= size:
            return _spell(n // size) + " " + name + (" " + _spell(n % size) if n % size else "")
    raise AssertionError(n)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=999_999_999), st.booleans())
def test_number_words_read_as_their_value(n: int, negative: bool) -> None:
    words = ("negative " if negative and n else "") + _spell(n)
    expected = str(-n if negative else n)
    assert NUMERIC(words) == expected
    assert NUMERIC(f"The answer is {words}.") == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=2, max_value=10**6))
def test_a_surd_is_its_own_class_never_a_digit(n: int) -> None:
    assume(int(n**0.5) ** 2 != n and (int(n**0.5) + 1) ** 2 != n)
    forms = [f"\\boxed{{\\sqrt{{{n}}}}}", f"√{n}", f"The answer is $\\sqrt{{{n}}}$.", f"\\boxed{{\\sqrt {n}}}"]
    assert {NUMERIC(f) for f in forms} == {f"√{n}"}
    assert NUMERIC(f"\\boxed{{\\frac{{\\sqrt{{{n}}}}}{{2}}}}") == f"√{n}/2"


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=99), st.integers(min_value=1, max_value=12))
def test_integer_powers_are_evaluated(base: int, exp: int) -> None:
    expected = str(base**exp)
    for form in (f"{base}^{exp}", f"\\boxed{{{base}^{{{exp}}}}}", f"The answer is ${base}^{{{exp}}}$."):
        assert NUMERIC(form) == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=20), st.integers(min_value=1, max_value=15), st.integers(min_value=2, max_value=16))
def test_mixed_numbers_are_exact(whole: int, num: int, den: int) -> None:
    assume(num < den)
    expected = format_number(whole + Fraction(num, den))
    assert NUMERIC(f"{whole} {num}/{den}" if whole else f"{num}/{den}") == expected
    assert NUMERIC(f"The recipe needs {whole} {num}/{den} cups." if whole else f"It is {num}/{den}.") == expected


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=10).filter(
    lambda w: w not in {"an", "the", "so", "is", "was", "it", "answer", "final", "thus", "hence", "therefore", "well",
                        "ok", "okay", "yes", "that", "this", "my", "probably", "definitely", "likely", "correct",
                        "mr", "mrs", "ms", "dr", "st", "jr", "sr", "mt", "vs", "no", "etc"}  # (abbreviations end no sentence)
)  # fmt: skip
TEXT_LEADS = ["The answer is ", "The final answer is ", "So the answer is ", "It's ", "Answer: ", "Final answer: ",
              "I think it's ", "Therefore, the answer is "]  # fmt: skip
TEXT_TAILS = ["", ".", "!", ", because that is what the passage says.", " (see the second paragraph).",
              ". It is mentioned twice in the text."]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(words, min_size=1, max_size=3), st.sampled_from(TEXT_LEADS), st.sampled_from(TEXT_TAILS))
def test_a_text_lead_in_or_explanation_never_changes_the_class(ws: list[str], lead: str, tail: str) -> None:
    answer = " ".join(w.capitalize() for w in ws)
    assert TEXT(lead + answer + tail) == TEXT(answer) == " ".join(ws)
    assert TEXT(f"\\boxed{{{answer}}}") == TEXT(answer)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from("ABCDEFGHIJ"), st.sampled_from(["The answer is ", "Answer: ", "I'd say it's probably ",
       "The correct option is ", "I choose ", "My answer is ", ""]), st.sampled_from(["", ".", "\n\nThe others are wrong."]))  # fmt: skip
def test_an_mcq_lead_in_never_changes_the_letter(letter: str, lead: str, tail: str) -> None:
    assert MCQ(f"{lead}{letter}{tail}") == MCQ(f"({letter})") == letter


@settings(max_examples=200, deadline=None)
@given(st.sampled_from("ABCDEFGHIJ"), st.sampled_from("ABCDEFGHIJ"))
def test_naming_two_options_is_never_one_of_them(a: str, b: str) -> None:
    assume(a != b)
    for form in (f"Both {a} and {b} are correct.", f"The answer is {a} and {b}.", f"{a} and {b} are both correct."):
        assert MCQ(form) == INVALID


# --- the optional math canonicalizer ------------------------------------------------------------------------------


def test_math_without_math_verify_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from relgate_tui.core.canon import mathequiv

    monkeypatch.setattr(mathequiv, "math_available", lambda: False)
    with pytest.raises(UserError, match=r"pip install") as err:
        get_canonicalizer("math")
    assert "\n" not in str(err.value) and "math-verify" in str(err.value)


MATH_CLASSES = [
    ["1/2", "0.5", "\\frac{1}{2}", "The answer is $\\frac{1}{2}$.", "\\boxed{0.50}", "<answer>2/4</answer>"],
    ["√3", "\\boxed{\\sqrt{3}}", "\\sqrt3", "The answer is $\\sqrt{3}$."],
    ["\\sqrt{3}/2", "\\boxed{\\frac{\\sqrt3}{2}}", "\\frac{1}{2}\\sqrt{3}", "√3/2"],
    ["\\boxed{\\frac{1}{\\sqrt{2}}}", "\\boxed{\\frac{\\sqrt{2}}{2}}"],
    ["\\boxed{\\sqrt{12}}", "\\boxed{2\\sqrt{3}}"],
    ["\\pi/3", "\\boxed{\\frac{\\pi}{3}}", "π/3"],
    ["\\boxed{x^2+1}", "\\boxed{1+x^2}"],
    ["\\boxed{3^2}", "9", "The answer is nine."],
    ["\\boxed{(1, 2)}", "(1,2)"],
]


def test_math_classes_are_decided_by_equivalence() -> None:
    canon = get_canonicalizer("math")
    found = [{canon(form) for form in forms} for forms in MATH_CLASSES]
    for forms, classes in zip(MATH_CLASSES, found, strict=True):
        assert len(classes) == 1 and INVALID not in classes, (forms, classes)
    assert len({next(iter(c)) for c in found}) == len(MATH_CLASSES)  # different values stay apart


def test_math_classes_are_idempotent_and_refusals_invalid() -> None:
    canon = get_canonicalizer("math")
    for forms in MATH_CLASSES:
        for form in forms:
            once = canon(form)
            assert canon(once) == once, (form, once)
    assert canon("I cannot determine the value of x from question 3.") == INVALID
    assert canon("\\boxed{2^{99999}}") == INVALID  # bounded: no tower sympy would take minutes on
    assert canon("50%") == canon("50") != canon("0.5")  # the numeric percent rule


# --- GSM8K gold solutions (shared data, when present) --------------------------------------------------------------

# ../shared/data beside the checkout (or beside the folder of worktrees)
_GSM8K = [d / "shared" / "data" / "gsm8k" / "test.jsonl" for d in Path(__file__).resolve().parents[3:5]]


def test_gsm8k_gold_solutions_read_as_their_answer() -> None:
    path = next((p for p in _GSM8K if p.exists()), None)
    if path is None:
        pytest.skip("shared GSM8K data not present")
    misread = []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        solution, gold = row["answer"].rsplit("####", 1)
        expected = NUMERIC(gold.strip())
        body = re.sub(r"<<[^>]*>>", "", solution).strip()
        forms = [row["answer"], f"{body}\nThe answer is {gold.strip()}.", f"{body}\n\\boxed{{{gold.strip()}}}",
                 f"{body} So the final answer is {gold.strip()}."]  # fmt: skip
        misread += [f for f in forms if NUMERIC(f) != expected]
    assert len(rows) == 1319 and not misread, misread[:3]


def test_terminating_decimals_are_written_exactly() -> None:
    # 1/65536 has 16 decimal places; a fixed precision rounded it to 0.000015258789062, merging two values
    assert NUMERIC("1/65536") == "0.0000152587890625"
    assert NUMERIC("0.000015258789062") != NUMERIC("1/65536")
    assert format_number(Fraction(-1, 2**40)) == "-0.0000000000009094947017729282379150390625"


PATHOLOGICAL = ["\\boxed{" * 3000, "1 " * 10000, "The answer is " * 1500, "**" * 10000, "a " * 10000, "." * 20000,
                "The answer is not 5 " * 1000, "(" * 20000, "\\sqrt{" * 3000 + "2" + "}" * 3000]  # fmt: skip


@pytest.mark.parametrize("answer", PATHOLOGICAL, ids=range(len(PATHOLOGICAL)))
def test_pathological_replies_are_read_in_linear_time(answer: str) -> None:
    # each took 8–46 s with quadratic scans (boxes that never close, a cue per word, a number per word); now a few
    # ms — a regression shows up as a suite that suddenly takes minutes, never as a timed assertion
    for canon in (NUMERIC, MCQ, TEXT):
        assert isinstance(canon(answer), str)


new_syntax = st.one_of(
    st.text(alphabet="0123456789 ,./-+^{}()[]√π½¾²³⁸×*:%$=\\boxedsqrtfracpi", max_size=40),
    st.lists(
        st.sampled_from(["\\boxed{", "}", "\\sqrt{", "\\frac{", "\\pi", "√", "π", "½", "²", "10^", "×", "*", " ", "1", "2",
                         "3", "42", "0.5", "/", "^", "{", "(", ")", ",", ":", "=", "x", "y", "A", "B", "negative ",
                         "minus ", "million", "forty-two", "The answer is ", "Wait, I made an error: ", "it's ",
                         '{"answer": ', '"', "<answer>", "</answer>", "\n", ".", "not ", "step ", "I can't "]),
        max_size=12,
    ).map("".join),
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(new_syntax)
@example("3³000")  # a power of 1,432 digits: longer than the 1,000 characters a re-read sees (found by this test)
def test_every_class_is_a_fixed_point_on_the_new_syntax(answer: str) -> None:
    for canon in (NUMERIC, MCQ, TEXT):
        once = canon(answer)
        assert isinstance(once, str)
        if once != INVALID:
            assert canon(once) == once, (canon.spec, answer, once)
