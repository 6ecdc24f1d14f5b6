"""Screenshots of the team-review screens into ``screens/`` (issue 21): ``python -m tests.engine.review.screens [OUT]``.

Starts its own PostgreSQL server (:mod:`tests.engine.review.pgserver`), publishes an imported run, lets two reviewers
disagree on some items, then drives the app: Home → Review (team) (sessions and status), the labelling screen,
the same screen while the server is stopped ("database unreachable: N labels waiting"), the adjudicator's queue, and
Runs → Publish for review.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

SIZE = (130, 36)


async def render(out: Path) -> list[Path]:
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    from textual.widgets import Input

    from relgate_tui.cli import main
    from relgate_tui.tui.app import make_app
    from relgate_tui.tui.confirm import ConfirmModal
    from tests.engine.review.pgserver import PgServer
    from tests.engine.review.test_tui import _keys, _settle

    Input.cursor_blink = False  # type: ignore[assignment]
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="relgate-review-screens-") as tmp:
        home = Path(tmp)
        os.environ["RELGATE_HOME"] = str(home)
        server = PgServer().start()
        try:
            server.create_db("team")
            admin = server.url("postgres", None, "team")
            assert main(["review", "init", "--db", admin]) == 0
            urls = {}
            for name, adj in (("alice", False), ("bob", False), ("judy", True)):
                server.create_login(name, f"pw-{name}-screens")
                assert main(["review", "grant", name, "--db", admin, *(["--adjudicator"] if adj else [])]) == 0
                urls[name] = server.url(name, f"pw-{name}-screens", "team")
            task = home / "capitals.jsonl"
            rows = [("France", "Paris", "Lyon"), ("Japan", "Tokyo", "Kyoto"), ("Canada", "Ottawa", "Toronto"),
                    ("Australia", "Canberra", "Sydney"), ("Brazil", "Brasília", "Rio de Janeiro"),
                    ("Turkey", "Ankara", "Istanbul"), ("Nigeria", "Abuja", "Lagos"), ("Morocco", "Rabat", "Casablanca"),
                    ("Vietnam", "Hanoi", "Ho Chi Minh City"), ("Pakistan", "Islamabad", "Karachi")] * 2
            with task.open("w", encoding="utf-8") as f:
                for i, (country, right, wrong) in enumerate(rows):
                    f.write(json.dumps({"id": f"cap{i:02d}", "question": f"What is the capital of {country}?",
                                        "model": "sim-mixed", "samples": [right] * 5 + [wrong] * 3 + ["—"]}) + "\n")
            assert main(["import", "samples", str(task), "--run-dir", str(home / "runs"), "--quiet"]) == 0
            run = next((home / "runs").iterdir()).name
            pub = home / "pub.json"
            assert main(["review", "publish", run, "--db", admin, "--json", str(pub)]) == 0
            sid = json.loads(pub.read_text())["session"]
            items = [f"cap{i:02d}" for i in range(20)]
            for name, verdicts in (("alice", dict.fromkeys(items, 1)),
                                   ("bob", {i: (2 if n % 4 == 0 else 1) for n, i in enumerate(items)})):
                lf = home / f"{name}.jsonl"
                lf.write_text("".join(json.dumps({"id": i, "rank": r}) + "\n" for i, r in verdicts.items()))
                assert main(["review", "label", sid, "--labels", str(lf), "--db", urls[name], "--quiet"]) == 0
            # a second session for the labelling screens
            assert main(["review", "publish", run, "--db", admin, "--name", "capitals · second pass",
                         "--json", str(pub)]) == 0

            app = make_app(runs_dir=home / "runs", cache_dir=home / "cache", settings_path=home / "settings.json",
                           discover=lambda: [], embedded_demo=False, demo_port=0, probe_latency=False)
            async with app.run_test(size=SIZE) as pilot:

                async def shot(name: str) -> None:  # once every store call is done and drawn, never after a delay
                    await _settle(pilot, app)
                    await pilot.wait_for_scheduled_animations()
                    await pilot.pause()
                    written.append(Path(app.save_screenshot(filename=f"{name}.svg", path=str(out))))

                await pilot.pause()
                await pilot.press("v")
                screen = app.screen
                screen.query_one("#connect-db", Input).value = urls["judy"]
                screen.query_one("#connect-db", Input).focus()
                await _keys(pilot, app, "enter")  # every store call runs in a worker: wait for each
                await _keys(pilot, app, "down", "t")  # the first session (the older one is second)
                await shot("review-connect")
                await _keys(pilot, app, "a")
                await _settle(pilot, app)
                await shot("review-adjudicate")
                await _keys(pilot, app, "escape", "up", "enter")
                await _settle(pilot, app)
                await _keys(pilot, app, "y")
                await shot("review-label")
                server.stop()
                try:
                    await _keys(pilot, app, "n", "x")
                    await shot("review-unreachable")
                finally:
                    server.start()
                await _keys(pilot, app, "r", "escape")
                if isinstance(app.screen, ConfirmModal):  # an item in hand: leaving asks first
                    await _keys(pilot, app, "y")
                await _keys(pilot, app, "escape", "o")
                await app.workers.wait_for_complete()
                await pilot.pause()
                await pilot.press("p")
                await pilot.pause()
                app.screen.query_one("#publish-db", Input).value = f"sqlite:///{home / 'team.sqlite3'}"
                await _keys(pilot, app, "enter")
                await shot("review-publish")
        finally:
            server.destroy()
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else Path(__file__).resolve().parents[3] / "screens"
    for p in asyncio.run(render(out)):
        print(p, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
