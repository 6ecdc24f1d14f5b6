"""A judge cascade from runs made in the app (issue 38 §3): on the Runs screen Space numbers the marked runs in
marking order and ``t`` opens the judge certificate of their verification judges as one cascade, cheapest first —
read with the reader of ``relgate judge certify --from-run`` and stored by ``s`` as that command stores it; fewer
than two marks, a run without a verification judge and runs whose judges did not judge the same answers are each a
clear line, no crash. And the certificate's figures scroll at 80×24: their last line is reachable with End."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable

from relgate_tui.tui.app import make_app
from relgate_tui.tui.judge.certificate import CertificateScreen, figures
from relgate_tui.tui.runs import RunsScreen
from tests.tui.runfixtures import stored_run
from tests.tui.test_flow import wait_until
from tests.tui.test_keys_on_screen import drawn, settle

JUDGES = ("sim-judge-short", "sim-judge")  # the cascade order of the test: marked in this order


@pytest.fixture(scope="module")
def judged_sources(tmp_path_factory) -> dict[str, Path]:
    """Demo runs of one reference-less task, one model and seed — one per verification judge (every item labelled:
    a full prefix) — and a run of another task (its first 30 items) with sim-judge, made once for the module."""
    from relgate_tui.cli import main
    from relgate_tui.demo.server import DemoServer

    root = tmp_path_factory.mktemp("cascade-runs")
    lines = Path(__file__).resolve().parents[2].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines[:40]]
    (root / "task.jsonl").write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n"
                                             for it in items))
    (root / "other.jsonl").write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n"
                                              for it in items[:30]))
    (root / "labels.jsonl").write_text("".join(json.dumps({"id": it["id"], **({"rank": 1} if i % 3 else
                                                                               {"none": True})}) + "\n"
                                               for i, it in enumerate(items)))
    out: dict[str, Path] = {}
    with pytest.MonkeyPatch.context() as mp, DemoServer() as server:
        mp.setenv("RELGATE_HOME", str(root / "home"))
        for name, task, judge in ((JUDGES[0], "task", JUDGES[0]), (JUDGES[1], "task", JUDGES[1]),
                                  ("other task", "other", JUDGES[1])):
            runs = root / "runs" / name.replace(" ", "-")
            assert main(["certify", "--task", str(root / f"{task}.jsonl"), "--endpoint", server.base_url, "--model",
                         "sim-mid", "--canon", "numeric", "--k-max", "4", "--seed", "3", "--quiet", "--run-dir",
                         str(runs), "--verify-judge-model", judge,
                         *(["--labels", str(root / "labels.jsonl")] if task == "task" else [])]) in (0, 1)
            (out[name],) = list(runs.iterdir())
    return out


@pytest.fixture
def runs(services, judged_sources) -> dict[str, Path]:
    """The module's runs copied into this test's data dir, and a run without a verification judge."""
    copied = {}
    for name, src in judged_sources.items():
        copied[name] = Path(services.runs_dir) / src.name
        shutil.copytree(src, copied[name])
    copied["no judge"] = stored_run(services.runs_dir)
    return copied


async def _runs_screen(app, pilot) -> RunsScreen:
    await pilot.press("o")
    await app.workers.wait_for_complete()
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    return screen


async def _mark(pilot, screen: RunsScreen, paths: list[Path]) -> None:
    table = screen.query_one("#runs", DataTable)
    for path in paths:
        table.move_cursor(row=table.get_row_index(str(path)))
        await pilot.press("space")


def _figures(screen) -> str:
    return str(screen.query_one("#cert-figures").render())


async def test_t_on_two_marked_runs_certifies_their_judges_as_a_cascade_in_marking_order(services, runs) -> None:
    """Marks are numbered 1, 2 in marking order; ``t`` shows each stage of the cascade ``judge certify --from-run``
    computes (the cheapest = the first marked); ``s`` stores the certificate the command stores; ``t`` is named in the
    line below the table (the footer has no room left at 80 columns) and listed in the help."""
    from relgate_tui.cli import main
    from relgate_tui.engine.judging.cascade import compute_cascade, verdicts_from_runs
    from relgate_tui.engine.judging.certificate_doc import content_id

    order = [runs[JUDGES[0]], runs[JUDGES[1]]]
    want = compute_cascade(verdicts_from_runs([str(p) for p in order]))
    assert [s["judge"] for s in want["cascade"]] == list(JUDGES) and want["n_labelled"] == 20  # the calibration half
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:  # 80×24: tests/tui/test_snapshots_80x24.py::test_runs
        screen = await _runs_screen(app, pilot)
        assert "Space mark: c compare, t judge cascade" in drawn(app)  # whole on screen (the footer is full)
        await _mark(pilot, screen, order)
        table = screen.query_one("#runs", DataTable)
        assert [str(table.get_cell(str(p), "mark")) for p in order] == ["1", "2"]
        # the highlighted run (the last marked) names its verification judge: runs that differ only by it look alike
        assert f"judge {JUDGES[1]} · " in str(screen.query_one("#runs-hint").render())
        assert "2 marked, in order — c compares them · t certifies their judges as a cascade" in drawn(app)
        await pilot.press("t")
        cert = app.screen
        assert isinstance(cert, CertificateScreen) and cert.kind == "runs"
        await wait_until(pilot, lambda: cert.cascade is not None, what="the cascade certificate")
        assert cert.cascade == want
        assert str(cert.query_one("#cert-sentence").render()) == want["sentence"]
        assert cert.sub_title.startswith("judge certificate · cascade of runs ")
        figures = _figures(cert)
        for k, s in enumerate(want["cascade"], start=1):
            assert f"judge {k} {s['judge']}" in figures
        await pilot.press("s")
        await pilot.pause()
        stored = Path(services.runs_dir).parent / "judge_certificates" / f"{content_id(want)}.json"
        assert main(["judge", "certify", "--from-run", str(order[0]), "--from-run", str(order[1]), "--json",
                     str(Path(services.runs_dir).parent / "cli.json")]) in (0, 1, 3)
        cli = json.loads((Path(services.runs_dir).parent / "cli.json").read_text())
        assert json.loads(stored.read_text()) == cli  # the same certificate, the same id
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("question_mark")
        await pilot.pause()
        assert any(key == "t" and desc.startswith("Judge cascade:") for key, desc in app.screen.screen_rows)


async def test_cascade_refusals_are_one_clear_line_and_no_crash(services, runs) -> None:
    """One mark: a notice, the Runs screen stays. A run without a verification judge, runs of another task: the
    certificate screen says why in its one red line, and Escape goes back to Runs."""
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _runs_screen(app, pilot)
        await _mark(pilot, screen, [runs[JUDGES[0]]])
        await pilot.press("t")
        await pilot.pause()
        assert app.screen is screen
        assert any("mark the runs of two or more judges" in str(n.message) for n in app._notifications)
        for other, says in ((runs["no judge"], "this run has no verification judge"),
                            (runs["other task"], "differ in their task file: a cascade's judges must judge the same "
                                                 "answers")):
            await _mark(pilot, screen, [other])
            await pilot.press("t")
            cert = app.screen
            assert isinstance(cert, CertificateScreen)
            await wait_until(pilot, lambda cert=cert: "computing" not in str(cert.query_one("#cert-sentence").render()),
                             what="the refusal")
            assert says in str(cert.query_one("#cert-sentence").render()) and cert.cascade is None
            await pilot.press("escape")
            await settle(pilot)
            assert app.screen is screen
            await _mark(pilot, screen, [other])  # unmark it: the first run stays marked as 1
            assert screen.marked == [str(runs[JUDGES[0]])]


async def test_the_certificate_figures_scroll_to_their_last_line_at_80x24(services, tmp_path) -> None:
    """At 80×24 the figures do not fit beside the chart: their last line is not drawn at first, and End (the
    figures have the focus) brings it on screen, above the footer."""
    from tests.tui.test_judge_certificate_screen import verdicts_file

    f = verdicts_file(tmp_path / "v.jsonl")
    app = make_app(services)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_screen("judge_certificate", "verdicts", str(f))
        screen = app.screen
        await wait_until(pilot, lambda: screen.doc is not None, what="the certificate")
        await settle(pilot)
        static = screen.query_one("#cert-figures")
        width = static.content_region.width
        lines = [x.plain.strip() for x in figures(screen.doc).wrap(Console(width=width), width)]  # as drawn
        tail = [x for x in lines if x][-2:]  # the last two lines of the figures
        assert len(lines) > 12 and len(tail) == 2  # taller than the room beside the chart
        assert not all(x in drawn(app) for x in tail)
        await pilot.press("end")
        await settle(pilot)
        text = drawn(app)
        assert all(x in text for x in tail), (tail, text)
        box = screen.query_one("#cert-figures-box")
        assert box.scroll_y == box.max_scroll_y > 0 and box.region.bottom <= screen.query_one("KeysFooter").region.y
