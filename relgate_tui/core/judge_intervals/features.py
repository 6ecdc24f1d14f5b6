"""The feature vector z of paper 001 (§3.2): log-probabilities of the K rating tokens at the rating position.

Pure functions, no IO:

- :func:`rating_value` maps one token's text to a scale value (``" 4"``, ``"4"``, ``"four"``, ``"**4"`` → 4) or
  ``None``.
- :func:`find_rating` reads the judge's *final parsed score* from an answer's text: the number after the last cue
  such as ``Score:`` / ``Score (1-5):`` / ``Rating:`` / ``Final score is``, else the last in-scale number of the
  answer that is not a denominator ("4/5", "4 out of 5"), a range end ("1-5", "1 to 5", "between 1 and 5"), a step
  number ("Step 3") or a list marker ("1. Read …"). ``span`` narrows where it looks: ``"answer"`` (the default),
  ``"first-line"`` (cue and number on the first non-empty line only: the span paper 000's strict score-only parser
  reads) or ``"form"`` (a cue anywhere, else a number on the last non-empty line only: a form filled in after
  reasoning, as G-Eval asks, so that a digit inside the reasoning is never the fallback).
- :func:`locate_rating` finds, in a list of ``(token, logprob, top_logprobs)`` triples, the token that carries that
  score (:func:`find_rating` on the tokens' text). The paper locates the token "at the most frequent position of the
  rating"; reading the final parsed score instead is robust to answers that quote the scale ("1 to 5"), reason
  before scoring (G-Eval: "Step 1 … Score: 4") or change their mind. When no rating token is found the result
  carries a one-line reason for that item.
- :func:`feature_vector` merges equivalent surface forms in probability space (log-sum-exp) and floors absent tokens.
- :func:`softmax_rows` and :func:`weighted_average` give the ordinal methods' inputs and the G-Eval baseline
  Σ_k v_k · softmax(z)_k (§3.4; the notes' worked logits give 4.6394 and 4.3716).

**Floor for absent tokens.** An API returns only the top-k alternatives, so a scale token that is absent has a
log-probability below every listed one. It is set to ``min(FLOOR_LOGPROB, smallest listed − 1)`` with
``FLOOR_LOGPROB = −20`` (e^−20 ≈ 2·10⁻⁹): far below any listed token, finite so that regression methods can use it,
and never above a token that was listed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

FLOOR_LOGPROB = -20.0

_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10,
}
_STRIP = " \t\r\n*_`'\"()[]{}<>:.,;!#|-"
_CUE = re.compile(r"\b(?:final\s+score|overall\s+score|score|rating|grade|evaluation)[*_`]*"
                  r"(?:\s*\(\s*\d+\s*(?:-|–|to)\s*\d+\s*\))?"  # "Score (1-5):" as the G-Eval form asks
                  r"\s*(?:is|of|=|:)?\s*[*_`\s]*"
                  r"(?P<num>\d+(?:\.\d+)?)", re.IGNORECASE | re.ASCII)
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d])", re.ASCII)  # ASCII digits only: "٤" is no rating
# numbers that are not the rating when no cue is present: denominators, range ends, step numbers, list markers
_NOT_A_RATING_BEFORE = re.compile(r"(?:/\s*|\bout\s+of\s+|\bstep\s+|\d\s*(?:-|–|to)\s*|\bbetween\s+\d+\s+and\s+)$",
                                  re.IGNORECASE)
_NOT_A_RATING_AFTER = re.compile(r"^(?:\s*(?:-|–|to)\s*\d|\s+and\s+\d)", re.IGNORECASE)
_LIST_MARKER = re.compile(r"^[ \t]*$")  # only blanks between the line start and the number …
_LIST_TAIL = re.compile(r"^[.)][ \t]+[^\W\d_]")  # … then "." or ")" and a word: "1. Read the story"


def rating_value(token: str) -> int | None:
    """The integer rating a token denotes (digits or an English number word, spaces and markup stripped), else None."""
    t = str(token).strip(_STRIP).lower()
    if not t:
        return None
    if t.isascii() and t.isdigit() and len(t) <= 3:
        return int(t)
    return _WORDS.get(t)


def merge_logprobs(candidates: Mapping[str, float] | Iterable[tuple[str, float]],
                   scale: Sequence[int]) -> dict[int, float]:
    """Scale value → log of the summed probability of every token that denotes it (equivalent tokens merged)."""
    pairs = candidates.items() if isinstance(candidates, Mapping) else candidates
    acc: dict[int, list[float]] = {}
    wanted = set(int(v) for v in scale)
    for tok, lp in pairs:
        v = rating_value(tok)
        try:
            lpf = float(lp)
        except (TypeError, ValueError):
            continue
        if v is None or v not in wanted or not math.isfinite(lpf):
            continue
        acc.setdefault(v, []).append(lpf)
    return {v: float(np.logaddexp.reduce(np.array(lps))) for v, lps in sorted(acc.items())}


def feature_vector(logprobs: Mapping[int, float], scale: Sequence[int], *,
                   floor: float = FLOOR_LOGPROB) -> np.ndarray:
    """z ∈ R^K over ``scale``: the merged log-probabilities, absent values at ``min(floor, smallest listed − 1)``."""
    present = [float(v) for v in logprobs.values() if v is not None and math.isfinite(float(v))]
    fill = min(floor, min(present) - 1.0) if present else floor
    z = np.full(len(scale), fill, dtype=float)
    for j, s in enumerate(scale):
        v = logprobs.get(int(s))
        if v is not None and math.isfinite(float(v)):
            z[j] = float(v)
    return z


def softmax_rows(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax(z) (renormalised over the K rating tokens)."""
    z = np.asarray(z, dtype=float)
    m = z.max(axis=-1, keepdims=True)
    e = np.exp(z - m)
    return e / e.sum(axis=-1, keepdims=True)


def weighted_average(z: np.ndarray, scale: Sequence[float]) -> np.ndarray:
    """G-Eval's probability-weighted score Σ_k v_k · softmax(z)_k (paper §3.4 baseline)."""
    return softmax_rows(z) @ np.asarray(scale, dtype=float)


@dataclass(frozen=True)
class Rating:
    """The final parsed score of an answer's text and where its number starts — or why there is none."""

    score: int | None
    start: int | None
    reason: str | None


def _excluded(text: str, m: re.Match[str]) -> bool:
    """A number that, without a cue, is not the rating (see the module docstring)."""
    before, after = text[max(0, m.start() - 40):m.start()], text[m.end():m.end() + 20]
    if _NOT_A_RATING_BEFORE.search(before) or _NOT_A_RATING_AFTER.match(after):
        return True
    line_start = text.rfind("\n", 0, m.start()) + 1
    return bool(_LIST_MARKER.match(text[line_start:m.start()]) and _LIST_TAIL.match(after))


SPANS = ("answer", "first-line", "form")


def _line_bounds(text: str, *, last: bool) -> tuple[int, int]:
    """(start, end) of the first (or last) non-empty line of ``text``; (0, 0) when there is none."""
    offset, found = 0, (0, 0)
    for line in text.splitlines(keepends=True):
        if line.strip():
            found = (offset, offset + len(line))
            if not last:
                break
        offset += len(line)
    return found


def find_rating(text: str, scale: Sequence[int], *, span: str = "answer") -> Rating:
    """The final parsed score of ``text`` on ``scale`` (module docstring), with the offset of its number."""
    if span not in SPANS:
        raise ValueError(f"span must be one of {SPANS}, got {span!r}")
    lo, hi = min(scale), max(scale)
    limit, fallback_from = len(text), 0
    if span == "first-line":
        limit = _line_bounds(text, last=False)[1]
    elif span == "form":
        fallback_from = _line_bounds(text, last=True)[0]
    within = text[:limit]
    # the last cue whose number is neither a list marker ("Evaluation:\n1. Read …") nor a range's start ("a rating
    # of 1 to 5")
    cues = [m for m in _CUE.finditer(within)
            if not (_LIST_TAIL.match(within[m.end():m.end() + 20]) or _NOT_A_RATING_AFTER.match(within[m.end():]))]
    match_start: int | None = None
    number: str | None = None
    if cues:
        m = cues[-1]
        match_start, number = m.start("num"), m.group("num")
    else:
        for m in reversed(list(_NUMBER.finditer(within, fallback_from))):
            try:
                val = float(m.group(0))
            except ValueError:
                continue
            if lo <= val <= hi and not _excluded(within, m):
                match_start, number = m.start(), m.group(0)
                break
    if match_start is None or number is None:
        where = {"answer": "in the answer", "first-line": "on the answer's first line",
                 "form": "in the answer (no cue such as 'Score:', no number on its last line)"}[span]
        return Rating(None, None, f"no rating found {where}")
    if "." in number and float(number) != int(float(number)):
        return Rating(None, None, f"the rating {number} is not an integer on the scale")
    score = int(float(number))
    if score < lo or score > hi:
        return Rating(score, None, f"the rating {score} is outside the scale {lo}-{hi}")
    return Rating(score, match_start, None)


@dataclass(frozen=True)
class Located:
    """Where the rating token is: its index, the parsed score, its merged log-probs — or why none was found."""

    index: int | None
    score: int | None
    logprobs: Mapping[int, float] | None
    reason: str | None


Token = tuple[str, float, "Mapping[str, float] | Sequence[tuple[str, float]] | None"]


def locate_rating(tokens: Sequence[Token], scale: Sequence[int], *, span: str = "answer") -> Located:
    """Find the token carrying the final parsed score and return its merged top log-probabilities over ``scale``.

    The answer text is the concatenation of the tokens; the score and its position are :func:`find_rating`'s (the
    number after the *last* cue, else the last in-scale number that is not a denominator, range end, step number or
    list marker; ``span`` as there). The rating token is the one holding that
    number's first character; it must denote the whole number (a two-digit "10" split into "1" + "0" is refused, as
    its log-probs would mix 1 and 10). The chosen token's own log-prob is included among the candidates in case
    ``top_logprobs`` omits it.
    """
    if not tokens:
        return Located(None, None, None, "no tokens in the answer (log-probabilities were not returned)")
    starts: list[int] = []
    parts: list[str] = []
    pos = 0
    for tok in tokens:
        text = str(tok[0]) if tok and tok[0] is not None else ""
        starts.append(pos)
        parts.append(text)
        pos += len(text)
    found = find_rating("".join(parts), scale, span=span)
    if found.reason is not None or found.start is None or found.score is None:
        return Located(None, found.score, None, found.reason)
    score, match_start = found.score, found.start
    idx = int(np.searchsorted(np.array(starts), match_start, side="right") - 1)
    while idx > 0 and parts[idx] == "":
        idx -= 1
    tok_val = rating_value(parts[idx])
    if tok_val != score:
        return Located(idx, score, None, f"the rating {score} spans several tokens ({parts[idx]!r} …)")
    top = tokens[idx][2] if len(tokens[idx]) > 2 else None
    if not top:
        return Located(idx, score, None, "the rating token has no top log-probabilities")
    try:
        cands: list[tuple[str, float]] = [(str(t), lp) for t, lp in (top.items() if isinstance(top, Mapping) else top)]
    except (TypeError, ValueError):
        return Located(idx, score, None, "the rating token's top log-probabilities are malformed")
    own = tokens[idx][1] if len(tokens[idx]) > 1 else None
    if isinstance(own, (int, float)) and not any(str(t) == parts[idx] for t, _ in cands):
        cands.append((parts[idx], float(own)))
    merged = merge_logprobs(cands, scale)
    if not merged:
        return Located(idx, score, None, "no scale token among the rating token's top log-probabilities")
    return Located(idx, score, merged, None)
