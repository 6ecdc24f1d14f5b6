"""The judge audit screen (issue 4 item 5) on the embedded demo endpoint's simulated judge, over real loopback HTTP:
setup → live progress → results (the numbers are the engine's document), the cycle viewer, exports, cancelling
a running audit, failed requests, inline data errors, and a snapshot of the results view."""

from __future__ import annotations

import asyncio
import json
import time

from textual.widgets import ContentSwitcher, DataTable, Input, RichLog, Select

from relgate_tui.demo import FaultPlan
from relgate_tui.engine.judging.audit_run import run_judge_audit
from relgate_tui.tui.app import make_app
from relgate_tui.tui.confirm import ConfirmModal
from relgate_tui.tui.home import HomeScreen
from relgate_tui.tui.judge import CycleViewerModal, JudgeScreen
from tests.tui.test_flow import focus_on, wait_until

SIZE = (120, 40)
# 8 inputs × 6 candidates, k = 3, both protocols: 360 pairwise verdicts (15 pairs × 3, seeded random orders) +
# 144 direct scores; with seed 1 the simulated judge makes preference cycles on some inputs.
SMALL = {"n-inputs": "8", "n-candidates": "6", "reps": "3", "alpha": "0.1", "seed": "1"}


async def open_judge(app, pilot) -> JudgeScreen:
    await pilot.press("j")
    screen = app.screen
    assert isinstance(screen, JudgeScreen)
    await wait_until(pilot, lambda: bool(screen.endpoints) and screen.audit_set is not None
                     and screen.query_one("#criterion", Select).value == "Coherence", what="judge setup")
    await pilot.pause()
    return screen


async def fill(screen: JudgeScreen, pilot, protocol: str = "both", **fields: str) -> None:
    for wid, value in {**SMALL, **fields}.items():
        screen.query_one(f"#{wid}", Input).value = value
    screen.query_one("#protocol", Select).value = protocol
    await pilot.pause()


async def run_audit(app, pilot, protocol: str = "both", **fields: str) -> JudgeScreen:
    screen = await open_judge(app, pilot)
    await fill(screen, pilot, protocol, **fields)
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: screen.state in ("results", "setup"), what="the audit")
    assert screen.state == "results", str(screen.query_one("#judge-error").content)
    await pilot.pause()
    return screen


def without_run_facts(doc: dict) -> dict:
    """The document minus what differs between a fresh and a cached computation."""
    return {k: v for k, v in doc.items() if k not in ("calls", "wall_seconds")}


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector).content)


def rows(table: DataTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_demo_is_preselected_with_its_simulated_judge(services):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        assert screen.query_one("#judge-parts", ContentSwitcher).current == "judge-setup"
        endpoint = screen.endpoints[0]
        assert endpoint.simulated and "simulated" in endpoint.label
        assert screen.query_one("#endpoint", Select).value == "ep0"
        assert screen._ticked_models() == ["sim-judge"]  # of the demo's simulated judges, sim-judge is ticked
        assert screen.query_one("#data", Select).value == "hanna"
        assert screen.query_one("#reps", Input).value == "3" and screen.query_one("#alpha", Input).value == "0.1"
        criteria = [value for _, value in screen.query_one("#criterion", Select)._options if value != Select.NULL]
        assert criteria == list(screen.audit_set.criteria)
        assert "pairwise" in text_of(screen, "#plan") and "direct" in text_of(screen, "#plan")


async def test_audit_results_are_the_engines_document(services):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_audit(app, pilot)
        cfg = screen.config
        assert (cfg.model, cfg.data, cfg.criterion, cfg.protocol, cfg.reps, cfg.inputs, cfg.candidates) == (
            "sim-judge", "hanna", "Coherence", "both", 3, 8, 6)
        assert cfg.endpoint == app.demo.base_url and cfg.api_key_env is None
        requests = len(app.demo.chat_requests)
        expected = await asyncio.to_thread(run_judge_audit, cfg)  # the same config again: all from the cache
        assert len(app.demo.chat_requests) == requests and expected["calls"]["made"] == 0
        assert without_run_facts(screen.doc) == without_run_facts(expected)
        assert screen.doc["calls"]["made"] == requests > 0

        pw, direct = expected["pairwise"], expected["direct"]
        cycles = text_of(screen, "#cycle-stats")
        for value in (f"{pw['cycles']['mean_rho']:.3f}", f"{pw['cycles']['cycle_share']:.0%}", "random baseline     0.250",
                      f"{pw['cycles']['max_rho']:.3f}", f"{pw['cycles']['median_rho']:.3f}", "k = 3)"):
            assert value in cycles
        bias, pc = pw["position_bias"], pw["position_consistency"]
        assert f"{bias['first_shown_share']:.1%}" in text_of(screen, "#bias-stats")
        assert f"{bias['flip_share']:.1%}" in text_of(screen, "#bias-stats")
        assert f"{bias['pairs_flipped_by_order']} of {pc['n_pairs_decisive_both_orders']} pairs" in \
            text_of(screen, "#bias-stats")
        assert pc["flag"] != "position_only" and "POSITION-ONLY" not in text_of(screen, "#bias-stats")
        # the ranking methods side by side, with their mean Kendall τ-b against the human ranking
        shown = rows(screen.query_one("#rankings", DataTable))
        assert [r[1:] for r in shown] == [[f"{r['mean_kendall_tau']:+.3f}", str(r["n_inputs"])]
                                         for r in pw["rankings"].values()]
        assert len(shown) == 6 and shown[4][0] == "MFAS exact"
        # the inputs, largest ρ first
        table = screen.query_one("#inputs", DataTable)
        inputs = rows(table)
        assert [r[0] for r in inputs] == [i["id"] for i in pw["inputs"]]
        assert [float(r[2]) for r in inputs] == sorted((round(i["rho"], 3) for i in pw["inputs"]), reverse=True)
        assert [int(r[3]) for r in inputs] == [i["n_cycles"] for i in pw["inputs"]]
        assert pw["inputs"][0]["n_cycles"] > 0  # this configuration does make the judge cycle
        # the Likert conformal table
        likert = rows(screen.query_one("#likert", DataTable))
        assert [r[:4] for r in likert] == [[f"{r['alpha']:.2f}", f"{r['target_coverage']:.2f}",
                                            f"{r['coverage']:.3f}", f"{r['mean_width']:.2f}"]
                                           for r in direct["likert_conformal"]]
        assert screen.query_one("#width-error").display

        # Enter on the first input (the most cyclic) opens the cycle viewer with the JSON's triples
        await focus_on(pilot, table)
        await pilot.press("enter")
        await pilot.pause()
        viewer = app.screen
        assert isinstance(viewer, CycleViewerModal)
        first = pw["inputs"][0]
        assert [list(t) for t in viewer.triples] == first["cyclic_triples"]
        shown_text = text_of(viewer, "#cycles-text")
        for a, b, c in first["cyclic_triples"]:
            assert f"{a} → {b} → {c} → {a}" in shown_text
            pair = next(p for p in first["pairs"] if {p["a"], p["b"]} == {a, b})
            a_first, b_first = (pair["a_first"], pair["b_first"]) if pair["a"] == a else (pair["b_first"],
                                                                                          pair["a_first"])
            i, j = (0, 1) if pair["a"] == a else (1, 0)
            assert f"{a} beats {b}: {a_first[i] + b_first[i]}–{a_first[j] + b_first[j]}" in shown_text
            per_order = f"{a} shown first {a_first[i]}–{a_first[j]}, {b} shown first {b_first[i]}–{b_first[j]}"
            assert per_order in shown_text
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen

        # exports: the JSON document and a Markdown report, beside the runs directory
        await pilot.press("j", "m")
        await pilot.pause()
        folder = services.runs_dir.parent / "judge-audits"
        written = screen.exported["json"]
        assert written.parent == folder and written.is_file()
        assert json.loads(written.read_text()) == screen.doc
        assert without_run_facts(json.loads(written.read_text())) == without_run_facts(expected)
        report = screen.exported["md"].read_text()
        assert report.startswith("# Judge audit: sim-judge on hanna / Coherence")
        assert f"{pw['cycles']['mean_rho']:.3f}" in report

        # Escape: back to the setup (values kept), Escape again: home
        await pilot.press("escape")
        await pilot.pause()
        assert screen.state == "setup" and screen.query_one("#n-inputs", Input).value == "8"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen) and len(app.screen_stack) == 2
        assert app.history[-1] == ("home", "judge")


async def test_pairwise_only_audit_hides_the_likert_part(services):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_audit(app, pilot, protocol="pairwise", **{"n-inputs": "3", "n-candidates": "4"})
        assert "direct" not in screen.doc and not screen.query_one("#res-direct").display
        assert screen.query_one("#inputs", DataTable).row_count == 3


async def test_escape_mid_run_asks_then_stops_the_audit(services):
    app = make_app(services, demo_latency_ms=40.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        await fill(screen, pilot, "pairwise", **{"n-inputs": "40", "n-candidates": "6", "reps": "1"})
        await pilot.press("ctrl+s")
        assert screen.query_one("#judge-parts", ContentSwitcher).current == "judge-run"
        await wait_until(pilot, lambda: screen.answers[0] >= 8, what="the first answers")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")  # keep going
        await pilot.pause()
        assert app.screen is screen and screen.state == "running"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.state == "setup", timeout=10, what="the audit to stop")
        assert "cancelled" in text_of(screen, "#judge-error")
        done, total = screen.answers
        assert done < total == 40 * 15 * 1
        assert screen.doc is None
        await app.workers.wait_for_complete()  # the audit's worker has ended: nothing of it can ask any more
        await wait_until(pilot, lambda: not app.demo._writers, what="the judge's connections to close")
        sent = len(app.demo.chat_requests)
        for _ in range(20):
            await pilot.pause()
        assert len(app.demo.chat_requests) == sent  # nothing is asked once it stopped
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)


async def test_bad_data_and_bad_fields_are_one_line_errors(services, tmp_path):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        screen.query_one("#data", Select).value = "__file__"
        await pilot.pause()
        path_input = screen.query_one("#data-path", Input)
        assert path_input.display
        missing = tmp_path / "missing.jsonl"
        path_input.value = str(missing)
        await focus_on(pilot, path_input)
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(screen.data_error), what="the loader's error")
        info = text_of(screen, "#data-info")
        assert "no such audit data file" in info and "\n" not in info.strip() and "Traceback" not in info
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"id": "a", "input": "x", "candidates": [{"text": "only one"}]}\n')
        path_input.value = str(bad)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "bad.jsonl:1" in screen.data_error, what="the loader's error")
        info = text_of(screen, "#data-info")
        assert "candidates" in info and "\n" not in info.strip()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert screen.state == "setup" and app.screen is screen
        assert "bad.jsonl:1" in text_of(screen, "#judge-error")

        screen.query_one("#data", Select).value = "hanna"
        await wait_until(pilot, lambda: screen.audit_set is not None, what="hanna")
        for wid, value, message in (("reps", "0", "repetitions k must be ≥ 1"), ("reps", "2", "--reps must be odd"),
                                    ("alpha", "1.5", "α must be < 1"),
                                    ("n-candidates", "1", "candidates / input must be ≥ 2"),
                                    ("n-inputs", "many", "inputs: 'many' is not an integer")):
            await fill(screen, pilot, **{wid: value})
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert screen.state == "setup"
            error = text_of(screen, "#judge-error")
            assert message in error and "\n" not in error.strip()
        assert len(app.demo.chat_requests) == 0


async def test_custom_endpoint_takes_a_key_variable_name_never_a_key(services, monkeypatch):
    monkeypatch.setenv("RELGATE_TEST_KEY", "not-a-real-key")  # an audit that must pay checks the variable is set
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        screen.query_one("#endpoint", Select).value = "custom"
        await pilot.pause()
        assert screen.query_one("#url", Input).display and not screen.query_one("#judges").display
        screen.query_one("#url", Input).value = app.demo.base_url
        screen.query_one("#model-name", Input).value = "sim-judge"
        screen.query_one("#api-key-env", Input).value = "sk-abc123 secret"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert screen.state == "setup" and "variable's NAME" in text_of(screen, "#judge-error")
        screen.query_one("#api-key-env", Input).value = "RELGATE_TEST_KEY"
        await fill(screen, pilot, "pairwise", **{"n-inputs": "2", "n-candidates": "3", "reps": "1"})
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state == "results", what="the audit")
        assert screen.config.api_key_env == "RELGATE_TEST_KEY"


async def test_failed_requests_are_counted_and_listed(services):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        app.demo.faults = FaultPlan(script=("400", "500", "400"))  # 400: reported, not retried; 500: retried
        await fill(screen, pilot, "pairwise", **{"n-inputs": "3", "n-candidates": "3", "reps": "1"})
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state == "results", what="the audit")
        errors = ["".join(segment.text for segment in line) for line in screen.query_one("#errors", RichLog).lines]
        assert sum("400" in e for e in errors) == 2 and any("retrying" in e for e in errors)
        assert screen.doc["calls"]["failed"] == 2 and screen.doc["pairwise"]["verdicts"]["total"] == 3 * 3 * 1 - 2
        assert "failed 2" in text_of(screen, "#res-heading")
        assert screen.answers[0] == screen.answers[1]  # given-up answers count as done


async def test_an_always_first_judge_is_flagged_position_only_on_screen(services):
    """Issue 11 §2 acceptance: a loopback judge that always names the first-shown candidate is shown as
    position-only, and its ρ is near the random baseline (never a perfectly transitive 0)."""
    from tests.engine.judging.test_judging import ScriptedJudge

    app = make_app(services)
    with ScriptedJudge("first") as judge:
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_judge(app, pilot)
            screen.query_one("#endpoint", Select).value = "custom"
            await pilot.pause()
            screen.query_one("#url", Input).value = judge.base_url
            screen.query_one("#model-name", Input).value = "first-judge"
            await fill(screen, pilot, "pairwise", **{"n-inputs": "12", "n-candidates": "5", "reps": "1"})
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: screen.state in ("results", "setup"), what="the audit")
            assert screen.state == "results", str(screen.query_one("#judge-error").content)
            pw = screen.doc["pairwise"]
            assert pw["position_consistency"]["position_only"] is True
            bias = text_of(screen, "#bias-stats")
            assert "POSITION-ONLY judge" in bias and "100.0%" in bias
            assert pw["cycles"]["mean_rho"] > 0 and f"{pw['cycles']['mean_rho']:.3f}" in text_of(screen, "#cycle-stats")


def test_results_view_snapshot(services, snap_compare):
    """The results of a small seeded demo audit. The endpoint is shown by its label (the demo's port varies)."""
    app = make_app(services)

    async def run_before(pilot):
        started = time.monotonic()
        screen = await run_audit(pilot.app, pilot)
        assert time.monotonic() - started < 60
        assert screen.doc["endpoint"].split(":")[-1].split("/")[0] not in str(screen.query_one("#res-heading").content)
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)


async def test_the_next_visit_starts_from_the_last_audits_settings(services):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        screen.query_one("#criterion", Select).value = "Empathy"
        await fill(screen, pilot, "pairwise",
                   **{"n-inputs": "3", "n-candidates": "4", "reps": "5", "alpha": "0.2", "seed": "7"})
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state == "results", what="the audit")
        ran = screen.config
        assert ran is not None and ran.criterion == "Empathy"
        await pilot.press("escape")  # results → setup
        await pilot.press("escape")  # setup → Home
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="home")

        await pilot.press("j")
        again = app.screen
        assert isinstance(again, JudgeScreen) and again is not screen
        await wait_until(pilot, lambda: again.audit_set is not None
                         and again.query_one("#criterion", Select).value == "Empathy", what="the remembered criterion")
        values = {wid: again.query_one(f"#{wid}", Input).value for wid in ("n-inputs", "n-candidates", "reps", "alpha",
                                                                           "seed")}
        assert values == {"n-inputs": "3", "n-candidates": "4", "reps": "5", "alpha": "0.2", "seed": "7"}
        assert again.query_one("#protocol", Select).value == "pairwise"
        assert again._ticked_models() == ["sim-judge"]
        assert again.endpoints[int(str(again.query_one("#endpoint", Select).value)[2:])].base_url == ran.endpoint
        cfg, _ = again.collect()
        assert cfg == ran  # the same audit again: every answer comes from the cache
