"""Every simulated model the demo server serves, and one chat request's completions.

Deterministic given (model, last user message, seed, choice index); without a seed a per-server counter varies the
answers. See :mod:`relgate_tui.demo` for the list of models.
"""

from __future__ import annotations

from collections.abc import Sequence

from relgate_tui.demo.answers import ANSWER_MODELS, PROFILES, sample_completion
from relgate_tui.demo.catalogue import ItemCatalogue
from relgate_tui.demo.embeddings import EMBED_MODEL
from relgate_tui.demo.hashing import request_rng
from relgate_tui.demo.items import last_user_content
from relgate_tui.demo.judge import JUDGE_MODEL, JudgeKnobs, judge_completion
from relgate_tui.demo.jury import POOL_DESCRIPTIONS, POOL_JUDGES, pool_completion
from relgate_tui.demo.paraphraser import PARAPHRASER_MODEL, paraphrase_request
from relgate_tui.demo.tokens import SimCompletion

__all__ = ["CHAT_MODELS", "JUDGE_MODELS", "MODEL_DESCRIPTIONS", "SIM_MODELS", "simulate_chat"]

JUDGE_MODELS: tuple[str, ...] = (JUDGE_MODEL,) + POOL_JUDGES
CHAT_MODELS: tuple[str, ...] = ANSWER_MODELS + JUDGE_MODELS + (PARAPHRASER_MODEL,)
SIM_MODELS: tuple[str, ...] = CHAT_MODELS + (EMBED_MODEL,)
MODEL_DESCRIPTIONS: dict[str, str] = (
    {name: p.description for name, p in PROFILES.items()}
    | {JUDGE_MODEL: "SIMULATED pairwise/Likert judge with position bias and noise"}
    | POOL_DESCRIPTIONS
    | {
        PARAPHRASER_MODEL: "SIMULATED paraphraser: meaning-preserving rewrites of the prompt it is given",
        EMBED_MODEL: "SIMULATED embeddings (hashed words and character 3-grams, L2-normalised; /v1/embeddings only)",
    }
)


def simulate_chat(
    model: str,
    messages: Sequence[dict],
    seed: object,
    n: int,
    counter: int,
    catalogue: ItemCatalogue,
    knobs: JudgeKnobs,
) -> list[SimCompletion]:
    """The ``n`` completions of one chat request (deterministic given model, user content, seed and index)."""
    content = last_user_content(messages)
    rngs = [request_rng(model, content, seed, i, counter) for i in range(n)]
    if model == JUDGE_MODEL:
        return [judge_completion(messages, rng, knobs, catalogue) for rng in rngs]
    if model in POOL_JUDGES:
        return [pool_completion(model, messages, rng, knobs, catalogue) for rng in rngs]
    if model == PARAPHRASER_MODEL:
        return [SimCompletion(paraphrase_request(content, rng), None, False, -0.1) for rng in rngs]
    item = catalogue.item_for(content)
    distribution = catalogue.distribution(model, item)
    return [sample_completion(model, item, rng, distribution) for rng in rngs]
