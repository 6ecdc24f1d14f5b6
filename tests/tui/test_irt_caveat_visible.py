"""The IRT view shows the small-sample caveat where it is seen (issue 31 item 9): first in the diagnosis (which is
cut after 9 lines), and the Phase 1 row says its marks are indications."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from relgate_tui.tui.app import make_app
from relgate_tui.tui.studies import open_study_view
from tests.tui.studyfixtures import irt_study


async def test_the_small_sample_caveat_is_on_screen(services, tmp_path: Path) -> None:
    app = make_app(services)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(open_study_view(irt_study(), "simulated · coherence", source="sim.jsonl", export_dir=tmp_path))
        await pilot.pause()
        diagnosis = app.screen.query_one("#irt-diagnosis", Static)
        lines = str(diagnosis.render()).splitlines()
        assert lines[0].startswith("caveat: small sample: n = 150")
        table = app.screen.query_one("#irt-table", DataTable)
        assert str(table.get_row("Phase 1")[0]) == "Phase 1 (indication)"


async def test_a_small_sample_does_not_advise_fixing_the_prompt(services, tmp_path: Path) -> None:
    """The caveat says the Phase 1 marks are indications at n = 150 (C_V biased upward), so the diagnosis no longer
    tells every judge to "fix the prompt …, not the model": it says the C_V excess may be the small sample."""
    study = irt_study()
    assert all("fix the prompt" in j.phase1_sentence for j in study.judges)  # what the core says at any n
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(open_study_view(study, "simulated · coherence", source="sim.jsonl", export_dir=tmp_path))
        await pilot.pause()
        text = " ".join(str(app.screen.query_one("#irt-diagnosis", Static).render()).split())
        assert "fix the prompt" not in text
        assert text.count("at n = 150 C_V is biased upward (the caveat above), so this may be the small sample") == 2
