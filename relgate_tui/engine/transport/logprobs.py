"""Per-token log-probabilities of a completion, in the OpenAI chat format (issue 9 item 1).

A server that honours ``logprobs: true`` (and ``top_logprobs: k``) returns, per choice::

    "logprobs": {"content": [{"token": "4", "logprob": -0.31,
                              "top_logprobs": [{"token": "4", "logprob": -0.31}, {"token": "3", "logprob": -1.4}]},
                             ...]}

:func:`parse_logprobs` reads that into a tuple of :class:`TokenLogprob` (None when the choice carries none, or when
the block is malformed: log-probabilities are optional extras, never a reason to reject an answer). ``to_json`` /
``from_json`` are the one stored spelling (cache, stored audits): ``[[token, logprob, [[alt, logprob], ...]], ...]``.
Sizes are bounded (:data:`MAX_TOKENS` tokens, :data:`MAX_TOP` alternatives each) so a hostile server cannot make the
cache grow without limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MAX_TOKENS = 4096
MAX_TOP = 20
MAX_TOKEN_CHARS = 256


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token: its text, its log-probability and the top alternatives ``(token, logprob)`` the server
    reported at that position (most likely first, as sent)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()

    def to_json(self) -> list[Any]:
        return [self.token, self.logprob, [[t, lp] for t, lp in self.top]]


def _logprob(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    if math.isnan(v) or v > 0.0:
        return None
    return v  # -inf is a legal log-probability (probability 0)


def _token(value: Any) -> str | None:
    """The token text (bounded), or None when it is not a string that can be written to a file (a lone
    surrogate from ``"\\ud800"`` in the JSON)."""
    if not isinstance(value, str):
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value[:MAX_TOKEN_CHARS]


def parse_logprobs(block: Any) -> tuple[TokenLogprob, ...] | None:
    """``choice["logprobs"]`` (OpenAI chat format) → tokens, or None when absent or malformed."""
    if not isinstance(block, dict):
        return None
    content = block.get("content")
    if not isinstance(content, list):
        return None
    out = []
    for entry in content[:MAX_TOKENS]:
        if not isinstance(entry, dict):
            return None
        token, lp = _token(entry.get("token")), _logprob(entry.get("logprob"))
        if token is None or lp is None:
            return None
        top = []
        alternatives = entry.get("top_logprobs")
        for alt in alternatives[:MAX_TOP] if isinstance(alternatives, list) else ():
            if isinstance(alt, dict):
                t, a = _token(alt.get("token")), _logprob(alt.get("logprob"))
                if t is not None and a is not None:
                    top.append((t, a))
        out.append(TokenLogprob(token, lp, tuple(top)))
    return tuple(out)


def to_json(tokens: tuple[TokenLogprob, ...] | None) -> list[Any] | None:
    return None if tokens is None else [t.to_json() for t in tokens]


def from_json(value: Any) -> tuple[TokenLogprob, ...] | None:
    """Inverse of :func:`to_json` (None for anything else). ``-inf`` is stored by JSON as ``null`` and read back
    as ``-inf``."""
    if not isinstance(value, list):
        return None
    out = []
    for row in value[:MAX_TOKENS]:
        if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str) and isinstance(row[2], list)):
            return None
        lp = -math.inf if row[1] is None else _logprob(row[1])
        if lp is None:
            return None
        top = []
        for alt in row[2][:MAX_TOP]:
            if isinstance(alt, list) and len(alt) == 2 and isinstance(alt[0], str):
                a = -math.inf if alt[1] is None else _logprob(alt[1])
                if a is not None:
                    top.append((alt[0], a))
        out.append(TokenLogprob(row[0], lp, tuple(top)))
    return tuple(out)
