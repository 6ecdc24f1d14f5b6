"""``j`` on Home opened the judge audit after 5–7 s with nothing on screen (its imports ran on the event loop at
the key press): the app now imports the judge audit's screens in its background pre-warm, after the first paint.
Checked in a fresh interpreter, where nothing else has imported them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import asyncio, os, sys, tempfile
    from pathlib import Path
    os.environ["TEXTUAL_ANIMATIONS"] = "none"
    home = Path(tempfile.mkdtemp()) / "home"
    os.environ["RELGATE_HOME"] = str(home)
    from relgate_tui.tui.app import make_app
    from relgate_tui.tui.services import AppServices

    async def main():
        app = make_app(AppServices(runs_dir=home / "runs", cache_dir=home / "cache", settings_path=home / "s.json",
                                   discover=lambda: [], embedded_demo=False, probe_latency=False))
        async with app.run_test(size=(80, 24)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            print("judge" if "relgate_tui.tui.judge.screen" in sys.modules else "missing")

    asyncio.run(main())
""")


def test_the_judge_audit_is_imported_in_the_background_after_start() -> None:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=env,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "judge"
