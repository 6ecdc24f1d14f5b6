"""Issue 37 §3: the gate belongs to the run. Setup writes the run's threshold, basis, confidence, one-look plan and the
judge-assisted bound's population into its config (prefilled from Settings, defaults for new runs only), and the
form's option fields are the option table's (``engine/certification/options.py``)."""

from __future__ import annotations

import tomllib

from textual.widgets import Input, Select

from relgate_tui.cli import build_parser
from relgate_tui.commands.certify import config_of
from relgate_tui.engine.certification.options import setup_fields
from relgate_tui.engine.certification.run_config import config_argv, load_run_config
from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.certification.setup import certify_config
from relgate_tui.tui.app import make_app
from tests.tui.test_flow import wait_until
from tests.tui.test_setup import open_setup


async def test_setup_makes_a_one_look_a_population_items_and_an_assisted_gate_run(services, tmp_path):
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        app.settings = type(app.settings)(**{**app.settings.__dict__, "gate": 0.8, "confidence": 0.9})
        setup = await open_setup(app, pilot)
        # the gate fields, prefilled from Settings (a new run's defaults)
        assert setup.query_one("#min-reliability", Input).value == "0.8"
        assert setup.query_one("#confidence", Input).value == "0.9"
        assert setup.query_one("#gate-on", Select).value == "auto"
        setup.query_one("#task", Select).value = "arithmetic-unreferenced"
        verify = setup.query_one("#verify-judge-model", Select)
        await wait_until(pilot, lambda: any(v == "sim-judge" for _, v in verify._options), what="judge models")
        verify.value = "sim-judge"
        setup.query_one("#limit", Input).value = "20"
        setup.query_one("#one-look", Input).value = "10"
        setup.query_one("#population", Select).value = "items"
        setup.query_one("#gate-on", Select).value = "assisted"
        await pilot.pause()
        chosen = setup.collect()
        assert (chosen.min_reliability, chosen.confidence, chosen.gate_on, chosen.one_look, chosen.population) == \
            (0.8, 0.9, "assisted", 10, "items")
        session = Session.create(chosen, runs_dir=services.runs_dir)
        try:
            cfg = session.config
            assert (cfg.min_reliability, cfg.confidence, cfg.gate_on, cfg.one_look, cfg.population) == \
                (0.8, 0.9, "assisted", 10, "items")
            assert (session.gate.threshold, session.gate.gate_on, session.gate.confidence) == (0.8, "assisted", 0.9)
        finally:
            session.close()
        # Save config: the headless command is the same run (its config, so its id)
        path = app.save_run_config(chosen)
        assert path is not None
        keys = tomllib.loads(path.read_text())
        assert (keys["one-look"], keys["population"], keys["gate-on"], keys["min-reliability"]) == \
            (10, "items", "assisted", 0.8)
        headless = config_of(build_parser().parse_args(["certify", *config_argv(load_run_config(path))]))
        assert headless == certify_config(chosen, None)
        # the gate basis left on "auto": the judge-assisted bound with a verification judge, as relgate certify's
        setup.query_one("#gate-on", Select).value = "auto"
        await pilot.pause()
        assert certify_config(setup.collect(), None).gate_on == "assisted"
        verify.value = "__none__"
        await pilot.pause()
        assert certify_config(setup.collect(), None).gate_on == "bound"


async def test_a_bad_gate_field_is_one_line_naming_it(services):
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        setup = await open_setup(app, pilot)
        for wid, text, words in (("min-reliability", "1.5", "gate threshold must be ≤ 1"),
                                 ("one-look", "0", "one-look labels must be ≥ 1"),
                                 ("confidence", "x", "confidence: 'x' is not a number")):
            field = setup.query_one(f"#{wid}", Input)
            old, field.value = field.value, text
            await pilot.pause()
            try:
                setup.collect()
            except ValueError as exc:
                assert words in str(exc) and "\n" not in str(exc)
            else:
                raise AssertionError(f"{wid} = {text!r} was accepted")
            field.value = old
        assert [wid for _, wid, _ in setup_fields("gate")] == ["min-reliability", "gate-on", "confidence",
                                                                "one-look", "population"]
