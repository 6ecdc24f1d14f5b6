"""Surface forms of simulated answers: the same answer class written the many ways real models write it.

Numeric: "The answer is 42.", "#### 42", "42.0", "**42**", "I think it's 42", a line of reasoning then the number,
"\\boxed{42}", "42 (since 6 * 7)", "Answer: 42", "1,234", Unicode minus. MCQ: "B", "(B)", "The answer is B.",
"B. <option>", "<option>" (only when the option text alone is unambiguous: ≥ 2 words of ≥ 3 letters, no stand-alone
capital, not contained in / containing another option), "Answer: B", "**B**". Every form keeps the answer's
canonical class (tested against the core canonicalizer on every bundled item), so p* is the probability that the
*canonicalized* sample is a reference class.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from random import Random

from relgate_tui.demo.items import LETTERS, SimItem

__all__ = ["INVALID_MCQ", "INVALID_NUMERIC", "MCQ_FORMS", "NUMERIC_FORMS", "TEXT_FORMS", "cumulative", "pick",
           "render_answer"]

_REASONING_LINES = (
    "Let me work through this step by step.",
    "First I combine the quantities, then I check the result.",
    "Working it out carefully, the final value is:",
    "After doing the calculation, I get the following result.",
)
NUMERIC_FORMS: tuple[tuple[str, int], ...] = (
    ("{s}", 10),
    ("The answer is {s}.", 14),
    ("#### {s}", 8),
    ("{s}.0", 5),  # integers only; otherwise plain
    ("**{s}**", 7),
    ("I think it's {s}", 7),
    ("{reasoning}\n{s}", 10),
    ("\\boxed{{{s}}}", 7),
    ("{s} (since {why})", 6),
    ("Answer: {s}", 6),
    ("The answer is {thousands}.", 4),  # |value| >= 1000 only; otherwise the plain sentence
)
MCQ_FORMS: tuple[tuple[str, int], ...] = (
    ("{L}", 14),
    ("({L})", 8),
    ("The answer is {L}.", 14),
    ("{L}. {option}", 8),
    ("{option}", 5),  # only when the option text is a unique, single-line, non-letter string
    ("Answer: {L}", 8),
    ("**{L}**", 6),
)
TEXT_FORMS: tuple[tuple[str, int], ...] = (("{s}", 3), ("{s}.", 1))
INVALID_NUMERIC = ("I'm not sure.", "I don't know the answer to this.", "Sorry, I cannot solve this problem.")
INVALID_MCQ = ("Not sure, sorry.", "Sorry, no idea.", "Hard to say, really.")


def cumulative(forms: Sequence[tuple[str, int]]) -> tuple[tuple[str, ...], tuple[float, ...]]:
    total = float(sum(weight for _, weight in forms))
    running, bounds = 0.0, []
    for _, weight in forms:
        running += weight / total
        bounds.append(running)
    return tuple(f for f, _ in forms), tuple(bounds)


_NUMERIC_TABLE = cumulative(NUMERIC_FORMS)
_MCQ_TABLE = cumulative(MCQ_FORMS)
_TEXT_TABLE = cumulative(TEXT_FORMS)


def pick(table: tuple[tuple[str, ...], tuple[float, ...]], rng: Random) -> str:
    forms, bounds = table
    return forms[min(bisect_right(bounds, rng.random()), len(forms) - 1)]


def _thousands(value: str) -> str | None:
    if "." in value:
        return None
    number = int(value)
    return f"{number:,}" if abs(number) >= 1000 else None


def _render_numeric(item: SimItem, value: str, rng: Random) -> str:
    form = pick(_NUMERIC_TABLE, rng)
    if form == "{s}.0" and "." in value:
        form = "{s}"
    thousands = _thousands(value)
    if "{thousands}" in form and thousands is None:
        form = "The answer is {s}."
    if item.operands is not None:
        a, symbol, b = item.operands
        why = f"{a} {symbol} {b} = {value}" if rng.random() < 0.5 else f"{a} {symbol} {b}"
    else:
        why = "that is what the calculation gives"
    shown = value
    if value.startswith("-") and form == "The answer is {s}." and rng.random() < 0.3:
        shown = "\u2212" + value[1:]  # Unicode minus sign
    return form.format(
        s=shown, thousands=thousands, why=why, reasoning=_REASONING_LINES[int(rng.random() * len(_REASONING_LINES))]
    )


def _usable_option(item: SimItem, index: int) -> str | None:
    """The option text if answering with it alone is unambiguous: one line, at least two words of three or more
    letters, no stand-alone capital letter, and neither contains nor is contained in another option (casefolded)."""
    option = " ".join(item.choices[index].split())
    if len(re.findall(r"[^\W\d_]{3,}", option)) < 2 or re.search(r"\b[A-Z]\b", option):
        return None
    folded = option.casefold()
    for other_index, other in enumerate(item.choices):
        other = " ".join(other.split()).casefold()
        if other_index != index and other and (other in folded or folded in other):
            return None
    return option


def _render_mcq(item: SimItem, letter: str, rng: Random) -> str:
    form = pick(_MCQ_TABLE, rng)
    if form == "{option}":  # the option text alone must identify the option
        option = _usable_option(item, LETTERS.index(letter))
    elif "{option}" in form:  # "B. <option>": the letter identifies it; any single-line text will do
        option = " ".join(item.choices[LETTERS.index(letter)].split()) or None
    else:
        option = ""
    if option is None:
        form = "The answer is {L}."
    return form.format(L=letter, option=option)


def render_answer(item: SimItem, value: str | None, rng: Random) -> str:
    """Write answer class ``value`` (None = an unparseable answer) in a random realistic surface form."""
    if value is None:
        if item.kind == "text":
            return ""
        pool = INVALID_MCQ if item.kind == "mcq" else INVALID_NUMERIC
        return pool[int(rng.random() * len(pool))]
    if item.kind == "mcq":
        return _render_mcq(item, value, rng)
    if item.kind == "numeric":
        return _render_numeric(item, value, rng)
    return pick(_TEXT_TABLE, rng).format(s=value)

