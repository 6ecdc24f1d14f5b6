"""``relgate certify``'s summary from the typed result (issue 28 §5, issue 37): the judge-assisted lines (not reached
by the demo's tasks, which all have references), markup-looking untrusted text printed as it is, the assisted gate
named for what it is and what a judge costs when its bound is below the human-only one."""

from __future__ import annotations

from relgate_tui.commands.certify_summary import print_summary
from relgate_tui.engine.certification.result import RunResult


def summary_of(doc: dict) -> RunResult:
    return RunResult.from_json(doc)


DOC = {
    "reliability_level": 0.8, "reliability_lower_bound": 0.7, "confidence": 0.95, "reliability_n": 40,
    "passed": True, "sampling_complete": True, "gate_on": "assisted", "min_reliability": 0.7,
    "gate": {"threshold": 0.7, "gate_on": "assisted", "value": 0.75, "level": 0.8, "lower_bound": 0.7,
             "confidence": 0.95, "passed": True, "summary": "PASS [bold]x[/]",
             "assisted_lower_bound": 0.75},
    "n_skipped": 0, "worst_case": None, "prediction_sets": None, "m_star": None, "alpha": 0.1, "n_cal": 20,
    "n_pending": 0, "coverage": None, "calibration_message": None,
    "calls": {"made": 5, "cached": 1, "failed": 0, "saved_vs_kmax": 0.25}, "run_id": "run-[red]1[/]",
    "judge_assisted": {
        "estimate": 0.82, "lower_bound": 0.75, "confidence": 0.95, "n_labels": 12, "n_judged": 40,
        "judge": {"model": "sim-[i]judge"}, "more_labels": 3, "message": "",
        "agreement": {"n": 12, "agreement_rate": 0.9, "kappa": {"estimate": 0.61, "lower": 0.2, "upper": 0.9},
                      "table": {"judge_yes_human_no": 1}, "false_accept": {"n_human_no": 3, "upper": 0.4}},
    },
}


def test_the_summary_prints_the_assisted_block_and_untrusted_text_as_is(capsys):
    s = summary_of(DOC)
    assert s.assisted is not None and s.assisted.kappa_interval == (0.2, 0.9) and s.passed is True
    print_summary(s, "/runs/x")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "reliability level 80.0% (≥ 70.0% with 95% confidence, n = 40)  PASS"
    assert err[1] == ("judge-assisted reliability 82.0% (≥ 75.0% with 95% confidence; 12 human labels, 40 items judged "
                      "by sim-[i]judge); ≈ 3 more labels to clear the gate")
    assert err[2] == ("judge vs human on 12 labelled items: agreement 90.0%, κ 0.61 [0.20, 0.90], false accepts 1 of "
                      "3 wrong answers (rate ≤ 40.0% with 95% confidence)")
    assert err[3] == "gate (on the judge-assisted bound): PASS: 95% judge-assisted lower bound 75.0% ≥ gate 70.0%"
    assert err[4] == "M* = ∞ at α = 0.1; calibration items 20, skipped 0, pending 0"
    assert err[5] == "calls made 5, cached 1, failed 0, saved vs K_max 25.0%; run run-[red]1[/] (/runs/x)"


def test_an_assisted_bound_not_computed_says_why(capsys):
    doc = DOC | {"judge_assisted": {"lower_bound": None, "message": "no item without a reference answer"},
                 "passed": None, "gate": None}
    print_summary(summary_of(doc), "p")
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith("n = 40)") and err[1] == "judge-assisted: no item without a reference answer"


def test_an_assisted_gate_below_the_human_only_bound_says_what_the_judge_costs(capsys):
    """Issue 37 §2: "gate (on the better bound)" decided on the worse one; now the line names the judge-assisted bound
    and the next says what the judge costs (fails on the code before: "better bound", no cost line)."""
    gate = {"threshold": 0.76, "gate_on": "assisted", "value": 0.752, "level": 0.84, "lower_bound": 0.778,
            "confidence": 0.95, "passed": False, "summary": "", "watch": "anytime", "assisted_lower_bound": 0.752}
    doc = DOC | {"gate": gate, "passed": False, "min_reliability": 0.76, "reliability_lower_bound": 0.778,
                 "schema": 2, "reliability_watch": "anytime", "reliability_lower_bound_fixed_n": 0.8}
    print_summary(summary_of(doc), "p")
    err = capsys.readouterr().err
    assert "better bound" not in err
    assert "gate (on the judge-assisted bound): FAIL: 95% judge-assisted lower bound 75.2% < gate 76.0%\n" in err
    assert "the judge-assisted bound is 2.6 points below the human-only 77.8%: this judge costs labels here" in err
    assert err.splitlines()[0].startswith("reliability level 80.0% (≥ 77.8%: 95% anytime lower bound, n = 40)")
    assert ("fixed-n Clopper–Pearson lower bound 80.0% (valid only if the number of labels was fixed before "
            "labelling)") in err
