"""Issue 24 §3 on screen: the audit results of a judge whose every answer is unparseable say "no valid verdicts"
and count the garbage per judge × variant — never "nan", never a τ."""

from __future__ import annotations

import json

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer
from relgate_tui.engine.judging import list_audits, reopen_result
from relgate_tui.tui.judge.views import cycle_stats, heading, ranking_rows


def test_the_audit_view_of_an_all_garbage_judge(tmp_path, monkeypatch):
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    out = tmp_path / "audit.json"
    with DemoServer() as demo:
        assert main(["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                     "--model", "sim-weak", "--protocol", "both", "--inputs", "3", "--candidates", "4", "--reps", "1",
                     "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    (stored,) = list_audits()
    result = reopen_result(stored.path)  # the typed result the screen shows, read back offline
    cell = result.cells[0]
    assert cell.pairwise is not None
    cycles = str(cycle_stats(cell.pairwise))
    head = str(heading(result, cell, "demo"))
    assert "no valid verdicts" in cycles and "nan" not in cycles
    total = doc["pairwise"]["verdicts"]["total"]
    assert f"unparseable: {total:,} of {total:,} verdicts (100%)" in head
    assert all(tau == "—" and n == "0" for _, tau, n in ranking_rows(cell.pairwise))
