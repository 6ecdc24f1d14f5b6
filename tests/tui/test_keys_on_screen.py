"""Every key and message on screen at 80×24 and 120×40: the footers of Results, the spot-check and the judge
certificate show every key whole (or a ``? more keys`` item), Results lists ``a`` / ``t``, and the spot-check's last
message — ``j``'s verdict on the item just labelled, "saved: … ≠ automatic verdict" — is drawn on screen, not below
the window. "On screen" is read from what the compositor draws, not from a widget's (possibly clipped) region."""

from __future__ import annotations

import io
import json
import math
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets._footer import FooterKey

from relgate_tui.engine.certification.session import Session
from relgate_tui.tui.app import make_app
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.spotcheck import SpotCheckScreen
from relgate_tui.tui.widgets.footer import MORE_KEYS, KeysFooter, _Key, fit_keys
from tests.tui.runfixtures import stored_run
from tests.tui.test_flow import wait_until

SIZES = [(80, 24), (120, 40)]


def drawn(app) -> str:
    """The text the terminal shows now (what a screenshot shows)."""
    w, h = app.size
    console = Console(width=w, height=h, file=io.StringIO(), force_terminal=True, record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def footer_keys(app, width: int) -> dict[str, str]:
    """key → description of every footer key, each asserted whole and left of the palette's key."""
    keys = list(app.screen.query(FooterKey))
    palette = [k for k in keys if k.key == "ctrl+p"]
    limit = palette[0].region.x if palette else width
    out = {}
    for k in keys:
        if k.key == "ctrl+p":
            continue
        assert k.region.width > 0 and k.region.right <= limit, (k.key, k.region, limit)
        out[k.key] = k.description
    return out


async def settle(pilot) -> None:
    await pilot.pause()
    await pilot.pause()  # the footer lays itself out again once the bindings are known


@pytest.fixture(scope="module")
def judged_source(tmp_path_factory) -> Path:
    """A reference-less demo run with a verification judge (sim-judge), made once for the module."""
    from relgate_tui.cli import main
    from relgate_tui.demo.server import DemoServer

    root = tmp_path_factory.mktemp("judged")
    lines = Path(__file__).resolve().parents[2].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    task = root / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n"
                            for it in (json.loads(line) for line in lines[:40])))
    with pytest.MonkeyPatch.context() as mp, DemoServer() as server:
        mp.setenv("RELGATE_HOME", str(root / "home"))
        assert main(["certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid", "--canon",
                     "numeric", "--k-max", "5", "--quiet", "--run-dir", str(root / "runs"),
                     "--verify-judge-model", "sim-judge"]) == 0
    (run,) = list((root / "runs").iterdir())
    return run


@pytest.fixture
def judged_run(services, judged_source) -> Path:
    target = Path(services.runs_dir) / judged_source.name
    shutil.copytree(judged_source, target)
    return target


# ------------------------------------------------------------------------------------------------- the fitting rule
def _k(key: str, description: str) -> _Key:
    return _Key(key, {"escape": "esc", "question_mark": "?"}.get(key, key), description, key, True, "")


@pytest.mark.parametrize("width", [20, 40, 68, 108, 200])
def test_fit_keys_keeps_the_way_back_and_help_and_says_when_keys_are_left_out(width) -> None:
    keys = [_k(c, f"action {c}") for c in "abcdefghij"] + [_k("escape", "Back"), _k("question_mark", "Help")]
    shown, compact = fit_keys(keys, width)
    used = sum(len(k.display) + len(d) + (2 if compact else 3) for k, d in shown)
    assert used <= width or [k.key for k, _ in shown] == ["escape", "question_mark"]
    assert [k.key for k, _ in shown][-2:] == ["escape", "question_mark"]
    left_out = len(shown) < len(keys)
    assert (dict((k.key, d) for k, d in shown)["question_mark"] == MORE_KEYS) == left_out
    assert [k.key for k, _ in shown] == [k.key for k in keys if k in {s for s, _ in shown}]  # order kept


# ------------------------------------------------------------------------------------------------------ Results
@pytest.mark.parametrize("size", SIZES)
async def test_results_footer_shows_every_key_or_more_keys(services, size) -> None:
    path = stored_run(services.runs_dir)
    app = make_app(services)
    async with app.run_test(size=size) as pilot:
        session = Session.open(path)
        app.session = session
        app.push_screen(ResultsScreen(session, gate=0.9))
        await settle(pilot)
        assert isinstance(app.screen.query_one(KeysFooter), KeysFooter)
        keys = footer_keys(app, size[0])
        wanted = {"plus", "minus", "f", "l", "p", "d", "a", "t", "j", "c", "m", "escape", "question_mark"}
        if size[1] < 30:
            wanted.add("v")  # the validation grid is behind ``v`` under 30 rows
        assert {"escape", "question_mark"} <= set(keys)
        assert wanted <= set(keys) or keys["question_mark"] == MORE_KEYS, keys
        if size == (120, 40):
            assert wanted <= set(keys) and keys["question_mark"] == "Help"  # a and t on the footer, whole
        # the help panel behind "more keys" lists every key of the screen
        await pilot.press("question_mark")
        await pilot.pause()
        listed = {key for key, _desc in app.screen.screen_rows}
        assert {"a", "t", "v", "l", "j", "c", "m", "Esc"} <= listed, listed
        session.close()


async def test_results_layout_follows_a_resize_made_under_another_screen(services) -> None:
    """The resize layout: Results' gate text keeps its width after the terminal shrinks or grows while another
    screen (the judge certificate) is on top."""
    path = stored_run(services.runs_dir)
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = Session.open(path)
        app.session = session
        app.push_screen(ResultsScreen(session, gate=0.9))
        await settle(pilot)
        for size in ((80, 24), (120, 40)):
            await pilot.press("t")
            await pilot.pause()
            assert not isinstance(app.screen, ResultsScreen)
            await pilot.resize_terminal(*size)
            await pilot.pause()
            await pilot.press("escape")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, ResultsScreen)
            assert screen.query_one("#gate-box").region.width >= 40, size
            assert screen.query_one("#calls").display == (size[0] >= 110)
            footer_keys(app, size[0])
        session.close()


# --------------------------------------------------------------------------------------------------- spot-check
@pytest.mark.parametrize("size", SIZES)
async def test_spotcheck_with_a_judge_shows_j_and_every_key(services, judged_run, size) -> None:
    app = make_app(services)
    async with app.run_test(size=size) as pilot:
        session = Session.open(judged_run, cache_dir=app.services.resolved_cache_dir())
        app.session = session
        app.push_screen(SpotCheckScreen(session))
        await settle(pilot)
        screen = app.screen
        labelled = screen.current
        await pilot.press("y")
        await pilot.press("j")
        await settle(pilot)
        verdict = session.verify_verdict(labelled)
        assert verdict is not None
        text = drawn(app)
        assert f"judge on {labelled}:" in text
        # the run's own gate decides (none was set when it was made: Settings' gate is for new runs only)
        assert "no gate for this run" in text
        keys = footer_keys(app, size[0])
        assert {"y", "n", "x", "s", "u", "e", "j", "escape", "question_mark"} <= set(keys)
        session.close()


@pytest.mark.parametrize("size", SIZES)
async def test_audit_confirmation_is_on_screen(services, size) -> None:
    path = stored_run(services.runs_dir, verification="audit", model="audited")
    app = make_app(services)
    async with app.run_test(size=size) as pilot:
        session = Session.open(path)
        app.session = session
        app.push_screen(SpotCheckScreen(session))
        await settle(pilot)
        screen = app.screen
        item, auto = screen.current, screen.view.auto_score
        key = "x" if auto is not None and math.isfinite(auto) else "y"
        await pilot.press(key)
        await settle(pilot)
        asked = drawn(app)  # the question before a label that contradicts the reference, whole on screen
        assert "this contradicts the reference" in asked and f"press {key} again to keep it" in asked
        await pilot.press(key)
        await settle(pilot)
        assert "≠ automatic verdict" in screen.last_message
        text = drawn(app)
        assert f"saved: {item}" in text and "automatic verdict" in text.split(f"saved: {item}", 1)[1]
        session.close()


# ------------------------------------------------------------------------------------------------- certificate
@pytest.mark.parametrize("size", SIZES)
async def test_certificate_footer_and_title(services, tmp_path, size) -> None:
    from tests.tui.test_judge_certificate_screen import verdicts_file

    f = verdicts_file(tmp_path / "v.jsonl")
    app = make_app(services)
    async with app.run_test(size=size) as pilot:
        app.open_screen("judge_certificate", "verdicts", str(f))
        screen = app.screen
        await wait_until(pilot, lambda: screen.doc is not None, what="the certificate")
        await settle(pilot)
        assert screen.sub_title.startswith("judge certificate · verdicts file ")
        assert {"plus", "minus", "s", "escape", "question_mark"} <= set(footer_keys(app, size[0]))


# ---------------------------------------------------------------------------------------------------- snapshots
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_snapshot_results(services, snap_compare, size) -> None:
    path = stored_run(services.runs_dir)

    async def run_before(pilot) -> None:
        session = Session.open(path)
        pilot.app.session = session
        pilot.app.push_screen(ResultsScreen(session, gate=0.9))
        await settle(pilot)

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_snapshot_spotcheck_with_a_judge(services, judged_run, snap_compare, size) -> None:
    async def run_before(pilot) -> None:
        app = pilot.app
        app.settings = type(app.settings)(**{**app.settings.__dict__, "gate": 0.5})
        session = Session.open(judged_run, cache_dir=app.services.resolved_cache_dir())
        app.session = session
        app.push_screen(SpotCheckScreen(session))
        await settle(pilot)
        await pilot.press("y", "j")
        await settle(pilot)

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_snapshot_certificate(services, snap_compare, tmp_path, size) -> None:
    from tests.tui.test_judge_certificate_screen import verdicts_file

    f = verdicts_file(tmp_path / "verdicts.jsonl")

    async def run_before(pilot) -> None:
        pilot.app.open_screen("judge_certificate", "verdicts", str(f))
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.doc is not None, what="the certificate")
        await settle(pilot)

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=size)


async def test_a_skip_is_not_counted_as_verified(services) -> None:
    """The progress line counted a skip among the verified ("3 of 20 verified here, 1 skipped"): now "3 of 20 done
    here: 2 verified, 1 skipped"."""
    path = stored_run(services.runs_dir)
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = Session.open(path)
        app.session = session
        app.push_screen(SpotCheckScreen(session))
        await settle(pilot)
        await pilot.press("y", "y", "s")
        await settle(pilot)
        progress = str(app.screen.query_one("#progress").render())
        assert "3 of 20 done here: 2 verified, 1 skipped" in progress and "3 of 20 verified" not in progress
        session.close()


@pytest.mark.parametrize("size", SIZES)
async def test_export_toast_shows_the_whole_file_name(services, size) -> None:
    path = stored_run(services.runs_dir)
    app = make_app(services)
    async with app.run_test(size=size, notifications=True) as pilot:
        session = Session.open(path)
        app.session = session
        app.push_screen(ResultsScreen(session, gate=0.9))
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        exported = Path(app.screen.exported["md"])
        assert exported.is_file()
        lines = drawn(app).splitlines()
        assert any(exported.name in line for line in lines), exported.name  # whole, on one line
        session.close()
