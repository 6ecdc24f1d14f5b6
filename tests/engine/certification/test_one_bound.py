"""Issue 37 §2, the reproduction: a reference-less copy of 120 gsm8k items certified over the demo server (``--canon
numeric --k-max 5``), then ``--labels`` with 9 of 10 top answers accepted and ``--min-reliability 0.85``. The run's
bound is the one its gate decides on — the anytime bound, a person labelled — and every surface shows it: the
report's sentence and verdict, the CLI summary, JSON ``reliability_lower_bound``, ``relgate runs``, Results' view
model and Compare's. The fixed-n Clopper–Pearson value (84.3%) is shown once, by name, with its condition.

Fails on the code before: the report's sentence, the CLI's first line, JSON and ``relgate runs`` said 84.3% beside
"FAIL — 95% anytime lower bound 80.5% < gate 85.0%"."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.demo.server import DemoServer
from relgate_tui.engine.certification.session import Session
from tests.engine.review.conftest import write_labels

N_ITEMS = 120


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> dict:
    home = tmp_path_factory.mktemp("one-bound")
    lines = Path(__file__).resolve().parents[3].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines][:N_ITEMS]
    task = home / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n" for it in items))
    mp = pytest.MonkeyPatch()
    mp.setenv("RELGATE_HOME", str(home))
    mp.delenv("RELGATE_DB", raising=False)
    err = io.StringIO()
    try:
        with DemoServer() as server:
            args = ["certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid",
                    "--canon", "numeric", "--k-max", "5", "--seed", "1"]
            assert main(args + ["--quiet", "--json", str(home / "first.json")]) == 0
            first = json.loads((home / "first.json").read_text())
            ids = sorted(it["id"] for it in first["items"])
            verdicts = {item: ("none" if i % 10 == 9 else "1") for i, item in enumerate(ids)}  # 9 of 10 accepted
            labels = write_labels(home / "labels.jsonl", verdicts)
            import contextlib

            with contextlib.redirect_stderr(err):
                code = main(args + ["--labels", str(labels), "--min-reliability", "0.85",
                                    "--json", str(home / "second.json")])
            out = io.StringIO()
            with redirect_stdout(out):
                assert main(["report", first["run_id"], "--format", "md"]) == 0
            runs = io.StringIO()
            with redirect_stdout(runs):
                assert main(["runs", "--json"]) == 0
            compared = io.StringIO()
            with redirect_stdout(compared):  # the run against itself: its run info is what matters here
                assert main(["compare", first["run_id"], first["run_id"], "--json", "-", "--quiet"]) in (0, 1, 3)
    finally:
        mp.undo()
    doc = json.loads((home / "second.json").read_text())
    return {"home": home, "code": code, "doc": doc, "summary": err.getvalue(), "report": out.getvalue(),
            "runs": json.loads(runs.getvalue()), "run_path": home / "runs" / doc["run_id"],
            "compare": json.loads(compared.getvalue())}


def test_the_json_bound_is_the_gates(labelled: dict) -> None:
    doc = labelled["doc"]
    assert labelled["code"] == 1 and doc["passed"] is False  # FAIL: below the gate
    assert doc["reliability_n"] == N_ITEMS and doc["gate"]["watch"] == "anytime"
    assert round(doc["reliability_lower_bound"], 3) == 0.805
    assert doc["reliability_lower_bound"] == doc["gate"]["lower_bound"] == doc["gate"]["value"]
    assert round(doc["reliability_lower_bound_fixed_n"], 3) == 0.843 and doc["reliability_watch"] == "anytime"


def test_the_report_sentence_and_verdict_show_the_same_bound(labelled: dict) -> None:
    md = labelled["report"]
    assert "Top answer right on ≥ 80.5% of such questions (95% confidence, n = 120)." in md
    assert "(at least 80.5% top-answer coverage with 95% confidence, the 95% anytime lower bound)" in md
    assert "FAIL: 95% anytime lower bound 80.5% < gate 85.0%" in md
    assert md.count("84.3%") == 1  # the fixed-n value, once, by name and with its condition
    assert ("- Fixed-n Clopper–Pearson lower bound 84.3% (valid only if the number of labels was fixed before "
            "labelling)") in md


def test_the_cli_summary_shows_the_same_bound(labelled: dict) -> None:
    lines = labelled["summary"].splitlines()
    lines = lines[next(i for i, line in enumerate(lines) if line.startswith("reliability level")):]  # after progress
    assert lines[0].startswith("reliability level ") and "(≥ 80.5%: 95% anytime lower bound, n = 120)" in lines[0]
    assert lines[0].endswith("FAIL")
    assert lines[1] == ("fixed-n Clopper–Pearson lower bound 84.3% (valid only if the number of labels was fixed "
                        "before labelling)")
    assert "gate (on the lower bound): FAIL: 95% anytime lower bound 80.5% < gate 85.0%" in labelled["summary"]
    assert "\n".join(lines).count("84.3%") == 1


def test_relgate_runs_shows_the_same_bound(labelled: dict) -> None:
    (row,) = labelled["runs"]
    assert round(row["reliability_lower_bound"], 3) == 0.805 and row["passed"] is False


def test_relgate_compare_shows_the_same_bound(labelled: dict) -> None:
    for side in ("run_a", "run_b"):
        assert labelled["compare"][side]["reliability_lower_bound"] == labelled["doc"]["reliability_lower_bound"]


def test_results_and_compare_view_models_show_the_same_bound(labelled: dict) -> None:
    """Results' headline and Compare's "lower bound" row are the view model's ``result.reliability_lower_bound``."""
    session = Session.open(labelled["run_path"])
    try:
        gate, basis = session.stored_gate()
        view = session.results(0.10, gate=gate, gate_on=basis)
    finally:
        session.close()
    assert view.headline == view.result.reliability_lower_bound == labelled["doc"]["reliability_lower_bound"]
    assert view.result.gate_decision is not None and view.result.gate_decision.lower_bound == view.headline
    assert view.fixed_n_line is not None and "84.3%" in view.fixed_n_line
    assert view.result.bound_label == "95% anytime lower bound" == view.result.gate_decision.basis_label
