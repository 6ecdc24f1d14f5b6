"""Judge audit setup (issue 31 item 25): the variant ticks read on and off without colour, and the plan gives the
total of judge answers that the results' calls (made + cached) add up to."""

from __future__ import annotations

from textual.widgets import Checkbox, Select, Static

from relgate_tui.tui.app import make_app


async def test_ticks_differ_without_colour_and_the_plan_has_a_total(services) -> None:
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("j")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        typo = screen.query_one("#var-typo", Checkbox)
        typo.value = False
        await pilot.pause()
        off = str(typo.render())
        typo.value = True
        await pilot.pause()
        on = str(typo.render())
        assert off != on and "✓" in on and "✓" not in off and "X" not in off
        screen.query_one("#protocol", Select).value = "both"
        await pilot.pause()
        plan = str(screen.query_one("#plan", Static).render())
        assert "in all" in plan and "calls made + cached add up to " in plan


async def test_the_judge_models_list_marks_only_the_ticked_ones(services) -> None:
    from textual.widgets import SelectionList

    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("j")
        await app.workers.wait_for_complete()
        await pilot.pause()
        judges = app.screen.query_one("#judges", SelectionList)
        assert judges.option_count >= 2 and len(judges.selected) == 1
        lines = [judges.render_line(y).text for y in range(judges.option_count)]
        marks = [line[1] for line in lines]
        assert marks.count("✓") == 1 and marks.count(" ") == judges.option_count - 1
