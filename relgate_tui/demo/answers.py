"""Simulated answer models ("sim-strong", "sim-mid", "sim-weak"): known per-item quality p* and exact answer
distributions (SPEC §4.6).

For a model m and an item with id i, the *true* probability that one sampled answer is correct is
``p* = true_p_star(m, i)``, drawn once from a mixture of uniforms by hashing (m, i) — no state, no RNG:

=============  ==========================================================================  ==========  ========
model          p* mixture  (weight: range)                                                 mean p*     invalid
=============  ==========================================================================  ==========  ========
sim-strong     0.90: U[0.95, 0.99]   0.07: U[0.40, 0.80] (hard)   0.03: U[0.00, 0.10]      ≈ 0.92      1%
sim-mid        0.80: U[0.65, 0.97]   0.15: U[0.30, 0.65]          0.05: U[0.00, 0.15]      ≈ 0.72      3%
sim-weak       0.35: U[0.65, 0.97]   0.35: U[0.30, 0.65]          0.30: exactly 0 (unsolvable) ≈ 0.45   6%
=============  ==========================================================================  ==========  ========

One sample is: correct with probability p*; unparseable ("I'm not sure.", canonicalizes to INVALID) with
probability ``min(invalid, 1 − p*)``; otherwise one of the item's 1–3 *distractors* (plausible wrong answers:
numeric off-by-one / off-by-ten / adjacent-digit swap / ×10 / dropped digit; MCQ other letters), with the first
distractor getting a share U[0.5, 0.85] of the wrong mass, so on hard items the mode can be wrong. The distractor
*values* depend on the item only (models share mistakes); their count and weights on (model, item).
:func:`answer_distribution` returns the exact class distribution, so tests know every probability. The chosen class
is then written in a random surface form (:mod:`relgate_tui.demo.forms`). ``temperature`` / ``top_p`` are ignored:
the distribution stays fixed so that p* stays known.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from decimal import Decimal
from random import Random

from relgate_tui.demo.forms import render_answer
from relgate_tui.demo.hashing import h64, units
from relgate_tui.demo.items import LETTERS, SimItem
from relgate_tui.demo.tokens import SimCompletion

__all__ = [
    "ANSWER_MODELS",
    "PROFILES",
    "AnswerDistribution",
    "ModelProfile",
    "answer_distribution",
    "distractor_values",
    "sample_completion",
    "true_invalid_prob",
    "true_p_star",
]


@dataclass(frozen=True)
class ModelProfile:
    """How good a simulated model is: a mixture of uniform ranges for p* and its unparseable-answer rate."""

    name: str
    mixture: tuple[tuple[float, float, float], ...]  # (weight, low, high); weights sum to 1
    invalid: float
    description: str

    def mean_p_star(self) -> float:
        return sum(w * (lo + hi) / 2.0 for w, lo, hi in self.mixture)


PROFILES: dict[str, ModelProfile] = {
    p.name: p
    for p in (
        ModelProfile(
            "sim-strong",
            ((0.90, 0.95, 0.99), (0.07, 0.40, 0.80), (0.03, 0.00, 0.10)),
            0.01,
            "SIMULATED strong model: p* mostly 0.95-0.99, a few hard items",
        ),
        ModelProfile(
            "sim-mid",
            ((0.80, 0.65, 0.97), (0.15, 0.30, 0.65), (0.05, 0.00, 0.15)),
            0.03,
            "SIMULATED middling model: p* spread around 0.75",
        ),
        ModelProfile(
            "sim-weak",
            ((0.35, 0.65, 0.97), (0.35, 0.30, 0.65), (0.30, 0.00, 0.00)),
            0.06,
            "SIMULATED weak model: p* around 0.45, 30% of items unsolvable",
        ),
    )
}
ANSWER_MODELS: tuple[str, ...] = tuple(PROFILES)


def _profile(model: str) -> ModelProfile:
    try:
        return PROFILES[model]
    except KeyError:
        raise ValueError(f"unknown simulated model {model!r} (known: {', '.join(ANSWER_MODELS)})") from None


def true_p_star(model: str, item_id: str) -> float:
    """The known probability that one answer of ``model`` to item ``item_id`` is correct (see module docstring)."""
    profile = _profile(model)
    u_component, u_value = units(2, "p_star", model, item_id)
    cumulative = 0.0
    for weight, low, high in profile.mixture:
        cumulative += weight
        if u_component < cumulative:
            return low + (high - low) * u_value
    _, low, high = profile.mixture[-1]
    return low + (high - low) * u_value


def true_invalid_prob(model: str, item_id: str) -> float:
    """Probability that one answer is unparseable: ``min(invalid_rate(model), 1 − p*)``."""
    return min(_profile(model).invalid, 1.0 - true_p_star(model, item_id))

# ----------------------------------------------------------------------------------------------- answer distribution


def _numeric_distractor_pool(answer: str) -> list[str]:
    if "." in answer:
        decimal = Decimal(answer)
        raw = [decimal + 1, decimal - 1, decimal * 10, decimal / 10, -decimal]
        return [format(v.normalize(), "f") for v in raw]
    value = int(answer)
    digits = str(abs(value))
    sign = "-" if value < 0 else ""
    pool = [value + 1, value - 1, value + 10, value - 10]
    for pos in range(len(digits) - 1):
        if digits[pos] != digits[pos + 1]:
            swapped = digits[:pos] + digits[pos + 1] + digits[pos] + digits[pos + 2 :]
            if not swapped.startswith("0"):
                pool.append(int(sign + swapped))
    pool.append(value * 10)
    if abs(value) >= 10:
        pool.append(int(sign + digits[:-1]))
    if abs(value) >= 100:
        pool += [value + 100, value - 100]
    return [str(v) for v in pool]


def distractor_values(item: SimItem) -> tuple[str, ...]:
    """Plausible wrong answers for the item, most plausible first (deterministic per item id)."""
    if item.kind == "mcq":
        pool = [letter for letter in LETTERS[: len(item.choices)] if letter != item.answer]
    elif item.kind == "numeric":
        pool = _numeric_distractor_pool(item.answer)
    else:
        pool = ["I don't know", "none of the above", "it depends", "unknown"]
    unique: list[str] = []
    for value in pool:
        if value != item.answer and value not in unique:
            unique.append(value)
    Random(h64("distractor-order", item.item_id)).shuffle(unique)
    return tuple(unique[:3])


@dataclass(frozen=True)
class AnswerDistribution:
    """Exact answer-class distribution of one (model, item): ``values[0]`` is the correct one, then distractors.

    ``probs`` sum with ``invalid`` to 1. ``cumulative`` is used to sample (invalid mass last).
    """

    values: tuple[str, ...]
    probs: tuple[float, ...]
    invalid: float
    cumulative: tuple[float, ...] = field(repr=False, default=())

    @property
    def p_star(self) -> float:
        return self.probs[0]


def answer_distribution(model: str, item: SimItem) -> AnswerDistribution:
    """The exact class distribution of ``model``'s answers to ``item`` (see module docstring)."""
    p_star = true_p_star(model, item.item_id)
    invalid = min(_profile(model).invalid, 1.0 - p_star)
    wrong = max(0.0, 1.0 - p_star - invalid)
    pool = distractor_values(item)
    u_count, u_share = units(2, "distractors", model, item.item_id)
    count = min(len(pool), 1 + int(3 * u_count))
    values = [item.answer]
    probs = [p_star]
    if count and wrong > 0.0:
        first_share = 0.5 + 0.35 * u_share if count > 1 else 1.0
        shares = [first_share] + [(1.0 - first_share) / (count - 1)] * (count - 1) if count > 1 else [1.0]
        values += list(pool[:count])
        probs += [wrong * share for share in shares]
    elif wrong > 0.0:  # no distractor possible (e.g. a one-option MCQ): the wrong mass becomes invalid answers
        invalid += wrong
    cumulative: list[float] = []
    running = 0.0
    for prob in probs:
        running += prob
        cumulative.append(running)
    return AnswerDistribution(tuple(values), tuple(probs), invalid, tuple(cumulative))


# ----------------------------------------------------------------------------------------------- sampling


def sample_completion(model: str, item: SimItem, rng: Random, distribution: AnswerDistribution | None = None) -> SimCompletion:
    """Sample one answer of ``model`` to ``item`` and render it."""
    dist = distribution if distribution is not None else answer_distribution(model, item)
    u = rng.random()
    index = bisect_right(dist.cumulative, u)
    if index < len(dist.values):
        value: str | None = dist.values[index]
        prob = dist.probs[index]
    else:
        value, prob = None, dist.invalid
    text = render_answer(item, value, rng)
    return SimCompletion(text, value, index == 0, math.log(max(prob, 1e-12)))

