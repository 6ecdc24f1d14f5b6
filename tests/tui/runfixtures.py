"""Runs stored on disk for the TUI tests, built without any server: the pipeline prepares the run (no network),
then deterministic samples are appended through the run store — exactly what a finished sampling pass leaves.

The endpoint URL points at the discard port on loopback, where nothing listens, so any accidental network call in
an "offline" test fails loudly.
"""

from __future__ import annotations

import random
from pathlib import Path

from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.certification.setup import RunSetup
from relgate_tui.engine.records import StoredSample

UNREACHABLE = "http://127.0.0.1:9/v1"


def _value_text(value: str, rng: random.Random) -> str:
    form = rng.randrange(4)
    return (f"The answer is {value}.", f"#### {value}", f"{value}", f"I think it's {value}")[form]


def stored_run(
    runs_dir: Path,
    *,
    model: str = "fixture-model",
    task: str = "bigbench-3digit-addition",
    limit: int = 40,
    n_cal: int = 20,
    k_max: int = 10,
    verification: str = "human",
    seed: int = 0,
    alpha: float = 0.10,
    min_reliability: float | None = None,
    confidence: float = 0.95,
) -> Path:
    """Create a complete run (every item sampled ``k_max`` times, stopping "none") and return its directory.

    Item quality is a seeded mixture: 70% easy items (p = 0.9 correct), 20% hard (0.45, with one strong
    distractor), 10% unsolvable (never correct); 5% of samples are unparseable. ``min_reliability`` /
    ``confidence``: the run's own gate (none by default).
    """
    setup = RunSetup(base_url=UNREACHABLE, model=model, task=task, limit=limit, n_cal=n_cal, k_max=k_max,
                     stopping="none", verification=verification, seed=seed, alpha=alpha,  # type: ignore[arg-type]
                     min_reliability=min_reliability, confidence=confidence)
    session = Session.create(setup, runs_dir=runs_dir)
    prepared = session.prepared
    rng = random.Random(seed)
    for item in prepared.items:
        answer = item.answers[0]
        near, far = str(int(answer) + 1), str(int(answer) + 10)
        kind = rng.random()
        p_correct = 0.9 if kind < 0.7 else (0.45 if kind < 0.9 else 0.0)
        samples = []
        for index in range(k_max):
            u = rng.random()
            if u < 0.05:
                text = "I'm not sure."
            elif u < 0.05 + 0.95 * p_correct:
                text = _value_text(answer, rng)
            elif rng.random() < 0.7:
                text = _value_text(near, rng)
            else:
                text = _value_text(far, rng)
            canonical = prepared.canonicalizer(text, item.choices)
            samples.append(StoredSample(item.id, index, text, canonical, {"prompt_tokens": 20,
                                                                            "completion_tokens": 5}))
        prepared.store.append_samples(samples)
    prepared.store.set_status("sampled")
    path = prepared.store.path
    session.close()
    return Path(path)
