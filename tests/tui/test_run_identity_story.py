"""One run id, one story (issue 31 item 2): the verification mode and the verification judge are part of the run id
and of the saved run config, so ``relgate certify --config`` of the TUI's saved form is the very run the TUI shows,
with the same numbers; choosing a verification judge in Setup starts another run, never the old one unchanged."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from textual.widgets import Input, Select

from relgate_tui.cli import main
from relgate_tui.engine.certification.run_config import load_run_config
from relgate_tui.engine.certification.session import Session
from relgate_tui.tui.app import make_app
from relgate_tui.tui.setup import SetupScreen
from tests.tui.test_flow import open_screen

NUMBERS = ("reliability_level", "reliability_lower_bound", "reliability_n", "m_star", "n_pending")


def _numbers(doc: dict) -> dict:
    return {k: doc.get(k) for k in NUMBERS} | {"gate": (doc.get("gate") or {}).get("passed")}


async def test_the_saved_config_is_the_run_the_tui_shows_and_a_judge_is_another_run(services, tmp_path: Path) -> None:
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_screen(app, pilot, "n", SetupScreen)
        for field, value in (("limit", "12"), ("k-max", "3")):
            screen.query_one(f"#{field}", Input).value = value
        screen.query_one("#verification", Select).value = "human"
        await pilot.pause()
        plain = screen.collect()
        screen.query_one("#verify-judge-model", Select).value = "sim-judge"
        await pilot.pause()
        judged = screen.collect()
        assert judged.verify_judge_model == "sim-judge" and judged.verification == "human"
        await pilot.press("ctrl+o")
        await pilot.pause()
        (path,) = (services.runs_dir.parent / "configs").glob("*.toml")
        keys = load_run_config(path)
        assert keys["verification"] == "human" and keys["verify-judge-model"] == "sim-judge"
        out = tmp_path / "doc.json"
        code = await asyncio.to_thread(main, ["certify", "--config", str(path), "--quiet", "--json", str(out)])
        assert code in (0, 1, 3)
        doc = json.loads(out.read_text())
        session = Session.create(judged, runs_dir=services.runs_dir, cache_dir=services.resolved_cache_dir())
        try:
            assert session.run_id == doc["run_id"]
            shown = session.document(confidence=doc.get("confidence", 0.95), gate=doc.get("min_reliability"))
            assert _numbers(shown) == _numbers(doc)  # the TUI's numbers are the CLI's
            assert session.verification == "human" and session.prepared.config.verify_judge_model == "sim-judge"
            assert (doc.get("judge_assisted") or {}).get("n_judged", 0) > 0  # the judge had calibration items to verify
        finally:
            session.close()
        other = Session.create(plain, runs_dir=services.runs_dir, cache_dir=services.resolved_cache_dir())
        try:
            assert other.run_id != doc["run_id"]  # without the judge: another run
        finally:
            other.close()


def test_a_cli_run_reopened_keeps_its_verification_mode(incli, tmp_path: Path) -> None:
    from relgate_tui.demo.server import DemoServer

    server = DemoServer(port=0).start()
    try:
        args = ("certify", "--task", "bigbench-3digit-addition", "--endpoint", server.base_url, "--model", "sim-mid",
                "--limit", "10", "--k-max", "3", "--quiet", "--json", str(tmp_path / "h.json"))
        assert incli(tmp_path, *args, "--verification", "human").returncode in (0, 1, 3)
        human = json.loads((tmp_path / "h.json").read_text())
        assert incli(tmp_path, *args[:-1], str(tmp_path / "a.json")).returncode in (0, 1, 3)
        auto = json.loads((tmp_path / "a.json").read_text())
    finally:
        server.stop()
    assert human["run_id"] != auto["run_id"]
    run = next(p for p in Path(tmp_path).rglob("manifest.json") if p.parent.name == human["run_id"]).parent
    session = Session.open(run)
    try:
        assert session.verification == "human"
        assert _numbers(session.document()) == _numbers(human)
    finally:
        session.close()
