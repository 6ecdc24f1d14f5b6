"""Render an SVG of every screen with the demo data: ``python -m relgate_tui.tui.screenshots [--out screens]``.

The app runs headless (``App.run_test``) against the embedded simulated endpoint, in a throw-away data directory,
and walks the real flow: Home → Setup → Sampling (mid-run) → Spot-check (+ help, + item samples) → Results (items
and plots) → Runs → Compare, plus Settings and the results of a small Judge audit of the simulated judge. Each
screen is saved as ``<out>/<screen>.svg``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

SIZE = (120, 40)
TASK = "bigbench-3digit-addition"


async def _until(pilot, condition: Callable[[], bool], timeout: float = 60.0, what: str = "") -> None:
    """Let the app run until ``condition()`` holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"screenshots: timed out waiting for {what or 'the app'}")
        await pilot.pause(0.05)


async def _judge_audit(pilot) -> None:
    """Home → Judge audit: a small seeded audit of the demo's simulated judge (both protocols), up to its results."""
    from textual.widgets import Input, Select, Static

    from relgate_tui.tui.judge import JudgeScreen

    await pilot.press("j")
    judge = pilot.app.screen
    assert isinstance(judge, JudgeScreen)
    await _until(pilot, lambda: bool(judge.endpoints) and judge.audit_set is not None
                 and judge.query_one("#criterion", Select).value == "Coherence", what="the judge audit's setup")
    for wid, value in (("n-inputs", "12"), ("n-candidates", "6"), ("reps", "3"), ("seed", "0")):
        judge.query_one(f"#{wid}", Input).value = value
    judge.query_one("#protocol", Select).value = "both"
    await pilot.pause()
    await pilot.press("ctrl+s")
    await _until(pilot, lambda: judge.state in ("results", "setup"), what="the judge audit")
    if judge.state != "results":
        raise RuntimeError(f"screenshots: the judge audit failed: {judge.query_one('#judge-error', Static).content}")


async def render_all(out: Path, *, verbose: bool = True) -> list[Path]:
    """Drive the app through every screen and write the SVGs into ``out``; returns the written paths."""
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    from textual.widgets import Input, ProgressBar, Select

    from relgate_tui.engine.certification.session import Session
    from relgate_tui.engine.certification.setup import RunSetup
    from relgate_tui.tui.app import make_app

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    Input.cursor_blink = False  # type: ignore[assignment]

    with tempfile.TemporaryDirectory(prefix="relgate-screens-") as tmp:
        home = Path(tmp)
        os.environ["RELGATE_HOME"] = str(home)
        app = make_app(
            runs_dir=home / "runs",
            cache_dir=home / "cache",
            settings_path=home / "settings.json",
            discover=lambda: [],
            demo_latency_ms=25.0,
            demo_port=0,
            probe_latency=True,
        )

        async with app.run_test(size=SIZE) as pilot:

            async def shot(name: str) -> None:
                await pilot.pause(0.1)
                path = Path(app.save_screenshot(filename=f"{name}.svg", path=str(out)))
                written.append(path)
                if verbose:
                    print(f"  {path}", file=sys.stderr)

            await pilot.pause()
            # A second, finished run (strong model) so that Runs and Compare have something to show.
            url = app.ensure_demo()
            other = Session.create(
                RunSetup(base_url=url, model="sim-strong", task=TASK, simulated=True, limit=60, n_cal=30),
                runs_dir=home / "runs",
                cache_dir=home / "cache",
            )
            async for _ in other.sample():
                pass
            other.save_results(gate=app.settings.gate if app.settings else None)
            other.close()
            from relgate_tui.tui.home import HomeScreen

            app.screen.set_status(app._home_status())  # type: ignore[attr-defined]
            assert isinstance(app.screen, HomeScreen)
            await shot("home")

            await pilot.press("s")
            await shot("settings")
            await pilot.press("escape")
            await _judge_audit(pilot)
            await shot("judge")
            await pilot.press("escape", "escape")

            await pilot.press("n")
            from relgate_tui.tui.setup import SetupScreen

            setup = app.screen
            assert isinstance(setup, SetupScreen)
            await _until(pilot, lambda: setup.task_info is not None and bool(setup.endpoints), what="setup")
            setup.query_one("#limit", Input).value = "60"
            setup.query_one("#n-cal", Input).value = "30"
            setup.query_one("#concurrency", Input).value = "4"
            setup.query_one("#verification", Select).value = "human"
            await _until(pilot, lambda: setup.latency is not None, what="the latency probe")
            await shot("setup")

            await pilot.press("ctrl+s")
            from relgate_tui.tui.sampling import SamplingScreen

            await _until(pilot, lambda: isinstance(app.screen, SamplingScreen), what="sampling")
            sampling = cast("SamplingScreen", app.screen)
            bar = sampling.query_one("#bar", ProgressBar)
            await _until(pilot, lambda: (bar.progress or 0) >= 25, what="sampling progress")
            await shot("sampling")
            await _until(pilot, lambda: sampling.state == "finished", timeout=120, what="sampling to finish")
            await pilot.press("enter")

            from relgate_tui.tui.spotcheck import SpotCheckScreen

            await _until(pilot, lambda: isinstance(app.screen, SpotCheckScreen), what="spot-check")
            await pilot.press("y", "y", "n")
            await shot("spotcheck")
            await pilot.press("question_mark")
            await shot("help")
            await pilot.press("escape")
            await pilot.press("e")
            await shot("item-samples")
            await pilot.press("escape")
            spot = cast("SpotCheckScreen", app.screen)
            while isinstance(app.screen, SpotCheckScreen) and spot.queue:
                view = spot.view
                # a plausible human: accepts the leader when it has a clear majority, else looks further
                if view is not None and view.candidates and view.candidates[0].share >= 0.5:
                    await pilot.press("y")
                elif view is not None and len(view.candidates) > 1:
                    await pilot.press("n", "y")
                else:
                    await pilot.press("x")

            from relgate_tui.tui.results import ResultsScreen

            await _until(pilot, lambda: isinstance(app.screen, ResultsScreen), what="results")
            await shot("results")
            await pilot.press("p")
            await shot("results-plots")
            await pilot.press("escape")

            await pilot.press("o")
            from relgate_tui.tui.runs import RunsScreen

            await _until(pilot, lambda: isinstance(app.screen, RunsScreen) and bool(app.screen.summaries),
                         what="runs")
            await shot("runs")
            await pilot.press("space", "down", "space", "c")
            from relgate_tui.tui.compare import CompareScreen

            await _until(pilot, lambda: isinstance(app.screen, CompareScreen), what="compare")
            await shot("compare")
            await pilot.press("escape", "escape")
            app.exit()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m relgate_tui.tui.screenshots", description=__doc__)
    parser.add_argument("--out", default="screens", help="output directory (default: screens/)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    paths = asyncio.run(render_all(Path(args.out)))
    from relgate_tui.tui.studies.screenshots import render_all as render_studies

    paths += render_studies(Path(args.out))  # intervals.svg, irt.svg, jury.svg (judge studies, papers 001–003)
    print(f"wrote {len(paths)} screenshots to {args.out}/ in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
