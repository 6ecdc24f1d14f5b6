"""Canonicalizers by name (SPEC §3.1): ``numeric``, ``mcq``, ``text``, ``math`` (optional) and ``regex:<pattern>``;
reference answers through the same canonicalizer; a suggestion from a task's reference answers."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from relgate_tui.core.canon.clean import clean
from relgate_tui.core.canon.numbers import parse_number
from relgate_tui.core.canon.numeric import numeric_class
from relgate_tui.core.types import INVALID
from relgate_tui.errors import UserError

__all__ = [
    "CANONICALIZER_NAMES",
    "Canonicalizer",
    "canonicalize_references",
    "get_canonicalizer",
    "suggest_canonicalizer",
    "suggestion_source",
]

CANONICALIZER_NAMES: tuple[str, ...] = ("numeric", "mcq", "text", "math", "regex:<pattern>")
_SIMPLE = ("numeric", "mcq", "text", "math")
_CHOICES = "use numeric, mcq, text, math or regex:<pattern>"


_PLAIN_INTEGER = re.compile(r"0|-?[1-9][0-9]{0,17}")  # its own numeric class (tests/core/test_canon_memo.py)
_MEMO_ENTRIES = 4096  # classes remembered per canonicalizer (then forgotten all at once)
_MEMO_TEXT = 2048  # longer answers are not remembered


@dataclass(frozen=True)
class Canonicalizer:
    """A named canonicalizer. Call it on a raw answer (and the item's choices, for MCQ) to get its class.

    A canonicalizer is a pure function of (answer, choices), so each instance remembers the classes of the last few
    thousand short answers it read (models repeat the same answer text across an item's samples); a plain integer
    (``0``, ``-12``, ``579``: no sign, leading zero or space) is its own ``numeric`` class without the full reader."""

    spec: str
    _pattern: re.Pattern[str] | None = None
    _memo: dict[object, str] = field(default_factory=dict, compare=False, repr=False, hash=False)

    @property
    def kind(self) -> str:
        return self.spec.split(":", 1)[0]

    def __call__(self, answer: str, choices: Sequence[str] = ()) -> str:
        if not isinstance(answer, str):
            return INVALID
        key: object = (answer, tuple(choices)) if choices else answer
        memo = self._memo
        out = memo.get(key)
        if out is None:
            out = self._read(answer, choices)
            if len(answer) <= _MEMO_TEXT:
                if len(memo) >= _MEMO_ENTRIES:
                    memo.clear()
                memo[key] = out
        return out

    def _read(self, answer: str, choices: Sequence[str]) -> str:
        kind = self.kind
        if kind == "numeric":
            if _PLAIN_INTEGER.fullmatch(answer):
                return answer
            return numeric_class(answer) or INVALID
        if kind == "mcq":  # mcq and text imported by the runs that use them (their ~30 patterns: ~15 ms of start-up)
            from relgate_tui.core.canon.mcq import mcq_class

            return mcq_class(answer, tuple(choices or ())) or INVALID
        if kind == "math":
            from relgate_tui.core.canon.mathequiv import math_class

            return math_class(answer) or INVALID
        from relgate_tui.core.canon.freetext import text_class

        if kind == "text":
            return text_class(answer) or INVALID
        assert self._pattern is not None
        m = self._pattern.search(clean(answer))
        if m is None:
            return INVALID
        captured = next((g for g in m.groups() if g is not None), None) if m.groups() else m.group(0)
        return text_class(captured or "") or INVALID


def get_canonicalizer(spec: str) -> Canonicalizer:
    """The canonicalizer named by ``spec``: ``numeric``, ``mcq``, ``text``, ``math`` or ``regex:<pattern>``.
    Raises :class:`~relgate_tui.errors.UserError` (a ValueError) with a one-line message for a bad spec, and for
    ``math`` when math-verify is not installed."""
    if not isinstance(spec, str) or not spec.strip():
        raise UserError(f"empty canonicalizer: {_CHOICES}")
    spec = spec.strip()
    if spec in _SIMPLE:
        if spec == "math":
            from relgate_tui.core.canon.mathequiv import INSTALL_HINT, math_available

            if not math_available():
                raise UserError(INSTALL_HINT)
        return Canonicalizer(spec)
    if spec.startswith("regex:"):
        pattern = spec[len("regex:") :]
        if not pattern:
            raise UserError("invalid regex canonicalizer: the pattern after 'regex:' is empty")
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise UserError(f"invalid regex canonicalizer pattern {pattern!r}: {exc}") from None
        return Canonicalizer(spec, compiled)
    raise UserError(f"unknown canonicalizer {spec!r}: {_CHOICES}")


def canonicalize_references(
    canon: Callable[[str, Sequence[str]], str], answers: Sequence[str], choices: Sequence[str] = ()
) -> frozenset[str]:
    """The acceptable classes of an item: its reference answers through the same canonicalizer (INVALID dropped)."""
    out = {canon(str(a), choices) for a in answers}
    out.discard(INVALID)
    return frozenset(out)


_LETTER_REFERENCE = re.compile(r"\s*[(\[]?\s*[A-J]\s*[)\].]?\s*")


_ASKS_A_NUMBER = re.compile(
    r"-?\d[\d,.]*\s*(?:[-+*/×÷x]|plus|minus|times|divided by|multiplied by)\s*-?\d"
    r"|\bhow (?:many|much|long|far|old)\b|\b(?:sum|product|difference|quotient|total|average|remainder) of\b"
    r"|\b(?:calculate|compute|evaluate)\b",
    re.IGNORECASE,
)


def suggest_canonicalizer(answers: Sequence[str], has_choices: bool, questions: Sequence[str] = ()) -> str:
    """``mcq`` when the items have choices or every reference answer is an option letter (A–J), ``numeric`` when
    every reference answer is a number, else ``text``. Without any reference answer (issue 31 item 4) the questions
    decide: ``numeric`` when at least 80% of them ask for a number (show arithmetic such as "576 plus 770", or ask
    "how many / how much …", "the sum of …", "calculate …"; :func:`suggestion_source` says which rule chose)."""
    return _suggest(answers, has_choices, questions)[0]


def suggestion_source(answers: Sequence[str], has_choices: bool, questions: Sequence[str] = ()) -> str:
    """Why :func:`suggest_canonicalizer` chose what it chose, in words (for the manifest, the results and the UI)."""
    return _suggest(answers, has_choices, questions)[1]


def _suggest(answers: Sequence[str], has_choices: bool, questions: Sequence[str]) -> tuple[str, str]:
    if has_choices:
        return "mcq", "suggested: the items have options"
    refs = [str(a) for a in answers if str(a).strip()]
    if refs and all(_LETTER_REFERENCE.fullmatch(a) for a in refs):
        return "mcq", "suggested: every reference answer is an option letter"
    if refs and all(_PLAIN_INTEGER.fullmatch(a) or parse_number(a) is not None for a in refs):
        return "numeric", "suggested: every reference answer is a number"
    if refs:
        return "text", "suggested: the reference answers are not all numbers or letters"
    asked = [q for q in questions if str(q).strip()]
    if asked and sum(bool(_ASKS_A_NUMBER.search(str(q))) for q in asked) >= 0.8 * len(asked):
        return "numeric", "suggested from the questions (no reference answers): they ask for numbers"
    return "text", "no reference answers and the questions do not ask for numbers: text (exact text, case-folded)"
