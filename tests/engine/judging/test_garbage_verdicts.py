"""Garbage is never a number (issue 24 §3): an audit whose judge answers are unparseable says "no valid verdicts" and
counts them per judge × variant — no NaN, no Kendall τ from zero verdicts, no full-scale sets "covering" every item;
the typo perturbation never touches the answer instruction; the demo judges read perturbed prompts."""

from __future__ import annotations

import json

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer
from relgate_tui.engine.judging.results import unparseable_text
from relgate_tui.engine.judging.variants import DIRECT_TEMPLATE, PAIRWISE_TEMPLATE, perturbed_variants

ANSWER_LINES = ('Answer with exactly "A" or "B". No explanation.', "Respond with a single integer between 1 and 5.")


def test_typo_never_touches_the_answer_instruction():
    for line, template in zip(ANSWER_LINES, (PAIRWISE_TEMPLATE, DIRECT_TEMPLATE), strict=True):
        assert line in template
    for seed in range(200):
        (typo,) = perturbed_variants("typo", seed=seed, criterion="Coherence")
        assert ANSWER_LINES[0] in typo.pairwise and ANSWER_LINES[1] in typo.direct, seed
        assert typo.pairwise != PAIRWISE_TEMPLATE and typo.direct != DIRECT_TEMPLATE  # still a typo variant


def _audit(tmp_path, monkeypatch, model: str, *extra: str) -> tuple[dict, str]:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    out = tmp_path / "audit.json"
    with DemoServer() as demo:
        code = main(["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                     "--model", model, "--protocol", "both", "--inputs", "4", "--candidates", "5", "--reps", "1",
                     "--no-store", "--json", str(out), *extra])
    assert code == 0
    return json.loads(out.read_text()), out.read_text()


def test_a_judge_whose_answers_are_all_unparseable_gets_no_numbers(tmp_path, monkeypatch, capsys):
    doc, text = _audit(tmp_path, monkeypatch, "sim-weak")  # an answer model: its replies are no verdicts at all
    assert "NaN" not in text and "Infinity" not in text
    pw, di = doc["pairwise"], doc["direct"]
    assert pw["verdicts"]["invalid"] == pw["verdicts"]["total"] > 0
    assert pw["cycles"]["mean_rho"] is None and pw["cycles"]["cycle_share"] is None
    assert all(r["mean_kendall_tau"] is None and r["n_inputs"] == 0 for r in pw["rankings"].values())
    assert di["likert_conformal"] == [] and di["note"].startswith("no valid scores")
    assert di["answers"]["unparseable"] == di["answers"]["total"] > 0
    n_v, n_s = pw["verdicts"]["total"], di["answers"]["total"]
    assert unparseable_text(doc) == f"unparseable: {n_v:,} of {n_v:,} verdicts (100%), {n_s:,} of {n_s:,} scores (100%)"
    cap = capsys.readouterr()
    err = cap.err + cap.out
    summary = err[err.index("judge audit:"):]
    assert "nan" not in summary and "no valid verdicts" in summary and f"unparseable: {n_v:,} of {n_v:,}" in summary
    assert "coverage 1.000" not in summary


def test_the_demo_judge_reads_typo_and_newline_prompts(tmp_path, monkeypatch):
    doc, text = _audit(tmp_path, monkeypatch, "sim-judge", "--perturb", "typo,newline")
    assert "NaN" not in text
    by_variant = {s["variant"]: s for s in doc["studies"]}
    assert set(by_variant) == {"original", "typo", "newline"}
    taus = {}
    for name, study in by_variant.items():
        v, a = study["pairwise"]["verdicts"], study["direct"]["answers"]
        assert v["invalid"] <= 0.1 * v["total"] and a["unparseable"] <= 0.1 * a["total"], (name, v, a)
        taus[name] = study["pairwise"]["rankings"]["mfas_exact"]["mean_kendall_tau"]
        assert study["direct"]["likert_conformal"], name
    # sim-judge is not prompt-sensitive: a typo or a line break leaves its agreement with the humans where it was
    assert abs(taus["typo"] - taus["original"]) < 0.2 and abs(taus["newline"] - taus["original"]) < 0.2
