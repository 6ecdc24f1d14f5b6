"""An imported run has no verification judge, and can never get one (relgate asks a verification judge only about the
answers it samples): ``t`` on its Results (the judge certificate), its Verification judge tab and ``relgate judge
certify --run`` say so and say what can be done — certify a judge from a verdicts file — instead of "certify it with
--verify-judge-model". The advice is checked to work."""

from __future__ import annotations

import json
from pathlib import Path

from relgate_tui.cli import main
from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.importers.run import ImportOptions, import_file
from relgate_tui.tui.app import make_app
from relgate_tui.tui.judge.certificate import CertificateScreen
from relgate_tui.tui.results import ResultsScreen
from tests.tui.test_flow import wait_until

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"
ADVICE = "relgate judge certify --verdicts FILE"


async def test_t_on_an_imported_run_says_what_can_be_done(services, tmp_path: Path, capsys) -> None:
    run = import_file("inspect", FIXTURES / "inspect" / "addition_zstd.eval", None,
                      ImportOptions(run_dir=str(services.runs_dir))).run_path
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = Session.open(run, cache_dir=app.services.resolved_cache_dir())
        app.session = session
        results = ResultsScreen(session)
        app.push_screen(results)
        await pilot.pause()

        await pilot.press("a")  # the Verification judge tab
        tab = str(results.query_one("#assisted").render())
        assert "Imported from inspect's log, so it has no verification judge" in tab
        assert ADVICE in " ".join(tab.split()) and "--verify-judge-model" not in tab

        await pilot.press("t")  # the judge certificate of the run
        screen = app.screen
        assert isinstance(screen, CertificateScreen)
        await wait_until(pilot, lambda: "imported" in str(screen.query_one("#cert-sentence").render()),
                         what="the certificate's reason")
        sentence = str(screen.query_one("#cert-sentence").render())
        assert "imported from inspect's log, so it has no verification judge" in sentence and ADVICE in sentence
        assert "--verify-judge-model" not in sentence
        assert session.imported_tool == "inspect"
        session.close()

    # the command line says the same
    capsys.readouterr()
    assert main(["judge", "certify", "--run", str(run)]) == 2
    err = capsys.readouterr().err
    assert "imported from inspect's log, so it has no verification judge" in err and "--verify-judge-model" not in err

    # and the advice works: a verdicts file on the imported run's items certifies (here: too few labels to decide)
    ids = [it.id for it in session.prepared.items]
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps({"id": i, "p_yes": 0.9, "human": 1}) + "\n" for i in ids))
    assert main(["judge", "certify", "--verdicts", str(verdicts)]) == 3
    assert "NOT DECIDABLE" in capsys.readouterr().out
