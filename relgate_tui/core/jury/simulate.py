"""A simulated judge pool whose reliability depends on item features (for tests, benchmarks and the demo).

Items are short texts of three kinds — *brief* (one or two sentences), *numeric* (figures in every sentence) and
*hedged* (long, with hedging words) — and a human score 1–5. Judge j is an expert on kind ``j % 3``: its score is the
human score plus Gaussian noise of sd ``expert_sd`` on that kind and ``novice_sd`` on the others, rounded and clipped
to 1–5. So which judges to trust depends on the item, and a per-item jury can beat any fixed one. With
``identical=True`` every judge has the same noise (sd ``novice_sd``) on every item: no per-item choice can help.
"""

from __future__ import annotations

import numpy as np

from relgate_tui.core.jury.features import item_feature_matrix
from relgate_tui.core.jury.protocol import JuryData

_WORDS = ("the report covers the market and the team results for the quarter with new plans for growth in the region "
          "while the board reviews costs and staff").split()
_HEDGES = ("perhaps", "maybe", "possibly", "apparently", "arguably", "seemingly")
_WORD_ARRAY, _HEDGE_ARRAY = np.array(_WORDS), np.array(_HEDGES)  # what rng.choice makes of the tuples, made once


def _sentence(rng: np.random.Generator, kind: int) -> str:
    words = list(rng.choice(_WORD_ARRAY, size=int(rng.integers(6, 12))))
    if kind == 1:
        words.insert(int(rng.integers(len(words))), str(int(rng.integers(10, 5000))))
        words.insert(int(rng.integers(len(words))), f"{rng.integers(1, 99)}.{rng.integers(0, 9)}%")
    if kind == 2:
        for _ in range(2):
            words.insert(int(rng.integers(len(words))), str(rng.choice(_HEDGE_ARRAY)))
    return " ".join(words).capitalize() + "."


def simulate_pool(n_items: int = 600, n_judges: int = 9, seed: int = 0, *, identical: bool = False,
                  expert_sd: float = 0.35, novice_sd: float = 1.6) -> tuple[JuryData, dict[str, list[str]]]:
    """(the pool's data, the texts by component) for ``n_items`` simulated items."""
    rng = np.random.default_rng(seed)
    kinds = rng.integers(0, 3, n_items)
    outputs, inputs = [], []
    for kind in kinds:
        n_sent = {0: int(rng.integers(1, 3)), 1: int(rng.integers(3, 5)), 2: int(rng.integers(6, 9))}[int(kind)]
        outputs.append(" ".join(_sentence(rng, int(kind)) for _ in range(n_sent)))
        inputs.append(" ".join(_sentence(rng, 0) for _ in range(8)))
    human = rng.integers(1, 6, n_items).astype(float)
    scores = np.empty((n_items, n_judges))
    for j in range(n_judges):
        sd = np.full(n_items, novice_sd) if identical else np.where(kinds == j % 3, expert_sd, novice_sd)
        scores[:, j] = np.clip(np.round(human + rng.normal(0, 1, n_items) * sd), 1, 5)
    x, names = item_feature_matrix(inputs, outputs)
    data = JuryData(ids=tuple(f"item{i}" for i in range(n_items)),
                    judges=tuple(f"sim-judge-{j + 1}" for j in range(n_judges)), scores=scores, human=human,
                    features=x, feature_names=tuple(names))
    return data, {"input": inputs, "output": outputs}
