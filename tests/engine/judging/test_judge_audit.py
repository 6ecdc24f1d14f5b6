"""Judge audit end to end against the demo endpoint's simulated judge over loopback (issue 4 items 2 and 4)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from relgate_tui.demo import DemoServer
from relgate_tui.engine.judging import JudgeProgress, export_name, select
from relgate_tui.engine.judging.audit_run import (
    JudgeAuditConfig,
    audit_events,
    audit_result,
    export_audit,
    run_judge_audit,
)
from relgate_tui.engine.judging.data import load_audit_set
from tests.conftest import InProcessCli


@pytest.fixture(scope="module")
def server():
    with DemoServer() as srv:
        yield srv


def _wait_until_idle(server: DemoServer, limit_s: float = 30.0) -> None:
    """Until the server has no open connection (a synchronisation point, not a timing assumption: the limit only
    turns a hang into a failure)."""
    deadline = time.monotonic() + limit_s
    while server._writers and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not server._writers, "the server still has open connections"


def audit(server: DemoServer, tmp_path: Path, **kw) -> dict:
    cfg = JudgeAuditConfig(data="hanna", criterion="coherence", endpoint=server.base_url, model="sim-judge",
                           inputs=6, candidates=5, cache_dir=str(tmp_path / "cache"), **kw)
    return run_judge_audit(cfg)


def test_pairwise_audit_document(server: DemoServer, tmp_path: Path) -> None:
    before = len(server.chat_requests)
    doc = audit(server, tmp_path, protocol="pairwise", reps=3)
    pw = doc["pairwise"]
    assert doc["criterion"] == "Coherence" and doc["n_inputs"] == 6
    # 6 inputs x C(5,2) pairs x k = 3 verdicts, each in a seeded random order
    assert pw["verdicts"]["total"] == 6 * 10 * 3
    assert pw["protocol"] == {"name": "paper000", "k": 3, "seed": 0, "orders": "seeded fair coin per verdict",
                              "reasks": False}
    assert doc["calls"]["made"] == len(server.chat_requests) - before > 0
    for inp in pw["inputs"]:
        assert 0.0 <= inp["rho"] <= 1.0 and inp["n_cycles"] == len(inp["cyclic_triples"])
        if not inp["n_unresolved_pairs"]:  # k odd: every pair with valid verdicts only has a winner
            assert inp["n_decided_triples"] == math.comb(5, 3)
        assert inp["rho"] == pytest.approx(inp["n_cycles"] / inp["n_decided_triples"])
        for triple in inp["cyclic_triples"]:  # each listed triple really is a directed cycle of the edges
            edges = {(w, lo) for w, lo, _ in inp["edges"]}
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
def test_cli_errors_are_one_line(server: DemoServer, tmp_path: Path, args: list[str], message: str,
                                 incli: InProcessCli) -> None:
    base = {"--data": "hanna", "--criterion": "Coherence", "--endpoint": server.base_url, "--model": "sim-judge"}
    for k, v in zip(args[::2], args[1::2]):
        base[k] = v
    argv = [x for kv in base.items() for x in kv] + ["--inputs", "2", "--candidates", base.get("--candidates", "3")]
    r = incli(tmp_path, "judge", "audit", *argv)
    assert r.returncode == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_cli_writes_json(server: DemoServer, tmp_path: Path, incli: InProcessCli) -> None:
    out = tmp_path / "audit.json"
    r = incli(tmp_path, "judge-audit", "--data", "hanna", "--criterion", "Empathy", "--endpoint", server.base_url,
              "--model", "sim-judge", "--inputs", "3", "--candidates", "4", "--reps", "1", "--json", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["pairwise"]["verdicts"]["total"] == 3 * 6 * 1
    assert "Kendall tau vs human" in r.stdout


def test_pairs_give_the_verdicts_behind_each_edge_per_presentation_order(server: DemoServer, tmp_path: Path) -> None:
    reps = 3
    doc = audit(server, tmp_path, protocol="pairwise", reps=reps)
    for inp in doc["pairwise"]["inputs"]:
        cands = inp["candidates"]
        pairs = inp["pairs"]
        assert [(p["a"], p["b"]) for p in pairs] == [(a, b) for i, a in enumerate(cands) for b in cands[i + 1:]]
        edges = {frozenset((w, lo)): (w, m) for w, lo, m in inp["edges"]}
        for p in pairs:
            # every verdict is counted once, in the order it was shown: [a won, b won, no verdict]
            assert sum(p["a_first"]) + sum(p["b_first"]) == reps
            a_wins = p["a_first"][0] + p["b_first"][0]
            b_wins = p["a_first"][1] + p["b_first"][1]
            edge = edges.get(frozenset((p["a"], p["b"])))
            if a_wins == b_wins:
                assert edge is None and p["winner"] is None and p["margin"] == 0
            else:
                assert edge == (p["a"] if a_wins > b_wins else p["b"], abs(a_wins - b_wins))
                assert (p["winner"], p["margin"]) == edge
    # the pairs add up to the position-bias figures: first-shown wins over all valid verdicts
    first = valid = 0
    for inp in doc["pairwise"]["inputs"]:
        for p in inp["pairs"]:
            first += p["a_first"][0] + p["b_first"][1]
            valid += p["a_first"][0] + p["a_first"][1] + p["b_first"][0] + p["b_first"][1]
    bias = doc["pairwise"]["position_bias"]
    assert valid == bias["n_valid_verdicts"] and first / valid == pytest.approx(bias["first_shown_share"])


def test_progress_counts_every_planned_answer_and_the_calls(server: DemoServer, tmp_path: Path) -> None:
    seen = []
    cfg = JudgeAuditConfig(data="hanna", criterion="Coherence", endpoint=server.base_url, model="sim-judge",
                           protocol="both", reps=3, inputs=3, candidates=4, cache_dir=str(tmp_path / "c"))
    doc = run_judge_audit(cfg, on_event=lambda e: seen.append(e) if isinstance(e, JudgeProgress) else None)
    total = 3 * 6 * 3 + 3 * 4 * 3  # pairwise: 6 pairs × k verdicts; direct: 4 candidates × k scores
    assert all(p.total == total for p in seen)
    assert seen[0].done == 0 and seen[-1].done == total
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    last = seen[-1]
    calls = doc["calls"]
    assert (last.made, last.cached, last.failed) == (calls["made"], calls["cached"], calls["failed"])


def test_cancelling_the_audit_task_stops_it(tmp_path: Path) -> None:
    """No polled flag: the caller cancels the task iterating the audit (as the TUI's worker does); requests in
    flight are cancelled and nothing more is sent."""
    import asyncio

    with DemoServer(latency_ms=2) as fast:
        cfg = JudgeAuditConfig(data="hanna", criterion="Coherence", endpoint=fast.base_url, model="sim-judge",
                               protocol="pairwise", reps=3, inputs=40, candidates=11, concurrency=8,
                               cache_dir=str(tmp_path / "c"))
        done = []

        async def main() -> None:
            reached = asyncio.Event()

            async def consume() -> None:
                async for event in audit_events(cfg):
                    if isinstance(event, JudgeProgress):
                        done.append(event.done)
                        if event.done >= 300:
                            reached.set()

            task = asyncio.ensure_future(consume())
            await reached.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(main())
        # no timing: once the server has seen every connection close, every request sent has been recorded
        _wait_until_idle(fast)
        assert 300 <= max(done) < 40 * 55 * 2 * 3
        n = len(fast.chat_requests)
        assert n < 40 * 55 * 2 / 4  # stopped early: no worker went on through the queue
        _wait_until_idle(fast)
        assert len(fast.chat_requests) == n  # nothing more is sent once it stopped


def test_width_vs_error_points_come_from_the_first_conformal_split(server: DemoServer, tmp_path: Path) -> None:
    from relgate_tui.core import judge as cj

    cfg = JudgeAuditConfig(data="hanna", criterion="Relevance", endpoint=server.base_url, model="sim-judge",
                           protocol="direct", reps=2, inputs=10, candidates=4, cache_dir=str(tmp_path / "c"))
    direct = run_judge_audit(cfg)["direct"]
    we = direct["width_vs_error"]
    n = direct["n_scored"]
    assert we["alpha"] == 0.10 and we["split"] == 0
    assert len(we["points"]) + we["n_unscored"] == n - n // 2  # the test half
    assert all(0 <= w <= 5 and e >= 0 for e, w in we["points"])
    by_error = we["mean_width_by_error"]
    assert sum(count for _, _, count in by_error) == len(we["points"])
    assert [e for e, _, _ in by_error] == sorted({round(e, 6) for e, _ in we["points"]})
    for e, mean, count in by_error:
        widths = [w for x, w in we["points"] if round(x, 6) == e]
        assert (len(widths), mean) == (count, pytest.approx(sum(widths) / count))
    # the same split and q̂ as the table's first split: recompute it from the per-candidate scores (the paper's
    # single-score protocol by default: ŷ = the first valid score)
    assert direct["likert_protocol"] == "single"
    preds = [r["judge_scores"][0] if r["judge_scores"] else math.nan for r in direct["scores"]]
    human = [r["human"] for r in direct["scores"]]
    import numpy as np

    cal, test = cj.seeded_splits(n, cj.DEFAULT_SPLITS, 0)[0]
    y = cj.round_human_mean(np.array(human))
    res = cj.split_conformal_likert(np.array(preds)[cal], y[cal], np.array(preds)[test], y[test], 0.10)
    assert we["q_hat"] == (res.q_hat if math.isfinite(res.q_hat) else None)
    json.dumps(direct, allow_nan=False)


def test_exports_json_and_markdown(server: DemoServer, tmp_path: Path) -> None:
    cfg = JudgeAuditConfig(data="hanna", criterion="coherence", endpoint=server.base_url, model="sim-judge",
                           inputs=6, candidates=5, cache_dir=str(tmp_path / "cache"), protocol="both", reps=1)
    result = audit_result(cfg)
    doc = result.to_json()
    out = tmp_path / "exports"
    path = export_audit(result, "json", out)
    assert json.loads(path.read_text()) == doc and path.name == export_name(result, "json")
    assert path.name == "judge-audit-sim-judge-hanna-Coherence-both-k1-n6x5-seed0.json"
    md = export_audit(result, "md", out).read_text()
    assert md.startswith("# Judge audit: sim-judge on hanna / Coherence")
    assert f"{doc['pairwise']['cycles']['mean_rho']:.3f}" in md and "Likert conformal sets" in md
    for method in doc["pairwise"]["rankings"]:
        assert f"| {method} |" in md
    with pytest.raises(ValueError):
        export_audit(result, "csv", out)


def test_the_command_offers_the_engine_s_protocols() -> None:
    """commands/judge_audit.py keeps its own tuple (registering the parser imports no engine); it is the engine's."""
    from relgate_tui.commands.judge_audit import PROTOCOLS
    from relgate_tui.engine.judging.audit import PROTOCOLS as ENGINE_PROTOCOLS

    assert PROTOCOLS == ENGINE_PROTOCOLS
