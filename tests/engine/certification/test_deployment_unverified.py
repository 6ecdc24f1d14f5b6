"""Deployment items of a task without references are "no reference", never "pending" forever (issue 31 item 21):
nobody is asked to label them; calibration items still waiting for a person stay "pending"."""

from __future__ import annotations

from pathlib import Path

from relgate_tui.demo.server import DemoServer
from relgate_tui.engine.certification.session import Session


def test_deployment_items_without_a_reference_are_not_pending(incli, tmp_path: Path) -> None:
    with DemoServer() as server:
        result = incli(tmp_path, "certify", "--task", "arithmetic-unreferenced", "--limit", "12", "--k-max", "3",
                       "--endpoint", server.base_url, "--model", "sim-mid", "--quiet", "--run-dir",
                       str(tmp_path / "runs"))
    assert result.returncode in (0, 1, 3), result.stderr
    (run,) = list((tmp_path / "runs").iterdir())
    session = Session.open(run)
    try:
        rows = session.results(0.1).rows
    finally:
        session.close()
    by_role = {role: {r.label_source for r in rows if r.role == role} for role in ("calibration", "deployment")}
    assert by_role["deployment"] == {"no reference"}
    assert by_role["calibration"] == {"pending"}
