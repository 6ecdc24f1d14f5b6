"""Housekeeping (issue 24 §8): ``relgate runs rm RUN``, ``relgate runs prune`` of runs holding nothing, and a failed
certify that leaves no "created · 0 samples" run behind."""

from __future__ import annotations

import json

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer
from relgate_tui.demo.faults import FaultPlan
from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.certification.setup import RunSetup
from relgate_tui.engine.runs.listing import list_runs
from relgate_tui.tui.demo_endpoint import SIMULATED_MODELS

TASK = "bigbench-3digit-addition"


def test_a_certify_whose_every_request_fails_leaves_no_run(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with DemoServer(faults=FaultPlan(rate=1.0, kinds=("400",))) as demo:
        code = main(["certify", "--task", TASK, "--endpoint", demo.base_url, "--model", "sim-mid", "--limit", "6",
                     "--k-max", "3", "--quiet"])
    assert code == 2 and "every request failed" in capsys.readouterr().err
    assert list_runs(tmp_path / "runs") == []


def test_runs_rm_deletes_one_run_and_prune_deletes_only_empty_ones(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    runs = tmp_path / "runs"
    with DemoServer() as demo:
        for model in ("sim-mid", "sim-weak"):
            assert main(["certify", "--task", TASK, "--endpoint", demo.base_url, "--model", model, "--limit", "6",
                         "--k-max", "3", "--quiet"]) == 0
    # a setup left before sampling: a run that holds nothing
    empty = Session.create(RunSetup(base_url="http://127.0.0.1:9/v1", model="never-sampled", task=TASK, limit=6),
                           runs_dir=runs)
    empty.close()
    assert len(list_runs(runs)) == 3

    assert main(["runs", "prune", "--dry-run"]) == 0
    assert "would delete" in capsys.readouterr().err and len(list_runs(runs)) == 3
    assert main(["runs", "prune"]) == 0
    err = capsys.readouterr().err
    assert err.count("deleted") == 1 and "never-sampled" in err
    kept = {s.model: s for s in list_runs(runs)}
    assert set(kept) == {"sim-mid", "sim-weak"}

    assert main(["runs", "rm", kept["sim-weak"].run_id]) == 0
    assert "deleted run" in capsys.readouterr().err
    assert [s.model for s in list_runs(runs)] == ["sim-mid"]
    assert main(["runs", "rm", "no-such-run"]) == 2
    assert main(["runs", "rm"]) == 2
    assert capsys.readouterr().err.count("relgate: error:") == 2
    assert main(["runs", "--json"]) == 0
    assert [r["model"] for r in json.loads(capsys.readouterr().out)] == ["sim-mid"]


def test_runs_rm_refuses_a_run_another_process_is_writing(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    session = Session.create(RunSetup(base_url="http://127.0.0.1:9/v1", model="busy", task=TASK, limit=6),
                             runs_dir=tmp_path / "runs")
    session.store.lock()  # this process holds the write lock as a running certify would
    try:
        import subprocess
        import sys

        proc = subprocess.run([sys.executable, "-m", "relgate_tui.cli", "runs", "rm", session.run_id],
                              capture_output=True, text=True, env={**__import__("os").environ}, timeout=60)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1
        assert session.path.is_dir()
    finally:
        session.close()


def test_a_run_against_relgate_demo_server_is_marked_simulated_everywhere(tmp_path, monkeypatch, capsys) -> None:
    """Issue 24 §5: `relgate certify` against `relgate demo-server` is a simulated run in Runs, `relgate runs`,
    the Results title and the report — not only runs started on the TUI's embedded demo."""
    from relgate_tui.engine.certification.report import render_report
    from relgate_tui.engine.runs.store import RunStore

    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with DemoServer() as demo:
        assert main(["certify", "--task", TASK, "--endpoint", demo.base_url, "--model", "sim-mid", "--limit", "6",
                     "--k-max", "3", "--quiet"]) == 0
    (summary,) = list_runs(tmp_path / "runs")
    assert summary.is_simulated(SIMULATED_MODELS)
    session = Session.open(summary.path, simulated_models=SIMULATED_MODELS)
    try:
        assert "(simulated)" in session.title
    finally:
        session.close()
    doc = RunStore(summary.path).read_results()
    assert render_report(doc, "md", simulated_models=SIMULATED_MODELS).splitlines()[0].endswith(
        "on sim-mid (simulated model)")
    capsys.readouterr()
    assert main(["runs"]) == 0
    assert "sim-mid (simulated)" in capsys.readouterr().out
    # a model of another name on loopback, or the demo's names on another host, is not marked
    assert not summary.__class__(**{**summary.__dict__, "model": "llama3"}).is_simulated(SIMULATED_MODELS)
    assert not summary.__class__(**{**summary.__dict__, "endpoint": "https://api.example.com/v1"}).is_simulated(
        SIMULATED_MODELS)
