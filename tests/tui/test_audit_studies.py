"""Papers 001 and 002 from the judge audit screen (issue 12 item 6): ``i`` opens the Intervals view and ``r`` the
IRT view of the audit on show, built from the stored audit exactly as ``judge-intervals --audit`` / ``judge-irt
--audit`` build them; Escape cancels an intervals study at its next seed; an audit that cannot give a study shows a
one-line notice and opens nothing.

The stored audit (one simulated judge, two prompt variants, log-probs) is made once per module by the CLI against
the demo server, which is closed before any test reads it: reading it makes no model call.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from relgate_tui.cli import main
from relgate_tui.core.judge_intervals import study as iv_study
from relgate_tui.core.judge_intervals.study import run_study
from relgate_tui.demo import DemoServer
from relgate_tui.engine.judging import list_audits
from relgate_tui.engine.judging.as_scores import audit_scores
from relgate_tui.engine.judging.studies import audit_input, build_study, document
from relgate_tui.engine.judging.variants import DIRECT_TEMPLATE
from relgate_tui.tui.app import make_app
from relgate_tui.tui.judge import JudgeScreen, audit_studies
from relgate_tui.tui.studies.intervals import IntervalsView
from relgate_tui.tui.studies.irt import IRTView
from tests.tui.studyfixtures import HeldProgress
from tests.tui.test_flow import wait_until
from tests.tui.test_judge import run_audit

SIZE = (120, 40)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("audit_studies")
    variant = home / "strict.txt"
    variant.write_text(DIRECT_TEMPLATE.replace("{{definition}}", "Definition of {{criterion}}: {{description}} "
                                                                 "Be strict.\n"))
    with pytest.MonkeyPatch.context() as mp, DemoServer() as demo:
        mp.setenv("RELGATE_HOME", str(home))
        rc = main(["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                   "--model", "sim-judge-long", "--variant", f"strict={variant}", "--protocol", "direct",
                   "--reps", "1", "--top-logprobs", "5", "--inputs", "8", "--candidates", "5", "--seed", "2",
                   "--json", str(home / "audit.json")])
    assert rc == 0
    (summary,) = list_audits(home / "audits")
    return Path(summary.path)


async def _reopen(app, pilot, path: Path) -> JudgeScreen:
    screen = JudgeScreen(None, reopen=path)
    app.push_screen(screen)
    await wait_until(pilot, lambda: screen.state == "results", what="the reopened audit")
    await pilot.pause()
    return screen


async def test_i_and_r_open_the_studies_of_a_stored_audit(services, stored: Path, monkeypatch) -> None:
    monkeypatch.setattr(audit_studies, "SEEDS", 3)
    monkeypatch.setattr(audit_studies, "METHODS", ("cqr", "r2ccp", "ordinal-aps"))  # fast ones, for the test's time
    audit = audit_scores(stored)
    services.embedded_demo = False
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _reopen(app, pilot, stored)
        await pilot.press("n")  # the second judge × variant: sim-judge-long [strict]
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, IntervalsView), what="the intervals view")
        view = app.screen
        assert isinstance(view, IntervalsView) and view.audit is not None
        labels = view.result.labels
        assert (labels["judge"], labels["variant"], labels["audit"]) == ("sim-judge-long", "strict", audit.audit_id)
        assert [m.name for m in view.result.methods] == ["cqr", "r2ccp", "ordinal-aps"]
        assert view.result.seeds == (1, 2, 3)
        assert view.export_dir == screen.export_folder()
        # the same study as `relgate judge-intervals --audit … --judge sim-judge-long --variant strict`
        inp, lab = audit_input(audit, judge="sim-judge-long", criterion=None, variant="strict", grid="auto",
                               alpha=0.1)
        expected = run_study(inp, methods=[m.name for m in view.result.methods], seeds=range(1, 4), labels=lab)
        assert _same_but_seconds(view.result, expected)
        await pilot.press("j")
        doc = json.loads(view.exported[0].read_text(encoding="utf-8"))
        assert doc["audit"] == audit.to_json() and doc["n_items"] == inp.n
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and screen.state == "results"
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, IRTView), what="the IRT view")
        irt = app.screen
        assert isinstance(irt, IRTView)
        assert [j.judge for j in irt.result.judges] == ["sim-judge-long"]
        assert set(irt.result.judges[0].fit.items) == {"original", "strict"}
        table = irt.query_one("#irt-table")
        for variant in ("original", "strict"):  # issue 24 §3: the unparseable share per judge × variant
            bad, total = audit.unparseable_by[("sim-judge-long", variant)]
            assert total == 8 * 5 and str(table.get_cell(f"unparseable {variant}", "j0")) == f"{bad} of {total}"
        await pilot.press("j")
        doc = json.loads(irt.exported[0].read_text(encoding="utf-8"))
        ref = document(build_study(audit.table, judge=None, criterion=None, prior="mml", original="original"),
                       None, audit)
        assert doc["audit"] == ref["audit"] and "ratings_file" not in doc and doc["c_v"] == pytest.approx(ref["c_v"])


def _same_but_seconds(a, b) -> bool:
    """Equal up to the measured seconds per run (wall-clock, not a result)."""
    def strip(doc):
        for m in doc["methods"].values():
            m.pop("seconds_mean")
        return doc
    return strip(a.to_json()) == strip(b.to_json())


async def test_escape_cancels_the_audit_intervals_at_the_next_seed(services, stored: Path, monkeypatch) -> None:
    monkeypatch.setattr(audit_studies, "SEEDS", 3)
    hold = HeldProgress()
    started, release, raised = hold.started, hold.release, hold.raised
    real = audit_studies.intervals_of_audit

    def held(path, judge, variant, alpha, progress=None):
        return real(path, judge, variant, alpha, hold.wrap(progress))

    monkeypatch.setattr(audit_studies, "intervals_of_audit", held)
    seen_methods: list[int] = []
    real_run = iv_study.run_study

    def counting(inp, **kw):
        seen_methods.append(len(kw["methods"]))
        return real_run(inp, **kw)

    monkeypatch.setattr(iv_study, "run_study", counting)
    services.embedded_demo = False
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _reopen(app, pilot, stored)
        await pilot.press("i")
        await wait_until(pilot, started.is_set, what="the first seed")
        assert audit_studies.running(screen) and "Escape cancels" in screen.sub_title
        await pilot.press("i")  # a second request while one runs starts nothing
        await pilot.press("escape")  # cancels the study; the screen stays on the results
        await pilot.pause()
        assert app.screen is screen and screen.state == "results" and not audit_studies.running(screen)
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(raised) == 1 and app.screen is screen and "view" not in screen.audit_study
        assert seen_methods == [9]  # by default all nine methods (cancelled after the first seed)
        await pilot.press("escape")  # nothing runs now: Escape leaves the reopened audit
        await pilot.pause()
        assert app.screen is not screen


async def test_an_audit_without_logprobs_or_variants_gives_one_line_notices(services) -> None:
    """A TUI audit with top log-probs 0 and one prompt variant: both keys explain why (the first naming the setup's
    field), and nothing opens."""
    app = make_app(services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await run_audit(app, pilot, "direct", **{"top-logprobs": "0"})
        assert audit_studies.stored_audit(screen).is_dir()  # where the finished audit was stored
        for key, expected in (("i", "no score-token log-probabilities stored (paper 001 needs them): set 'top "
                                    "log-probs' to 5 under Direct scores in the judge setup"),
                              ("r", "needs several prompt variants")):
            before = len(list(app._notifications))
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
            notes = [n for n in list(app._notifications)[before:]]
            assert len(notes) == 1 and expected in notes[0].message and "\n" not in notes[0].message
            assert app.screen is screen


def test_an_unstored_audit_is_refused_in_one_line() -> None:
    from relgate_tui.errors import UserError

    fake = SimpleNamespace(reopen=None, config=SimpleNamespace(store=False))
    with pytest.raises(UserError, match="not stored"):
        audit_studies.stored_audit(fake)


@pytest.fixture(scope="module")
def jury_audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stored direct audit of three simulated judges on 60 items (a pool for the jury: its 60/20/20 protocol
    needs at least 50)."""
    home = tmp_path_factory.mktemp("jury_audit")
    with pytest.MonkeyPatch.context() as mp, DemoServer() as demo:
        mp.setenv("RELGATE_HOME", str(home))
        assert main(["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                     "--model", "sim-judge", "--judge", "model=sim-judge-long", "--judge", "model=sim-judge-short",
                     "--protocol", "direct", "--reps", "1", "--top-logprobs", "5", "--inputs", "12",
                     "--candidates", "5", "--seed", "4", "--json", str(home / "a.json")]) == 0
    (summary,) = list_audits(home / "audits")
    return Path(summary.path)


async def test_y_opens_the_jury_of_an_audit_with_several_judges(services, jury_audit: Path, monkeypatch) -> None:
    """Issue 24 §6: the audit results reach paper 003's study too (y), as `relgate jury --audit` computes it."""
    from relgate_tui.engine.judging.studies import build_data
    from relgate_tui.tui.studies.jury import JuryView

    monkeypatch.setattr(audit_studies, "JURY_SPLITS", 2)  # the test's time: two splits
    services.embedded_demo = False
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        await _reopen(app, pilot, jury_audit)
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, JuryView), what="the jury view")
        await pilot.pause()  # the view's header mounts before the app may close
        view = app.screen
        data, _texts = build_data(audit_scores(jury_audit).table, None)
        assert sorted(view.result.judges) == sorted(data.judges) == ["sim-judge", "sim-judge-long", "sim-judge-short"]
        assert view.result.splits == 2 and len(view.result.k_per_split) == 2
        await pilot.press("escape")
        await pilot.pause()
