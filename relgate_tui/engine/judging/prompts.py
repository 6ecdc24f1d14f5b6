"""Judge prompts and their strict answer parsers (paper 000, Appendix A).

Three prompt formats, each a single user message:

* **Pairwise preference** — paper 000 App. A "Pairwise Preference Prompt", generalised from "summaries of an
  article" to "responses to an input", with the criterion's description added::

      You are evaluating the {criterion} of two responses to the following input.
      Definition of {criterion}: {description}

      Input: {input_text}

      Response A: {text_a}
      Response B: {text_b}

      Which response is better in terms of {criterion}?
      Answer with exactly "A" or "B". No explanation.

* **Direct 1–5 scoring** — paper 000 App. A "Direct Scoring Prompt" (same generalisation)::

      You are evaluating the {criterion} of the following response to an input.
      Definition of {criterion}: {description}

      Input: {input_text}
      Response: {text}

      Rate the {criterion} on a scale of 1-5 where:
      1 = Very Poor, 2 = Poor, 3 = Fair, 4 = Good, 5 = Excellent

      Respond with a single integer between 1 and 5.
      No explanation needed.

* **Certification pairwise** ("which answer is correct?", issue 4 scope 3)::

      You are checking two candidate answers to the following question.

      Question: {question}

      Answer A: {answer_a}
      Answer B: {answer_b}

      Which answer is correct?
      Answer with exactly "A" or "B". No explanation.

  ``question`` should be the text the model was asked (the user message of ``prompts.item_messages(item)``, so an
  MCQ keeps its lettered options); the simulated judge also recognises a bare ``item.question``.

The "Definition" line is omitted when the description is empty.

Parsers are strict: a verdict or score is read from the *first non-empty line* only, after removing light markdown
(``**``, ``__``, backticks, quotes, surrounding brackets); anything else is ``None`` (= INVALID for the caller).
Accepted verdict lines: ``A``, ``(A)``, ``A.``, ``**A**``, ``Response A``, ``Answer: A``, ``Verdict: A``,
``The answer is A.``, ``Response A is better.``; rejected: ``A or B``, ``Both``, ``Neither``, ``A/B``, ``AB``,
``A and B``, a sentence starting with the article "A ..." (``A story is better``), lowercase letters inside
sentences. A later line that is itself a bare verdict for the *other* letter (``A`` then ``Actually, B``) makes the
answer ``None``. Accepted score lines: ``4``, ``4.``, ``Score: 4``, ``Rating: 4/5``, ``4 out of 5``, ``**4**``;
rejected: ``4.5``, ``0``, ``6``, ``3-4``, ``3 or 4``, ``45``, ``4/10`` (on a 1–10 scale, :func:`parse_direct_score`'s
``scale_max``: ``10``, ``7/10``; ``07`` is rejected).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "CorrectnessPrompt",
    "DirectPrompt",
    "PairwisePrompt",
    "correctness_pairwise_prompt",
    "direct_prompt",
    "pairwise_prompt",
    "parse_correctness_prompt",
    "parse_direct_prompt",
    "parse_direct_score",
    "parse_pairwise_prompt",
    "parse_pairwise_verdict",
    "VerificationPrompt",
    "verification_prompt",
    "parse_verification_prompt",
    "parse_yes_no",
]

LIKERT_LEGEND = "1 = Very Poor, 2 = Poor, 3 = Fair, 4 = Good, 5 = Excellent"
_AB_INSTRUCTION = 'Answer with exactly "A" or "B". No explanation.'


@dataclass(frozen=True)
class PairwisePrompt:
    """The parts of a pairwise-preference prompt (``text_a`` is shown first)."""

    input_text: str
    text_a: str
    text_b: str
    criterion: str
    description: str


@dataclass(frozen=True)
class DirectPrompt:
    """The parts of a direct 1–5 scoring prompt."""

    input_text: str
    text: str
    criterion: str
    description: str


@dataclass(frozen=True)
class CorrectnessPrompt:
    """The parts of a certification pairwise prompt ("which answer is correct?"; ``answer_a`` shown first)."""

    question: str
    answer_a: str
    answer_b: str


@dataclass(frozen=True)
class VerificationPrompt:
    """The parts of a verification prompt ("does this answer correctly answer the question?", issue 22)."""

    question: str
    answer: str


_YES_NO_INSTRUCTION = 'Answer with exactly "yes" or "no". No explanation.'
_VERIFY_HEAD = "You are checking a candidate answer to the following question.\n\nQuestion: "
_VERIFY_TAIL = f"\n\nDoes the answer correctly answer the question?\n{_YES_NO_INSTRUCTION}"


def _check_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    return value


def _check_criterion(criterion: object) -> str:
    criterion = _check_text("criterion", criterion)
    if not criterion.strip() or "\n" in criterion:
        raise ValueError("criterion must be a non-empty single line")
    return criterion


def _definition(criterion: str, description: str) -> str:
    description = " ".join(description.split())
    return f"Definition of {criterion}: {description}\n" if description else ""


def pairwise_prompt(input_text: str, text_a: str, text_b: str, criterion: str, description: str = "") -> list[dict]:
    """Paper 000 App. A pairwise preference prompt; ``text_a`` is shown first as "Response A"."""
    criterion = _check_criterion(criterion)
    for name, value in (("input_text", input_text), ("text_a", text_a), ("text_b", text_b)):
        _check_text(name, value)
    content = (
        f"You are evaluating the {criterion} of two responses to the following input.\n"
        f"{_definition(criterion, _check_text('description', description))}"
        f"\nInput: {input_text}\n\n"
        f"Response A: {text_a}\n"
        f"Response B: {text_b}\n\n"
        f"Which response is better in terms of {criterion}?\n"
        f"{_AB_INSTRUCTION}"
    )
    return [{"role": "user", "content": content}]


def direct_prompt(input_text: str, text: str, criterion: str, description: str = "") -> list[dict]:
    """Paper 000 App. A direct scoring prompt (1–5 Likert)."""
    criterion = _check_criterion(criterion)
    _check_text("input_text", input_text)
    _check_text("text", text)
    content = (
        f"You are evaluating the {criterion} of the following response to an input.\n"
        f"{_definition(criterion, _check_text('description', description))}"
        f"\nInput: {input_text}\n"
        f"Response: {text}\n\n"
        f"Rate the {criterion} on a scale of 1-5 where:\n"
        f"{LIKERT_LEGEND}\n\n"
        "Respond with a single integer between 1 and 5.\n"
        "No explanation needed."
    )
    return [{"role": "user", "content": content}]


def correctness_pairwise_prompt(question: str, answer_a: str, answer_b: str) -> list[dict]:
    """Certification pairwise prompt: which of two candidate answers is correct (``answer_a`` shown first)."""
    for name, value in (("question", question), ("answer_a", answer_a), ("answer_b", answer_b)):
        _check_text(name, value)
    content = (
        "You are checking two candidate answers to the following question.\n\n"
        f"Question: {question}\n\n"
        f"Answer A: {answer_a}\n"
        f"Answer B: {answer_b}\n\n"
        "Which answer is correct?\n"
        f"{_AB_INSTRUCTION}"
    )
    return [{"role": "user", "content": content}]


def verification_prompt(question: str, answer: str) -> list[dict]:
    """Verification prompt (issue 22): is this one answer correct? The judge sees the question and the answer only::

        You are checking a candidate answer to the following question.

        Question: {question}

        Answer: {answer}

        Does the answer correctly answer the question?
        Answer with exactly "yes" or "no". No explanation.
    """
    _check_text("question", question)
    _check_text("answer", answer)
    return [{"role": "user", "content": f"{_VERIFY_HEAD}{question}\n\nAnswer: {answer}{_VERIFY_TAIL}"}]


# ---------------------------------------------------------------------------------------------------------------
# Prompt parsers (used by the simulated judge to recover what it is asked). Each returns None for anything that was
# not produced by the matching builder. Ambiguity note: a candidate text that itself contains "\nResponse B: " (or
# "\nAnswer B: ") cannot be split unambiguously; the split at the LAST such marker is used.


def _user_content(messages: object) -> str | None:
    if not isinstance(messages, (list, tuple)):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return None


_PAIRWISE_HEAD = re.compile(r"You are evaluating the (?P<criterion>[^\n]+?) of two responses to the following input\.\n")
_DIRECT_HEAD = re.compile(r"You are evaluating the (?P<criterion>[^\n]+?) of the following response to an input\.\n")
_CORRECTNESS_HEAD = "You are checking two candidate answers to the following question.\n\nQuestion: "


def _strip_definition(rest: str, criterion: str) -> tuple[str, str] | None:
    """Split an optional "Definition of {criterion}: ..." line off ``rest``; returns (description, remainder)."""
    prefix = f"Definition of {criterion}: "
    if rest.startswith(prefix):
        line_end = rest.find("\n", len(prefix))
        if line_end < 0:
            return None
        return rest[len(prefix) : line_end], rest[line_end + 1 :]
    return "", rest


def _split_two(body: str, first_marker: str, second_marker: str) -> tuple[str, str] | None:
    if not body.startswith(first_marker):
        return None
    cut = body.rfind("\n" + second_marker)
    if cut < len(first_marker) - 1:
        return None
    return body[len(first_marker) : cut], body[cut + 1 + len(second_marker) :]


def _criterion_prompt_input(messages: object, head_pattern: re.Pattern[str],
                            tail_for: Callable[[str], str]) -> tuple[str, str, str] | None:
    """The parts every criterion prompt shares: its head naming the criterion, an optional definition line, then
    "Input: ..." up to the fixed tail. Returns (criterion, description, text after "Input: ") or None."""
    content = _user_content(messages)
    if content is None:
        return None
    head = head_pattern.match(content)
    if head is None:
        return None
    criterion = head["criterion"]
    tail = tail_for(criterion)
    if not content.endswith(tail):
        return None
    parts = _strip_definition(content[head.end() : len(content) - len(tail)], criterion)
    if parts is None:
        return None
    description, rest = parts
    if not rest.startswith("\nInput: "):
        return None
    return criterion, description, rest[len("\nInput: ") :]


def parse_pairwise_prompt(messages: object) -> PairwisePrompt | None:
    """Inverse of :func:`pairwise_prompt` (reads the last user message)."""
    parts = _criterion_prompt_input(
        messages, _PAIRWISE_HEAD, lambda criterion: f"\n\nWhich response is better in terms of {criterion}?\n{_AB_INSTRUCTION}"
    )
    if parts is None:
        return None
    criterion, description, rest = parts
    cut = rest.find("\n\nResponse A: ")
    if cut < 0:
        return None
    input_text, body = rest[:cut], rest[cut + 2 :]
    pair = _split_two(body, "Response A: ", "Response B: ")
    if pair is None:
        return None
    return PairwisePrompt(input_text, pair[0], pair[1], criterion, description)


def parse_direct_prompt(messages: object) -> DirectPrompt | None:
    """Inverse of :func:`direct_prompt` (reads the last user message)."""
    parts = _criterion_prompt_input(
        messages, _DIRECT_HEAD,
        lambda criterion: (f"\n\nRate the {criterion} on a scale of 1-5 where:\n{LIKERT_LEGEND}\n\n"
                           "Respond with a single integer between 1 and 5.\nNo explanation needed."),
    )
    if parts is None:
        return None
    criterion, description, rest = parts
    cut = rest.rfind("\nResponse: ")
    if cut < 0:
        return None
    return DirectPrompt(rest[:cut], rest[cut + len("\nResponse: ") :], criterion, description)


def parse_correctness_prompt(messages: object) -> CorrectnessPrompt | None:
    """Inverse of :func:`correctness_pairwise_prompt` (reads the last user message)."""
    content = _user_content(messages)
    if content is None or not content.startswith(_CORRECTNESS_HEAD):
        return None
    tail = f"\n\nWhich answer is correct?\n{_AB_INSTRUCTION}"
    if not content.endswith(tail):
        return None
    rest = content[len(_CORRECTNESS_HEAD) : len(content) - len(tail)]
    cut = rest.find("\n\nAnswer A: ")
    if cut < 0:
        return None
    pair = _split_two(rest[cut + 2 :], "Answer A: ", "Answer B: ")
    if pair is None:
        return None
    return CorrectnessPrompt(rest[:cut], pair[0], pair[1])


def parse_verification_prompt(messages: object) -> VerificationPrompt | None:
    """Inverse of :func:`verification_prompt` (reads the last user message; splits at the last "Answer: ")."""
    content = _user_content(messages)
    if content is None or not content.startswith(_VERIFY_HEAD) or not content.endswith(_VERIFY_TAIL):
        return None
    rest = content[len(_VERIFY_HEAD) : len(content) - len(_VERIFY_TAIL)]
    cut = rest.rfind("\n\nAnswer: ")
    if cut < 0:
        return None
    return VerificationPrompt(rest[:cut], rest[cut + len("\n\nAnswer: ") :])


# ---------------------------------------------------------------------------------------------------------------
# Answer parsers (strict).

_MARKUP = re.compile(r"\*\*|__|`|[\"“”‘’']")
_BRACKETED = re.compile(r"^[(\[{<]\s*(.*?)\s*[)\]}>]$")
_VERDICT = re.compile(
    r"""
    (?:(?:the\s+)?(?:final\s+)?(?:answer|verdict|choice|decision|preference|better\s+(?:one|response|answer))
        \s*(?:is\s*:?|:)\s*)?                                  # optional lead-in: "Answer:", "The answer is"
    (?:(?:response|answer|summary|option|candidate|story|text)\s+)?   # optional noun: "Response A"
    [(\[]?(?P<letter>[AB])[)\]]?                               # the letter, optionally bracketed: "(A)"
    (?:\s+is\s+(?:better|correct|the\s+better\s+one))?         # optional tail: "A is better"
    \s*[.!]?
    """,
    re.IGNORECASE | re.VERBOSE,
)
_INTERJECTION = re.compile(
    r"^(?:actually|wait|no|correction|sorry|hmm+|i\s+mean|on\s+second\s+thought|final(?:ly)?)\s*[,:.!-]?\s*",
    re.IGNORECASE,
)
_SCORE = re.compile(
    r"(?:(?:final\s+)?(?:score|rating)\s*(?:is\s*:?|:)?\s*)?(?P<score>\d{1,2})(?:\s*/\s*(?P<of>\d{1,2})|\s+out\s+of\s+"
    r"(?P<out_of>\d{1,2}))?\s*[.!]?",
    re.IGNORECASE,
)


def _clean_line(line: str) -> str:
    line = _MARKUP.sub("", line).strip()
    bracketed = _BRACKETED.match(line)
    if bracketed is not None and bracketed.group(1):
        line = bracketed.group(1)
    return line.strip()


def _lines(text: object) -> list[str]:
    if not isinstance(text, str):
        return []
    return [cleaned for cleaned in (_clean_line(line) for line in text.splitlines()) if cleaned]


def _verdict_of_line(line: str) -> str | None:
    match = _VERDICT.fullmatch(line)
    if match is None:
        return None
    letter = match["letter"]
    # An uppercase letter is required unless the line is nothing but the letter (so "a story" never parses, and
    # "answer: a" is rejected: strict means the model followed the "A"/"B" instruction).
    if letter.islower() and line.strip(" .!()[]").lower() != letter:
        return None
    return letter.upper()


def parse_pairwise_verdict(text: object) -> str | None:
    """Strictly parse a pairwise judge output into "A", "B" or None (INVALID). See the module docstring."""
    lines = _lines(text)
    if not lines:
        return None
    verdict = _verdict_of_line(lines[0])
    if verdict is None:
        return None
    for later in lines[1:]:
        restated = _verdict_of_line(_INTERJECTION.sub("", later))
        if restated is not None and restated != verdict:
            return None
    return verdict


def parse_direct_score(text: object, scale_max: int = 5) -> int | None:
    """Strictly parse a direct-scoring judge output into an integer 1–``scale_max`` or None (INVALID). A
    denominator ("4/5", "4 out of 5") must be ``scale_max``."""
    lines = _lines(text)
    if not lines:
        return None
    match = _SCORE.fullmatch(lines[0])
    if match is None or match["score"].startswith("0"):
        return None
    denominator = match["of"] or match["out_of"]
    if denominator is not None and int(denominator) != scale_max:
        return None
    score = int(match["score"])
    return score if 1 <= score <= scale_max else None


_YES_NO = re.compile(r"(?:(?:the\s+)?(?:final\s+)?(?:answer|verdict)\s*(?:is\s*:?|:)\s*)?(?P<word>yes|no)\s*[.!]?",
                     re.IGNORECASE)


def parse_yes_no(text: object) -> int | None:
    """Strictly parse a verification reply: 1 for "yes", 0 for "no" (first non-empty line, optional "Answer:" lead-in,
    markup and brackets ignored), None for anything else or when a later line restates the other word."""
    lines = _lines(text)
    if not lines:
        return None
    first = _YES_NO.fullmatch(lines[0])
    if first is None:
        return None
    word = first["word"].casefold()
    for later in lines[1:]:
        again = _YES_NO.fullmatch(_INTERJECTION.sub("", later))
        if again is not None and again["word"].casefold() != word:
            return None
    return 1 if word == "yes" else 0
