"""Canonicalization: raw model answers → canonical answer classes (paper 004 Def. 4.1, SPEC §3.1).

``Canon(x, a) -> class``. Equivalent surface forms ("42", "The answer is 42.", "#### 42", "\\boxed{42}") map to
one class, which is what makes self-consistency voting work: merging the surface forms of the correct answer raises
its class probability p_canon ≥ p_raw and so the Hoeffding exponent of the mode error (Prop. 4.6, amplification).
Parse failures map to :data:`~relgate_tui.core.types.INVALID`, which is never acceptable and is excluded from
ranking and prediction sets. Reference answers go through the *same* canonicalizer
(:func:`canonicalize_references`), so ``1,000`` matches ``1000`` (a failure of the public anchor, SPEC §9).

Canonicalizers (``get_canonicalizer(spec)``):

``numeric``
    Where the answer is, in priority order: the last ``\\boxed{…}`` (nested braces), the GSM8K marker ``#### x``,
    the last explicit answer cue ("the answer is", "Answer:", "final answer", "result is"), the last bold
    ``**…**`` holding a number, and otherwise the *final line*. Inside a cue segment the first sentence is kept,
    an "=" chain is resolved to its right-hand side, parenthesised remarks are dropped, and the first number
    wins ("The answer is 42 (since 6*7)" → 42). On the final line parenthesised remarks are dropped and the last
    number wins ("42 (since 6*7)" → 42, "6*7 = 42" → 42, long reasoning ending in a number → that number).
    Numbers are exact (``fractions.Fraction``; big integers never round-trip through float): thousands
    separators (``1,234,567``), Unicode minus (U+2212) and dashes used as signs, currency, scientific notation,
    ``a/b`` and LaTeX ``\\frac{a}{b}`` / ``\\frac12``. **Percent rule:** a trailing ``%`` (or "percent") is dropped,
    so "50%" → ``50``; "50%" and "0.5" are *different* classes. Output: integers as plain digits; other
    rationals as an exact terminating decimal when one exists (``1/2`` → ``0.5``), else ``p/q`` in lowest terms.
``mcq``
    Option letters A–J (limited to the number of choices when the item has choices). Rules, in order: the whole
    answer equals an option's text; the last explicit cue ("the answer is [definitely] B", "Answer: (C)",
    "correct option is D"); a leading letter ("B", "(B) …", "B) …", "B. …", "B: …", "B is correct") — but never
    the English article ("A train leaves…" is not option A); a commitment phrase ("I'd go with (B)",
    "I choose C"); bold ``**C**``; the first parenthesised letter; an option's text after a cue or as the only
    option text mentioned; a lone capital letter token. Letters need word boundaries (the "d" of "definitely" is
    not option D). Output: the uppercase letter.
``text``
    Unicode NFKC, casefold, leading answer cues removed, punctuation removed (a decimal point between digits is
    kept), articles (a, an, the) removed, whitespace collapsed.
``regex:<pattern>``
    The user's pattern is searched; the first capture group (or the whole match) is normalised with the
    ``text`` rules. No match → INVALID.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

from relgate_tui.core.text import strip_controls
from relgate_tui.core.types import INVALID

__all__ = [
    "CANONICALIZER_NAMES",
    "Canonicalizer",
    "canonicalize_references",
    "format_number",
    "get_canonicalizer",
    "parse_number",
    "suggest_canonicalizer",
]

CANONICALIZER_NAMES: tuple[str, ...] = ("numeric", "mcq", "text", "regex:<pattern>")

_MAX_INPUT_CHARS = 20_000  # answers are truncated to their last characters beyond this (the answer is at the end)
_MAX_DIGITS = 4_000  # Python refuses int() of more than 4,300 digits; longer "numbers" are not answers
_MAX_EXPONENT = 1_000


# --------------------------------------------------------------------------------------------------------------
# Shared normalisation


_SPACE_CHARS = dict.fromkeys(map(ord, "\u00a0\u2007\u2009\u200a\u202f\u205f\u3000"), " ")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"), None)
_MINUS_CHARS = dict.fromkeys(map(ord, "\u2212\u2796\ufe63\uff0d"), "-")  # minus sign, heavy minus, small/fullwidth
_DASH_SIGN = re.compile(r"(?:(?<=^)|(?<=[\s(=:$]))[\u2010\u2011\u2012\u2013\u2014](?=\s?\d)")
_THIN_GROUP = re.compile(r"(?<=\d)[\u2009\u202f\u00a0](?=\d{3}\b)")


def _clean(text: str) -> str:
    """Unicode hygiene shared by all canonicalizers: thin-space digit groups joined, minus signs unified."""
    if len(text) > _MAX_INPUT_CHARS:
        text = text[-_MAX_INPUT_CHARS:]
    text = text.translate(_ZERO_WIDTH)
    if any(ch < " " and ch not in "\n\t" for ch in text):
        text = "".join(" " if ch < " " and ch not in "\n\t" else ch for ch in text)
    text = _THIN_GROUP.sub("", text)
    text = text.translate(_SPACE_CHARS).translate(_MINUS_CHARS)
    return _DASH_SIGN.sub("-", text)


# --------------------------------------------------------------------------------------------------------------
# Numbers


_NUMBER = re.compile(
    r"""
    (?<![\w.])                              # not glued to a word or a decimal point
    (?P<sign>[-+]\s?)?
    \$?\s?
    (?P<num>
        (?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?    # integer part with optional thousands groups, decimals
      | \.\d+                                   # .5
    )
    (?:\s*/\s*(?P<den>\d+)(?![\d.]))?       # a/b
    (?:[eE](?P<exp>[-+]?\d{1,4})(?![\d]))?  # 1e3
    (?:\s*(?:\\times|×|x|\*)\s*10\s*\^\s*\{?(?P<exp10>[-+]?\d{1,4})\}?)?   # 1.5 × 10^3
    (?P<pct>\s*(?:\\?%|percent\b))?
    """,
    re.VERBOSE,
)

_LATEX_FRAC_BRACED = re.compile(r"\\[dt]?frac\s*\{\s*([^{}]*)\}\s*\{\s*([^{}]*)\}")
_LATEX_FRAC_DIGITS = re.compile(r"\\[dt]?frac\s*(\d)\s*(\d)")
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mathbf|operatorname)\s*\{([^{}]*)\}")
_LATEX_DROP = re.compile(r"\\(?:left|right|displaystyle|!|;|quad|qquad)|\^\s*\{?\\circ\}?|\\circ")
_LATEX_THOUSANDS = re.compile(r"(?<=\d)(?:\\,|\{,\})(?=\d{3})")


def _delatex(text: str) -> str:
    """Rewrite the LaTeX that carries numbers into plain text: \\frac{a}{b} → (a)/(b) where a, b are numbers."""
    text = _LATEX_THOUSANDS.sub("", text)
    text = _LATEX_TEXT.sub(r" \1 ", text)
    for _ in range(4):  # nested fractions: innermost first
        new = _LATEX_FRAC_BRACED.sub(_frac_repl, text)
        new = _LATEX_FRAC_DIGITS.sub(r"\1/\2", new)
        if new == text:
            break
        text = new
    text = _LATEX_DROP.sub("", text)
    return text.replace("\\$", "$").replace("\\%", "%").replace("\\,", " ").replace("\\cdot", "*")


def _frac_repl(m: re.Match[str]) -> str:
    num, den = parse_number(m.group(1)), parse_number(m.group(2))
    if num is None or den is None or den == 0:
        return f"{m.group(1)}/{m.group(2)}"
    value = num / den
    return format_number(value)


def _to_fraction(m: re.Match[str]) -> Fraction | None:
    """Exact value of one ``_NUMBER`` match (percent sign dropped, see module docstring)."""
    digits = m.group("num").replace(",", "")
    if len(digits) > _MAX_DIGITS:
        return None
    try:
        value = Fraction(digits)
        if m.group("den") is not None:
            den = int(m.group("den"))
            if den == 0:
                return None
            value /= den
        for exp_name in ("exp", "exp10"):
            exp = m.group(exp_name)
            if exp is not None:
                e = int(exp)
                if abs(e) > _MAX_EXPONENT:
                    return None
                value *= Fraction(10) ** e
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    if m.group("sign") and m.group("sign").strip() == "-":
        value = -value
    return value


def _numbers(text: str) -> list[Fraction]:
    out = []
    for m in _NUMBER.finditer(text):
        value = _to_fraction(m)
        if value is not None:
            out.append(value)
    return out


def parse_number(text: str) -> Fraction | None:
    """The exact value of ``text`` when the whole string is one number (after LaTeX and Unicode clean-up)."""
    s = _delatex(_clean(text)).strip().strip("$").strip()
    s = s.rstrip(".").strip()
    if s.startswith("(") and s.endswith(")"):
        s = s[1:-1].strip()
    m = _NUMBER.fullmatch(s)
    return _to_fraction(m) if m else None


def format_number(value: Fraction) -> str:
    """Canonical text of an exact number: ``42``, ``-3``, ``0.5``, ``1.25``, ``1/3`` (never an exponent)."""
    if value.denominator == 1:
        return str(value.numerator)
    den = value.denominator
    for p in (2, 5):
        while den % p == 0:
            den //= p
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    digits = len(str(value.numerator)) + len(str(value.denominator)) + 5
    with localcontext() as ctx:
        ctx.prec = digits
        d = Decimal(value.numerator) / Decimal(value.denominator)
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _boxed_contents(text: str) -> list[str]:
    """Contents of every ``\\boxed{…}`` / ``\\fbox{…}`` with balanced (nested) braces, in order."""
    out = []
    for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        if depth == 0:
            out.append(text[m.end() : i - 1])
    return out


_GSM8K_MARK = re.compile(r"####\s*([^\n]*)")
_ANSWER_CUE = re.compile(
    r"(?:final\s+answer|the\s+answer|answer|result|solution|total)\s*(?:is|:|=|would\s+be|will\s+be|should\s+be|equals)"
    r"|answer\s*[:=]|\banswer\b(?=\s*\**\s*[-+$\d])",
    re.IGNORECASE,
)
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
_PARENTHETICAL = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_SENTENCE_END = re.compile(r"(?<!\d)\.(?!\d)|\.(?=\s|$)|[!?;\n]")


def _strip_parentheticals(text: str) -> str:
    for _ in range(3):
        new = _PARENTHETICAL.sub(" ", text)
        if new == text:
            break
        text = new
    return text


def _resolve_segment(segment: str, first: bool) -> Fraction | None:
    """A number from an answer segment: right-hand side of '=' chains, remarks in parentheses dropped."""
    if "=" in segment:
        segment = segment.rsplit("=", 1)[1]
    stripped = _strip_parentheticals(segment)
    for candidate in (stripped, segment):
        nums = _numbers(candidate)
        if nums:
            return nums[0] if first else nums[-1]
    return None


def _numeric(answer: str) -> Fraction | None:
    text = _delatex(_clean(answer))
    for content in reversed(_boxed_contents(_clean(answer))):
        value = _resolve_segment(_delatex(content), first=True)
        if value is not None:
            return value
    marks = _GSM8K_MARK.findall(text)
    if marks:
        value = _resolve_segment(marks[-1], first=True)
        if value is not None:
            return value
    cues = list(_ANSWER_CUE.finditer(text))
    for cue in reversed(cues):
        rest = text[cue.end() :].lstrip(" :*\t")
        end = _SENTENCE_END.search(rest)
        segment = rest[: end.start()] if end else rest
        value = _resolve_segment(segment.replace("*", " "), first=True)
        if value is not None:
            return value
    for bold in reversed(_BOLD.findall(text)):
        value = _resolve_segment(bold, first=True)
        if value is not None:
            return value
    lines = [ln for ln in text.splitlines() if _numbers(ln)]
    if not lines:
        return None
    return _resolve_segment(lines[-1], first=False)


# --------------------------------------------------------------------------------------------------------------
# Multiple choice


_LETTERS = "ABCDEFGHIJ"
_ADVERBS = r"(?:(?:definitely|probably|likely|most\s+likely|clearly|certainly|indeed|option|choice|letter|:|-|\*+|\s)+)?"
_MCQ_CUE = re.compile(
    r"(?:correct\s+(?:answer|option|choice|letter)|(?:final\s+)?answer|best\s+(?:answer|option|choice))"
    r"\s*(?:is|:|=|would\s+be|will\s+be|should\s+be|must\s+be)?\s*" + _ADVERBS + r"[(\[]?\s*([A-Ja-j])\s*[)\]]?(?![\w'])",
    re.IGNORECASE,
)
_MCQ_COMMIT = re.compile(
    r"\b(?:go\s+with|going\s+with|choose|chose|pick|picked|select|selected|opt\s+for)\s+"
    r"(?:option\s+|choice\s+|answer\s+)?[(\[]?([A-Ja-j])[)\]]?(?![\w'])",
    re.IGNORECASE,
)
_MCQ_OPTION_WORD = re.compile(r"\b(?:option|choice)\s+[(\[]?([A-J])[)\]]?(?![\w'])", re.IGNORECASE)
_MCQ_LEADING = re.compile(r"^\s*[*_]*\s*[(\[]?\s*([A-J])\s*(?:[)\].:,]|(?=\s*$)|(?=\s*[*_]+\s*$)|(?=\s+\S))")
_MCQ_LEADING_LOWER = re.compile(r"^\s*[(\[]\s*([a-j])\s*[)\]]|^\s*([a-j])\s*[).:](?:\s|$)|^\s*([a-j])\s*$")
_MCQ_BOLD = re.compile(r"\*\*\s*[(\[]?([A-J])[)\]]?\s*[.:)]?\s*\*\*")
_MCQ_PAREN = re.compile(r"[(\[]\s*([A-J])\s*[)\]]")
_MCQ_LONE = re.compile(r"(?<![\w'’-])([A-J])(?![\w'’-])")
_BARE_LETTER = re.compile(
    r"^\s*(?:(?:the\s+)?(?:correct\s+)?(?:final\s+)?(?:answer|option|choice)\s*(?:is|:)?\s*)?[*_]*\s*[(\[]?\s*[A-Ja-j]\s*[)\]]?\s*[*_]*\s*[.!]?\s*$",
    re.IGNORECASE,
)
_VERBISH = re.compile(r"^\s+(?:is|was|would|seems|because|since|as|it|--|-)\b", re.IGNORECASE)


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


def _leading_letter(text: str) -> str | None:
    m = _MCQ_LEADING.match(text)
    if m:
        letter = m.group(1)
        after = text[m.end(1) :]
        bare = not re.match(r"\s*[)\].:,]", after) and not re.match(r"^\s*[(\[]", text)
        if bare and re.match(r"\s+\S", after):
            # "A train leaves…" / "I think…" are words, not options: a bare leading letter followed by more text
            # counts only when a verb-like word follows ("B is correct").
            if letter in ("A", "I") or not _VERBISH.match(after):
                return None
        return letter
    m = _MCQ_LEADING_LOWER.match(text)
    if m:
        return next(g for g in m.groups() if g).upper()
    return None


def _mcq(answer: str, choices: Sequence[str]) -> str | None:
    text = _clean(answer).strip()
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
        # An option's text inside a longer answer ("The capital is Paris."): whole-phrase matches only, and only
        # for distinctive options (two words or five characters), so "None of these…" does not pick option "None".
        key = f" {_norm_option(segment)} "
        key = re.sub(r"[^\w<>=+\-*/×÷%.]+", " ", key)
        hits = []
        for i, c in enumerate(norm_choices):
            phrase = re.sub(r"[^\w<>=+\-*/×÷%.]+", " ", c).strip()
            if phrase and (len(phrase) >= 5 or " " in phrase) and f" {phrase} " in key:
                hits.append(i)
        if len(hits) == 1 and hits[0] < len(allowed):
            return allowed[hits[0]]
        if len(hits) > 1:  # the longest (most specific) option text when it contains the others
            longest = max(hits, key=lambda i: len(norm_choices[i]))
            if all(norm_choices[i] in norm_choices[longest] for i in hits) and longest < len(allowed):
                return allowed[longest]
        return None

    if choices and not _BARE_LETTER.match(text):
        hit = by_text(text) or by_text(re.sub(r"(?i)^.*?\banswer\s*(?:is|:)\s*", "", text))
        if hit:
            return hit
    for m in reversed(list(_MCQ_CUE.finditer(text))):
        letter = m.group(1)
        if letter.islower() and text[m.end(1) : m.end(1) + 2].strip()[:1].isalpha():
            continue
        if letter in ("a", "A") and re.match(r"\s+[a-z]", text[m.end(1) :]) and text[m.start(1) - 1] not in "([":
            continue  # "the answer is a good one"
        if ok(letter):
            return ok(letter)
    lead = ok(_leading_letter(text))
    if lead:
        return lead
    for pattern in (_MCQ_COMMIT, _MCQ_BOLD, _MCQ_PAREN, _MCQ_OPTION_WORD):
        for m in pattern.finditer(text):
            letter = m.group(1)
            if letter.islower() and pattern is not _MCQ_COMMIT:
                continue
            if ok(letter):
                return ok(letter)
    if choices:
        cue = re.search(r"(?i)\banswer\s*(?:is|:)\s*(.*)", text, re.DOTALL)
        hit = (cue and (by_text(cue.group(1).split("\n")[0]) or text_mentioned(cue.group(1)))) or text_mentioned(text)
        if hit:
            return hit
    lone = [m.group(1) for m in _MCQ_LONE.finditer(text)]
    lone = [x for x in lone if x not in ("A", "I") and ok(x)]
    if len(set(lone)) == 1:
        return lone[0]
    return None


# --------------------------------------------------------------------------------------------------------------
# Free text


_TEXT_CUES = ("final answer is", "final answer", "the answer is", "answer is", "answer")
_DECIMAL_POINT = re.compile(r"(?<=\d)[.,](?=\d)")


def _text(answer: str) -> str | None:
    text = unicodedata.normalize("NFKC", _clean(answer)).casefold()
    text = _DECIMAL_POINT.sub(lambda m: "\x00" if m.group(0) == "." else "\x01", text)
    text = "".join(" " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in text)
    words = [w.replace("\x00", ".").replace("\x01", ",") for w in text.split()]
    changed = True
    while changed and words:
        changed = False
        joined = " ".join(words)
        if joined in _TEXT_CUES:
            return None
        for cue in _TEXT_CUES:
            if joined.startswith(cue + " "):
                words = joined[len(cue) + 1 :].split()
                changed = True
                break
        while words and words[0] in ("is", "was"):
            words, changed = words[1:], True
    words = [w for w in words if w not in ("a", "an", "the")]
    out = " ".join(words)
    return out or None


# --------------------------------------------------------------------------------------------------------------
# Public API


@dataclass(frozen=True)
class Canonicalizer:
    """A named canonicalizer. Call it on a raw answer (and the item's choices, for MCQ) to get its class."""

    spec: str
    _pattern: re.Pattern[str] | None = None

    @property
    def kind(self) -> str:
        return self.spec.split(":", 1)[0]

    def __call__(self, answer: str, choices: Sequence[str] = ()) -> str:
        if not isinstance(answer, str):
            return INVALID
        answer = strip_controls(answer)  # no class carries escape sequences or bidi overrides (core/text.py)
        kind = self.kind
        if kind == "numeric":
            value = _numeric(answer)
            return INVALID if value is None else format_number(value)
        if kind == "mcq":
            return _mcq(answer, tuple(choices or ())) or INVALID
        if kind == "text":
            return _text(answer) or INVALID
        assert self._pattern is not None
        m = self._pattern.search(_clean(answer))
        if m is None:
            return INVALID
        captured = next((g for g in m.groups() if g is not None), None) if m.groups() else m.group(0)
        return _text(captured or "") or INVALID


def get_canonicalizer(spec: str) -> Canonicalizer:
    """The canonicalizer named by ``spec``: ``numeric``, ``mcq``, ``text`` or ``regex:<pattern>``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("empty canonicalizer: use numeric, mcq, text or regex:<pattern>")
    spec = spec.strip()
    if spec in ("numeric", "mcq", "text"):
        return Canonicalizer(spec)
    if spec.startswith("regex:"):
        pattern = spec[len("regex:") :]
        if not pattern:
            raise ValueError("invalid regex canonicalizer: the pattern after 'regex:' is empty")
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"invalid regex canonicalizer pattern {pattern!r}: {exc}") from None
        return Canonicalizer(spec, compiled)
    raise ValueError(f"unknown canonicalizer {spec!r}: use numeric, mcq, text or regex:<pattern>")


def canonicalize_references(
    canon: Canonicalizer, answers: Sequence[str], choices: Sequence[str] = ()
) -> frozenset[str]:
    """The acceptable classes of an item: its reference answers through the same canonicalizer (INVALID dropped)."""
    out = {canon(str(a), choices) for a in answers}
    out.discard(INVALID)
    return frozenset(out)


def suggest_canonicalizer(answers: Sequence[str], has_choices: bool) -> str:
    """``mcq`` when the items have choices, ``numeric`` when every reference answer is a number, else ``text``."""
    if has_choices:
        return "mcq"
    refs = [str(a) for a in answers if str(a).strip()]
    if refs and all(parse_number(a) is not None for a in refs):
        return "numeric"
    return "text"
