"""The ``numeric`` canonicalizer (SPEC §3.1): a reply → an exact number class, an expression class, or INVALID.

The answer span is found by :func:`~relgate_tui.core.canon.locate.locate`. Inside a span: an "=" chain is resolved
to its right-hand side and parenthesised remarks are dropped; a span that is one number is that number
(``6.02*10^23``, ``2^{10}`` → 1024, ``3 1/2`` → 3.5); a closed form that is not a plain number (``\\sqrt{3}``,
``3\\pi``, ``\\frac{\\sqrt3}{2}``, ``x^2+1``) is its own class, the expression's normal text
(:func:`~relgate_tui.core.canon.numbers.normalise_expression`, so ``\\sqrt{3}`` and ``√3`` are one class) — never a
digit lifted out of it; otherwise the first number of an answer span ("The answer is 42 (since 6*7)" → 42) or the
last number of the final line ("12 apples cost $3 each, so 36" → 36), skipping labels ("step 2", "question 5");
number words ("forty-two") are read where a short answer is expected.
"""

from __future__ import annotations

import re
from fractions import Fraction

from relgate_tui.core.canon.clean import clean
from relgate_tui.core.canon.locate import Span, locate
from relgate_tui.core.canon.numbers import (
    NUMBER,
    WORD_RUN,
    delatex,
    format_number,
    normalise_expression,
    number_matches,
    prepare_math,
    word_number,
)

__all__ = ["numeric_class"]

_PARENTHETICAL = re.compile(r"(?<![√^/*\w])(?:\([^()]*\)|\[[^\[\]]*\])(?!\s*[/^*])")
_EXPR_MARK = "√π∞"
_EXPR_RUN = re.compile(r"(?<![\d.√π∞()+\-*/^×])[\d.√π∞()+\-*/^×]+")  # maximal runs (linear time)
_OP_SPACES = re.compile(r"\s*([/*^×+])\s*|(?<=[\d)])\s+(?=[√π])")
_LABEL_BEFORE = re.compile(
    r"(?:\b(?:step|question|part|problem|case|item|example|exercise|chapter|section|line|no\.|number|equation|eq\.)"
    r"|#)\s*$",
    re.IGNORECASE,
)
_SYMBOLIC = re.compile(
    r"(?:[\d\s.,√π∞()+\-*/^×]|(?<![A-Za-z])[A-Za-z](?![A-Za-z])|\b(?:sin|cos|tan|ln|log|exp|sqrt|pi)\b)+"
)
_VARIABLE = re.compile(r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])")
_OPERATOR_SPACES = re.compile(r"\s*([-+*/^=()×·,])\s*")
_LATEX_PRODUCT = re.compile(r"(?<=[\dπ])\s+(?=[A-Za-zπ√])|(?<=[A-Za-z])\s+(?=[π√])")  # "4\pi r^2" is 4πr^2
_NEGATED_NUMBER = re.compile(r"\bnot\s+(?:equal\s+to\s+|exactly\s+)?[-+$]?\d[\d.,/]*", re.IGNORECASE)
_RATIO = re.compile(r"(?<![\w.:/])\d{1,6}(?::\d{1,6})+(?![\w:/]|\.\d)")
_TUPLE = re.compile(r"[\[({]\s*[-+]?[\w.√π/^∞]+(?:\s*,\s*[-+]?[\w.√π/^∞]+)+\s*[\])}]")
_NUMBER_WITH_UNIT = re.compile(r"[-+]?\d[\d.,]*\s+[A-Za-z]")
_WORD_SPANS = ("cue", "correction", "boxed", "gsm8k", "bold", "json", "tag")


def _strip_parentheticals(text: str) -> str:
    for _ in range(3):
        new = _PARENTHETICAL.sub(" ", text)
        if new == text:
            break
        text = new
    return text


def _balanced(run: str) -> str:
    run = run.rstrip(".,+-*/^×")
    while run.startswith("(") and run.count("(") > run.count(")"):
        run = run[1:]
    while run.endswith(")") and run.count(")") > run.count("("):
        run = run[:-1]
    return run


def _whole_number(seg: str) -> Fraction | None:
    s = seg.strip().strip("$").strip().rstrip(".").strip()
    if s.startswith("(") and s.endswith(")"):
        s = s[1:-1].strip()
    m = NUMBER.fullmatch(s)
    if m is None:
        return None
    values = number_matches(s)
    return values[0][2] if len(values) == 1 and values[0][1] - values[0][0] == len(s) else None


def _well_formed(expr: str) -> bool:
    """Balanced parentheses, no dangling or doubled operator: an expression, not a fragment."""
    depth = 0
    for ch in expr:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return (
        depth == 0
        and bool(expr)
        and expr[-1] not in "+-*/^√.,"
        and expr[0] not in "*/^),."
        and not re.search(r"[-+*/^.,][-+*/^)]|\(\)|[(][*/^)]", expr)
    )


def _tuple_class(text: str) -> str | None:
    """``(1, 2)``, ``[0, 0.50]``, ``\\{2, 1\\}``: a tuple, interval or set of numbers is one class, its items
    normalised (a set's items sorted)."""
    items = [x.strip() for x in text[1:-1].split(",")]
    values = [_whole_number(x) for x in items]
    norm = [format_number(v) if v is not None else normalise_expression(x) for x, v in zip(items, values, strict=True)]
    if text[0] == "{":
        norm = sorted(set(norm))
    return text[0] + ",".join(norm) + text[-1]


def _symbolic(seg: str) -> str | None:
    """A symbolic answer (``x^2+1``, ``2x+3``): the whole segment is math with at least one variable."""
    s = seg.strip().strip("$").strip().rstrip(".").strip()
    if not s or len(s) > 200 or not _SYMBOLIC.fullmatch(s) or not _VARIABLE.search(s):
        return None
    if _NUMBER_WITH_UNIT.fullmatch(s) or not re.search(r"[\d+\-*/^()√π]", s):
        return None  # "5 m", "x": a number with its unit, a bare letter
    if re.search(r"[\w√π∞)]\s+[\w√π∞(]", _OPERATOR_SPACES.sub(r"\1", s)):
        return None  # "0 A B": words side by side, not one expression
    out = normalise_expression(s)
    return out if _well_formed(out) and re.search(r"[\d+\-*/^()√π]", out) else None


def _tokens(seg: str, line: bool) -> list[tuple[int, str]]:
    """Numbers and expression runs of ``seg`` as ``(position, class)``, left to right."""
    if any(ch in seg for ch in _EXPR_MARK):
        seg = _OP_SPACES.sub(lambda m: m.group(1) or "", seg)
    runs = [(m.start(), m.end(), _balanced(m.group(0))) for m in _EXPR_RUN.finditer(seg)]
    runs = [r for r in runs if any(ch in r[2] for ch in _EXPR_MARK)]
    out = []
    for start, _, run in runs:
        expr = normalise_expression(run) if any(ch in run for ch in _EXPR_MARK) else ""
        if _well_formed(expr):
            out.append((start, expr))
    for m in _RATIO.finditer(seg):  # a time or a ratio (5:30, 2:3) is its own class, not its last number
        runs.append((m.start(), m.end(), m.group(0)))
        out.append((m.start(), m.group(0)))
    for start, end, value in number_matches(seg):
        if any(s <= start < e or s < end <= e for s, e, _ in runs):
            continue
        if line and _LABEL_BEFORE.search(seg[max(0, start - 20) : start]):
            continue
        out.append((start, format_number(value)))
    out.sort()
    return out


def _read(span: Span, depth: int) -> str | None:
    seg = span.text
    if span.how in ("json", "tag") and depth == 0:
        return numeric_class(seg, depth + 1)
    if "=" in seg:
        seg = seg.rsplit("=", 1)[1]
    if span.how in ("cue", "correction"):
        seg = _NEGATED_NUMBER.sub(" ", seg)  # "The answer is not 9; it is 8."
    whole = _whole_number(seg)
    if whole is not None:
        return format_number(whole)
    tup = _TUPLE.fullmatch(seg.replace("\\{", "{").replace("\\}", "}").strip().strip("$").strip().rstrip(".").strip())
    if tup is not None:
        return _tuple_class(tup.group(0))
    if span.strict or (span.how == "line" and len(seg) <= 60):
        sym = _symbolic(_LATEX_PRODUCT.sub("", seg) if span.strict else seg)
        if sym is not None:
            return sym
    line = span.how == "line"
    for candidate in (_strip_parentheticals(seg), seg):
        tokens = _tokens(candidate, line)
        if tokens:
            return tokens[-1][1] if line else tokens[0][1]
    if span.how in _WORD_SPANS or len(seg.split()) <= 5 or WORD_RUN.fullmatch(seg.strip(" .!*_")):
        runs = list(WORD_RUN.finditer(seg))
        if runs:
            value = word_number((runs[-1] if line else runs[0]).group(0))
            if value is not None:
                return format_number(value)
    return None


def numeric_class(answer: str, depth: int = 0) -> str | None:
    """The class of one reply under ``numeric`` (None = INVALID)."""
    text = delatex(prepare_math(clean(answer)))
    for span in locate(text):
        value = _read(span, depth)
        if value is not None:
            return value
    return None
