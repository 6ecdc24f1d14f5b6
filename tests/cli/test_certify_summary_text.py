"""What ``relgate certify`` prints says each thing once and whole (issue 31 item 22): "M* = ∞ at α" once, and a
wrong model name's error lists the server's models without cutting one mid-name."""

from __future__ import annotations

from pathlib import Path

from relgate_tui.demo.server import DemoServer
from relgate_tui.demo.simulate import SIM_MODELS


def test_m_star_is_said_once_and_the_model_list_is_whole(incli, tmp_path: Path) -> None:
    with DemoServer() as server:
        ok = incli(tmp_path, "certify", "--task", "bigbench-3digit-addition", "--limit", "10", "--k-max", "3",
                   "--endpoint", server.base_url, "--model", "sim-mid")
        wrong = incli(tmp_path, "certify", "--task", "bigbench-3digit-addition", "--limit", "2", "--k-max", "2",
                      "--endpoint", server.base_url, "--model", "sim-emx")
    assert ok.returncode in (0, 1, 3), ok.stderr
    assert ok.stderr.count("M* = ∞ at α = 0.1") == 1
    assert "carry no coverage guarantee" in ok.stderr
    assert wrong.returncode == 2
    last = wrong.stderr.strip().splitlines()[-1]
    listed = last.split("simulated models: ", 1)[1].split(")")[0]
    assert all(name.strip() in SIM_MODELS for name in listed.replace("…", "").split(",") if name.strip())
