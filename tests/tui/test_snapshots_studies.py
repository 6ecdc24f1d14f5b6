"""SVG snapshots of the study views (``pytest --snapshot-update`` after a deliberate UI change). The studies are
computed from fixed-seed simulations (tests/tui/studyfixtures.py), so every number shown is deterministic."""

from __future__ import annotations

from pathlib import Path

from relgate_tui.tui.app import make_app
from relgate_tui.tui.studies import open_study_view
from tests.tui.studyfixtures import irt_study, jury_pool, jury_study

SIZE = (120, 40)


def test_irt_view(services, snap_compare, tmp_path: Path):
    async def run_before(pilot):
        pilot.app.push_screen(open_study_view(irt_study(), "simulated · coherence", source="sim.jsonl",
                                              export_dir=tmp_path))
        await pilot.pause()
        await pilot.press("v")

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_jury_view(services, snap_compare, tmp_path: Path):
    async def run_before(pilot):
        pilot.app.push_screen(open_study_view(jury_study(), "simulated pool · quality", source="pool.jsonl",
                                              export_dir=tmp_path, data=jury_pool()[0]))
        await pilot.pause()
        await pilot.press("down", "enter")

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_intervals_view(services, snap_compare, tmp_path: Path):
    """Seconds per run are wall-clock: fixed here so that the snapshot shows only deterministic numbers."""
    import dataclasses

    from tests.tui.studyfixtures import intervals_input, intervals_study

    study = intervals_study()
    study = dataclasses.replace(study, methods=tuple(dataclasses.replace(m, seconds_mean=0.01) for m in study.methods))

    async def run_before(pilot):
        pilot.app.push_screen(open_study_view(study, "simulated · coherence", source="sim.jsonl",
                                              export_dir=tmp_path, data=intervals_input()))
        await pilot.pause()
        await pilot.press("n", "a")

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)
