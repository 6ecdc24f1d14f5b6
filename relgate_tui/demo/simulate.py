"""Every simulated model the demo server serves, and one chat request's completions.

Deterministic given (model, last user message, seed, choice index); without a seed a per-server counter varies the
answers. See :mod:`relgate_tui.demo` for the list of models.
"""

from __future__ import annotations

from collections.abc import Sequence

from relgate_tui.demo.answers import ANSWER_MODELS, PROFILES, sample_completion
from relgate_tui.demo.catalogue import ItemCatalogue
from relgate_tui.demo.hashing import request_rng
from relgate_tui.demo.judge import JUDGE_MODEL, JudgeKnobs, judge_completion
from relgate_tui.demo.tokens import SimCompletion

__all__ = ["CHAT_MODELS", "JUDGE_MODELS", "MODEL_DESCRIPTIONS", "SIM_MODELS", "last_user_content", "simulate_chat"]

JUDGE_MODELS: tuple[str, ...] = (JUDGE_MODEL,)
CHAT_MODELS: tuple[str, ...] = ANSWER_MODELS + JUDGE_MODELS
SIM_MODELS: tuple[str, ...] = CHAT_MODELS
MODEL_DESCRIPTIONS: dict[str, str] = {name: p.description for name, p in PROFILES.items()} | {
    JUDGE_MODEL: "SIMULATED pairwise/Likert judge with position bias and noise",
}


def last_user_content(messages: Sequence[dict]) -> str:
    """The text of the last user message (OpenAI content parts joined), or ""."""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):  # OpenAI content parts
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


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
    if model == JUDGE_MODEL:
        return [judge_completion(messages, request_rng(model, content, seed, i, counter), knobs, catalogue)
                for i in range(n)]
    item = catalogue.item_for(content)
    distribution = catalogue.distribution(model, item)
    return [
        sample_completion(model, item, request_rng(model, content, seed, i, counter), distribution) for i in range(n)
    ]
