"""The ``text`` canonicalizer (SPEC §3.1), also applied to ``regex:`` captures: short factual answers → a
normalised phrase, or INVALID.

Where the answer is: the last ``\\boxed{…}``, ``<answer>…</answer>`` tag or JSON ``answer`` field; else the text
after the last explicit cue ("The final answer is", "the answer is", "Answer:"); else, for a multi-line reply, its
first line when short (an answer then an explanation) or else its last line. Then lead-ins are removed ("So",
"It's", "I think", "Therefore,") and a trailing explanation is cut (the first sentence is kept; ", because …",
" — …" and parenthesised remarks dropped), so "It's Paris." and "Paris, because it is the capital." are one class.
Normalisation: Unicode NFKC, casefold, acronym dots joined (``U.S.A.`` → ``usa``), punctuation removed (a decimal
point or comma between digits is kept), whitespace collapsed, and a *leading* article (a, an, the) removed when more
words follow — so option ``A``, ``Vitamin A`` and ``U.S.A.`` keep their letters. A lone "the"/"an" or a bare cue is
INVALID.
"""

from __future__ import annotations

import re
import unicodedata

from relgate_tui.core.canon.clean import clean
from relgate_tui.core.canon.locate import boxed_contents

__all__ = ["normalise_text", "text_class"]

_CUE = re.compile(r"(?:\bfinal\s+answer|\bthe\s+answer|\banswer)\s*(?:is|:|would\s+be|=)\s*", re.IGNORECASE)
_TAG = re.compile(r"<(final_answer|answer)>(.*?)</\1>", re.IGNORECASE | re.DOTALL)
_JSON_FIELD = re.compile(r'"(?:final[_ ]?answer|answer)"\s*:\s*"((?:[^"\\]|\\.)*)"', re.IGNORECASE)
_PREAMBLE = re.compile(
    r"(?:let\s+me|let'?s|okay|ok\b|sure|hmm|alright|well\b|first\b|to\s+(?:answer|find|solve)|i\s+need|we\s+need"
    r"|thinking|step\b|reasoning|the\s+question)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(
    r"(?:(?<=[A-Za-z][a-z])|(?<=[\d)\"'”]))(?<!\b(?:Mr|Ms|Dr|St|Jr|Sr|Mt|vs|No))(?<!\bMrs|\betc)[.!?](?=\s|$)"
    r"|[!?](?=\s|$)"
)
_EXPLANATION = re.compile(
    r",?\s+(?:because|since|although|though|due\s+to)\b|,\s+(?:as\s+it|which|who|where|but)\b|\s+[—–-]\s+|:\s"
    r"|,\s+(?:the|a|an|its|known|located|famous|home)\s",
    re.IGNORECASE,
)
_PAREN_REMARK = re.compile(r"\s*\([^()]*\)\s*")
_ACRONYM = re.compile(r"\b(?:[A-Za-z]\.){2,}")
_DECIMAL_POINT = re.compile(r"(?<=\d)[.,](?=\d)")
# word-level lead-ins, removed (when more words follow) until none is left; cues alone are INVALID
_CUE_WORDS = (("final", "answer", "is"), ("final", "answer"), ("the", "answer", "is"), ("answer", "is"), ("answer",))
_LEAD_WORDS = (
    ("so",), ("therefore",), ("thus",), ("hence",), ("well",), ("ok",), ("okay",), ("yes", "it", "is"),
    ("it", "s"), ("it", "is"), ("that", "s"), ("that", "is"), ("this", "is"), ("i", "think"), ("i", "believe"),
    ("i", "d", "say"), ("i", "would", "say"), ("that", "would", "be"), ("it", "would", "be"), ("it", "must", "be"), ("my", "answer", "is"), ("is",), ("was",), ("probably",),
    ("definitely",), ("likely",), ("correct",),
)  # fmt: skip
_ARTICLES = ("a", "an", "the")


def _span(text: str) -> str:
    boxed = [b for b in boxed_contents(text) if b.strip()]
    if boxed:
        return boxed[-1]
    tags = _TAG.findall(text)
    if tags:
        return tags[-1][1]
    fields = _JSON_FIELD.findall(text)
    if fields:
        return fields[-1]
    cues = list(_CUE.finditer(text))
    if cues and text[cues[-1].end() :].strip(" *:\n"):
        return text[cues[-1].end() :].lstrip(" *:\n")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1:
        opening = lines[0].strip()
        if len(opening.split()) <= 8 and not _PREAMBLE.match(opening) and not opening.endswith(":"):
            return lines[0]  # an answer, then its explanation
        if len(lines[-1].split()) <= 8:
            return lines[-1]  # reasoning, then the answer
        return lines[0]
    return text


def _cut(text: str) -> str:
    """The answer itself: the first sentence, without a trailing explanation or a parenthesised remark."""
    text = text.strip().split("\n", 1)[0]
    m = _SENTENCE_END.search(text)
    if m and text[m.end() :].strip():
        text = text[: m.start()]
    m = _EXPLANATION.search(text)
    if m and m.start() > 0:
        text = text[: m.start()]
    remark = _PAREN_REMARK.sub(" ", text)
    return remark if remark.strip(" .,;:!?\"'*_") else text


def normalise_text(text: str) -> str | None:
    """Word-level normal form (see the module docstring); None when nothing is left."""
    cue_mark = text.rstrip().endswith((":", "="))
    text = _ACRONYM.sub(lambda m: m.group(0).replace(".", ""), unicodedata.normalize("NFKC", text))
    text = text.casefold()
    text = _DECIMAL_POINT.sub(lambda m: "\x00" if m.group(0) == "." else "\x01", text)
    text = "".join(" " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in text)
    words = [w.replace("\x00", ".").replace("\x01", ",") for w in text.split()]
    i, changed, first = 0, True, True  # words[i:] is what is left (an index, not copies: linear time)
    while changed and i < len(words):
        changed = False
        for cue in _CUE_WORDS:
            if tuple(words[i : i + len(cue)]) == cue:
                if len(words) - i == len(cue):
                    if first and ("is" in cue or cue_mark):
                        return None  # "Answer:", "The answer is" alone (but "An Answer" is an answer)
                    break
                i, changed = i + len(cue), True
                break
        for lead in (*_LEAD_WORDS, *((a,) for a in _ARTICLES)):
            if len(words) - i > len(lead) and tuple(words[i : i + len(lead)]) == lead:
                i, changed = i + len(lead), True
                break
        first = False
    words = words[i:]
    if words in (["the"], ["an"]):
        return None  # a lone article is no answer
    return " ".join(words) or None


_LATEX_WRAPPER = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mbox|emph)\s*\{([^{}]*)\}")


def text_class(answer: str) -> str | None:
    """The class of one reply under ``text`` (None = INVALID). The class is read again until it is a fixed point
    (a class holding a cue, "… the answer is …", would otherwise read differently the second time); each reading
    only removes words, so this ends."""
    out = _read(answer)
    for _ in range(8):
        if out is None:
            return None
        again = _read(out)
        if again == out:
            return out
        out = again
    return out


def _read(answer: str) -> str | None:
    return normalise_text(_cut(_LATEX_WRAPPER.sub(r"\1", _span(clean(answer))).replace("$", " ")))
