"""Drive relgate's spot-check in a child process (for the SIGKILL test): ``python -m tests.tui.spot_driver HOME``.

The app is built with :func:`relgate_tui.tui.app.make_app` exactly as ``relgate`` builds it (data dir from
``RELGATE_HOME``), run headless, and walked Home → Open run → resume → Spot-check. Then it presses the keys of
:data:`KEYS` one by one; after each key has been handled it prints ``DONE <key> <item> moved|stayed`` (whether the screen moved
on to another item, i.e. recorded a verdict), flushing stdout — so every line the parent reads describes a decision the app has already
acknowledged. When the keys run out it prints ``IDLE`` and waits to be killed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

KEYS = ("y", "n", "y", "x", "s", "u", "y", "y", "x", "y", "n", "n", "s", "y", "y", "x", "y", "y", "y", "y")


async def drive(home: Path) -> None:
    os.environ["RELGATE_HOME"] = str(home)
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    from relgate_tui.tui.app import make_app
    from relgate_tui.tui.runs import RunsScreen
    from relgate_tui.tui.spotcheck import SpotCheckScreen

    app = make_app(embedded_demo=False, probe_latency=False, discover=lambda: [])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("o")
        assert isinstance(app.screen, RunsScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SpotCheckScreen), type(screen).__name__
        print(f"READY {len(screen.queue)}", flush=True)
        for key in KEYS:
            item = screen.current
            await pilot.press(key)
            moved = "moved" if screen.current != item else "stayed"
            print(f"DONE {key} {item} {moved}", flush=True)
            await asyncio.sleep(0.02)
        print("IDLE", flush=True)
        await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(drive(Path(sys.argv[1])))
