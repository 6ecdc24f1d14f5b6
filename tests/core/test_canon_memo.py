"""The canonicalizer's memo and its plain-integer shortcut (issue 10 §6) change no class."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.core.canon import get_canonicalizer
from relgate_tui.core.canon.numeric import numeric_class
from relgate_tui.core.canon.registry import _MEMO_ENTRIES
from relgate_tui.core.types import INVALID


@settings(max_examples=400, deadline=None)
@given(st.integers(-10**18 + 1, 10**18 - 1))
def test_a_plain_integer_is_its_own_numeric_class_as_the_full_reader_says(n) -> None:
    text = str(n)
    assert get_canonicalizer("numeric")(text) == text == numeric_class(text)


def test_integers_that_are_not_plain_still_go_through_the_reader() -> None:
    canon = get_canonicalizer("numeric")
    for text in ("007", "+5", " 42", "-0", "1,000", "42.", "12345678901234567890123"):
        assert canon(text) == (numeric_class(text) or INVALID)


answers = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["The answer is 579.", "#### 12", "B", "(C) yes", "forty-two", "x^2+1", "\\boxed{3/4}", ""]),
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["numeric", "mcq", "text", "regex:(\\d+)"]), st.lists(answers, min_size=1, max_size=30),
       st.sampled_from([(), ("red", "green", "blue")]))
def test_a_remembered_class_equals_a_fresh_reading(spec, texts, choices) -> None:
    memo = get_canonicalizer(spec)
    for text in texts + texts[::-1]:  # every text read twice: the second time from the memo
        assert memo(text, choices) == get_canonicalizer(spec)(text, choices)


def test_the_memo_is_bounded_and_keyed_by_choices() -> None:
    canon = get_canonicalizer("mcq")
    assert canon("B", ("x", "y", "z")) == get_canonicalizer("mcq")("B", ("x", "y", "z"))
    assert (canon("y", ("x", "y", "z")), canon("y", ("y", "x", "z"))) == ("B", "A")  # same text, other choices
    numeric = get_canonicalizer("numeric")
    for i in range(3 * _MEMO_ENTRIES):
        numeric(f"The answer is {i}.")
    assert len(numeric._memo) <= _MEMO_ENTRIES
    assert len(get_canonicalizer("numeric")._memo) == 0  # each canonicalizer remembers its own readings
