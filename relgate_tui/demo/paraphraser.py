"""``sim-paraphraser``: a simulated model that rewrites the prompt it is given, keeping its meaning (paper 002's
"paraphrase" perturbation on the demo).

What it rewrites: the last user message; if its first paragraph is an instruction that mentions paraphrasing
("paraphrase", "rephrase", "rewrite", "reword"), only the rest of the message (without surrounding ``\"\"\"`` or
triple backticks). It never changes ``{placeholders}``, numbers, or *data lines* — lines starting with "Input:",
"Response:", "Response A:", "Response B:", "Answer A:", "Answer B:", "Question:" — so a rewritten template still
takes the same texts and the same scale.

How: each listed phrase (:data:`PHRASES`, whole words, case-insensitive, longest first) is replaced with probability
0.7 by one of its meaning-preserving alternatives (capitalisation kept); then, with probability ½, the last two
instruction lines are swapped when both are plain sentences (e.g. "Respond with a single integer between 1 and 5."
/ "No explanation needed."). If no phrase was replaced by chance, the first replaceable one is, so the reply always
differs from a prompt that has one. Deterministic given the message and the request ``seed`` (and the choice index);
without a seed it varies per request like the other simulated models.
"""

from __future__ import annotations

import re
from random import Random

__all__ = ["PARAPHRASER_MODEL", "PHRASES", "paraphrase", "paraphrase_request"]

PARAPHRASER_MODEL = "sim-paraphraser"
PHRASES: dict[str, tuple[str, ...]] = {
    "you are evaluating": ("you are assessing", "your task is to evaluate", "you are judging"),
    "you are checking": ("you are verifying", "your task is to check", "you are reviewing"),
    "the following": ("the given", "the below", "this"),
    "an input": ("a prompt", "a request", "a given input"),
    "responses": ("replies", "outputs", "answers"),
    "response": ("reply", "output", "answer"),
    "definition of": ("meaning of", "what is meant by"),
    "rate the": ("score the", "grade the", "judge the"),
    "on a scale of": ("on a scale from", "using a scale of"),
    "very poor": ("very bad", "very weak"),
    "poor": ("weak", "bad"),
    "fair": ("average", "acceptable"),
    "good": ("solid", "decent"),
    "excellent": ("outstanding", "superb"),
    "respond with": ("reply with", "answer with", "give"),
    "a single integer": ("one integer", "a single whole number", "one whole number"),
    "no explanation needed": ("no explanation is required", "do not explain", "skip the explanation"),
    "no explanation": ("without explanation", "do not explain"),
    "which": ("what",),
    "is better": ("is stronger", "is superior", "does better"),
    "in terms of": ("with respect to", "regarding", "when it comes to"),
    "answer with exactly": ("reply with exactly", "respond with exactly"),
    "candidate answers": ("possible answers", "proposed answers"),
    "is correct": ("is right", "is the correct one"),
    "question": ("query",),
}
_PHRASE = re.compile(r"\b(?:" + "|".join(re.escape(p) for p in sorted(PHRASES, key=len, reverse=True)) + r")\b",
                     re.IGNORECASE)
_PROTECTED = re.compile(r"\{[^{}\n]*\}|\d+(?:[.,]\d+)*")
_DATA_LINE = re.compile(r"^\s*(?:input|response(?: [AB])?|answer [AB]|question)\s*:", re.IGNORECASE)
_INSTRUCTION = re.compile(r"\b(?:paraphrase|rephrase|rewrite|reword)", re.IGNORECASE)
_SENTENCE = re.compile(r"^[A-Z][^{}:\n]*[.!?]$")
_REPLACE_P = 0.7


def _case_like(original: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


def _rewrite_segment(segment: str, rng: Random, pending: list[bool]) -> str:
    def substitute(match: re.Match[str]) -> str:
        alternatives = PHRASES[match.group(0).casefold()]
        if rng.random() < _REPLACE_P or pending[0]:
            pending[0] = False
            return _case_like(match.group(0), alternatives[int(rng.random() * len(alternatives))])
        return match.group(0)

    return _PHRASE.sub(substitute, segment)


def _rewrite_line(line: str, rng: Random, pending: list[bool]) -> str:
    if _DATA_LINE.match(line):
        return line
    out, last = [], 0
    for match in _PROTECTED.finditer(line):
        out.append(_rewrite_segment(line[last : match.start()], rng, pending))
        out.append(match.group(0))
        last = match.end()
    out.append(_rewrite_segment(line[last:], rng, pending))
    return "".join(out)


def paraphrase(text: str, rng: Random) -> str:
    """A meaning-preserving rewrite of ``text`` (module docstring)."""
    lines = text.split("\n")
    replaced = any(_PHRASE.search(line) and not _DATA_LINE.match(line) for line in lines)
    out = [_rewrite_line(line, rng, [False]) for line in lines]
    if replaced and out == lines:  # nothing replaced by chance: force the first replaceable phrase
        for i, line in enumerate(lines):
            if _PHRASE.search(line) and not _DATA_LINE.match(line):
                out[i] = _rewrite_line(line, rng, [True])
                if out[i] != line:
                    break
    instructions = [i for i, line in enumerate(out) if line.strip()]
    if len(instructions) >= 2 and rng.random() < 0.5:
        i, j = instructions[-2], instructions[-1]
        if j == i + 1 and all(_SENTENCE.match(out[k].strip()) and not _DATA_LINE.match(out[k]) for k in (i, j)):
            out[i], out[j] = out[j], out[i]
    return "\n".join(out)


def paraphrase_request(content: str, rng: Random) -> str:
    """The paraphraser's reply to a user message: the rewritten target text only."""
    head, sep, rest = content.partition("\n\n")
    if sep and _INSTRUCTION.search(head) and rest.strip():
        target = rest.strip()
        for fence in ('"""', "```"):
            if target.startswith(fence) and target.endswith(fence) and len(target) > 2 * len(fence):
                target = target[len(fence) : -len(fence)].strip("\n")
                break
        return paraphrase(target, rng)
    return paraphrase(content, rng)
