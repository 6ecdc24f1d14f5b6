"""What the simulator knows about a question (:class:`SimItem`) and how it reads one it does not know.

Items are recognised by the exact content of the last user message, as produced by
``relgate_tui.engine.transport.prompts.item_messages(item)`` for the bundled tasks (:mod:`relgate_tui.demo.catalogue`). Unknown
content: if it contains simple arithmetic "a + b", "a - b", "a * b" (also "plus", "minus", "times") that is evaluated
as the correct answer; if it has lettered options ("A. ...", "B. ...") a hash-chosen letter is "correct"; otherwise a
hash-chosen number 1–100 is. Unknown items get the id ``unknown_item_id(content)`` and a p* like any other item.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from relgate_tui.demo.hashing import h64

__all__ = ["LETTERS", "SimItem", "last_user_content", "mcq_index", "plain_number", "sim_item_from_task_item", "unknown_item",
           "unknown_item_id"]


@dataclass(frozen=True)
class SimItem:
    """What the simulator knows about a question.

    ``answer`` is the correct value in the simulator's plain form: a number string ("1234", "-5", "2.5"), a letter
    ("B") for MCQ, or text. ``operands`` = (a, symbol, b) when the question shows simple arithmetic.
    """

    item_id: str
    kind: str  # "numeric" | "mcq" | "text"
    answer: str
    choices: tuple[str, ...] = ()
    operands: tuple[str, str, str] | None = None
    task: str = ""


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ARITH = re.compile(
    r"(?<![\w.,])(-?\d+)\s*(\+|-|\*|×|(?<=\s)x(?=\s)|plus|minus|times|multiplied by)\s*(-?\d+)(?!\w|\.\d)",
    re.IGNORECASE,
)
_OPTION_LINE = re.compile(r"^\s*\(?([A-Z])[.)]\s+(.+?)\s*$", re.MULTILINE)


def plain_number(text: str) -> str | None:
    """A reference answer as a plain number string ("1,234" → "1234", "18.0" → "18"), or None if not a number."""
    cleaned = text.strip().replace(",", "").replace("\u2212", "-").lstrip("$").rstrip(".")
    if not cleaned:
        return None
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def _arith_operands(text: str) -> tuple[str, str, str] | None:
    match = _ARITH.search(text)
    if match is None:
        return None
    symbol = {"plus": "+", "minus": "-", "times": "*", "multiplied by": "*", "×": "*", "x": "*"}.get(
        match.group(2).lower(), match.group(2)
    )
    return match.group(1), symbol, match.group(3)


def _evaluate(operands: tuple[str, str, str]) -> str:
    a, symbol, b = int(operands[0]), operands[1], int(operands[2])
    return str(a + b if symbol == "+" else a - b if symbol == "-" else a * b)


def mcq_index(answer: str, choices: Sequence[str]) -> int | None:
    stripped = answer.strip().strip("()").rstrip(".").strip()
    if len(stripped) == 1 and stripped.upper() in LETTERS[: len(choices)]:
        return LETTERS.index(stripped.upper())
    folded = answer.strip().casefold()
    for index, choice in enumerate(choices):
        if choice.strip().casefold() == folded:
            return index
    return None


def sim_item_from_task_item(item, canon: str = "", task: str = "") -> SimItem:
    """Build the simulator's view of a ``relgate_tui.engine.certification.tasks.TaskItem`` (first reference answer is the target).

    MCQ (choices present and the reference is a letter or an option's text) → kind "mcq"; a numeric reference (or a
    "numeric" canonicalizer) → "numeric"; anything else → "text". Items without a reference get a hash-chosen one.
    """
    choices = tuple(item.choices)
    question = item.question or ""
    reference = item.answers[0] if item.answers else ""
    operands = _arith_operands(question)
    if choices and not canon.startswith("numeric"):
        index = mcq_index(reference, choices) if reference else None
        if index is None and not reference:
            index = h64("mcq-answer", item.id) % len(choices)
        if index is not None:
            return SimItem(item.id, "mcq", LETTERS[index], choices, None, task)
    number = plain_number(reference) if reference else None
    if number is None and not reference:
        number = _evaluate(operands) if operands else str(1 + h64("number-answer", item.id) % 100)
    if number is not None and (canon.startswith("numeric") or not canon or canon == "text" or not reference):
        return SimItem(item.id, "numeric", number, choices, operands, task)
    return SimItem(item.id, "text", reference.strip(), choices, None, task)


def unknown_item_id(content: str) -> str:
    """The item id the simulator uses for a question it does not recognise."""
    return "unknown-" + hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def unknown_item(content: str) -> SimItem:
    """The simulator's view of an unrecognised question (see module docstring)."""
    item_id = unknown_item_id(content)
    operands = _arith_operands(content)
    if operands is not None:
        return SimItem(item_id, "numeric", _evaluate(operands), (), operands)
    options = _OPTION_LINE.findall(content)
    letters = "".join(letter for letter, _ in options)
    if len(options) >= 2 and LETTERS.startswith(letters):
        choices = tuple(text for _, text in options)
        return SimItem(item_id, "mcq", LETTERS[h64("mcq-answer", item_id) % len(choices)], choices)
    return SimItem(item_id, "numeric", str(1 + h64("number-answer", item_id) % 100))


def last_user_content(messages: object) -> str:
    """The text of the last user message (OpenAI content parts joined), or ""."""
    if not isinstance(messages, (list, tuple)):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):  # OpenAI content parts
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""
