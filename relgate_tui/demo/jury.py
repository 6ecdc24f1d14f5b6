"""A pool of simulated judges whose reliability depends on the item (paper 003), and one whose scores shift under
prompt perturbations (paper 002). Names start with ``sim-judge-``; ``sim-judge`` itself is unchanged.

Item features, from the response text t only (judge-independent, cheap; the features paper 003's predictors see):

* ``words`` = number of whitespace-separated tokens of t;
* ``numbers`` = tokens of t containing a digit;
* ``hedges`` = occurrences of hedge words/phrases (:data:`HEDGES`, whole words, case-insensitive).

Reliability r_j(x) ∈ [0, 1] of judge j on item x (σ(z) = 1/(1 + e^(−z))):

======================  ==========================================  ============================================
judge                   r_j(x)                                      reliable on
======================  ==========================================  ============================================
sim-judge-long          σ((words − 200) / 15)                       long texts (≳ 200 words)
sim-judge-short         σ((200 − words) / 15)                       short texts
sim-judge-numbers       1 − 0.85·exp(−numbers)                      texts with numbers (0 → 0.15, 1 → 0.69)
sim-judge-hedges        0.05 + 0.9·exp(−0.6·hedges)                 texts without hedging (0 → 0.95, 1 → 0.54)
sim-judge-sensitive     0.7                                         everything, but see perturbations below
======================  ==========================================  ============================================

Direct scoring on a 1..K scale (K read from the prompt, default 5): latent quality q (the bundled human mean for
that text and criterion, else a hash U[1.5, 4.5]; :func:`relgate_tui.demo.judge.latent_quality`) is mapped to the
scale, ``q_K = 1 + (q − 1)(K − 1)/4``; the judge's belief is ``μ = q_K + c·(0.1 + 1.8·(1 − r))·z_j(criterion, t)``
(z_j a persistent standard normal per judge, criterion and text: the judge's own, repeatable error) and one reply is
``clip(round(μ + c·(0.25 + 0.6·(1 − r))·ε), 1, K)`` with ε ~ N(0, 1) per call and c = (K − 1)/4. So an unreliable
judge is both further from the humans and less sure (flatter score-token log-probs), as paper 001 assumes of real
judges. Invalid replies 1%; surface forms and log-probs as ``sim-judge`` (:func:`relgate_tui.demo.judge.score_completion`).

``sim-judge-sensitive`` recognises the prompt variant (:func:`relgate_tui.demo.recognise.variant_kind`, against the
``direct_prompt`` template for the same criterion) and shifts: original → μ unchanged; newline → μ − 0.5·c and call
noise × 1.3; typo → μ − 0.8·c and noise × 1.6; paraphrase (any other wording) → μ + (0.6 + 0.4·z(template))·c and
noise × 1.3 (z(template) a persistent standard normal of the whitespace-normalised template, so each paraphrase has
its own shift). The other judges score every variant alike (their μ ignores the template).

Pairwise prompts: utilities q + (0.1 + 1.8·(1 − r))·z_j per text plus sim-judge's pair effect and position bias,
call noise 0.25 + 0.6·(1 − r̄) (r̄ the mean of the two texts' reliabilities). Certification prompts: as ``sim-judge``.

On bundled HANNA Coherence (1,056 stories, one seeded reply per judge) Kendall τ against the human means: single
judges 0.33–0.54, the average of all five 0.65, a per-item reliability-weighted jury using the true r_j 0.73 — the
headroom a per-item jury can find (paper 003).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from random import Random

from relgate_tui.demo.catalogue import ItemCatalogue
from relgate_tui.demo.hashing import gauss
from relgate_tui.demo.judge import (
    UNRECOGNISED,
    JudgeKnobs,
    correctness_completion,
    latent_quality,
    pair_effect,
    score_completion,
    verdict_completion,
)
from relgate_tui.demo.recognise import read_pairwise_prompt, read_scoring_prompt, variant_kind
from relgate_tui.demo.tokens import SimCompletion
from relgate_tui.engine.judging import prompts as judge_prompts

__all__ = ["HEDGES", "POOL_JUDGES", "ItemFeatures", "item_features", "pool_completion", "reliability"]

HEDGES = (
    "maybe", "perhaps", "might", "possibly", "probably", "seems", "seem", "seemed", "apparently", "likely",
    "unlikely", "somewhat", "arguably", "presumably", "roughly", "approximately", "i think", "i guess", "sort of",
    "kind of",
)
_HEDGE = re.compile(r"\b(?:" + "|".join(re.escape(h) for h in HEDGES) + r")\b", re.IGNORECASE)
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class ItemFeatures:
    words: int
    numbers: int
    hedges: int


def item_features(text: str) -> ItemFeatures:
    """The features the pool's reliabilities depend on (module docstring)."""
    tokens = text.split()
    return ItemFeatures(len(tokens), sum(1 for t in tokens if _DIGIT.search(t)), len(_HEDGE.findall(text)))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


_RELIABILITY: dict[str, Callable[[ItemFeatures], float]] = {
    "sim-judge-long": lambda f: _sigmoid((f.words - 200) / 15),
    "sim-judge-short": lambda f: _sigmoid((200 - f.words) / 15),
    "sim-judge-numbers": lambda f: 1.0 - 0.85 * math.exp(-f.numbers),
    "sim-judge-hedges": lambda f: 0.05 + 0.9 * math.exp(-0.6 * f.hedges),
    "sim-judge-sensitive": lambda f: 0.7,
}
POOL_JUDGES: tuple[str, ...] = tuple(_RELIABILITY)
SENSITIVE_JUDGE = "sim-judge-sensitive"
POOL_DESCRIPTIONS: dict[str, str] = {
    "sim-judge-long": "SIMULATED Likert/pairwise judge, reliable on long texts (> ~200 words)",
    "sim-judge-short": "SIMULATED Likert/pairwise judge, reliable on short texts (< ~200 words)",
    "sim-judge-numbers": "SIMULATED Likert/pairwise judge, reliable on texts with numbers",
    "sim-judge-hedges": "SIMULATED Likert/pairwise judge, confused by hedging words",
    "sim-judge-sensitive": "SIMULATED Likert judge whose scores shift under prompt perturbations",
}
_INVALID_RATE = 0.01
_VARIANT_EFFECT = {"original": (0.0, 1.0), "newline": (-0.5, 1.3), "typo": (-0.8, 1.6)}


def reliability(judge: str, text: str) -> float:
    """r_j(x) of pool judge ``judge`` on response text ``text`` (module docstring)."""
    return _RELIABILITY[judge](item_features(text))


def _error_sd(r: float) -> float:
    return 0.1 + 1.8 * (1.0 - r)


def _call_sd(r: float) -> float:
    return 0.25 + 0.6 * (1.0 - r)


def pool_completion(
    judge: str, messages: object, rng: Random, knobs: JudgeKnobs, catalogue: ItemCatalogue | None = None
) -> SimCompletion:
    """The reply of pool judge ``judge`` (module docstring), with token log-probs."""
    pairwise = read_pairwise_prompt(messages)
    if pairwise is not None:
        criterion = pairwise.criterion.casefold()
        r_a, r_b = reliability(judge, pairwise.text_a), reliability(judge, pairwise.text_b)
        u_a = latent_quality(pairwise.text_a, pairwise.criterion) + _error_sd(r_a) * gauss(judge, criterion, pairwise.text_a)
        u_b = latent_quality(pairwise.text_b, pairwise.criterion) + _error_sd(r_b) * gauss(judge, criterion, pairwise.text_b)
        g = pair_effect(pairwise.text_a, pairwise.text_b, criterion, knobs)
        pool_knobs = replace(knobs, noise_sd=_call_sd((r_a + r_b) / 2.0), invalid_rate=_INVALID_RATE)
        return verdict_completion(u_a + g, u_b, rng, pool_knobs, "Response")
    correctness = judge_prompts.parse_correctness_prompt(messages)
    if correctness is not None:
        return correctness_completion(correctness, rng, knobs, catalogue)
    prompt = read_scoring_prompt(messages)
    if prompt is None:
        return SimCompletion(UNRECOGNISED, None, False, -0.05)
    r = reliability(judge, prompt.text)
    c = (prompt.scale - 1) / 4.0
    q = 1.0 + (latent_quality(prompt.text, prompt.criterion) - 1.0) * c
    mu = q + c * _error_sd(r) * gauss(judge, prompt.criterion.casefold(), prompt.text)
    sd = c * _call_sd(r)
    if judge == SENSITIVE_JUDGE:
        kind = variant_kind(prompt)
        if kind in _VARIANT_EFFECT:
            shift, noise = _VARIANT_EFFECT[kind]
        else:
            shift, noise = 0.6 + 0.4 * gauss("paraphrase", " ".join(prompt.template.split())), 1.3
        mu, sd = mu + shift * c, sd * noise
    return score_completion(rng, mu, sd, _INVALID_RATE, prompt.scale)
