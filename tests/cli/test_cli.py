"""`relgate certify / runs / report / tasks` end to end over real loopback sockets (DemoServer), issue 5 item 7."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer, FaultPlan
from relgate_tui.engine.runs.listing import open_run
from tests.conftest import InProcessCli

TASK = "bigbench-3digit-addition"
RUNNER = (
    "import sys; from relgate_tui.cli import main; rc = main(sys.argv[1:]); "
    "print('TEXTUAL-LOADED' if 'textual' in sys.modules else 'textual-not-loaded', file=sys.stderr); sys.exit(rc)"
)
TOP_KEYS = {
    "relgate_version", "run_id", "endpoint", "model", "task", "alpha", "delta", "stopping", "k_max", "n_cal",
    "n_skipped", "reliability_level", "reliability_lower_bound", "confidence", "m_star", "coverage",
    "conditional_coverage", "capability_gap", "avg_set_size", "calls", "passed", "items",
}


def run_cli(args: list[str], home: Path, extra_env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "RELGATE_HOME": str(home), **(extra_env or {})}
    return subprocess.run([sys.executable, "-c", RUNNER, *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def chat_200(server: DemoServer) -> list:
    return [r for r in server.requests if r.path.endswith("/chat/completions") and r.status == 200]


@pytest.fixture(scope="module")
def demo():
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
def first_run(demo, tmp_path_factory):
    """One certify run (30 items, K_max 8) shared by several tests."""
    home = tmp_path_factory.mktemp("home")
    out = home / "result.json"
    before = len(chat_200(demo))
    args = ["certify", "--task", TASK, "--endpoint", demo.base_url, "--model", "sim-mid", "--limit", "30",
            "--k-max", "8", "--seed", "1", "--json", str(out)]
    proc = run_cli(args, home)
    assert proc.returncode == 0, proc.stderr
    return {"home": home, "args": args, "doc": json.loads(out.read_text()), "proc": proc,
            "requests": len(chat_200(demo)) - before}


# ------------------------------------------------------------------------------------------------------ certify
def test_certify_json_schema(first_run) -> None:
    doc, proc = first_run["doc"], first_run["proc"]
    assert "textual-not-loaded" in proc.stderr  # headless never imports Textual
    assert "Traceback" not in proc.stderr
    assert TOP_KEYS <= set(doc)
    assert doc["task"]["name"] == TASK and doc["task"]["items"] == 30 and len(doc["task"]["sha256"]) == 64
    assert (doc["alpha"], doc["delta"], doc["stopping"], doc["k_max"]) == (0.10, 0.05, "anytime", 8)
    assert doc["model"] == "sim-mid" and doc["endpoint"].startswith("http://127.0.0.1:")
    roles = [it["role"] for it in doc["items"]]
    assert roles.count("calibration") == 15 and roles.count("deployment") == 15  # default n_cal = half
    assert doc["n_cal"] == 15 and doc["n_skipped"] == 0  # every calibration item has a reference
    assert doc["m_star"] is None or (isinstance(doc["m_star"], int) and doc["m_star"] >= 1)
    assert 0 <= doc["reliability_lower_bound"] <= doc["reliability_level"] < 1
    assert doc["confidence"] == 0.95 and doc["passed"] is None  # no gate given
    for key in ("coverage", "conditional_coverage", "capability_gap", "avg_set_size"):
        assert isinstance(doc[key], float)  # deployment items have references
    # calls: every answered request of this invocation was counted, none cached on a first run
    calls = doc["calls"]
    assert calls["made"] == first_run["requests"] and calls["cached"] == 0 and calls["failed"] == 0
    used = sum(it["samples"] for it in doc["items"])
    assert calls["saved_vs_kmax"] == pytest.approx(1 - used / (30 * 8))
    assert used == calls["made"]  # the sampler is sequential per item: nothing paid is left unused
    for it in doc["items"]:
        assert 1 <= it["samples"] <= 8 and 0 <= it["invalid"] <= it["samples"]
        counts = [c["count"] for c in it["classes"]]
        assert counts == sorted(counts, reverse=True) and sum(counts) + it["invalid"] == it["samples"]
        answers = [c["answer"] for c in it["classes"]]
        assert all(a and not a.startswith("\u2205") for a in answers)  # INVALID never ranked
        assert it["prediction_set"] == answers[: len(it["prediction_set"])]
        if doc["m_star"] is None:
            assert it["prediction_set"] == answers
        else:
            assert len(it["prediction_set"]) == min(doc["m_star"], len(answers))
        assert it["score"] is None or (isinstance(it["score"], int) and it["score"] >= 1)
        assert it["verified_by"] == "reference"
    # the reliability level is Def. 2.4 over every verified item (calibration + deployment with references)
    top = sum(1 for it in doc["items"] if it.get("score") == 1)
    assert doc["reliability_level"] == pytest.approx(top / (30 + 1))


def test_rerun_costs_zero_calls_and_gives_the_same_json(demo, first_run, tmp_path, incli: InProcessCli) -> None:
    out = tmp_path / "again.json"
    before = len(demo.requests)
    args = [*first_run["args"][:-1], str(out)]
    proc = incli(first_run["home"], *args)
    assert proc.returncode == 0, proc.stderr
    assert len(demo.requests) == before  # not a single request, not even the reachability probe
    again, first = json.loads(out.read_text()), first_run["doc"]
    assert again["calls"]["made"] == 0 and again["calls"]["failed"] == 0
    assert again["calls"]["cached"] == first["calls"]["made"]
    strip = lambda d: {**d, "calls": {k: v for k, v in d["calls"].items() if k == "saved_vs_kmax"}}  # noqa: E731
    assert strip(again) == strip(first)


def test_exit_codes_for_the_gate(demo, first_run, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(first_run["home"]))
    base = [a for a in first_run["args"] if a not in ("--json",) and not a.endswith(".json")]
    level = first_run["doc"]["reliability_level"]
    before = len(demo.requests)
    bound = first_run["doc"]["reliability_lower_bound"]
    assert main([*base, "--min-reliability", f"{level - 0.01:.4f}", "--gate-on", "level", "--quiet"]) == 0
    assert main([*base, "--min-reliability", f"{min(1.0, level + 0.01):.4f}", "--gate-on", "level", "--json", "-",
                 "--quiet"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] is False and doc["min_reliability"] == pytest.approx(min(1.0, level + 0.01), abs=1e-4)
    assert doc["gate_on"] == "level"
    # issue 11 §4: the default gate is the lower confidence bound; a threshold between bound and level fails
    between = (bound + level) / 2
    assert main([*base, "--min-reliability", f"{between:.4f}", "--json", "-", "--quiet"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["gate_on"] == "bound" and doc["gate"]["value"] == doc["reliability_lower_bound"]
    assert doc["gate"]["level"] == doc["reliability_level"] and doc["gate"]["summary"].startswith("FAIL: 95% lower")
    assert main([*base, "--min-reliability", f"{bound - 0.01:.4f}", "--quiet"]) == 0
    assert main([*base, "--min-reliability", f"{between:.4f}", "--confidence", "0.8", "--json", "-", "--quiet"]) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    assert doc["confidence"] == 0.8 and doc["gate"]["summary"].split(":")[1].strip().startswith("80% lower bound")
    for key in ("worst_case", "prediction_sets", "bootstrap", "split_stability"):
        assert key in doc
    assert doc["bootstrap"]["samples_used"]["lower"] <= doc["bootstrap"]["samples_used"]["estimate"]
    assert doc["split_stability"]["n_splits"] == 100
    assert doc["adaptive_sets"]["average_set_size"] >= 1
    assert len(demo.requests) == before  # the gate reuses the stored samples


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("relgate: error: ") and "Traceback" not in err
    return lines[0]


@pytest.fixture()
def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_user_errors_are_one_line_with_exit_2(demo, tmp_path, monkeypatch, capsys, free_port) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    bad_task = tmp_path / "bad.jsonl"
    bad_task.write_text('{"id": "a", "question": "1 + 1?"}\n{"id": "a", "question": "2 + 2?"}\n')
    good_task = tmp_path / "good.jsonl"
    good_task.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {i} + 1?"}) + "\n" for i in range(4)))
    bad_labels = tmp_path / "labels.jsonl"
    bad_labels.write_text('{"id": "q0", "rank": 1}\n{"id": "q1", "rank": "first"}\n')
    base = ["certify", "--endpoint", demo.base_url, "--model", "sim-mid", "--k-max", "2", "--quiet"]
    cases = [
        ([*base, "--task", "no-such-task"], "no-such-task"),
        ([*base, "--task", str(bad_task)], "bad.jsonl"),
        ([*base, "--task", str(good_task), "--canon", "regex:("], "regex"),
        ([*base, "--task", str(good_task), "--canon", "fuzzy"], "canonicalizer"),
        ([*base, "--task", str(good_task), "--labels", str(bad_labels)], "labels.jsonl:2"),
        ([*base, "--task", str(good_task), "--labels", str(tmp_path / "missing.jsonl")], "not found"),
        ([*base, "--task", str(good_task), "--alpha", "2"], "--alpha"),
        ([*base, "--task", str(good_task), "--k-max", "many"], "--k-max"),
        ([*base, "--task", str(good_task), "--stopping", "soon"], "--stopping"),
        ([*base, "--task", str(good_task), "--n-cal", "9"], "--n-cal"),
        ([*base, "--task", str(good_task), "--api-key-env", "sk-live-123"], "NAME of an environment variable"),
        ([*base, "--task", str(good_task), "--api-key-env", "RELGATE_UNSET_VAR_X"], "RELGATE_UNSET_VAR_X"),
        (["certify", "--task", str(good_task), "--model", "m"], "--endpoint"),
        (["certify", "--task", str(good_task), "--endpoint", f"http://127.0.0.1:{free_port}/v1", "--model", "m"],
         "cannot reach the endpoint"),
        (["report", "no-such-run"], "no run"),
        (["frobnicate"], "invalid choice"),
    ]
    for argv, fragment in cases:
        rc = main(argv)
        line = _one_error_line(capsys.readouterr().err)
        assert rc == 2, argv
        assert fragment in line, (argv, line)
    assert not (tmp_path / "runs").exists() or all(
        (p / "samples.jsonl").exists() is False for p in (tmp_path / "runs").iterdir()
    )  # bad input: nothing sampled


def test_labels_file_rank_none_skip(demo, tmp_path, monkeypatch, capsys) -> None:
    """A task without references, verified by a labels file: rank r -> score r, none -> score ∞ (counted),
    skip -> excluded from n and counted in n_skipped. Labels persist in the run."""
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": f"n{i:02d}", "question": f"What is {17 * i} + {i + 3}?"}) + "\n"
                            for i in range(14)))
    base = ["certify", "--task", str(task), "--endpoint", demo.base_url, "--model", "sim-weak", "--k-max", "6",
            "--canon", "numeric", "--quiet", "--json", "-"]
    assert main(base) == 0
    doc = json.loads(capsys.readouterr().out)
    cal = [it for it in doc["items"] if it["role"] == "calibration"]
    assert len(cal) == 7 and doc["n_cal"] == 0 and doc["n_pending"] == 7 and doc["m_star"] is None
    assert all("score" not in it for it in doc["items"])
    verdicts: list[dict] = []
    for j, it in enumerate(cal):
        if j == 0:
            verdicts.append({"id": it["id"], "skip": True})
        elif j in (1, 2):
            verdicts.append({"id": it["id"], "none": True})
        elif len(it["classes"]) >= 2 and j == 3:
            verdicts.append({"id": it["id"], "rank": 2})
        elif it["classes"]:
            verdicts.append({"id": it["id"], "rank": 1})
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    assert main([*base, "--labels", str(labels)]) == 0
    doc2 = json.loads(capsys.readouterr().out)
    assert doc2["calls"]["made"] == 0
    n_scored = len(verdicts) - 1
    assert (doc2["n_cal"], doc2["n_skipped"], doc2["n_pending"]) == (n_scored, 1, 7 - len(verdicts))
    by_id = {it["id"]: it for it in doc2["items"]}
    for v in verdicts:
        it = by_id[v["id"]]
        assert it["verified_by"] == "file"
        if v.get("skip"):
            assert "score" not in it and it["skipped"] is True
        elif v.get("none"):
            assert it["score"] is None  # ∞, kept
        else:
            assert it["score"] == v["rank"]
    n_top = sum(1 for v in verdicts if v.get("rank") == 1)
    assert doc2["reliability_n"] == n_scored
    assert doc2["reliability_level"] == pytest.approx(n_top / (n_scored + 1))
    # the labels are in the run store: the same command without --labels keeps them
    assert main(base) == 0
    doc3 = json.loads(capsys.readouterr().out)
    assert (doc3["n_cal"], doc3["n_skipped"], doc3["reliability_level"]) == (
        doc2["n_cal"], doc2["n_skipped"], doc2["reliability_level"])
    # a rank beyond the candidates is refused before anything is written
    bad = tmp_path / "bad_rank.jsonl"
    bad.write_text(json.dumps({"id": cal[1]["id"], "rank": 99}) + "\n")
    assert main([*base, "--labels", str(bad)]) == 2
    assert "rank 99 does not exist" in _one_error_line(capsys.readouterr().err)
    assert open_run(doc2["run_id"], tmp_path / "runs").current_labels()[cal[1]["id"]].none


# ------------------------------------------------------------------------------------------- runs / report / tasks
def test_runs_and_report(first_run, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(first_run["home"]))
    run_id = first_run["doc"]["run_id"]
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    assert run_id[:20] in out and "sim-mid" in out
    assert main(["runs", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    row = next(r for r in rows if r["run_id"] == run_id)
    assert row["status"] == "complete" and row["reliability_level"] == pytest.approx(first_run["doc"]["reliability_level"])
    assert main(["report", run_id, "--format", "json"]) == 0
    stored = json.loads(capsys.readouterr().out)
    assert stored["items"] == first_run["doc"]["items"] and stored["run_id"] == run_id
    assert main(["report", run_id[:-4], "--format", "csv"]) == 0  # unique prefix
    df = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert len(df) == 30 and {"id", "role", "score", "prediction_set"} <= set(df.columns)
    assert main(["report", run_id, "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert md.startswith(f"# relgate certification — {TASK} on sim-mid") and "Reliability level" in md
    target = first_run["home"] / "exports" / "r.md"
    assert main(["report", run_id, "--output", str(target)]) == 0
    assert target.read_text() == md


def test_tasks_lists_bundled(capsys) -> None:
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert TASK in out and "mmlu" in out


def test_no_arguments_launch_the_tui(monkeypatch, capsys) -> None:
    import relgate_tui.tui.app as app

    calls = []
    monkeypatch.setattr(app, "run", lambda: calls.append("run") or 0)
    assert main([]) == 0 and calls == ["run"]
    monkeypatch.setitem(sys.modules, "relgate_tui.tui.app", None)  # an install without the TUI
    assert main([]) == 2
    assert "the terminal UI is not installed in this build" in _one_error_line(capsys.readouterr().err)


def test_failed_requests_are_counted_visible_and_retried_on_rerun(tmp_path, monkeypatch, capsys) -> None:
    """A non-retryable 400 ends one item's sampling: the run ends with exit 3 (sampling incomplete: no PASS/FAIL on
    partial data), the failure is counted and the item is marked incomplete; the same command later retries exactly
    what is missing."""
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with DemoServer(faults=FaultPlan(script=["400", "500"])) as server:
        args = ["certify", "--task", "gsm8k", "--limit", "10", "--endpoint", server.base_url, "--model", "sim-strong",
                "--k-max", "5", "--json", "-"]
        assert main(args) == 3
        captured = capsys.readouterr()
        doc = json.loads(captured.out)
        assert doc["sampling_complete"] is False and doc["passed"] is None
        assert doc["calls"]["failed"] == 1  # the 400; the 500 was retried and succeeded
        assert doc["n_incomplete"] == 1
        bad = [it for it in doc["items"] if it.get("incomplete")]
        assert len(bad) == 1 and bad[0]["samples"] < 5
        assert "4xx" in captured.err and "sampling incomplete" in captured.err
        before = len(chat_200(server))
        assert main(args) == 0
        doc2 = json.loads(capsys.readouterr().out)
        assert doc2["n_incomplete"] == 0 and doc2["calls"]["failed"] == 0
        assert doc2["calls"]["made"] == len(chat_200(server)) - before > 0


def test_calls_saved_ignores_failed_items_under_rule_none(tmp_path, monkeypatch, capsys) -> None:
    """Issue 11 §4: with `--stopping none` nothing is ever saved by stopping; two items cut short by non-retryable
    failures used fewer samples but must not be reported as savings (was 46%)."""
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with DemoServer(faults=FaultPlan(script=["400", "400"])) as server:
        args = ["certify", "--task", "gsm8k", "--limit", "4", "--endpoint", server.base_url, "--model", "sim-strong",
                "--k-max", "5", "--stopping", "none", "--concurrency", "1", "--json", "-", "--quiet"]
        assert main(args) == 3  # two items cut short: sampling incomplete, no PASS/FAIL (issue 10 §4)
        doc = json.loads(capsys.readouterr().out)
    assert doc["calls"]["failed"] == 2 and doc["n_incomplete"] == 2
    assert doc["samples_used"] < 4 * 5
    assert doc["calls"]["saved_vs_kmax"] == 0.0


def test_markdown_report_shows_gate_basis_and_section_3_6_readouts(first_run) -> None:
    """Issue 11 §4: the report states the gate decision with both numbers, the bootstrap intervals and the split
    stability from the document."""
    from relgate_tui.engine.certification.report import render_report

    doc = {**first_run["doc"], "min_reliability": 0.5, "passed": True, "n_skipped": 2,
           "gate": {"threshold": 0.5, "gate_on": "bound", "value": 0.8, "level": 0.9, "lower_bound": 0.8,
                    "confidence": 0.95, "passed": True, "summary": "PASS: 95% lower bound 80.0% ≥ gate 50.0% (level 90.0%)"},
           "worst_case": {"level": 0.8, "lower_bound": 0.7, "n_skipped": 2}}
    md = render_report(doc, "md")
    assert "95% lower bound 80.0% ≥ gate 50.0% (level 90.0%)" in md
    assert "Worst case, skipped items counted as misses: level 80.0%" in md
    assert "Samples used per item:" in md and "percentile bootstrap, B = 10000" in md
    assert "Stability over 100 random splits" in md and "Adaptive sets (eq. 6.7): q̂ = " in md
