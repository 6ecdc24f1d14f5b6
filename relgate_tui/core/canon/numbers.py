"""Exact numbers in answer text (SPEC §3.1 ``numeric``): the number grammar, LaTeX rewriting, number words, and the
normal form of closed-form expressions that are not plain numbers (surds, π, symbols).

Numbers are exact (``fractions.Fraction``; big integers never round-trip through float). Grammar of one number:
an optional sign (``-``, ``+``, Unicode minus, "negative", "minus" when no number precedes it), an optional ``$``,
digits with optional thousands groups (``1,234,567`` or ``1 000 000``) and decimals, then optionally a proper
fraction making a mixed number (``3 1/2``), a denominator (``a/b``), an integer power (``2^10``, ``3^2``), an
exponent (``1e3``, ``6.02*10^23``, ``3 × 10⁸``), a scale word (``1.2 million``) and a percent sign.
**Percent rule:** a trailing ``%`` (or "percent") is dropped, so "50%" → ``50``; "50%" and "0.5" are different
classes. Unicode vulgar fractions (``½``, ``3½``) and superscript exponents are rewritten first. Output
(:func:`format_number`): integers as plain digits; other rationals as an exact terminating decimal when one exists
(``1/2`` → ``0.5``), else ``p/q`` in lowest terms.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from relgate_tui.core.canon.clean import clean

__all__ = [
    "NUMBER",
    "delatex",
    "format_number",
    "normalise_expression",
    "number_matches",
    "parse_number",
    "prepare_math",
    "word_number",
]

MAX_DIGITS = 4_000  # Python refuses int() of more than 4,300 digits; longer "numbers" are not answers
MAX_EXPONENT = 1_000
MAX_RESULT_BITS = 3_000  # ≈ 903 digits: a value built by a power or an exponent stays shorter than the 1,000
# characters of an answer's segment that are read (canon.locate), so its class reads back as itself ("3³000" would
# be 1,432 digits, of which a re-read sees only the last 1,000)

NUMBER = re.compile(
    r"""
    (?<![\w.^/\\{])                          # not glued to a word, a decimal point, an exponent or a fraction bar
    (?P<sign>[-+]\s?|negative\s+|(?<!\d\s)(?<!\d)minus\s+)?
    \$?\s?
    (?P<num>
        \d{1,3}(?:,\d{3})+(?:\.\d+)?             # 1,234,567.5
      | \d{1,3}(?:[ ]\d{3})+(?![\d/,])(?:\.\d+)? # 1 000 000
      | \d+(?:\.\d+)?
      | \.\d+                                    # .5
    )
    (?:\s+(?P<mixn>\d{1,6})\s*/\s*(?P<mixd>\d{1,6})(?!\d|\.\d|\s*\^))?   # mixed number 3 1/2
    (?:\s*/\s*(?P<den>\d+)(?!\d|\.\d))?        # a/b (a full stop may follow)
    (?:\s*\^\s*(?P<pow>[-+]?\d{1,4})(?![\d.]))? # 2^10
    (?!\s*\^)                                 # (a power too large to read is no number)
    (?:[eE](?P<exp>[-+]?\d{1,4})(?!\d))?       # 1e3
    (?:\s*(?:\\times|×|x|\*|·|\\cdot)\s*10\s*\^\s*(?P<exp10>[-+]?\d{1,4})(?!\d))?   # 6.02*10^23
    (?:\s*(?P<scale>hundred|thousand|million|billion|trillion)\b)?
    (?P<pct>\s*(?:\\?%|percent\b))?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_SCALE = {"hundred": 10**2, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}

# --------------------------------------------------------------------------------------------------------------
# Rewriting: Unicode fractions and superscripts, LaTeX

_VULGAR = {
    "½": "1/2", "⅓": "1/3", "⅔": "2/3", "¼": "1/4", "¾": "3/4", "⅕": "1/5", "⅖": "2/5", "⅗": "3/5", "⅘": "4/5",
    "⅙": "1/6", "⅚": "5/6", "⅐": "1/7", "⅛": "1/8", "⅜": "3/8", "⅝": "5/8", "⅞": "7/8", "⅑": "1/9", "⅒": "1/10",
}  # fmt: skip
_VULGAR_RE = re.compile("(\\d?)([" + "".join(_VULGAR) + "])")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPT_RE = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")

_LATEX_FRAC_BRACED = re.compile(r"\\[dt]?frac\s*\{\s*([^{}]*)\}\s*\{\s*([^{}]*)\}")
_LATEX_FRAC_DIGITS = re.compile(r"\\[dt]?frac\s*(\d)\s*(\d)")
_LATEX_SQRT_BRACED = re.compile(r"\\sqrt\s*\{\s*([^{}]*)\}")
_LATEX_ROOT_BRACED = re.compile(r"\\sqrt\s*\[\s*(\d+)\s*\]\s*\{\s*([^{}]*)\}")
_LATEX_SQRT_ATOM = re.compile(r"\\sqrt\s*(\d+|[A-Za-z](?![A-Za-z]))")
_LATEX_MATH_DELIMITERS = re.compile(r"\\[()\[\]]")
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textrm|mathrm|mathbf|operatorname|mbox)\s*\{([^{}]*)\}")
_LATEX_DROP = re.compile(r"\\(?:left|right|displaystyle|!|;|quad|qquad)|\^\s*\{?\\circ\}?|\\circ")
_LATEX_THOUSANDS = re.compile(r"(?<=\d)(?:\\,|\{,\})(?=\d{3})")
_BRACED_POWER = re.compile(r"\^\s*[{(]\s*([-+]?\d{1,4})\s*[})]")


def prepare_math(text: str) -> str:
    """Unicode fractions (``3½`` → ``3 1/2``), superscripts (``10⁸`` → ``10^8``), fraction slash, braced integer
    powers (``2^{10}`` → ``2^10``)."""
    if any(ch in _VULGAR for ch in text):
        text = _VULGAR_RE.sub(lambda m: (m.group(1) + " " if m.group(1) else "") + _VULGAR[m.group(2)], text)
    if _SUPERSCRIPT_RE.search(text):
        text = _SUPERSCRIPT_RE.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPT), text)
    text = text.replace("\u2044", "/")
    return _BRACED_POWER.sub(r"^\1", text)


def delatex(text: str) -> str:
    """Rewrite LaTeX into plain text: ``\\frac{a}{b}`` → the number a/b (or ``(a)/(b)`` when a or b is not a number),
    ``\\sqrt{a}`` → ``√(a)``, ``\\pi`` → ``π``, ``\\text{…}`` → its text, spacing commands and the math delimiters
    ``\\( \\)`` ``\\[ \\]`` dropped (so "23 is \\(10,896\\)" is not read as 23 with a remark in parentheses)."""
    if "\\" not in text and "^" not in text:
        return text
    text = _LATEX_THOUSANDS.sub("", text)
    text = _LATEX_TEXT.sub(r" \1 ", text)
    text = re.sub(r"\\(?:pi|uppi)(?![A-Za-z])", "π", text)
    text = re.sub(r"\\infty(?![A-Za-z])", "∞", text)
    text = re.sub(r"\\(?:times)(?![A-Za-z])", "×", text)
    text = re.sub(r"\\(?:cdot|ast)(?![A-Za-z])", "*", text)
    for _ in range(6):  # nested roots and fractions: innermost first
        new = _LATEX_ROOT_BRACED.sub(r"(\2)^(1/\1)", text)
        new = _LATEX_SQRT_BRACED.sub(r"√(\1)", new)
        new = _LATEX_SQRT_ATOM.sub(r"√\1", new)
        new = _LATEX_FRAC_BRACED.sub(_frac_repl, new)
        new = _LATEX_FRAC_DIGITS.sub(r"\1/\2", new)
        if new == text:
            break
        text = new
    text = _LATEX_DROP.sub("", text)
    text = _LATEX_MATH_DELIMITERS.sub(" ", text)  # \( … \) and \[ … \] are math mode, not a parenthesised remark
    text = text.replace("\\$", "$").replace("\\%", "%").replace("\\,", " ")
    return _BRACED_POWER.sub(r"^\1", text)


def _frac_repl(m: re.Match[str]) -> str:
    num, den = parse_number(m.group(1)), parse_number(m.group(2))
    if num is None or den is None or den == 0:
        return f"({m.group(1).strip()})/({m.group(2).strip()})"
    return format_number(num / den)


# --------------------------------------------------------------------------------------------------------------
# Numbers


def _to_fraction(m: re.Match[str]) -> Fraction | None:
    """Exact value of one :data:`NUMBER` match (percent sign dropped, see module docstring)."""
    digits = m.group("num").replace(",", "").replace(" ", "")
    if len(digits) > MAX_DIGITS:
        return None
    try:
        value = Fraction(digits)
        if m.group("mixn") is not None:
            mixn, mixd = int(m.group("mixn")), int(m.group("mixd"))
            if mixd == 0 or mixn >= mixd or value.denominator != 1:
                return None
            value += Fraction(mixn, mixd)
        den = Fraction(int(m.group("den"))) if m.group("den") is not None else None
        if m.group("pow") is not None:
            e = int(m.group("pow"))
            base = den if den is not None else value
            if base == 0 and e < 0:
                return None
            size = abs(e) * math.log10(max(abs(base.numerator), abs(base.denominator), 2))
            if size > MAX_DIGITS:
                return None
            if den is not None:
                den = den**e
            else:
                value = value**e
        if den is not None:
            if den == 0:
                return None
            value /= den
        for exp_name in ("exp", "exp10"):
            exp = m.group(exp_name)
            if exp is not None:
                e = int(exp)
                if abs(e) > MAX_EXPONENT:
                    return None
                value *= Fraction(10) ** e
        if m.group("scale"):
            value *= _SCALE[m.group("scale").lower()]
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    if max(abs(value.numerator), value.denominator).bit_length() > MAX_RESULT_BITS:
        return None
    sign = (m.group("sign") or "").strip().lower()
    if sign in ("-", "negative", "minus"):
        value = -value
    return value


def number_matches(text: str) -> list[tuple[int, int, Fraction]]:
    """Every number in ``text`` as ``(start, end, value)``, left to right (a mixed-number reading that fails is
    re-read as its parts)."""
    out: list[tuple[int, int, Fraction]] = []
    pos = 0
    while True:
        m = NUMBER.search(text, pos)
        if m is None:
            return out
        value = _to_fraction(m)
        if value is None and m.group("mixn") is not None:
            end = m.start("mixn")
            m2 = NUMBER.match(text[:end].rstrip(), m.start())
            if m2 is not None:
                v2 = _to_fraction(m2)
                if v2 is not None:
                    out.append((m2.start(), m2.end(), v2))
            pos = end
            continue
        if value is not None:
            out.append((m.start(), m.end(), value))
        pos = max(m.end(), pos + 1)


def parse_number(text: str) -> Fraction | None:
    """The exact value of ``text`` when the whole string is one number (after LaTeX and Unicode clean-up)."""
    s = delatex(prepare_math(clean(text))).strip().strip("$").strip()
    s = s.rstrip(".").strip()
    if s.startswith("(") and s.endswith(")"):
        s = s[1:-1].strip()
    m = NUMBER.fullmatch(s)
    if m is not None:
        return _to_fraction(m)
    return word_number(s) if s and not any(ch.isdigit() for ch in s) else None


def format_number(value: Fraction) -> str:
    """Canonical text of an exact number: ``42``, ``-3``, ``0.5``, ``1.25``, ``1/3`` (never an exponent). A rational
    whose denominator is 2^a·5^b is written as its exact decimal with max(a, b) places (integer arithmetic)."""
    if value.denominator == 1:
        return str(value.numerator)
    den, twos, fives = value.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    places = max(twos, fives)
    scaled = abs(value.numerator) * 10**places // value.denominator  # exact: the denominator divides 10^places
    digits = str(scaled).rjust(places + 1, "0")
    text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")
    return f"-{text}" if value < 0 else text


# --------------------------------------------------------------------------------------------------------------
# Number words ("forty-two", "one hundred and five", "negative three")

_UNITS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen".split()
    )
}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if w != "_"}
_WORD_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_NUMBER_WORD = "|".join([*_UNITS, *_TENS, "hundred", *_WORD_SCALES])
WORD_RUN = re.compile(
    rf"(?<![\w-])(?:(?:negative|minus)\s+)?(?:{_NUMBER_WORD})(?:(?:\s+and\s+|[\s-]+)(?:{_NUMBER_WORD}))*(?![\w-])",
    re.IGNORECASE,
)


def word_number(text: str) -> Fraction | None:
    """The value of ``text`` when it is one number written in English words (``forty-two`` → 42), else None."""
    words = re.split(r"[\s-]+", text.strip().strip(".!").lower())
    words = [w for w in words if w and w != "and"]
    if not words:
        return None
    negative = words[0] in ("negative", "minus")
    if negative:
        words = words[1:]
    if not words or len(words) > 40:
        return None
    total, current, last = 0, 0, ""
    for w in words:
        if w in _UNITS:
            if last in ("unit",) or (last == "tens" and _UNITS[w] >= 10):
                return None
            current += _UNITS[w]
            last = "unit"
        elif w in _TENS:
            if last in ("unit", "tens"):
                return None
            current += _TENS[w]
            last = "tens"
        elif w == "hundred":
            if current == 0 or current >= 100:
                return None
            current *= 100
            last = "hundred"
        elif w in _WORD_SCALES:
            if current == 0:
                return None
            total += current * _WORD_SCALES[w]
            current, last = 0, "scale"
        else:
            return None
    value = Fraction(total + current)
    return -value if negative else value


# --------------------------------------------------------------------------------------------------------------
# Closed-form expressions that are not plain numbers

_ATOM_PARENS = re.compile(r"(?<![A-Za-z])\(([\d.]+|[A-Za-zπe∞]|√[\d.]+|√[A-Za-zπ])\)")
_NUMERATOR_PARENS = re.compile(r"(?<![/\w^√)])\(([^()+\-]*)\)(?=/)")
_IMPLICIT_TIMES = re.compile(r"(?<=[\d)π])\*(?=[√π(])")


def normalise_expression(text: str) -> str:
    """Normal text of a closed-form expression, so spellings of one expression share a class: spaces and ``$``
    dropped, ``\\sqrt{3}``/``sqrt(3)``/``√(3)`` → ``√3``, ``\\pi`` → ``π``, ``\\frac{a}{b}`` → ``a/b``,
    ``×``/``·`` → ``*``, implicit products written without ``*``, redundant parentheses removed."""
    s = delatex(prepare_math(text))
    s = re.sub(r"\bsqrt\s*(?=\()", "√", s)
    s = re.sub(r"\bpi\b", "π", s)
    s = s.replace("**", "^").replace("×", "*").replace("·", "*").replace("{", "(").replace("}", ")")
    s = re.sub(r"[\s$\\]+", "", s).strip(".,;:")
    for _ in range(8):
        new = _ATOM_PARENS.sub(r"\1", s)
        new = _NUMERATOR_PARENS.sub(r"\1", new)
        new = _IMPLICIT_TIMES.sub("", new)
        if new.startswith("+"):
            new = new[1:]
        if new == s:
            break
        s = new
    return s
