"""A run in one file (issue 24 §8): the TUI's Setup saves a run config (ctrl+o), ``relgate certify --config`` runs
it headless as the same run (same run id); every key is a certify flag and the command line wins."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.widgets import Input

from relgate_tui.cli import main
from relgate_tui.engine.certification.certify import CertifyConfig
from relgate_tui.engine.certification.run_config import CONFIG_KEYS, load_run_config, run_config_text
from relgate_tui.engine.certification.session import Session
from relgate_tui.errors import UserError
from relgate_tui.tui.app import make_app
from relgate_tui.tui.setup import SetupScreen
from tests.tui.test_flow import open_screen


async def test_a_config_saved_by_the_tui_runs_headless_as_the_same_run(services, tmp_path: Path) -> None:
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_screen(app, pilot, "n", SetupScreen)
        for field, value in (("limit", "6"), ("k-max", "3"), ("seed", "5"), ("temperature", "0.9")):
            screen.query_one(f"#{field}", Input).value = value
        await pilot.pause()
        await pilot.press("ctrl+o")
        await pilot.pause()
        (path,) = (services.runs_dir.parent / "configs").glob("*.toml")
        keys = load_run_config(path)
        assert keys["limit"] == 6 and keys["k-max"] == 3 and keys["seed"] == 5 and keys["temperature"] == 0.9
        assert keys["min-reliability"] == app.settings.gate  # the Settings gate travels with the run
        setup = screen.collect()
        out = tmp_path / "doc.json"
        code = await asyncio.to_thread(main, ["certify", "--config", str(path), "--quiet", "--json", str(out)])
        assert code in (0, 1)
        doc = json.loads(out.read_text())
        session = Session.create(setup, runs_dir=services.runs_dir, cache_dir=services.resolved_cache_dir())
        try:
            assert session.run_id == doc["run_id"]  # the TUI would start (here: resume) the very same run
            assert doc["k_max"] == 3 and doc["task"]["items"] == 6
        finally:
            session.close()


def test_flags_win_over_the_file_and_bad_files_are_one_line_errors(tmp_path: Path, capsys) -> None:
    cfg = CertifyConfig(task="bigbench-3digit-addition", endpoint="http://127.0.0.1:9/v1", model="m", k_max=7,
                        limit=4, system='say "hi"\nthen stop', min_reliability=0.8)
    path = tmp_path / "run.toml"
    path.write_text(run_config_text(cfg))
    values = load_run_config(path)
    assert values == {"task": "bigbench-3digit-addition", "endpoint": "http://127.0.0.1:9/v1", "model": "m",
                      "system": 'say "hi"\nthen stop', "k-max": 7, "min-reliability": 0.8, "limit": 4}
    assert set(values) <= set(CONFIG_KEYS)
    underscored = tmp_path / "u.toml"
    underscored.write_text('task = "t"\nk_max = 3\n')
    assert load_run_config(underscored) == {"task": "t", "k-max": 3}

    for text, needle in (('tsak = "x"\n', "unknown key 'tsak'"), ("k-max = [1]\n", "must be a string or a number"),
                         ("k-max = \n", "not valid TOML"), ('quiet = "yes"\n', "true or false")):
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        with pytest.raises(UserError, match=needle):
            load_run_config(bad)
        assert main(["certify", "--config", str(bad)]) == 2
        assert capsys.readouterr().err.count("\n") == 1
    assert main(["certify", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "no such file" in capsys.readouterr().err
    # a flag on the command line wins: k-max 0 is refused by certify's own check, the file's 7 is not used
    assert main(["certify", "--config", str(path), "--k-max", "0"]) == 2
    assert "--k-max must be an integer in [1, 1000], got 0" in capsys.readouterr().err
