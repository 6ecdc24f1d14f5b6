"""Issue 23 §6: a stored audit's names (judges, data, criterion, created) are untrusted text in the Runs rows."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from textual.widgets import DataTable

from relgate_tui.tui.app import make_app
from relgate_tui.tui.runs import RunsScreen
from tests.engine.stored_audit import stored_audit
from tests.tui.test_flow import wait_until

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")


async def test_runs_rows_show_a_hostile_audit_manifest_as_plain_text(services) -> None:
    home = Path(services.runs_dir).parent
    audit = await asyncio.to_thread(stored_audit, home)
    manifest = json.loads((audit / "manifest.json").read_text())
    manifest["criterion"] = "[/]coh\x1b]0;pwned\x07\u202e"
    manifest["data"]["name"] = f"hanna{OSC52}"
    manifest["spec"]["judges"][0]["name"] = f"[@click=app.quit]j\x9b2J{OSC52}"
    (audit / "manifest.json").write_text(json.dumps(manifest))
    services.embedded_demo = False
    app = make_app(services)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("o")
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await wait_until(pilot, lambda: bool(runs.audits), what="the audits")
        table = runs.query_one("#runs", DataTable)
        cells = [str(c) for c in table.get_row_at(0)]
        assert cells[1] == "audit"
        assert any("[@click=app.quit]j" in c for c in cells) and any("hanna" in c for c in cells)
        assert all(not any(ch in c for ch in CONTROLS) for c in cells), cells
