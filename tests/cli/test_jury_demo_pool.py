"""Issue 14 acceptance on the demo's simulated judge pool (judges whose reliability depends on the item's text:
`sim-judge-long`, `-short`, `-numbers`, `-hedges`): a stored direct audit of HANNA stories, then `relgate jury
--audit` — jury-on-demand beats every static jury and every single judge, with the exact Wilcoxon test reported.
(The pool of identical judges, where it must claim nothing, is tests/core/test_jury.py.)"""

from __future__ import annotations

import json

import pytest

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer

pytestmark = pytest.mark.slow


def test_jury_on_demand_beats_every_static_jury_on_the_demo_pool(tmp_path, monkeypatch):
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with DemoServer() as demo:
        assert main(["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                     "--model", "sim-judge-long", "--judge", "model=sim-judge-short", "--judge", "model=sim-judge-numbers",
                     "--judge", "model=sim-judge-hedges", "--protocol", "direct", "--reps", "1", "--inputs", "48",
                     "--candidates", "11", "--concurrency", "16", "--json", str(tmp_path / "audit.json")]) == 0
    (audit,) = [p.name for p in (tmp_path / "audits").iterdir()]
    out = tmp_path / "jury.json"
    assert main(["jury", "--audit", audit, "--splits", "10", "--search", "1", "--json", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    jury = doc["methods"]["jury"]
    others = {name: m["tau_mean"] for name, m in doc["methods"].items() if name != "jury"}
    assert set(others) >= {"average-all", "average-top-k", "weighted-regression", "weighted-tau",
                           "judge:sim-judge-long", "judge:sim-judge-hedges"}
    assert all(jury["tau_mean"] > tau for tau in others.values()), (jury["tau_mean"], others)
    assert all(v["p_value"] < 0.05 for v in jury["vs"].values()) and jury["claims_improvement"]
