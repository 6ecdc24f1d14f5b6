"""The pairwise judge in the TUI's session (issue 4 item 3): asked after sampling over real loopback sockets, its
verdicts stored in the run, reopened offline, and its section recomputed as labels and α change."""

from __future__ import annotations

import asyncio
import json

import pytest

from relgate_tui.demo import DemoServer
from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.certification.setup import RunSetup

TASK = "bigbench-3digit-addition"


async def drain(session: Session) -> list:
    return [u async for u in session.sample()]


@pytest.fixture(scope="module")
def judged_session_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge-session")
    with DemoServer() as demo:
        setup = RunSetup(base_url=demo.base_url, model="sim-weak", task=TASK, k_max=8, limit=24, seed=5,
                         simulated=True, pairwise_judge_model="sim-judge")
        session = Session.create(setup, runs_dir=root / "runs", cache_dir=root / "cache")
        assert session.uses_judge and session.judge_pending
        updates = asyncio.run(drain(session))
        judge_updates = [u for u in updates if u.judge_total]
        assert judge_updates, "the judge pass reports progress"
        last = judge_updates[-1]
        assert last.judge_done == last.judge_total > 0
        assert session.sampling_complete and not session.judge_pending
        # the counters shown during the judge pass add the judge's calls to the sampling pass's
        assert last.calls_made == session.calls.made + session.judge_calls.made
        assert session.calls.made > 0 and session.judge_calls.made > 0
        doc = session.save_results(0.10)
        made = session.judge_calls.made
        path = session.path
        session.close()
    return {"path": path, "doc": doc, "made": made, "cache": root / "cache", "total": last.judge_total}


def test_verdicts_are_stored_in_the_run(judged_session_path):
    stored = json.loads((judged_session_path["path"] / "judge_verdicts.json").read_text())
    assert stored["judge"]["model"] == "sim-judge"
    n = sum(len(v) for v in stored["items"].values())
    assert n == judged_session_path["total"]
    assert judged_session_path["made"] > 0


def test_document_has_both_rankings(judged_session_path):
    pj = judged_session_path["doc"]["pairwise_judge"]
    assert set(pj["rankings"]) == {"frequency", "judge"}
    assert pj["rankings"]["frequency"]["reliability_level"] == judged_session_path["doc"]["reliability_level"]
    assert pj["n_items_judged"] == len(pj["items"]) > 0


def test_reopen_offline_recomputes_the_judge_section_without_network(judged_session_path):
    # the demo server is stopped: any request would fail
    session = Session.open(judged_session_path["path"], cache_dir=judged_session_path["cache"])
    try:
        assert session.sampling_complete and not session.judge_pending
        again = session.judge_results(0.10)
        before = judged_session_path["doc"]["pairwise_judge"]
        assert again["rankings"] == before["rankings"] and again["items"] == before["items"]
        # α changes the judge ranking's M* like the frequency ranking's (monotone: larger α, smaller M*)
        wide, narrow = session.judge_results(0.02), session.judge_results(0.40)
        m = [r["rankings"]["judge"]["m_star"] for r in (wide, narrow)]
        m = [float("inf") if x is None else x for x in m]
        assert m[0] >= m[1]
    finally:
        session.close()


def test_a_changed_judge_configuration_is_asked_again(judged_session_path, tmp_path):
    from relgate_tui.engine.judging.certify_judge import PairwiseJudgeConfig, verdicts_from_document

    stored = json.loads((judged_session_path["path"] / "judge_verdicts.json").read_text())
    cfg = PairwiseJudgeConfig(endpoint=stored["judge"]["endpoint"], model="sim-judge", seed=5)
    assert verdicts_from_document(stored, cfg) is not None
    assert verdicts_from_document(stored, PairwiseJudgeConfig(endpoint=cfg.endpoint, model="other", seed=5)) is None
    assert verdicts_from_document(stored, PairwiseJudgeConfig(endpoint=cfg.endpoint, model="sim-judge", seed=5,
                                                              reps=5)) is None
    # verdicts stored by the earlier both-orders design (no "protocol" in the identity) are asked again
    old = {k: v for k, v in stored["judge"].items() if k != "protocol"}
    assert stored["judge"]["protocol"] == "paper000"
    assert verdicts_from_document({"judge": old, "items": stored["items"]}, cfg) is None
    assert verdicts_from_document({"judge": stored["judge"], "items": {"x": [["a", "b"]]}}, cfg) is None
