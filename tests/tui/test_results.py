"""Results screen: α changes recompute everything, filters, item samples, export, back to spot-check."""

from __future__ import annotations

import json
import math

import pytest
from textual.widgets import DataTable, Digits

from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.runs.store import Label, RunStore
from relgate_tui.tui.app import make_app
from relgate_tui.tui.itemsamples import ItemSamplesModal
from relgate_tui.tui.results import ResultsScreen
from tests.tui.runfixtures import stored_run


@pytest.fixture
def labelled_run(services):
    """A stored run whose calibration items all carry a human verdict: the rank of the reference answer."""
    return _label_all(stored_run(services.runs_dir))


def _label_all(path):
    session = Session.open(path)
    for item_id in session.pending_items():
        view = session.item_view(item_id)
        ranks = [c.rank for c in view.candidates if c.answer in view.references]
        if ranks:
            session.label(item_id, rank=ranks[0])
        else:
            session.label(item_id, none=True)
    session.close()
    return path


async def _open_results(app, pilot, path, dismissed, gate=0.9):
    session = Session.open(path)
    app.session = session
    app.push_screen(ResultsScreen(session, gate=gate), callback=dismissed.append)
    await pilot.pause()
    return session


async def test_alpha_keys_recompute_m_star_and_sets(services, labelled_run):
    app = make_app(services)
    dismissed: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_results(app, pilot, labelled_run, dismissed)
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        r = screen.view.result
        assert screen.alpha == 0.10 and r.n == 20
        # the screen shows the core's numbers
        assert str(screen.query_one("#level", Digits).value) == f"{r.reliability_level:.3f}"
        expected = session.results(0.10).result
        assert (r.m_star, r.reliability_level, r.k) == (expected.m_star, expected.reliability_level, expected.k)

        seen = {}
        for _ in range(10):
            await pilot.press("plus")
            seen[screen.alpha] = screen.view.result.m_star
        assert screen.alpha == 0.20
        for _ in range(21):
            await pilot.press("minus")
            seen[screen.alpha] = screen.view.result.m_star
        assert screen.alpha == 0.01  # clamped
        assert math.isinf(screen.view.result.m_star)  # n = 20 < 1/α − 1: the trivial set
        assert "need" in str(screen.query_one("#message").content)
        # M* is non-increasing in α, and each value is the core's
        alphas = sorted(seen)
        ms = [seen[a] for a in alphas]
        assert all(a >= b for a, b in zip(ms, ms[1:]))
        for a in alphas[::4]:
            assert seen[a] == session.results(a).result.m_star
        session.close()


async def test_filters_enter_and_export(services, labelled_run):
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_results(app, pilot, labelled_run, [])
        screen = app.screen
        table = screen.query_one("#items", DataTable)
        assert table.row_count == 40
        counts = {}
        for name in ("misses", "large sets", "ties", "all"):
            await pilot.press("f")
            counts[name] = table.row_count
            rows = screen._rows()
            if name == "misses":
                assert all(r.covered == 0 for r in rows)
            elif name == "large sets":
                assert all(len(r.prediction_set) >= 2 for r in rows)
            elif name == "ties":
                assert all(r.tie_broken for r in rows)
        assert counts["all"] == 40 and counts["misses"] >= 1
        await pilot.press("enter")
        assert isinstance(app.screen, ItemSamplesModal)
        await pilot.press("escape")

        for key, fmt in (("j", "json"), ("c", "csv"), ("m", "md")):
            await pilot.press(key)
        paths = {fmt: screen.exported[fmt] for fmt in ("json", "csv", "md")}
        doc = json.loads(open(paths["json"]).read())
        assert doc["alpha"] == 0.10 and doc["n_cal"] == 20
        assert doc["reliability_level"] == pytest.approx(screen.view.result.reliability_level)
        assert open(paths["csv"]).read().count("\n") == 41
        assert "Reliability" in open(paths["md"]).read() or "reliability" in open(paths["md"]).read()
        # the run was only viewed (its verdicts came from an earlier session): results.json is not rewritten
        assert RunStore(labelled_run).read_results() is None
        session.close()


async def test_l_goes_back_to_the_spot_check_when_items_are_pending(services):
    path = stored_run(services.runs_dir)
    app = make_app(services)
    dismissed: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_results(app, pilot, path, dismissed)
        assert app.screen.view.result.n_pending == 20
        await pilot.press("l")
        await pilot.pause()
        assert dismissed == ["spotcheck"]
        session.close()


async def test_gate_pass_and_fail(services, labelled_run):
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_results(app, pilot, labelled_run, [], gate=0.0)
        assert app.screen.view.result.passed is True
        assert "PASS" in str(app.screen.query_one("#verdict").content)
        app.pop_screen()
        session.close()  # one process holds a run's write lock at a time
        session = await _open_results(app, pilot, labelled_run, [], gate=1.0)
        assert app.screen.view.result.passed is False
        assert "FAIL" in str(app.screen.query_one("#verdict").content)
        session.close()


def test_labels_fixture_is_what_the_screen_reads(labelled_run):
    labels = RunStore(labelled_run).current_labels()
    assert len(labels) == 20 and all(isinstance(v, Label) and v.source == "human" for v in labels.values())


async def test_gate_readouts_show_both_numbers_confidence_and_section_3_6(services, labelled_run):
    """Issue 11 §4: the verdict names the gate's basis and shows both numbers, labels use the confidence the run was
    made with (issue 37 §3: not Settings'), and the bootstrap intervals and 100-split stability appear."""
    app = make_app(services)
    async with app.run_test(size=(140, 50)) as pilot:
        app.settings = type(app.settings)(**{**app.settings.__dict__, "confidence": 0.8})  # the run's own wins
        own = _label_all(stored_run(services.runs_dir, seed=1, min_reliability=0.5, confidence=0.9))
        session = await _open_results(app, pilot, own, [], gate=None)
        r = app.screen.view.result
        assert r.gate_on == "bound" and r.confidence == 0.9
        verdict = str(app.screen.query_one("#verdict").content)
        assert "90% anytime lower bound" in verdict and "level" in verdict  # labelled by a person: watched (issue 33)
        assert "with 90% confidence" in str(app.screen.query_one("#bound").content)
        validation = app.screen.query_one("#validation")
        lines = [str(line) for line in app.screen._extra_lines(r)]
        assert any("samples/item" in x and "bootstrap, B = 10,000" in x for x in lines)
        assert any(x.startswith("100 random splits") for x in lines)
        assert any(x.startswith("adaptive sets (eq. 6.7): q̂ = ") for x in lines) and r.adaptive is not None
        assert validation.size.height >= 3 + len(lines)  # title, two rows of metrics, then these lines
        session.close()


async def test_a_samples_file_damaged_while_the_run_is_open_is_a_notice_not_a_crash(services, labelled_run):
    """The run was opened (from its sample index); then samples.jsonl is rewritten with a corrupt first line. Enter on
    an item cannot read its texts: one error notice naming the file, the results stay on screen."""
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_results(app, pilot, labelled_run, [])
        screen = app.screen
        samples = labelled_run / "samples.jsonl"
        samples.write_bytes(b"\x00corrupt\n" + samples.read_bytes())
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen and not isinstance(app.screen, ItemSamplesModal)
        notes = [n for n in app._notifications if n.title == "Cannot show this item"]
        assert len(notes) == 1 and "samples.jsonl" in notes[0].message and "\n" not in notes[0].message
        session.close()


async def test_a_what_if_gate_is_labelled_and_never_written(services):
    """Issue 37 §3: Results decides a run against its own gate; a "what if the gate were …" view says so and the run's
    results.json keeps the run's gate (here the session labelled the run, so Results writes the file)."""
    import json

    path = stored_run(services.runs_dir, seed=2, min_reliability=0.9)
    session = Session.open(path)
    for item_id in session.pending_items()[:5]:
        session.label(item_id, none=True)
    app = make_app(services)
    async with app.run_test(size=(140, 50)) as pilot:
        app.session = session
        app.push_screen(ResultsScreen(session, gate=0.5))
        await pilot.pause()
        screen = app.screen
        verdict = str(screen.query_one("#verdict").content)
        assert screen.what_if and "what if the gate were 50% (bound); this run's: 90% (bound)" in verdict
        assert "gate 50.0%" in verdict
        doc = json.loads((path / "results.json").read_text())
        assert doc["min_reliability"] == doc["gate"]["threshold"] == 0.9
        session.close()
