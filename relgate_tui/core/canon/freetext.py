"""The ``text`` canonicalizer (SPEC §3.1), also applied to ``regex:`` captures: short factual answers → a
normalised phrase, or INVALID.

Where the answer is (after a closed ``</think>`` block; none inside one that never closes): the last ``\\boxed{…}``, ``<answer>…</answer>`` tag or JSON ``answer`` field; else the text
after the last explicit cue ("The final answer is", "the answer is", "Answer:"); else, for a multi-line reply, its
first line when short (an answer then an explanation) or else its last line. Then lead-ins are removed ("So",
"It's", "I think", "Therefore,") and a trailing explanation is cut (the first sentence is kept; ", because …",
" — …" and parenthesised remarks dropped), so "It's Paris." and "Paris, because it is the capital." are one class.
A cue may be joined by a dash ("Answer - Paris", "Answer – Paris"). A yes/no answer followed only by a tag ("Yes, it
is.", "No, it isn't.", "Yes, that's right.") is its yes/no.
Normalisation: Unicode NFKC, casefold, acronym dots joined (``U.S.A.`` → ``usa``), punctuation removed (a decimal
point or comma between digits is kept), whitespace collapsed, and articles removed as the SQuAD normalisation
(``normalize_answer``) the field scores free text with does — *wherever they stand* ("the cat in the hat", "cat in
the hat" and "cat in hat" are one class) — with one departure, so that letters stay answers: "a" is removed only as
the first word. After a word, a lone "a" is a letter name as often as an article ("Vitamin A", "Plan A", "Type A
personality"), and classes are lower case and must read back as themselves, so a "vitamin a" can no longer be told
from "cat in a hat": both keep their "a". "the" and "an" go wherever they stand. An answer that is only an article
is not emptied: a lone "A" is the letter; a lone "the"/"an", or a bare cue, is INVALID. ``U.S.A.`` is joined
before articles are looked for, so it keeps its letters.
"""

from __future__ import annotations

import re
import unicodedata

from relgate_tui.core.canon.clean import clean
from relgate_tui.core.canon.locate import after_thinking, boxed_contents

__all__ = ["normalise_text", "text_class"]

_CUE = re.compile(r"(?:\bfinal\s+answer|\bthe\s+answer|\banswer)\s*(?:is|:|would\s+be|=|[-–—](?=\s))\s*",
                  re.IGNORECASE)
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
_INNER_ARTICLES = ("an", "the")  # removed wherever they stand; "a" only as the first word (module docstring)
_YES_NO = ("yes", "no")
# a tag after yes/no: a pronoun with an auxiliary ("it is", "they don t", "she was not") or an agreement word
_TAG_PRONOUNS = frozenset("it that this they he she we you i there".split())
_TAG_WORDS = _TAG_PRONOUNS | frozenset(
    "s is are was were do does did can could will would has have had should must am m re ll d ve t not n isn aren "
    "wasn weren don doesn didn cannot couldn won wouldn hasn haven hadn shouldn true right correct so indeed of "
    "course definitely absolutely exactly certainly sure think believe".split()
)
_AGREEMENT_OPENERS = frozenset("that right correct true indeed of definitely absolutely exactly certainly sure".split())


def _span(text: str) -> str:
    answer_part = after_thinking(text)
    if answer_part is None:
        return ""  # reasoning cut off inside its <think> block: no answer
    text = answer_part
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
        if len(words) - i > 1 and words[i] in _YES_NO and _is_tag(words[i + 1 :]):
            return words[i]  # "Yes, it is." / "So no, it isn't."
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
    if len(words) > 1:  # SQuAD: articles removed wherever they stand ("a" only as the first word, above)
        words = [w for w in words if w not in _INNER_ARTICLES] or words[-1:]
    return " ".join(words) or None


def _is_tag(words: list[str]) -> bool:
    """``words`` (after a yes/no) are only a tag: a pronoun and an auxiliary, or an agreement ("that's right")."""
    return (len(words) <= 5 and (words[0] in _TAG_PRONOUNS or words[0] in _AGREEMENT_OPENERS)
            and all(w in _TAG_WORDS for w in words))


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
