"""Paper 002's seeded prompt perturbations as audit variants (`relgate judge-audit --perturb typo,newline`)."""

from __future__ import annotations

import json
import re

import pytest

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer
from relgate_tui.engine.judging.variants import DIRECT_TEMPLATE, PAIRWISE_TEMPLATE, perturbed_variants
from relgate_tui.errors import UserError

PLACEHOLDERS = re.compile(r"\{\{[a-z_]+\}\}")


def test_perturbed_templates_keep_placeholders_the_scale_and_the_criterion():
    typo, newline = perturbed_variants("typo,newline", seed=42, criterion="coherence")
    assert (typo.name, newline.name) == ("typo", "newline")
    for v, kind in ((typo, "typo"), (newline, "newline")):
        for made, original in ((v.direct, DIRECT_TEMPLATE), (v.pairwise, PAIRWISE_TEMPLATE)):
            assert made != original
            assert sorted(PLACEHOLDERS.findall(made)) == sorted(PLACEHOLDERS.findall(original))
            assert re.findall(r"\d", made) == re.findall(r"\d", original)
            if kind == "newline":
                assert made.replace("\n", "") == original.replace("\n", "")
    assert perturbed_variants("typo", seed=42) == perturbed_variants(["typo"], seed=42)  # reproducible
    with pytest.raises(UserError, match="unknown perturbation 'paraphrase'"):
        perturbed_variants("paraphrase")


def test_the_audit_runs_each_perturbation_and_the_sensitive_judge_shifts(tmp_path, monkeypatch):
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    out = tmp_path / "audit.json"
    with DemoServer() as demo:
        code = main(["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                     "--model", "sim-judge-sensitive", "--protocol", "direct", "--inputs", "8", "--candidates", "5",
                     "--reps", "1", "--perturb", "typo,newline", "--json", str(out)])
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["variants"] == ["original", "typo", "newline"]
    means = {}
    for study in doc["studies"]:
        scores = [r["judge_scores"][0] for r in study["direct"]["scores"] if r["judge_scores"]
                  and r["judge_scores"][0] is not None]
        means[study["variant"]] = sum(scores) / len(scores)
    assert means["typo"] < means["original"] - 0.3 and means["newline"] < means["original"] - 0.15
