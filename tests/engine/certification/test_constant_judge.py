"""A constant verification judge is flagged (issue 31 item 7): a judge that says "no" (or "yes") to every item it
judged tells no answer from another — the warning is in core, in the results' ``judge_assisted`` block (JSON), on
the command line and in the TUI's verification-judge panel."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from relgate_tui.core.agreement import constant_judge
from relgate_tui.demo.server import DemoServer


@given(st.integers(0, 1), st.integers(2, 200))
def test_one_verdict_everywhere_is_flagged(value: int, n: int) -> None:
    warning = constant_judge([value] * n)
    assert warning is not None and f'"{"yes" if value else "no"}" to all {n} items' in warning


@given(st.lists(st.integers(0, 1), min_size=2, max_size=200).filter(lambda v: 0 < sum(v) < len(v)))
def test_a_judge_that_says_both_is_not_flagged(verdicts: list[int]) -> None:
    assert constant_judge(verdicts) is None
    assert constant_judge([1]) is None and constant_judge([]) is None  # nothing to tell from one verdict


def test_a_judge_that_never_says_yes_is_flagged_in_json_cli_and_tui(incli, tmp_path: Path) -> None:
    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {100 + i} plus {300 + 2 * i}?"}) + "\n"
                            for i in range(20)))
    labels = tmp_path / "labels.jsonl"  # a person accepted the top answer of every calibration item
    labels.write_text("".join(json.dumps({"id": f"q{i}", "rank": 1}) + "\n" for i in range(20)))
    out = tmp_path / "doc.json"
    with DemoServer() as server:  # sim-mid asked to verify answers with a number, never "yes": a constant judge
        result = incli(tmp_path, "certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid",
                       "--k-max", "3", "--verify-judge-model", "sim-mid", "--labels", str(labels), "--json", str(out))
    assert result.returncode in (0, 1, 3), result.stderr
    block = json.loads(out.read_text())["judge_assisted"]
    assert block["n_judged"] == 20 and block["judge_yes_share"] == 0.0
    assert block["warning"].startswith('the verification judge said "no" to all 20 items')
    assert 'warning: the verification judge said "no" to all 20 items' in result.stderr

    from relgate_tui.engine.certification.assisted import AssistedRow, section_from_rows
    from relgate_tui.tui.results_judges import assisted_view

    rows = [AssistedRow(**r) for r in block["verdicts"]]  # the typed section the Results tab reads, from the file
    section = section_from_rows(rows, confidence=block["confidence"], judge=("", "sim-mid"), mixed=False)
    assert section.to_json()["warning"] == block["warning"]
    assert 'said "no" to all 20 items' in str(assisted_view(section))

