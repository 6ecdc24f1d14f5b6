"""The optional ``math`` canonicalizer (SPEC §3.1): classes decided by mathematical equivalence, with
``math-verify`` (Apache-2.0, Hugging Face's answer-equivalence checker used by math evaluations) parsing the answer.

The answer is read as for ``numeric`` (:mod:`~relgate_tui.core.canon.numeric`); math-verify parses what it
read (LaTeX first, then plain expressions) into a sympy expression, and the class is that expression's canonical text:
an exact rational through :func:`~relgate_tui.core.canon.numbers.format_number` (decimals are read as the exact
rationals they denote, so ``1/2``, ``0.5`` and ``\\frac{1}{2}`` are one class ``0.5``), otherwise the LaTeX of the
simplified expression (``\\sqrt{3}`` and ``√3`` → ``\\sqrt{3}``; ``\\frac{\\sqrt3}{2}`` and ``\\sqrt{3}/2`` → one
class). A class is a function of one answer, so equivalence is decided through a normal form rather than by pairwise
checks (which need not be transitive); two spellings that sympy cannot bring to one form stay apart (conservative:
classes may split, never merge different values). Inputs are bounded (span ≤ 400 characters, no towers of powers,
simplification only of small expressions) because sympy has no time limit here. math-verify is an optional extra:
``pip install 'relgate-tui[math]'``.
"""

from __future__ import annotations

import functools
import logging
import re
from fractions import Fraction
from typing import Any

from relgate_tui.core.canon.clean import clean
from relgate_tui.core.canon.locate import locate
from relgate_tui.core.canon.numbers import format_number, parse_number, prepare_math
from relgate_tui.core.canon.numeric import numeric_class

__all__ = ["INSTALL_HINT", "math_available", "math_class"]

INSTALL_HINT = (
    "the 'math' canonicalizer needs the optional package math-verify: pip install 'relgate-tui[math]' "
    "(or pip install math-verify)"
)
_MAX_SPAN = 400
_TOWER = re.compile(r"\^[^$]*\^|\^\s*\{?\s*[-+]?\d{5,}|!\s*!|\d{3,}\s*!")
_UNICODE_TO_LATEX = (
    (re.compile(r"√\s*\(([^()]*)\)"), r"\\sqrt{\1}"),
    (re.compile(r"√\s*([\d.]+|[A-Za-z])"), r"\\sqrt{\1}"),
    (re.compile(r"π"), r"\\pi "),
    (re.compile(r"[×·]"), r"\\times "),
    (re.compile(r"∞"), r"\\infty "),
)


def math_available() -> bool:
    """math-verify can be imported."""
    try:
        import math_verify  # noqa: F401
    except ImportError:
        return False
    return True


def _to_latex(span: str) -> str:
    s = prepare_math(span).strip().strip("$").strip().rstrip(".").strip()
    for pattern, repl in _UNICODE_TO_LATEX:
        s = pattern.sub(repl, s)
    return s


def _parse(span: str) -> Any:
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

    logging.getLogger("math_verify").setLevel(logging.ERROR)  # its "timeout disabled" notice, once per call
    s = _to_latex(span)
    if not s or len(s) > _MAX_SPAN or _TOWER.search(s):
        return None
    for text, config in ((f"${s}$", LatexExtractionConfig()), (s, ExprExtractionConfig())):
        try:
            found = parse(text, extraction_config=[config], parsing_timeout=None)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - a parser crash on model text is a parse failure, never a crash
            found = []
        for item in found:
            if not isinstance(item, str):
                return item
    return None


def _canonical(expr: Any) -> str | None:
    import sympy

    try:
        if isinstance(expr, sympy.Equality):
            expr = expr.rhs
        if not isinstance(expr, sympy.Basic):
            return sympy.latex(expr) if expr is not None else None
        expr = expr.doit() if sympy.count_ops(expr) <= 60 else expr
        if expr.atoms(sympy.Float):
            expr = sympy.nsimplify(expr, rational=True)
        if isinstance(expr, sympy.Rational):
            return format_number(Fraction(int(expr.p), int(expr.q)))
        if sympy.count_ops(expr) <= 40:
            expr = sympy.simplify(expr)
            if isinstance(expr, sympy.Rational):
                return format_number(Fraction(int(expr.p), int(expr.q)))
        return str(sympy.latex(expr))
    except Exception:  # noqa: BLE001 - sympy errors on odd input are a parse failure
        return None


@functools.lru_cache(maxsize=4096)  # a pure function of the text; samples repeat, and sympy is slow
def math_class(answer: str) -> str | None:
    """The class of one reply under ``math`` (None = INVALID). Needs math-verify (see :func:`math_available`).

    The answer is read as ``numeric`` reads it (same spans, refusals, truncation, self-corrections); a plain number
    is already canonical; an expression class is parsed by math-verify and replaced by its canonical form (kept as
    it is when math-verify cannot parse it: a split, never a merge). A reply ``numeric`` cannot read is tried on its
    boxed/tagged answer with math-verify directly (sets, intervals, matrices)."""
    value = numeric_class(answer)
    if value is not None:
        if parse_number(value) is not None:
            return value
        expr = _parse(value)
        out = _canonical(expr) if expr is not None else None
        return out or value
    text = clean(answer)
    for span in locate(text):
        if span.strict and span.how not in ("json", "tag"):
            expr = _parse(span.text)
            out = _canonical(expr) if expr is not None else None
            if out is not None:
                return out
    return None
