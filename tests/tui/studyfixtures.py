"""Small simulated inputs for the study views (papers 002, 003): GRM ratings of two judges under four prompt
variants with human scores, and a pool of four simulated judges. Fixed seeds: every result is deterministic."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from relgate_tui.core.irt.grm import simulate_grm
from relgate_tui.core.irt.study import IRTStudy, run_irt_study
from relgate_tui.core.jury.protocol import JuryData, JuryStudy
from relgate_tui.core.jury.simulate import simulate_pool
from relgate_tui.core.jury.study import run_jury_study

VARIANTS = ("original", "typo", "newline", "paraphrase")
EVIL = "[bold red]evil[/]\u202ejudge\x1b[2J"  # markup, a bidi override and an escape sequence: shown verbatim-safe


def irt_ratings(n: int = 150) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, float]]:
    """judge → id → variant → rating (1–5), and the human score per id, for a steady and a noisy judge."""
    steady, theta = simulate_grm([2.2, 2.0, 2.1, 1.9], [[-1.5, -0.5, 0.5, 1.5]] * 4, n, seed=3)
    rng = np.random.default_rng(4)
    noisy = np.clip(np.round(1 + (theta[:, None] + 2.2) * 0.9 + rng.normal(0, 1.1, (n, 4))), 1, 5)
    human = {f"s{i}": float(np.clip(np.round(3 + 1.2 * theta[i]), 1, 5)) for i in range(n)}
    per_judge = {name: {f"s{i}": {v: float(y[i, k]) for k, v in enumerate(VARIANTS)} for i in range(n)}
                 for name, y in (("steady-judge", steady), (EVIL, noisy))}
    return per_judge, human


@cache
def irt_study() -> IRTStudy:
    per_judge, human = irt_ratings()
    return run_irt_study("coherence", per_judge, human=human)


@cache
def jury_pool() -> tuple[JuryData, dict[str, list[str]]]:
    return simulate_pool(150, 4, seed=0)


@cache
def jury_study() -> JuryStudy:
    data, texts = jury_pool()
    return run_jury_study(data, texts=texts, splits=2, n_search=1)


def write_irt_file(path: Path, judges: tuple[str, ...] = ("steady-judge",), n: int = 120) -> Path:
    per_judge, human = irt_ratings(n)
    with path.open("w", encoding="utf-8") as fh:
        for judge in judges:
            for i, per in per_judge[judge].items():
                for v, score in per.items():
                    fh.write(json.dumps({"id": i, "judge": judge, "criterion": "coherence", "variant": v,
                                         "score": score, "human": human[i]}) + "\n")
    return path


def write_jury_file(path: Path) -> Path:
    data, texts = jury_pool()
    with path.open("w", encoding="utf-8") as fh:
        for k, item in enumerate(data.ids):
            for c, judge in enumerate(data.judges):
                rec: dict[str, Any] = {"id": item, "judge": judge, "criterion": "quality",
                                       "score": float(data.scores[k, c]), "human": float(data.human[k]),
                                       "input": texts["input"][k], "output": texts["output"][k]}
                fh.write(json.dumps(rec) + "\n")
    return path
