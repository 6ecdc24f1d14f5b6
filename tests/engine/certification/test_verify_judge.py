"""The verification judge and the judge_assisted block end to end over the demo server (issue 22): sim-mid answers
a task without references, sim-judge verifies every top answer, humans' verdicts come from a labels file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from relgate_tui.cli import main
from relgate_tui.core import ppi
from relgate_tui.demo.server import DemoServer
from relgate_tui.engine.certification.assisted import labelled_arrays, recompute
from relgate_tui.engine.judging.prompts import parse_verification_prompt, parse_yes_no, verification_prompt
from relgate_tui.engine.judging.verify_judge import p_yes_from_logprobs
from relgate_tui.engine.transport.logprobs import TokenLogprob

N_ITEMS = 60


def _items() -> list[dict]:
    lines = Path(__file__).resolve().parents[3].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines][:N_ITEMS]


def _chat_requests(server: DemoServer, model: str) -> list:
    return [r for r in server.requests if r.path.endswith("/chat/completions") and r.status == 200
            and r.model == model]


@pytest.fixture(scope="module")
def verified_run(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    items = _items()
    task = home / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n" for it in items))
    mp = pytest.MonkeyPatch()
    mp.setenv("RELGATE_HOME", str(home))
    try:
        with DemoServer() as server:
            args = ["certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid",
                    "--canon", "numeric", "--k-max", "6", "--seed", "2", "--quiet", "--verify-judge-model",
                    "sim-judge", "--min-reliability", "0.5"]
            assert main(args + ["--json", str(home / "first.json")]) == 3  # no label yet: not decided (issue 33 §7)
            first = json.loads((home / "first.json").read_text())
            judged_before = len(_chat_requests(server, "sim-judge"))
            truth = {it["id"]: it["answer"] for it in items}
            labels = []
            for it in first["items"]:
                if it["role"] == "calibration":
                    classes = [c["answer"] for c in it["classes"]]
                    ok = truth[it["id"]] in classes
                    labels.append({"id": it["id"], "rank": classes.index(truth[it["id"]]) + 1} if ok
                                  else {"id": it["id"], "none": True})
            (home / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))
            assert main(args + ["--labels", str(home / "labels.jsonl"), "--json", str(home / "second.json")]) == 0
            second = json.loads((home / "second.json").read_text())
            rerun_judge_requests = len(_chat_requests(server, "sim-judge")) - judged_before
    finally:
        mp.undo()
    return {"first": first, "second": second, "labels": labels,
            "rerun_judge_requests": rerun_judge_requests, "home": home}


def test_every_item_without_reference_is_judged_once_and_a_rerun_costs_nothing(verified_run):
    first, second = verified_run["first"]["judge_assisted"], verified_run["second"]["judge_assisted"]
    assert first["n_judged"] == N_ITEMS and first["calls"]["made"] == N_ITEMS - first["n_no_answer"]
    assert first["n_labels"] == 0 and first["lower_bound"] == 0.0
    assert verified_run["rerun_judge_requests"] == 0
    assert second["calls"] == {"made": 0, "cached": first["calls"]["made"], "failed": 0}
    assert [r["judge"] for r in first["verdicts"]] == [r["judge"] for r in second["verdicts"]]


def test_the_judge_never_sees_a_label(verified_run):
    # the second run added 40-odd human labels; every judge prompt was still served from the cache, so the prompts
    # (the cache key) are byte-identical to those sent before any label existed
    assert verified_run["rerun_judge_requests"] == 0
    assert verified_run["second"]["judge_assisted"]["n_labels"] > 0


def test_block_is_recomputable_from_the_results_alone(verified_run):
    doc = verified_run["second"]
    block = doc["judge_assisted"]
    assert block["n_labels"] == len(verified_run["labels"]) > 0
    bound = recompute(json.loads(json.dumps(block)))
    assert bound.lower == block["lower_bound"] and bound.estimate == pytest.approx(block["estimate"])
    assert bound.method == block["method"] == ppi.METHOD
    # the labelled rows are the calibration items, in the run's split order, with the humans' verdicts
    by_id = {it["id"]: it for it in doc["items"]}
    labelled = [r for r in block["verdicts"] if r["human"] is not None]
    assert [r["id"] for r in labelled] == [r["id"] for r in block["verdicts"] if by_id[r["id"]]["role"] ==
                                           "calibration"]
    for r in labelled:
        assert r["human"] == int(by_id[r["id"]].get("score") == 1)


def test_agreement_table_counts_the_labelled_pairs(verified_run):
    block = verified_run["second"]["judge_assisted"]
    _, f_lab, y_lab = labelled_arrays(block["verdicts"])
    table = block["agreement"]["table"]
    assert table["judge_yes_human_no"] == int(((f_lab == 1) & (y_lab == 0)).sum())
    assert table["judge_no_human_yes"] == int(((f_lab == 0) & (y_lab == 1)).sum())
    assert sum(table.values()) == block["agreement"]["n"] == f_lab.size
    assert block["agreement"]["agreement_rate"] == pytest.approx(float(np.mean(f_lab == y_lab)))
    assert block["agreement"]["agreement_rate"] >= 0.75, "sim-judge agrees with the truth most of the time"
    far = block["agreement"]["false_accept"]
    assert far["n_human_no"] == int((y_lab == 0).sum()) and far["upper"] >= (far["rate"] or 0.0)


def test_default_gate_is_the_assisted_mixture_at_full_confidence(verified_run):
    """Issue 33 §1: ``best`` is decided on the e-process mixture at the full confidence (the former δ/2 halves —
    whose Clopper–Pearson half was not valid when watched — are gone, so their numbers are no longer asserted)."""
    doc = verified_run["second"]
    gate = doc["gate"]
    assert doc["gate_on"] == gate["gate_on"] == "assisted" and "confidence_each" not in gate
    assert gate["value"] == gate["assisted_lower_bound"] == doc["judge_assisted"]["lower_bound"]
    assert doc["passed"] is (gate["value"] >= 0.5)
    assert "reliability_lower_bound" in doc and doc["judge_assisted"]["lower_bound"] is not None


def test_markdown_and_csv_carry_the_block(verified_run):
    from relgate_tui.engine.certification.report import report_csv, report_markdown

    doc = verified_run["second"]
    md = report_markdown(doc)
    assert "## Judge-assisted certification" in md and "False accepts" in md
    csv_text = report_csv(doc)
    header = csv_text.splitlines()[0].split(",")
    assert header[-2:] == ["verify_judge", "verify_judge_p_yes"]


def test_gate_on_assisted_needs_a_verification_judge(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    rc = main(["certify", "--task", "gsm8k", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
               "--gate-on", "assisted"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "--verify-judge-model" in err and len(err.splitlines()) == 1


def test_yes_no_parser_and_logprob_probability():
    assert parse_yes_no("Yes") == 1 and parse_yes_no("**no.**") == 0 and parse_yes_no("Answer: yes") == 1
    assert parse_yes_no("yes\nActually no") is None and parse_yes_no("maybe") is None and parse_yes_no(None) is None
    assert parse_verification_prompt(verification_prompt("Q?", "42")).answer == "42"
    tokens = (TokenLogprob("Yes", np.log(0.6), (("Yes", np.log(0.6)), ("No", np.log(0.3)), ("Maybe", np.log(0.1)))),)
    assert p_yes_from_logprobs(tokens) == pytest.approx(0.6 / 0.9)
    assert p_yes_from_logprobs(None) is None


def test_a_hostile_verification_judge_is_counted_never_a_crash(tmp_path, monkeypatch, capsys):
    """The verification judge at a hostile server: markup and control characters, unparseable and contradictory
    replies and truncated JSON are verdicts "no" counted apart (any rule blind to the labels keeps the bound valid);
    the run completes and nothing hostile reaches the output."""
    from tests.engine.hostile import HostileServer, chat, response

    items = _items()[:12]
    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n" for it in items))
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    cycle = [chat("Yes"), chat("[bold red]no[/]\x1b[2J\u202e"), chat("yes\\nActually no"), chat("maybe"),
             response(200, '{"choices": [{"message": {"content": "Ye'), chat("No.")]
    with DemoServer() as demo, HostileServer(cycle=cycle) as judge:
        rc = main(["certify", "--task", str(task), "--endpoint", demo.base_url, "--model", "sim-mid", "--canon",
                   "numeric", "--k-max", "3", "--verify-judge-model", "j", "--verify-judge-endpoint", judge.base_url,
                   "--json", str(tmp_path / "out.json")])
    captured = capsys.readouterr()
    assert rc in (0, 1) and "Traceback" not in captured.err
    assert "\x1b" not in captured.err and "\u202e" not in captured.err
    block = json.loads((tmp_path / "out.json").read_text())["judge_assisted"]
    assert block["n_judged"] == 12
    statuses = [r["status"] for r in block["verdicts"]]
    assert "unparseable" in statuses and "ok" in statuses
    assert all(r["judge"] == 0 for r in block["verdicts"] if r["status"] != "ok")
    assert block["n_judge_unparseable"] + block["n_judge_failed"] == sum(s != "ok" for s in statuses)
