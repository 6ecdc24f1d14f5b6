"""Issue 29 N15: a verification judge whose every answer is a failure (a non-JSON body, an 8 MB answer) is not a
judge that said "no": the failures are counted (``calls.failed``, ``n_judge_failed``) and the summary says so in one
line, instead of reporting "6 items judged" as if the judge had judged them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.demo.server import DemoServer
from relgate_tui.engine.judging.verify_judge import failures_note
from tests.engine.hostile import HostileServer, chat, response

CASES = {"non-JSON": response(200, "<html>oops</html>", ["Content-Type: text/html"]),
         "8 MB answer": chat("yes " + "x" * (8 << 20))}

pytestmark = pytest.mark.usefixtures("no_backoff")  # what is tested is that each failure is counted


@pytest.mark.parametrize("case", list(CASES))
def test_judge_failures_are_counted_failures_not_verdicts(case: str, tmp_path: Path, monkeypatch, capsys) -> None:
    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": f"i{i}", "question": f"{i}+1?"}) + "\n" for i in range(6)))
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    with DemoServer() as demo, HostileServer(script=[chat("Yes")], default=CASES[case]) as judge:
        judge.script.clear()  # the reachability probe is a GET; every verdict request gets the hostile answer
        rc = main(["certify", "--task", str(task), "--endpoint", demo.base_url, "--model", "sim-mid", "--canon",
                   "numeric", "--k-max", "3", "--verify-judge-model", "j", "--verify-judge-endpoint", judge.base_url,
                   "--json", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert rc in (0, 1) and "Traceback" not in err
    block = json.loads((tmp_path / "out.json").read_text())["judge_assisted"]
    assert block["n_judged"] == 6 and block["n_judge_failed"] == 6 and block["calls"]["failed"] == 6
    assert block["calls"]["made"] == 0
    assert all(r["status"] == "failed" for r in block["verdicts"])
    assert "6 of 6 verification-judge requests failed" in err and "not verdicts" in err


def test_the_note_is_silent_only_when_every_verdict_is_real() -> None:
    assert failures_note({"n_judged": 4, "n_judge_failed": 0, "n_judge_unparseable": 0}) is None
    assert "1 reply was neither yes nor no" in str(failures_note({"n_judged": 4, "n_judge_unparseable": 1}))
    assert "rerun" in str(failures_note({"n_judged": 4, "n_judge_failed": 2}))
