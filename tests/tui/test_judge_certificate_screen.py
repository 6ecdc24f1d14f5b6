"""The judge certificate screen (issue 30 §4): the verdict sentence, the figures and the planner from the same
computation as ``relgate judge certify``; ``+`` / ``-`` move the target and recompute; ``s`` stores the certificate;
Results → Verification judge opens it with ``t``; an SVG snapshot of a fixed verdicts file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from relgate_tui.engine.judging.certificate import load_verdicts_file
from relgate_tui.engine.judging.certificate_doc import compute
from relgate_tui.tui.app import make_app
from relgate_tui.tui.judge.certificate import CertificateScreen
from tests.tui.test_flow import wait_until

SIZE = (120, 40)


def verdicts_file(path: Path, n: int = 900, labelled: int = 700, seed: int = 11) -> Path:
    """A fixed judge: confidence ½ + ½·Beta(3, 1), agreement equal to it, base rate 0.7."""
    rng = np.random.default_rng(seed)
    c = 0.5 + 0.5 * rng.beta(3, 1, n)
    y = (rng.random(n) < 0.7).astype(int)
    f = np.where(rng.random(n) < c, y, 1 - y)
    p = np.where(f == 1, c, 1 - c)
    path.write_text("".join(json.dumps({"id": f"i{i}", "p_yes": round(float(p[i]), 4),
                                        **({"human": int(y[i])} if i < labelled else {})}) + "\n"
                            for i in range(n)))
    return path


def _text(screen, wid: str) -> str:
    return str(screen.query_one(wid).render())


async def test_certificate_screen_shows_the_cli_certificate_and_recomputes(services, tmp_path: Path) -> None:
    f = verdicts_file(tmp_path / "v.jsonl")
    expected = compute(load_verdicts_file(f))
    stricter = compute(load_verdicts_file(f), agreement=0.95)
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        app.open_screen("judge_certificate", "verdicts", str(f))
        screen = app.screen
        assert isinstance(screen, CertificateScreen)
        await wait_until(pilot, lambda: screen.doc is not None, what="the certificate")
        assert _text(screen, "#cert-sentence") == expected.certificate.sentence
        figures = _text(screen, "#cert-figures")
        assert f"{100 * (expected.certificate.tpr.lower or 0):.1f}%" in figures and "TNR" in figures
        assert "where humans said yes" in figures  # per-class agreement on the decided items (issue 41 §4)
        assert "planner:" in _text(screen, "#cert-plan")
        await pilot.press("plus")
        await wait_until(pilot, lambda: screen.doc is not None and screen.doc.certificate.selective.agreement == 0.95,
                         what="the recompute")
        assert _text(screen, "#cert-sentence") == stricter.certificate.sentence
        assert "chosen after looking" in _text(screen, "#cert-plan")  # issue 41 §4: choosing A by looking costs
        await pilot.press("s")
        await pilot.pause()
        folder = Path(services.runs_dir).parent / "judge_certificates"
        assert not list(folder.glob("jc-*.json"))  # not stored at an A chosen after looking
        await pilot.press("minus")
        await wait_until(pilot, lambda: screen.doc is not None and screen.doc.certificate.selective.agreement == 0.90,
                         what="back to the first A")
        assert "chosen after looking" not in _text(screen, "#cert-plan")
        await pilot.press("s")
        await pilot.pause()
        stored = list(folder.glob("jc-*.json"))
        assert len(stored) == 1 and stored[0].stem == expected.id
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CertificateScreen)


@pytest.fixture
def judged_run(services, tmp_path) -> Path:
    """A reference-less demo run with a verification judge (sim-judge), no labels yet."""
    from relgate_tui.cli import main
    from relgate_tui.demo.server import DemoServer

    lines = Path(__file__).resolve().parents[2].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines][:40]
    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n" for it in items))
    with DemoServer() as server:
        assert main(["certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid", "--canon",
                     "numeric", "--k-max", "5", "--quiet", "--run-dir", str(services.runs_dir),
                     "--verify-judge-model", "sim-judge"]) == 0
    (run,) = list(services.runs_dir.iterdir())
    return run


async def test_results_t_opens_the_certificate_of_the_verification_judge(services, judged_run) -> None:
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.tui.results import ResultsScreen

    run = judged_run
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        session = Session.open(run, cache_dir=app.services.resolved_cache_dir())
        app.session = session
        app.push_screen(ResultsScreen(session))
        await pilot.pause()
        await pilot.press("t")
        screen = app.screen
        assert isinstance(screen, CertificateScreen) and screen.kind == "run"
        await wait_until(pilot, lambda: screen.doc is not None, what="the certificate")
        assert screen.doc.certificate.n_labelled == 0 and screen.doc.certificate.n_items == 40
        assert _text(screen, "#cert-sentence").startswith("NOT DECIDABLE: no labelled item yet")


def test_certificate_snapshot(services, snap_compare, tmp_path: Path) -> None:
    f = verdicts_file(tmp_path / "verdicts.jsonl")

    async def run_before(pilot) -> None:
        pilot.app.open_screen("judge_certificate", "verdicts", str(f))
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.doc is not None, what="the certificate")
        await pilot.pause()

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


@pytest.fixture
def pairwise_audit(tmp_path) -> Path:
    """A small stored pairwise audit of the demo's sim-judge (3 verdicts per pair)."""
    from relgate_tui.cli import main
    from relgate_tui.demo.server import DemoServer
    from relgate_tui.engine.judging import list_audits

    home = tmp_path / "audit-home"
    with pytest.MonkeyPatch.context() as mp, DemoServer() as demo:
        mp.setenv("RELGATE_HOME", str(home))
        assert main(["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                     "--model", "sim-judge", "--protocol", "pairwise", "--reps", "3", "--inputs", "10",
                     "--candidates", "4", "--json", str(home / "audit.json")]) == 0
    (summary,) = list_audits(home / "audits")
    return Path(summary.path)


async def test_t_on_the_judge_audit_results_opens_its_certificate(services, pairwise_audit) -> None:
    from relgate_tui.tui.judge import JudgeScreen

    services.embedded_demo = False
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        judge = JudgeScreen(None, reopen=pairwise_audit)
        app.push_screen(judge)
        await wait_until(pilot, lambda: judge.state == "results", what="the reopened audit")
        await pilot.press("t")
        screen = app.screen
        assert isinstance(screen, CertificateScreen) and screen.kind == "audit"
        await wait_until(pilot, lambda: screen.doc is not None, what="the certificate")
        assert screen.doc.certificate.n_items == 10 * 6 and (screen.doc.pairwise or {})["judge"] == "sim-judge"
        assert screen.doc.certificate.unit == "group"
        assert "position flips" in _text(screen, "#cert-figures")


async def test_a_cascade_shows_each_stage_and_the_calls_saved(services, tmp_path: Path) -> None:
    """Two verdicts files (the easy-only world: the cheap judge sure of easy items, the strong one of most): each
    stage's threshold, share decided and agreement bound, the calls saved — the figures ``judge certify`` computes;
    ``s`` stores the same certificate as the CLI (its content digest), ``+`` recomputes and warns."""
    import os

    from relgate_tui.engine.judging.cascade import compute_cascade
    from relgate_tui.engine.judging.certificate_doc import content_id

    rng = np.random.default_rng(2)
    n = 900
    d = rng.random(n)
    c = np.array([1 - d / 2, 0.5 + 0.5 * (1 - d ** 4)])
    y = (rng.random(n) < 0.7).astype(int)
    f = np.where(rng.random(c.shape) < c, y, 1 - y)
    p = np.round(np.where(f == 1, c, 1 - c), 4)
    files = []
    for j, name in enumerate(("cheap.jsonl", "strong.jsonl")):
        (tmp_path / name).write_text("".join(json.dumps({"id": f"i{i}", "p_yes": float(p[j, i]),
                                                         **({"human": int(y[i])} if i < 800 else {})}) + "\n"
                                             for i in range(n)))
        files.append(tmp_path / name)
    want = compute_cascade([load_verdicts_file(x) for x in files])
    assert want["verdict"] == "PASS" and want["cascade"][0]["decided"] > 0
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        app.open_screen("judge_certificate", "cascade", os.pathsep.join(map(str, files)))
        screen = app.screen
        assert isinstance(screen, CertificateScreen)
        await wait_until(pilot, lambda: screen.cascade is not None, what="the cascade certificate")
        assert screen.cascade == want and _text(screen, "#cert-sentence") == want["sentence"]
        figures = _text(screen, "#cert-figures")
        for s in want["cascade"]:
            assert (f"threshold {s['threshold']:.4f} · decides {100 * s['decided_share']:.1f}% ({s['decided']} of "
                    f"{s['reached']} asked) · agreement {100 * s['agreement']:.1f}% ≥ "
                    f"{100 * s['agreement_lower']:.1f}%") in figures
        saved = want["calls_saved"]["judges"][0]
        assert f"calls of strong.jsonl avoided: {saved['avoided']} ({100 * saved['avoided_share']:.1f}%)" in figures
        await pilot.press("s")
        await pilot.pause()
        stored = Path(services.runs_dir).parent / "judge_certificates" / f"{content_id(want)}.json"
        assert json.loads(stored.read_text()) == {**want, "id": content_id(want)}
        await pilot.press("plus")
        await wait_until(pilot, lambda: screen.cascade is not None and screen.cascade["agreement"] == 0.95,
                         what="the recompute")
        assert "chosen after looking" in _text(screen, "#cert-plan")
