"""Screenshots of the study views for the README: ``python -m relgate_tui.tui.studies.screenshots [--out screens]``.

Writes three simulated judge scores files into a throw-away directory — one judge's score-token log-probabilities on
400 items with 3-rater mean human ratings (``core/judge_intervals/simulate.py``, paper 001), three judges rating 400
samples under four prompt variants (graded-response simulation, paper 002), and a pool of six judges whose
reliability depends on the item (paper 003's simulated pool, 400 items) — then walks the real flow Home → Studies
(``t``) → run → view, and saves ``intervals.svg``, ``irt.svg`` and ``jury.svg``. Every judge here is simulated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SIZE = (120, 40)
VARIANTS = ("original", "typo", "newline", "paraphrase")


def write_irt_scores(path: Path, n: int = 400, seed: int = 7) -> Path:
    """Three simulated judges: steady (same GRM under every variant), prompt-sensitive (the perturbed variants
    lose discrimination) and noisy (low discrimination everywhere); a human score per sample from the same θ."""
    from relgate_tui.core.irt.grm import simulate_grm

    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(n)
    b = [-1.6, -0.6, 0.4, 1.4]
    judges = {"steady-judge": [2.4, 2.3, 2.4, 2.2], "prompt-sensitive": [2.6, 0.7, 1.0, 1.8],
              "noisy-judge": [0.8, 0.7, 0.8, 0.7]}
    human = np.clip(np.round(3 + 1.1 * theta + rng.normal(0, 0.4, n)), 1, 5)
    with path.open("w", encoding="utf-8") as fh:
        for k, (judge, a) in enumerate(judges.items()):
            y, sim_theta = simulate_grm(a, [b] * 4, n, seed=seed + k)
            # the simulation draws its own θ: re-pair rows by rank so that every judge rates the same samples
            y = y[np.argsort(sim_theta, kind="stable")][np.argsort(np.argsort(theta, kind="stable"))]
            for i in range(n):
                for p, v in enumerate(VARIANTS):
                    fh.write(json.dumps({"id": f"s{i}", "judge": judge, "criterion": "coherence", "variant": v,
                                         "score": float(y[i, p]), "human": float(human[i])}) + "\n")
    return path


def write_intervals_scores(path: Path, n: int = 400, seed: int = 3) -> Path:
    """A simulated judge's log-probs of the five rating tokens, its raw score and 3-rater mean human ratings."""
    from relgate_tui.core.judge_intervals.simulate import simulate

    z, y, raw = simulate(n, seed=seed)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"d{i}", "judge": "simulated-judge", "criterion": "coherence",
                                 "human": round(float(y[i]), 4), "score": float(raw[i]),
                                 "logprobs": {str(k + 1): round(float(v), 4) for k, v in enumerate(z[i])}}) + "\n")
    return path


def write_jury_scores(path: Path, n: int = 400, judges: int = 6, seed: int = 0) -> Path:
    from relgate_tui.core.jury.simulate import simulate_pool

    data, texts = simulate_pool(n, judges, seed=seed)
    with path.open("w", encoding="utf-8") as fh:
        for k, item in enumerate(data.ids):
            for c, judge in enumerate(data.judges):
                fh.write(json.dumps({"id": item, "judge": judge, "criterion": "quality",
                                     "score": float(data.scores[k, c]), "human": float(data.human[k]),
                                     "input": texts["input"][k], "output": texts["output"][k]}) + "\n")
    return path


async def render_studies(out: Path, home: Path, *, verbose: bool = True, splits: int = 10) -> list[Path]:
    """Home → Studies → Intervals view, → IRT view, then → Jury view, on the scores files of :func:`write_files` in
    ``home``; writes ``intervals.svg``, ``irt.svg`` and ``jury.svg`` into ``out`` (which must exist)."""
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    from textual.widgets import Input, Select

    from relgate_tui.tui.app import make_app
    from relgate_tui.tui.studies.base import StudyView
    from relgate_tui.tui.studies.setup import StudiesScreen

    Input.cursor_blink = False  # type: ignore[assignment]
    written: list[Path] = []
    files = {"intervals": home / "intervals.jsonl", "irt": home / "judges.jsonl", "jury": home / "pool.jsonl"}
    app = make_app(runs_dir=home / "runs", cache_dir=home / "cache", settings_path=home / "settings.json",
                   discover=lambda: [], embedded_demo=False, probe_latency=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        screen = app.screen
        assert isinstance(screen, StudiesScreen)
        for kind in ("intervals", "irt", "jury"):
            screen.query_one("#path", Input).value = str(files[kind])
            screen.query_one("#splits", Input).value = str(splits)
            screen.load(str(files[kind]))
            await app.workers.wait_for_complete()
            await pilot.pause()
            screen.query_one("#study", Select).value = kind
            await pilot.press("ctrl+s")
            await app.workers.wait_for_complete()
            await pilot.pause()
            if not isinstance(app.screen, StudyView):
                raise RuntimeError(f"screenshots: the {kind} study failed: "
                                   f"{screen.query_one('#run-error').render()}")
            if kind == "jury":
                await pilot.press("down", "down", "enter")
            if kind == "intervals":
                await pilot.press("n", "n", "n", "n", "n", "n")  # r2ccp, the paper's recommendation
            await pilot.pause(0.1)
            written.append(Path(app.save_screenshot(filename=f"{kind}.svg", path=str(out))))
            if verbose:
                print(f"  {written[-1]}", file=sys.stderr)
            await pilot.press("escape")
            await pilot.pause()
        app.exit()
    return written


def write_files(home: Path) -> None:
    """The three simulated judge scores files the screenshots use."""
    write_intervals_scores(home / "intervals.jsonl")
    write_irt_scores(home / "judges.jsonl")
    write_jury_scores(home / "pool.jsonl")


def render_all(out: Path, *, verbose: bool = True) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="relgate-studies-") as tmp:
        write_files(Path(tmp))
        return asyncio.run(render_studies(out, Path(tmp), verbose=verbose))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m relgate_tui.tui.studies.screenshots", description=__doc__)
    parser.add_argument("--out", default="screens", help="output directory (default: screens/)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    paths = render_all(Path(args.out))
    print(f"wrote {len(paths)} screenshots to {args.out}/ in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
