"""Canonicalization: raw model answers → canonical answer classes (paper 004 Def. 4.1, SPEC §3.1).

``Canon(x, a) -> class``. Equivalent surface forms ("42", "The answer is 42.", "#### 42", "\\boxed{42}") map to
one class, which is what makes self-consistency voting work: merging the surface forms of the correct answer raises
its class probability p_canon ≥ p_raw and so the Hoeffding exponent of the mode error (Prop. 4.6, amplification).
Parse failures — and replies that refuse or stop mid-reasoning — map to :data:`~relgate_tui.core.types.INVALID`,
which is never acceptable and is excluded from ranking and prediction sets. Reference answers go through the *same*
canonicalizer (:func:`canonicalize_references`), so ``1,000`` matches ``1000`` (a failure of the public anchor,
SPEC §9). A canonicalizer may split one answer into several classes (costly: the mode weakens) but must never merge
different answers (the reliability level would count a wrong answer as right), so text it cannot read safely is
INVALID or its own exact class, never a number lifted out of it.

One module per job:

- :mod:`.clean` — Unicode hygiene shared by all (size bound, control/bidi characters, spaces, minus signs);
- :mod:`.numbers` — the exact number grammar, LaTeX rewriting, number words, expression normal form;
- :mod:`.locate` — where the answer is in a reply (JSON, tags, ``\\boxed``, ``####``, cues, self-corrections,
  refusals, truncated reasoning);
- :mod:`.numeric`, :mod:`.mcq`, :mod:`.freetext` — the ``numeric``, ``mcq`` and ``text`` canonicalizers;
- :mod:`.mathequiv` — the optional ``math`` canonicalizer (math-verify);
- :mod:`.registry` — names, references, suggestion.

Each module's docstring states its rules.
"""

from __future__ import annotations

from relgate_tui.core.canon.numbers import format_number, parse_number
from relgate_tui.core.canon.registry import (
    CANONICALIZER_NAMES,
    Canonicalizer,
    canonicalize_references,
    get_canonicalizer,
    suggest_canonicalizer,
    suggestion_source,
)

__all__ = [
    "CANONICALIZER_NAMES",
    "Canonicalizer",
    "canonicalize_references",
    "format_number",
    "get_canonicalizer",
    "parse_number",
    "suggest_canonicalizer",
    "suggestion_source",
]
