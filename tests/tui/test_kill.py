"""SIGKILL during a spot-check session: every label the app acknowledged before the kill is on disk, and a new
app process reopens the run and carries on from there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from relgate_tui.engine.runs.store import RunStore, replay_labels
from relgate_tui.tui.app import make_app
from relgate_tui.tui.runs import RunsScreen
from relgate_tui.tui.spotcheck import SpotCheckScreen
from tests.tui.runfixtures import stored_run

REPO = Path(__file__).resolve().parents[2]
KILL_AFTER = 9  # acknowledged decisions before the kill (the driver keeps pressing keys meanwhile)


def _expected_labels(lines: list[str]) -> dict[str, str]:
    """Replay the driver's acknowledged decisions: item → "rank" / "none" / "skip" (undo removes the last)."""
    events: list[dict | None] = []
    for line in lines:
        _, key, item, moved = line.split(" ")
        if key == "u":
            if moved == "moved":  # a label was undone (staying = only stepped back to an earlier candidate)
                events.append(None)
        elif moved == "moved":  # y / x / s, or n on the last candidate (= none acceptable)
            kind = {"y": "rank", "x": "none", "s": "skip", "n": "none"}[key]
            events.append({"event": "label", "item": item, **({"rank": 1} if kind == "rank" else {kind: True}),
                           "source": "human"})
    return {item: lab.kind for item, lab in replay_labels(events).items()}


async def test_sigkill_mid_spotcheck_loses_no_label(services):
    home = services.runs_dir.parent
    run = stored_run(services.runs_dir)
    env = {**os.environ, "RELGATE_HOME": str(home), "TEXTUAL_ANIMATIONS": "none", "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.tui.spot_driver", str(home)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    acknowledged: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while len(acknowledged) < KILL_AFTER:
            line = child.stdout.readline()
            assert line, f"driver ended early: {child.stderr.read()[-2000:]}"
            assert time.monotonic() < deadline, "driver too slow"
            if line.startswith("DONE "):
                acknowledged.append(line.strip())
        os.kill(child.pid, signal.SIGKILL)  # mid-session: the driver is still pressing keys
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

    expected = _expected_labels(acknowledged)
    assert len(expected) >= 5
    on_disk = RunStore(run).current_labels()
    for item, kind in expected.items():
        assert item in on_disk, f"label of {item} lost"
        assert on_disk[item].kind == kind
    extra = set(on_disk) - set(expected)
    assert len(extra) <= 1  # at most the decision that was being made when the kill landed

    # restart: a new app reopens the run; every label is there and the spot-check continues after them
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("o")
        assert isinstance(app.screen, RunsScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SpotCheckScreen)
        assert not set(screen.queue) & set(on_disk)
        assert len(screen.queue) == 20 - len(on_disk)
        item = screen.current
        await pilot.press("y")
        assert RunStore(run).current_labels()[item].rank == 1
        await pilot.press("escape", "y")
        await pilot.pause()
