"""Seeded tie-breaking for rankings (issue 11 §2: ties never fall back to the data file's order).

A tournament with tied or missing pairs admits several orders that every ranking method scores equally (equal win
rates, equal Copeland scores, MFAS orders of equal cost). Breaking those ties by the candidates' position in the
input file makes the ranking inherit the file's order: an uninformative judge whose candidates are listed in human
order then scores Kendall τ = +1. Instead every tie is broken by a *seeded random order* of the candidates:

    key(c) = first 8 bytes of BLAKE2b(repr((tie_seed, c)))   (an unsigned 64-bit integer),

and among tied candidates the smaller key ranks higher. The key depends only on the seed and the candidate's id,
never on its position, so re-ordering the file never changes a ranking; and for a fixed seed the keys are a uniform
random permutation of the ids, uncorrelated with any quality measure. Pass the input id in the seed (e.g.
``tie_seed=(seed, input_id)``) so that inputs sharing candidate ids (the same systems for every document) do not all
share one tie-break order — a shared order would bias a mean τ over inputs by its own τ against the reference.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

TieSeed = int | str | tuple[int | str, ...]
"""A tie-break seed: an int, a string, or a tuple of them (e.g. ``(seed, input_id)``)."""


def tie_keys(candidates: Sequence[str], tie_seed: TieSeed = 0) -> np.ndarray:
    """The seeded random key of each candidate (uint64, aligned with ``candidates``; see module docstring)."""
    keys = np.empty(len(candidates), dtype=np.uint64)
    for i, c in enumerate(candidates):
        digest = hashlib.blake2b(repr((tie_seed, str(c))).encode("utf-8"), digest_size=8).digest()
        keys[i] = int.from_bytes(digest, "big")
    return keys


def order_by_scores(candidates: Sequence[str], scores: ArrayLike, tie_seed: TieSeed = 0) -> list[int]:
    """Indices by score descending; equal scores ordered by :func:`tie_keys` (ascending), never by position."""
    s = np.asarray(scores, dtype=np.float64).ravel()
    if s.size != len(candidates):
        raise ValueError(f"{len(candidates)} candidates but {s.size} scores")
    keys = tie_keys(candidates, tie_seed)
    return [int(i) for i in np.lexsort((keys, -s))]  # last key is primary: −score, then the seeded key
