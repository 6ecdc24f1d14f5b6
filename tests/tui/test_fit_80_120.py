"""Nothing cut at 80×24 or 120×40 (issue 31 item 17): Home's footer keys, Setup's labels, Compare's run names and
paired-gate line are whole on screen."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Label
from textual.widgets._footer import FooterKey

from relgate_tui.tui.app import make_app
from relgate_tui.tui.compare import CompareScreen
from relgate_tui.tui.setup import SetupScreen
from tests.tui.runfixtures import stored_run

SIZES = [(80, 24), (120, 40)]


def _whole_footer(keys: dict, width: int) -> None:
    """Every footer key on screen, none under the palette's key (which sits at the right end)."""
    palette = keys.pop("ctrl+p", None)
    limit = palette.region.x if palette is not None else width
    for key in keys.values():
        assert key.region.width > 0 and key.region.right <= limit, (key.key, key.region, limit)


@pytest.mark.parametrize("size", SIZES)
async def test_home_footer_keys_fit(services, size) -> None:
    app = make_app(services)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        keys = {k.key: k for k in app.screen.query(FooterKey)}
        assert {"n", "o", "v", "j", "t", "s", "q"} <= set(keys)
        _whole_footer(keys, size[0])


@pytest.mark.parametrize("size", SIZES)
async def test_runs_footer_keys_fit(services, size) -> None:
    stored_run(services.runs_dir)
    app = make_app(services)
    async with app.run_test(size=size) as pilot:
        await pilot.press("o")
        await app.workers.wait_for_complete()
        await pilot.pause()
        keys = {k.key: k for k in app.screen.query(FooterKey)}
        assert {"o", "r", "space", "c", "p", "i"} <= set(keys)
        _whole_footer(keys, size[0])


@pytest.mark.parametrize("size", SIZES)
async def test_setup_labels_are_whole_and_named_once(services, size) -> None:
    app = make_app(services)
    async with app.run_test(size=size) as pilot:
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        labels = [lab for lab in screen.query("#form Label") if lab.display and lab.region.width]
        assert any(str(lab.render()).startswith("Judges") for lab in labels)  # section titles too
        texts = [str(lab.render()) for lab in labels]
        for lab, text in zip(labels, texts, strict=True):
            assert len(text) <= lab.region.width, text  # no label cut ("judge 3", "verification" twice)
        assert texts.count("verification") == 1


@pytest.mark.parametrize("size", SIZES)
async def test_compare_names_and_paired_gate_line_are_whole(services, size) -> None:
    a = stored_run(services.runs_dir, model="qwen2.5-coder-0.5b-instruct-q4_k_m")
    b = stored_run(services.runs_dir, model="qwen2.5-coder-1.5b-instruct-q4_k_m", seed=1)
    app = make_app(services)
    async with app.run_test(size=size) as pilot:
        app.push_screen(CompareScreen([a, b]))
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#compare", DataTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        for column in table.ordered_columns:
            assert column.get_render_width(table) >= len(column.label.plain) + 2
        for i, session in enumerate(screen.sessions):  # the run id (and the model) whole, folded over lines
            assert str(table.get_cell("run", f"run{i}")) == session.run_id
            width = table.ordered_columns[i + 1].get_render_width(table) - 2
            lines = -(-len(session.run_id) // width)
            row = next(r for k, r in table.rows.items() if k.value == "run")
            assert row.height >= lines
        paired = screen.query_one("#compare-paired", Label)
        text = str(paired.render())
        assert "paired items" in text
        assert paired.region.height >= -(-len(text) // (size[0] - 2))  # wrapped, never cut
