"""Small simulated inputs for the study views (papers 002, 003): GRM ratings of two judges under four prompt
variants with human scores, and a pool of four simulated judges. Fixed seeds: every result is deterministic."""

from __future__ import annotations

import json
from collections.abc import Callable
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


def irt_ratings(n: int = 150) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, float],
                                       dict[str, tuple[float, ...]]]:
    """judge → id → variant → rating (1–5), the human score per id (mean of three raters) and the raters' ratings,
    for a steady and a noisy judge (Phase 2 needs several raters: core/irt/study.py)."""
    steady, theta = simulate_grm([2.2, 2.0, 2.1, 1.9], [[-1.5, -0.5, 0.5, 1.5]] * 4, n, seed=3)
    rng = np.random.default_rng(4)
    noisy = np.clip(np.round(1 + (theta[:, None] + 2.2) * 0.9 + rng.normal(0, 1.1, (n, 4))), 1, 5)
    rated = np.clip(np.round(3 + 1.2 * theta[:, None] + rng.normal(0, 0.5, (n, 3))), 1, 5)
    raters = {f"s{i}": tuple(float(v) for v in rated[i]) for i in range(n)}
    human = {i: sum(r) / 3 for i, r in raters.items()}
    per_judge = {name: {f"s{i}": {v: float(y[i, k]) for k, v in enumerate(VARIANTS)} for i in range(n)}
                 for name, y in (("steady-judge", steady), (EVIL, noisy))}
    return per_judge, human, raters


@cache
def irt_study() -> IRTStudy:
    per_judge, human, raters = irt_ratings()
    return run_irt_study("coherence", per_judge, human=human, raters=raters)


@cache
def jury_pool() -> tuple[JuryData, dict[str, list[str]]]:
    return simulate_pool(150, 4, seed=0)


@cache
def jury_study() -> JuryStudy:
    data, texts = jury_pool()
    return run_jury_study(data, texts=texts, splits=2, n_search=1)


def write_irt_file(path: Path, judges: tuple[str, ...] = ("steady-judge",), n: int = 120) -> Path:
    per_judge, _, raters = irt_ratings(n)
    with path.open("w", encoding="utf-8") as fh:
        for judge in judges:
            for i, per in per_judge[judge].items():
                for v, score in per.items():
                    fh.write(json.dumps({"id": i, "judge": judge, "criterion": "coherence", "variant": v,
                                         "score": score, "humans": list(raters[i])}) + "\n")
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


# ---- paper 001 (judge score intervals) -------------------------------------------------------------------------

HOSTILE_IDS = ("[/]", "\x1b[31mred\x1b[0m", "=HYPERLINK(\"x\")", "[bold]b[/bold]\u202e")
FAST_TEST_METHODS = ("cqr", "r2ccp", "ordinal-aps", "ordinal-rc")


def intervals_records(n: int = 120, seed: int = 5, judge: str = "sim-judge") -> list[dict[str, Any]]:
    """Simulated judge log-probs and 3-rater human means (core/judge_intervals/simulate.py: a test simulation, never
    presented as real); the first ids are hostile (markup, an escape sequence, a formula, a bidi override)."""
    from relgate_tui.core.judge_intervals.simulate import simulate

    z, y, raw = simulate(n, seed=seed)
    ids = [HOSTILE_IDS[i] if i < len(HOSTILE_IDS) else f"d{i}" for i in range(n)]
    return [{"id": ids[i], "judge": judge, "criterion": "coherence", "human": round(float(y[i]), 4),
             "score": float(raw[i]), "logprobs": {str(k + 1): float(v) for k, v in enumerate(z[i])}}
            for i in range(n)]


def write_intervals_file(path: Path, n: int = 120, judges: tuple[str, ...] = ("sim-judge",)) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for k, judge in enumerate(judges):
            for rec in intervals_records(n, seed=5 + k, judge=judge):
                fh.write(json.dumps(rec) + "\n")
    return path


@cache
def intervals_input() -> Any:
    from relgate_tui.core.judge_intervals.study import prepare

    recs = intervals_records()
    return prepare([r["id"] for r in recs], [{int(k): v for k, v in r["logprobs"].items()} for r in recs],
                   [r["human"] for r in recs], [r["score"] for r in recs])


@cache
def intervals_study() -> Any:
    from relgate_tui.core.judge_intervals.study import run_study

    return run_study(intervals_input(), methods=FAST_TEST_METHODS, seeds=range(1, 4),
                     labels={"judge": "sim-judge", "criterion": "coherence", "variant": "original",
                             "scores_file": "sim.jsonl"})


class HeldProgress:
    """Holds a study's thread inside its first progress report until the test calls ``release.set()``, so a cancel
    lands at a known point (no timing): ``started`` is set when the thread is held; a :class:`StudyCancelled` raised
    by the real report is recorded in ``raised`` and re-raised."""

    def __init__(self) -> None:
        import threading

        self.started, self.release = threading.Event(), threading.Event()
        self.raised: list[BaseException] = []

    def wrap(self, progress: Callable[[int, int], None]) -> Callable[[int, int], None]:
        from relgate_tui.tui.studies.common import StudyCancelled

        def wrapped(done: int, total: int) -> None:
            self.started.set()
            self.release.wait(60)
            try:
                progress(done, total)
            except StudyCancelled as exc:
                self.raised.append(exc)
                raise
        return wrapped
