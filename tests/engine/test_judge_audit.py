"""Judge audit end to end against the demo endpoint's simulated judge over loopback (issue 4 items 2 and 4)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from relgate_tui.engine.demo_server import DemoServer
from relgate_tui.engine.judge_audit import JudgeAuditConfig, run_judge_audit, select
from relgate_tui.engine.judge_data import load_audit_set


@pytest.fixture(scope="module")
def server():
    with DemoServer() as srv:
        yield srv


def audit(server: DemoServer, tmp_path: Path, **kw) -> dict:
    cfg = JudgeAuditConfig(data="hanna", criterion="coherence", endpoint=server.base_url, model="sim-judge",
                           inputs=6, candidates=5, cache_dir=str(tmp_path / "cache"), **kw)
    return run_judge_audit(cfg)


def test_pairwise_audit_document(server: DemoServer, tmp_path: Path) -> None:
    before = len(server.chat_requests)
    doc = audit(server, tmp_path, protocol="pairwise", reps=3)
    pw = doc["pairwise"]
    assert doc["criterion"] == "Coherence" and doc["n_inputs"] == 6
    # 6 inputs x C(5,2) pairs x 2 orders x 3 reps
    assert pw["verdicts"]["total"] == 6 * 10 * 2 * 3
    assert doc["calls"]["made"] == len(server.chat_requests) - before > 0
    for inp in pw["inputs"]:
        assert 0.0 <= inp["rho"] <= 1.0 and inp["n_cycles"] == len(inp["cyclic_triples"])
        assert inp["rho"] == pytest.approx(inp["n_cycles"] / math.comb(5, 3))
        for triple in inp["cyclic_triples"]:  # each listed triple really is a directed cycle of the edges
            edges = {(w, l) for w, l, _ in inp["edges"]}
            a, b, c = triple
            assert {(a, b), (b, c), (c, a)} <= edges
        assert set(inp["rankings"]) == {"win_rate", "bradley_terry", "schulze", "copeland", "mfas_exact", "mfas_copeland"}
        assert inp["mfas"]["optimal"] and (inp["mfas"]["cost"] > 0) == (inp["n_cycles"] > 0)
    assert [i["rho"] for i in pw["inputs"]] == sorted((i["rho"] for i in pw["inputs"]), reverse=True)
    # the simulated judge follows human quality: every method agrees with the human ranking on average
    for method, r in pw["rankings"].items():
        assert r["mean_kendall_tau"] is not None and r["mean_kendall_tau"] > 0.3, method
    # and favours the first-shown candidate
    assert pw["position_bias"]["first_shown_share"] > 0.5
    json.dumps(doc, allow_nan=False)


def test_rerun_is_served_from_the_cache(server: DemoServer, tmp_path: Path) -> None:
    first = audit(server, tmp_path, protocol="pairwise", reps=1)
    n = len(server.chat_requests)
    again = audit(server, tmp_path, protocol="pairwise", reps=1)
    assert len(server.chat_requests) == n and again["calls"]["made"] == 0
    assert again["pairwise"]["inputs"] == first["pairwise"]["inputs"]


def test_direct_scores_give_a_likert_conformal_table(server: DemoServer, tmp_path: Path) -> None:
    cfg = JudgeAuditConfig(data="hanna", criterion="Relevance", endpoint=server.base_url, model="sim-judge",
                           protocol="direct", reps=3, inputs=40, candidates=6, cache_dir=str(tmp_path / "c"))
    doc = run_judge_audit(cfg)
    table = doc["direct"]["likert_conformal"]
    assert [row["alpha"] for row in table] == [0.05, 0.10, 0.15, 0.20]
    for row in table:
        assert row["coverage"] >= row["target_coverage"] - 0.05  # 240 items, 20 splits: split-conformal coverage
        assert 0 <= row["mean_width"] <= 4
    assert doc["direct"]["n_scored"] == 240


def test_selection_is_seeded() -> None:
    hanna = load_audit_set("hanna")
    a = select(hanna, 5, 4, seed=1)
    assert [i.id for i in a] == [i.id for i in select(hanna, 5, 4, seed=1)]
    assert [i.id for i in a] != [i.id for i in select(hanna, 5, 4, seed=2)]
    assert all(len(i.candidates) == 4 for i in a)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--data", "nope.jsonl"], "no such audit data file"),
        (["--criterion", "Fluency"], "unknown criterion"),
        (["--reps", "0"], "--reps must be"),
        (["--candidates", "1"], "--candidates must be"),
    ],
)
def test_cli_errors_are_one_line(server: DemoServer, tmp_path: Path, args: list[str], message: str) -> None:
    base = {"--data": "hanna", "--criterion": "Coherence", "--endpoint": server.base_url, "--model": "sim-judge"}
    for k, v in zip(args[::2], args[1::2]):
        base[k] = v
    argv = [x for kv in base.items() for x in kv] + ["--inputs", "2", "--candidates", base.get("--candidates", "3")]
    env = {"RELGATE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "relgate_tui.cli", "judge-audit", *argv], capture_output=True, text=True, env=env)
    assert r.returncode == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_cli_writes_json(server: DemoServer, tmp_path: Path) -> None:
    out = tmp_path / "audit.json"
    r = subprocess.run(
        [sys.executable, "-m", "relgate_tui.cli", "judge-audit", "--data", "hanna", "--criterion", "Empathy",
         "--endpoint", server.base_url, "--model", "sim-judge", "--inputs", "3", "--candidates", "4", "--reps", "1",
         "--json", str(out)],
        capture_output=True, text=True, env={"RELGATE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["pairwise"]["verdicts"]["total"] == 3 * 6 * 2
    assert "Kendall tau vs human" in r.stdout
