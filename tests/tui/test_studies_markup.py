"""Issue 29 (markup): judge and criterion names in the Intervals, IRT and Jury views are shown literally — Rich
markup such as ``[red]``, ``[@click=app.quit]`` or ``[link=…]`` is never interpreted, so no name can restyle the
screen, bind a click to an action or plant a hyperlink. Every rendered widget of each view is scanned."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from relgate_tui.core.irt.study import run_irt_study
from relgate_tui.core.jury.study import run_jury_study
from relgate_tui.tui.app import make_app
from relgate_tui.tui.studies import open_study_view
from tests.tui.studyfixtures import FAST_TEST_METHODS, intervals_input, irt_ratings, jury_pool

NAMES = ("[red]judge-a[/red]", "[@click=app.quit]judge-b[/]", "[link=https://evil.example]judge-c[/link]")
CRITERION = "[@click=app.bell]crit[/]"
SIZE = (160, 50)


def _texts(view: Any) -> list[Text]:
    """Every piece of text the view shows: each Static / Label rendered, each DataTable cell and column label."""
    out: list[Text] = []
    for w in view.query("*"):
        if isinstance(w, DataTable):
            for col in w.columns.values():
                out.append(col.label if isinstance(col.label, Text) else Text(str(col.label)))
            for row in w.ordered_rows:
                for cell in w.get_row(row.key):
                    out.append(cell if isinstance(cell, Text) else Text.from_markup(cell) if isinstance(cell, str)
                               else Text(str(cell)))
            continue
        content = getattr(w, "content", None)  # a Static / Label: what it was given (Text, or str = markup)
        if isinstance(content, Text):
            out.append(content)
        elif isinstance(content, str):
            out.append(Text.from_markup(content))
        elif content is not None and hasattr(content, "plain"):
            out.append(Text(str(content.plain)))
    return out


def _check(view: Any, names: tuple[str, ...]) -> None:
    texts = _texts(view)
    shown = "\n".join(t.plain for t in texts)
    for name in names:
        assert name[:18] in shown, f"{name!r} not shown literally"
    for t in texts:
        for span in t.spans:
            style = span.style
            if isinstance(style, str):
                assert "link" not in style and "@click" not in style, style
            else:
                assert not style.link and not style.meta, (t.plain, style)


async def test_irt_view_shows_markup_in_judge_and_criterion_names_literally(services, tmp_path: Path) -> None:
    per_judge, human, raters = irt_ratings(80)
    renamed = {NAMES[k]: per for k, per in enumerate(per_judge.values())}
    study = run_irt_study(CRITERION, renamed, human=human, raters=raters)
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        view = open_study_view(study, f"{NAMES[0]} · {CRITERION}", source="x.jsonl", export_dir=tmp_path)
        app.push_screen(view)
        await pilot.pause()
        _check(view, (*NAMES[:2], CRITERION))


async def test_jury_view_shows_markup_in_judge_names_literally(services, tmp_path: Path) -> None:
    data, texts = jury_pool()
    names = tuple(NAMES[k % len(NAMES)] + str(k) for k in range(len(data.judges)))
    data = dataclasses.replace(data, judges=names)
    study = run_jury_study(data, texts=texts, splits=2, n_search=1)
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        view = open_study_view(study, f"pool · {CRITERION}", source="pool.jsonl", export_dir=tmp_path, data=data,
                               criterion=CRITERION)
        app.push_screen(view)
        await pilot.pause()
        await pilot.press("enter")  # the first item's jury, by judge name
        await pilot.pause()
        _check(view, (*names, CRITERION))


async def test_intervals_view_shows_markup_in_judge_and_criterion_labels_literally(services, tmp_path: Path) -> None:
    from relgate_tui.core.judge_intervals.study import run_study

    inp = intervals_input()
    study = run_study(inp, methods=FAST_TEST_METHODS[:2], seeds=range(1, 3),
                      labels={"judge": NAMES[2], "criterion": CRITERION, "variant": NAMES[1], "scores_file": "x"})
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        view = open_study_view(study, f"scores · {CRITERION}", source="x.jsonl", export_dir=tmp_path, data=inp)
        app.push_screen(view)
        await pilot.pause()
        _check(view, (NAMES[2], CRITERION, NAMES[1]))
