"""Issue 28 §1–§2: a run ends in one place (:func:`relgate_tui.engine.certification.finish.finish`) and its gate is
the one decision of :func:`relgate_tui.core.certification.gate.decide_gate`, whoever ends it or shows it.

A reference-less task certified over the demo server with a verification judge and ``--gate-on assisted`` / ``best``;
two reviewers label the calibration items through a review session (SQLite), ``review pull`` brings the labels back,
and ``relgate certify`` is run again with the same verdicts as a labels file. The pulled document, the pipeline's, the
TUI session's view-only one and a direct ``finish(write=False)`` must agree — and keep ``judge_assisted`` and the run's
``gate_on`` (``review pull`` used to rebuild ``results.json`` without them, re-gating the run on ``bound``)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.demo.server import DemoServer
from relgate_tui.engine.certification.calls import CallCounts
from relgate_tui.engine.certification.certify import open_prepared
from relgate_tui.engine.certification.finish import finish
from relgate_tui.engine.certification.report import write_report
from relgate_tui.engine.certification.session import Session
from tests.engine.review.conftest import write_labels

N_ITEMS = 30
GATE = 0.5


def _comparable(doc: dict) -> dict:
    """The document without what names the invocation (its call counts) or where each verdict came from."""
    out = {k: v for k, v in doc.items() if k != "calls"}
    out["items"] = [{k: v for k, v in it.items() if k != "verified_by"} for it in doc["items"]]
    if out.get("judge_assisted"):
        out["judge_assisted"] = {k: v for k, v in out["judge_assisted"].items() if k != "calls"}
    return out


def _certified(tmp_path_factory: pytest.TempPathFactory, gate_on: str) -> dict:
    home = tmp_path_factory.mktemp(f"home-{gate_on}")
    lines = Path(__file__).resolve().parents[3].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines][:N_ITEMS]
    task = home / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n" for it in items))
    db = f"sqlite:///{home / 'review.sqlite3'}"
    mp = pytest.MonkeyPatch()
    mp.setenv("RELGATE_HOME", str(home))
    mp.delenv("RELGATE_DB", raising=False)
    try:
        with DemoServer() as server:
            args = ["certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid",
                    "--canon", "numeric", "--k-max", "6", "--seed", "2", "--quiet", "--verify-judge-model",
                    "sim-judge", "--gate-on", gate_on, "--min-reliability", str(GATE)]
            assert main(args + ["--json", str(home / "first.json")]) == 3  # no label yet: not decided (issue 33 §7)
            first = json.loads((home / "first.json").read_text())
            run = first["run_id"]
            truth = {it["id"]: it["answer"] for it in items}
            verdicts = {}
            for it in first["items"]:
                if it["role"] == "calibration":
                    classes = [c["answer"] for c in it["classes"]]
                    verdicts[it["id"]] = str(classes.index(truth[it["id"]]) + 1) if truth[it["id"]] in classes \
                        else "none"
            assert main(["review", "init", "--db", db]) == 0
            with redirect_stdout(io.StringIO()):
                assert main(["review", "publish", run, "--db", db, "--json", str(home / "pub.json")]) == 0
            sid = str(json.loads((home / "pub.json").read_text())["session"])
            for name in ("alice", "bob"):
                assert main(["review", "label", sid, "--labels", str(write_labels(home / f"{name}.jsonl", verdicts)),
                             "--db", db, "--as", name]) == 0
            with redirect_stdout(io.StringIO()):
                assert main(["review", "pull", sid, "--db", db]) == 0
            run_path = home / "runs" / run
            pulled = json.loads((run_path / "results.json").read_text())
            # the pipeline's end on the same data: the same command with the same verdicts as a labels file
            final = write_labels(home / "final.jsonl", verdicts)
            assert main(args + ["--labels", str(final), "--json", str(home / "second.json")]) in (0, 1)
            piped = json.loads((home / "second.json").read_text())
    finally:
        mp.undo()
    return {"home": home, "run_path": run_path, "first": first, "pulled": pulled, "pipeline": piped,
            "verdicts": verdicts}


@pytest.fixture(scope="module", params=["assisted", "best"])
def certified(request, tmp_path_factory):
    """(the run's gate_on, the run): ``--gate-on best``, an old config's name, is read as "assisted" (issue 37 §3)."""
    return "assisted", _certified(tmp_path_factory, request.param)


def test_review_pull_keeps_the_judge_assisted_block_and_the_run_s_gate(certified):
    gate_on, c = certified
    pulled = c["pulled"]
    assert c["first"]["gate_on"] == gate_on and c["first"]["judge_assisted"]["n_labels"] == 0
    assert pulled["judge_assisted"]["n_labels"] == len(c["verdicts"]) > 0
    assert pulled["gate_on"] == pulled["gate"]["gate_on"] == gate_on
    assert pulled["gate"]["assisted_lower_bound"] is not None and pulled["review"]["session"]


def test_every_caller_of_finish_gives_the_pipeline_s_document(certified):
    gate_on, c = certified
    piped, pulled = c["pipeline"], c["pulled"]
    assert piped["gate_on"] == gate_on and piped["judge_assisted"]["calls"]["made"] == 0  # the judge's cache
    # review pull (labels from the session) = the pipeline (the same verdicts from a labels file)
    assert _comparable(pulled) == _comparable(piped)
    # the TUI session's view-only document, and finish() called directly without writing
    session = Session.open(c["run_path"])
    try:
        viewed = session.document(gate=GATE, confidence=0.95)
        ungated = session.document(gate=None, confidence=0.95)  # the TUI's "no gate" is not the run's gate
        decision = session.gate_decision(gate=GATE, gate_on=gate_on, confidence=0.95)
        view = session.results(session.alpha, gate=GATE, gate_on=gate_on, confidence=0.95)
    finally:
        session.close()
    assert _comparable(viewed) == _comparable(piped)
    assert ungated["gate"] is None and ungated["passed"] is None and ungated["min_reliability"] is None
    prepared = open_prepared(c["run_path"])
    try:
        before = (c["run_path"] / "results.json").read_bytes()
        end = finish(prepared, calls=CallCounts(**{k: piped["calls"][k] for k in ("made", "cached", "failed")}),
                     write=False)
        assert (c["run_path"] / "results.json").read_bytes() == before and end.status is None
    finally:
        prepared.close()
    assert _comparable(end.document) == _comparable(piped)
    assert end.document["calls"] == piped["calls"]
    # one gate decision everywhere: the typed result, the JSON, the TUI's results view and spot-check panel
    assert end.core is not None and end.core.gate_decision is not None
    assert end.core.gate_decision.to_json() == piped["gate"] and end.gate == end.core.gate_decision
    assert decision == view.result.gate_decision == end.core.gate_decision
    assert end.core.gate_decision.gate_on == gate_on


def test_the_report_and_the_cli_show_the_decision(certified, tmp_path):
    gate_on, c = certified
    doc = c["pipeline"]
    md = write_report(doc, "md", tmp_path / "r.md").read_text()
    assert doc["gate"]["summary"] in md
    label = "95% judge-assisted lower bound"  # best = the e-process mixture at full confidence (issue 33 §1)
    assert label in doc["gate"]["summary"]


def test_the_importer_s_document_is_finish_s_on_the_stored_run(tmp_path):
    """The importer ends its run through finish() on the answers it holds in memory; reopened from disk, the TUI's
    view-only end of the same run (its labels applied on import) gives the same document."""
    from relgate_tui.engine.importers import load_log
    from relgate_tui.engine.importers.run import ImportOptions, import_log

    p = tmp_path / "log.jsonl"
    with p.open("w", encoding="utf-8") as f:
        for i in range(30):
            given = "7" if i % 4 == 0 else str(100 + i)
            f.write(json.dumps({"id": f"q{i}", "question": f"q{i}?", "model": "m",
                                "samples": [given, given, "5", str(100 + i)]}) + "\n")
    labels = write_labels(tmp_path / "labels.jsonl", {f"q{i}": ("none" if i % 5 == 0 else "1") for i in range(30)})
    out = import_log(load_log("samples", p), ImportOptions(run_dir=str(tmp_path / "runs"), labels=str(labels)))
    stored = json.loads((out.run_path / "results.json").read_text())
    assert stored["n_cal"] > 0 and stored["imported_from"]
    session = Session.open(out.run_path)
    try:
        viewed = session.document(gate=stored["min_reliability"], confidence=stored["confidence"])
    finally:
        session.close()
    assert {k: v for k, v in stored.items() if k != "imported_from"} == viewed


def test_a_pulled_judge_assisted_run_shows_one_bound_everywhere(certified, capsys):
    """Issue 37 §2 on the pulled and the judge-assisted run: the run's bound is the human-only bound its watch rule
    gives (anytime: people labelled) in JSON, the report's sentence, the CLI summary and Results' view model; the
    gate line names the judge-assisted bound, never "the better bound"; the fixed-n value is shown once, by name."""
    from relgate_tui.commands.certify_summary import print_summary
    from relgate_tui.engine.certification.report import report_markdown
    from relgate_tui.engine.certification.result import RunResult

    gate_on, c = certified
    for doc in (c["pulled"], c["pipeline"]):
        r = RunResult.from_json(doc)
        assert doc["reliability_watch"] == "anytime" and r.gate is not None and r.gate.watch == "anytime"
        assert doc["reliability_lower_bound"] == r.gate.lower_bound == r.reliability_lower_bound
        assert doc["reliability_lower_bound_fixed_n"] > doc["reliability_lower_bound"]
        md = report_markdown(r)
        bound = f"{100 * r.reliability_lower_bound:.1f}%"
        assert f"Top answer right on ≥ {bound} of such questions" in md and "Fixed-n Clopper–Pearson" in md
        print_summary(r, "p")
        err = capsys.readouterr().err
        assert f"(≥ {bound}: 95% anytime lower bound" in err and "better bound" not in err
        assert "gate (on the judge-assisted bound): " in err
        cost = r.judge_cost
        assert (cost is not None) == (r.gate.assisted_lower_bound < r.gate.lower_bound)
        assert (cost or "") in err and (cost or "") in md
    session = Session.open(c["run_path"])
    try:
        view = session.results(session.alpha, gate=GATE, gate_on=gate_on, confidence=0.95)
    finally:
        session.close()
    assert view.headline == c["pulled"]["reliability_lower_bound"]
