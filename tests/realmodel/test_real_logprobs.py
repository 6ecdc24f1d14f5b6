"""Opt-in (``-m realmodel``): log-probabilities from a real llama.cpp server flow through the judging platform —
``Answer`` → cache → stored audit → export (issue 9 acceptance).

Start a server first (``bash bench/real_judges.sh``; see ``bench/REAL_JUDGES.md``), then::

    RELGATE_REAL_JUDGE_URL=http://127.0.0.1:8013/v1 RELGATE_REAL_JUDGE_MODEL=qwen2.5-coder-0.5b \\
        python -m pytest -m realmodel tests/realmodel
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from relgate_tui.cli import main

pytestmark = pytest.mark.realmodel

URL = os.environ.get("RELGATE_REAL_JUDGE_URL", "http://127.0.0.1:8013/v1")
MODEL = os.environ.get("RELGATE_REAL_JUDGE_MODEL", "qwen2.5-coder-0.5b")


def _answers(home: Path) -> list[dict]:
    (audit,) = list((home / "audits").iterdir())
    return [json.loads(line) for line in (audit / "answers.jsonl").read_text().splitlines() if line.strip()]


def test_real_server_log_probs_reach_the_stored_audit_and_the_export(tmp_path, monkeypatch):
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    args = ["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", URL, "--model", MODEL,
            "--protocol", "direct", "--inputs", "2", "--candidates", "2", "--reps", "1", "--temperature", "0",
            "--max-tokens", "4", "--top-logprobs", "5", "--concurrency", "1"]
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    assert main([*args, "--json", str(out1)]) == 0
    answers = _answers(tmp_path)
    assert len(answers) == 4
    for a in answers:
        assert a["logprobs"], "the server returned no log-probs"
        token, logprob, top = a["logprobs"][0]
        assert logprob <= 0 and top and all(lp <= 0 for _, lp in top)
    doc = json.loads(out1.read_text())
    rows = doc["direct"]["scores"]
    assert rows and all(r.get("score_logprobs") for r in rows)
    assert any(set(r["score_logprobs"][0]) & {"1", "2", "3", "4", "5"} for r in rows)
    # a rerun is answered from the stored audit / cache: zero calls, identical document
    assert main([*args, "--json", str(out2)]) == 0
    again = json.loads(out2.read_text())
    assert again["calls"]["made"] == 0
    assert again["direct"] == doc["direct"]
