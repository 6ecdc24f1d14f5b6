"""The ``mcq`` canonicalizer (SPEC §3.1): a reply → an option letter A–J, or INVALID.

Option letters are limited to the number of choices when the item has choices. Rules, in order: the whole answer
equals an option's text; the last explicit cue ("the answer is [definitely] B", "Answer: (C)", "correct option is
D") — a cue naming two options ("A and C") is no single answer; a first line that is only a letter ("B", then a
blank line and an explanation naming other options); an answer naming several options ("Both A and C are
correct.") is INVALID; a leading letter ("B", "(B) …", "B) …", "B. …", "b is correct") — but never the English
article ("A train leaves…" is not option A); a letter joined to an option's text by a dash ("A - London", "A – London",
"B — Paris"), the letter — unless the text is exactly another option's, which contradicts it (INVALID); a commitment ("I'd say it's probably B, though C is close.", "I choose
C"); bold ``**C**``; the first parenthesised letter; "option c" / "Choice (b)"; an option's text after a cue (the
head of the cue's clause: "The answer is Paris, not Berlin." → Paris) or as the only option text mentioned outside a
negation; a lone capital letter token. Letters need word boundaries (the "d" of "definitely" is not option D).
Output: the uppercase letter.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from relgate_tui.core.canon.clean import clean

__all__ = ["mcq_class"]

_LETTERS = "ABCDEFGHIJ"
_ADVERBS = r"(?:(?:definitely|probably|likely|most\s+likely|clearly|certainly|indeed|option|choice|letter|:|-|\*+|\s)+)?"
_MCQ_CUE = re.compile(
    r"(?:correct\s+(?:answer|option|choice|letter)|(?:final\s+)?answer|best\s+(?:answer|option|choice))"
    r"\s*(?:is|:|=|would\s+be|will\s+be|should\s+be|must\s+be)?\s*" + _ADVERBS + r"[(\[]?\s*([A-Ja-j])\s*[)\]]?(?![\w'])",
    re.IGNORECASE,
)
_HEDGE = r"(?:(?:it'?s|it\s+is|that'?s|probably|definitely|likely|clearly|certainly|surely|maybe|perhaps|option|choice|answer|letter)\s+)*"
_MCQ_COMMIT = re.compile(
    r"\b(?:go\s+with|going\s+with|choose|chose|pick|picked|select|selected|opt\s+for|i'?d\s+say|i\s+would\s+say"
    r"|i\s+think|i\s+believe|i\s+guess|my\s+(?:answer|pick|choice|guess|vote)\s+is|it'?s|it\s+is)\s+"
    + _HEDGE
    + r"[(\[]?([A-Ja-j])[)\]]?(?![\w'’])",
    re.IGNORECASE,
)
_MCQ_OPTION_WORD = re.compile(r"\b(?:option|choice)\s+[(\[]?([A-Ja-j])[)\]]?(?![\w'’])", re.IGNORECASE)
_MCQ_LEADING = re.compile(r"^\s*[*_]*\s*[(\[]?\s*([A-J])\s*(?:[)\].:,]|(?=\s*$)|(?=\s*[*_]+\s*$)|(?=\s+\S))")
_MCQ_LEADING_LOWER = re.compile(
    r"^\s*[(\[]\s*([a-j])\s*[)\]]|^\s*([a-j])\s*[).:](?:\s|$)|^\s*([a-j])\s*$"
    r"|^\s*([a-j])\s+(?=(?:is|seems|would\s+be|must\s+be|should\s+be)\s+(?:the\s+)?(?:correct|right|best|answer|true))",
)
_DASHED = re.compile(r"^\s*[*_]*\s*[(\[]?\s*([A-Ja-j])\s*[)\]]?\s*(?:[-–—]\s+|\s[-–—]\s*)(\S[^\n]*)")
_MCQ_BOLD = re.compile(r"\*\*\s*[(\[]?([A-J])[)\]]?\s*[.:)]?\s*\*\*")
_MCQ_PAREN = re.compile(r"[(\[]\s*([A-J])\s*[)\]]")
_MCQ_LONE = re.compile(r"(?<![\w'’-])([A-J])(?![\w'’-])")
_BARE_LETTER = re.compile(
    r"^\s*(?:(?:the\s+)?(?:correct\s+)?(?:final\s+)?(?:answer|option|choice)\s*(?:is|:)?\s*)?[*_]*\s*[(\[]?\s*([A-Ja-j])\s*[)\]]?\s*[*_]*\s*[.!]?\s*$",
    re.IGNORECASE,
)
_IS_CORRECT = re.compile(
    r"\s+(?:is|was|would\s+be|seems|must\s+be|should\s+be)\s+(?:the\s+)?(?:correct|right|best|true|answer)\b", re.I
)
_LETTER_IS_CORRECT = re.compile(r"(?<![\w'’-])[(\[]?([A-J])[)\]]?(?=" + _IS_CORRECT.pattern + ")", re.I)
_VERBISH = re.compile(r"^\s+(?:is|was|would|seems|because|since|as|it|--|-)\b", re.IGNORECASE)
_LETTER_LIST = r"[(\[]?([A-J])[)\]]?(?:\s*,\s*[(\[]?[A-J][)\]]?)*\s*,?\s*(?:and|&|or|/)\s*[(\[]?([A-J])[)\]]?(?![\w'’])"
_MULTI = re.compile(
    r"^\s*(?:(?:both|either|all\s+of)\s+(?:options?\s+|choices?\s+)?" + _LETTER_LIST + r"|" + _LETTER_LIST
    + r"(?=\s+(?:are|were)\s+(?:both\s+|all\s+|equally\s+)?(?:correct|right|true|valid|possible|acceptable|answers?)))",
    re.IGNORECASE,
)
_ONLY_LIST = re.compile(r"\s*(?:(?:both|either|all\s+of)\s+)?" + _LETTER_LIST + r"\s*[.?!]?\s*", re.I)
_CUE_LIST_TAIL = re.compile(r"\s*[)\]]?\s*(?:,|and|&|or|/)\s*[(\[]?[A-J][)\]]?(?![\w'’])")
_NEGATION = re.compile(r"\b(?:not|rather\s+than|instead\s+of|unlike|except(?:\s+for)?|other\s+than|nor)\b", re.I)
_NON_OPTION_CHARS = re.compile(r"[^\w<>=+\-*/×÷%.]+")
_CLAUSE = re.compile(r"[,;!?]|\.(?!\d)|\s[—–-]\s|\b(?:but|so|therefore|because|since)\b", re.I)
_CLAUSE_END = re.compile(r"[,;.!?\n]\s|[,;!?\n]|\s(?:not|because|since|as|but|rather|instead|although|though)\b|$")
_EDGE_PUNCT = " \t\n.,;:!?\"'`*_()[]{}\u201c\u201d\u2018\u2019"


def _norm_option(text: str) -> str:
    """Comparison key for option texts: NFKC, casefold, whitespace collapsed, surrounding punctuation and a leading
    article removed. Inner symbols are kept, so ``-1`` ≠ ``1`` and ``a < c`` ≠ ``c``."""
    text = " ".join(unicodedata.normalize("NFKC", text).casefold().split()).strip(_EDGE_PUNCT)
    for article in ("the ", "an ", "a "):
        if text.startswith(article) and len(text) > len(article):
            text = text[len(article) :].strip(_EDGE_PUNCT)
            break
    return text


def _article_like(text: str, m: re.Match[str]) -> bool:
    """The matched letter reads as a word: "a"/"A" (or "I") followed by a lowercase word that is no verb."""
    letter = m.group(1)
    after = text[m.end(1) :]
    in_parens = m.start(1) > 0 and text[m.start(1) - 1] in "(["
    if in_parens:
        return False
    if letter in "aAI" and re.match(r"\s+[a-z]", after) and not _VERBISH.match(after):
        return True
    return letter.islower() and re.match(r"\s+[a-z]", after) is not None and not _VERBISH.match(after)


def _leading_letter(text: str) -> str | None:
    m = _MCQ_LEADING.match(text)
    if m:
        letter = m.group(1)
        after = text[m.end(1) :]
        bare = not re.match(r"\s*[)\].:,]", after) and not re.match(r"^\s*[(\[]", text)
        if bare and re.match(r"\s+\S", after):
            # "A train leaves…" / "I think…" are words, not options: a bare leading letter followed by more text
            # counts only when a verb-like word follows ("B is correct"; for A and I only "is correct" and the like).
            if letter in ("A", "I") and not _IS_CORRECT.match(after):
                return None
            if not _VERBISH.match(after):
                return None
        return letter
    m = _MCQ_LEADING_LOWER.match(text)
    if m:
        return next(g for g in m.groups() if g).upper()
    return None


def mcq_class(answer: str, choices: Sequence[str]) -> str | None:
    """The class of one reply under ``mcq`` (None = INVALID)."""
    text = clean(answer).strip()
    if not text:
        return None
    n_opts = len(choices) if choices else len(_LETTERS)
    allowed = _LETTERS[: min(n_opts, len(_LETTERS))]
    norm_choices = [_norm_option(c) for c in choices]

    def ok(letter: str | None) -> str | None:
        if letter is None:
            return None
        letter = letter.upper()
        return letter if letter in allowed else None

    def by_text(segment: str) -> str | None:
        key = _norm_option(segment)
        if not key:
            return None
        exact = [i for i, c in enumerate(norm_choices) if c and c == key]
        if len(exact) == 1:
            return allowed[exact[0]] if exact[0] < len(allowed) else None
        return None

    def text_mentioned(segment: str) -> str | None:
        # An option's text inside a longer answer ("The capital is Paris."): whole-phrase matches outside a
        # negation ("not Berlin"), and only for distinctive options (two words or five characters), so "None of
        # these…" does not pick option "None".
        clauses = [" " + _NON_OPTION_CHARS.sub(" ", c) + " " for c in _CLAUSE.split(_norm_option(segment))]
        hits = []
        for i, c in enumerate(norm_choices):
            phrase = _NON_OPTION_CHARS.sub(" ", c).strip()
            if not phrase or (len(phrase) < 5 and " " not in phrase):
                continue
            for clause in clauses:
                spots = [m.start() for m in re.finditer(re.escape(f" {phrase} "), clause)]
                if any(not _NEGATION.search(clause[: s + 1]) for s in spots):
                    hits.append(i)
                    break
        if len(hits) == 1 and hits[0] < len(allowed):
            return allowed[hits[0]]
        if len(hits) > 1:  # the longest (most specific) option text when it contains the others
            longest = max(hits, key=lambda i: len(norm_choices[i]))
            if all(norm_choices[i] in norm_choices[longest] for i in hits) and longest < len(allowed):
                return allowed[longest]
        return None

    def clause_head(segment: str) -> str:
        segment = segment.lstrip(" :*")
        m = _CLAUSE_END.search(segment)
        return segment[: m.start()] if m else segment

    if choices and not _BARE_LETTER.match(text):
        hit = by_text(text) or by_text(re.sub(r"(?i)^.*?\banswer\s*(?:is|:)\s*", "", text))
        if hit:
            return hit
    for m in reversed(list(_MCQ_CUE.finditer(text))):
        letter = m.group(1)
        if letter.isupper() and _CUE_LIST_TAIL.match(text, m.end(1)):
            return None  # "the answer is A and C": no single option
        if letter.islower() and text[m.end(1) : m.end(1) + 2].strip()[:1].isalpha():
            continue
        if letter in ("a", "A") and re.match(r"\s+[a-z]", text[m.end(1) :]) and text[m.start(1) - 1] not in "([":
            continue  # "the answer is a good one"
        if ok(letter):
            return ok(letter)
    first_line = text.split("\n", 1)[0]
    bare = _BARE_LETTER.match(first_line)
    if bare and "\n" in text and ok(bare.group(1)):
        return ok(bare.group(1))
    first_sentence = re.split(r"(?<=[a-z)\]])[.!?](?:\s|$)|\n", text, maxsplit=1)[0]
    if _MULTI.match(first_sentence) or _ONLY_LIST.fullmatch(text):
        return None
    dashed = _DASHED.match(text)
    if dashed and ok(dashed.group(1)):
        named = by_text(dashed.group(2)) or by_text(clause_head(dashed.group(2)))
        if named is not None and named != ok(dashed.group(1)):
            return None  # "A - London" when London is option B: the letter and the text disagree
        return ok(dashed.group(1))
    lead = ok(_leading_letter(text))
    if lead:
        return lead
    said_correct = {m.group(1).upper() for m in _LETTER_IS_CORRECT.finditer(text) if m.group(1).isupper()}
    if len(said_correct) == 1 and ok(next(iter(said_correct))):
        return ok(next(iter(said_correct)))  # "B and C are wrong; A is correct."
    for pattern in (_MCQ_COMMIT, _MCQ_BOLD, _MCQ_PAREN, _MCQ_OPTION_WORD):
        for m in pattern.finditer(text):
            letter = m.group(1)
            if pattern in (_MCQ_COMMIT, _MCQ_OPTION_WORD) and _article_like(text, m):
                continue
            if ok(letter):
                return ok(letter)
    if choices:
        cue = re.search(r"(?i)\banswer\s*(?:is|:)\s*(.*)", text, re.DOTALL)
        hit = (
            cue
            and (
                by_text(cue.group(1).split("\n")[0])
                or by_text(clause_head(cue.group(1)))
                or text_mentioned(cue.group(1).split("\n")[0])
            )
        ) or text_mentioned(text)
        if hit:
            return hit
    lone = [m.group(1) for m in _MCQ_LONE.finditer(text)]
    lone = [x for x in lone if x not in ("A", "I") and ok(x)]
    if len(set(lone)) == 1:
        return lone[0]
    return None
