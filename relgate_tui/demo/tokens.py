"""One simulated completion and the token log-probabilities the demo server reports for it.

A judge reply is one of finitely many token sequences (every surface form × every rating, plus the unparseable
replies), each with a known probability P(r). :func:`token_choices` turns that finite distribution and the reply
actually sampled into per-position log-probabilities exactly as an autoregressive model would report them: at
position i, ``P(token | tokens before i) = Σ P(r : r starts with prefix + token) / Σ P(r : r starts with prefix)``.
Continuations that *end* the reply at i carry the remaining mass and are not listed (there is no end-of-text token
in the OpenAI format), so the listed probabilities at a position sum to at most 1. The sampled token is always one of
the alternatives, with exactly the log-prob reported for it; the server returns the ``top_logprobs`` most likely
alternatives, so a rarely sampled token can fall outside a short list (as with real servers).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["LOGPROB_FLOOR", "SimCompletion", "TokenChoice", "split_tokens", "token_choices"]

LOGPROB_FLOOR = 1e-9
"""Probabilities below this are raised to it (then renormalised) so every reported log-prob is finite (≥ −20.8)."""

_PIECE = re.compile(r"\s*(?:[^\W_]+|[^\w\s]+|_+)|\s+")


@dataclass(frozen=True)
class TokenChoice:
    """One generated token: its text, its log-prob, and the alternatives at its position (most likely first,
    including the token itself)."""

    token: str
    logprob: float
    alternatives: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class SimCompletion:
    """One simulated answer: the text, its class (None = unparseable), whether correct, and log P(class).

    ``tokens`` (judges only): the reply's tokens with exact log-probs; empty for the answer models, whose
    log-probs the server reports per whitespace token with ``logprob`` on the first one.
    """

    text: str
    value: str | None
    correct: bool
    logprob: float
    tokens: tuple[TokenChoice, ...] = ()


def split_tokens(text: str) -> tuple[str, ...]:
    """A word-piece split: words and digit runs (with their leading space), punctuation runs. Joins back to
    ``text``."""
    return tuple(_PIECE.findall(text))


def token_choices(replies: Sequence[tuple[tuple[str, ...], float]], chosen: tuple[str, ...]) -> tuple[TokenChoice, ...]:
    """Per-position log-probs of the ``chosen`` token sequence under the finite reply distribution ``replies``
    ((tokens, probability) pairs; probabilities need not be normalised). See the module docstring."""
    floor = LOGPROB_FLOOR
    total = sum(max(p, floor) for _, p in replies)
    weighted = [(tokens, max(p, floor) / total) for tokens, p in replies]
    out: list[TokenChoice] = []
    for i, token in enumerate(chosen):
        prefix = chosen[:i]
        mass = 0.0
        next_mass: dict[str, float] = {}
        for tokens, p in weighted:
            if tokens[:i] == prefix:
                mass += p
                if len(tokens) > i:
                    next_mass[tokens[i]] = next_mass.get(tokens[i], 0.0) + p
        if mass <= 0.0 or token not in next_mass:
            raise ValueError(f"the chosen reply {''.join(chosen)!r} is not one of the replies")
        ranked = sorted(((t, math.log(m / mass)) for t, m in next_mass.items()), key=lambda tl: (-tl[1], tl[0]))
        out.append(TokenChoice(token, math.log(next_mass[token] / mass), tuple(ranked)))
    return tuple(out)
