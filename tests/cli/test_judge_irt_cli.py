"""``relgate judge-irt`` on judge scores files (zero model calls): JSON document and one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relgate_tui.cli import main
from relgate_tui.core.irt.grm import simulate_grm

VARIANTS = ("original", "typo", "newline", "paraphrase")


def _scores_file(tmp_path, *, n=300, shift=0.0, judges=("judge-a",), raters=True, name="scores.jsonl"):
    b0 = np.array([-1.5, -0.5, 0.5, 1.5])
    lines = []
    for j, judge in enumerate(judges):
        y, theta = simulate_grm([1.8] * 4, [b0, b0 + shift, b0, b0 - shift], n, seed=7 + j)
        rng = np.random.default_rng(99)
        hum = np.clip(np.round(theta[:, None] + 3 + rng.normal(0, 0.6, (n, 3))), 1, 5)
        for i in range(n):
            for v, variant in enumerate(VARIANTS):
                row = {"id": f"s{i}", "judge": judge, "criterion": "coherence", "variant": variant,
                       "score": float(y[i, v])}
                if raters:
                    row["humans"] = [float(h) for h in hum[i]]
                lines.append(json.dumps(row))
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_json_document_has_every_field(tmp_path, capsys):
    path = _scores_file(tmp_path)
    out = tmp_path / "irt.json"
    md = tmp_path / "irt.md"
    assert main(["judge-irt", "--ratings", str(path), "--json", str(out), "--markdown", str(md)]) == 0
    doc = json.loads(out.read_text())
    assert doc["judge"] == "judge-a" and doc["criterion"] == "coherence" and doc["n_samples"] == 300
    assert set(doc["variants"]) == set(VARIANTS)
    for v in VARIANTS:
        assert doc["variants"][v]["a"] > 0 and len(doc["variants"][v]["b"]) == 4
    assert {"id", "theta", "theta_var"} <= set(doc["samples"][0])
    for key in ("c_v", "rho", "theta_ratio", "d_w", "phase1_pass", "converged", "loglik"):
        assert key in doc
    assert doc["converged"] is True and 0 < doc["rho"] < 1 and doc["d_w"] >= 0
    printed = capsys.readouterr().out
    assert "C_V" in printed and "judge-a" in printed
    assert "| judge-a |" in md.read_text()


def test_several_judges_are_keyed_by_name(tmp_path):
    path = _scores_file(tmp_path, judges=("j1", "j2"), n=150)
    out = tmp_path / "irt.json"
    assert main(["judge-irt", "--ratings", str(path), "--json", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert set(doc["judges"]) == {"j1", "j2"}
    assert main(["judge-irt", "--ratings", str(path), "--judge", "j2", "--json", str(out), "--quiet"]) == 0
    assert json.loads(out.read_text())["judge"] == "j2"


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ([{"id": f"s{i}", "variant": "original", "score": 3} for i in range(20)], "same rating"),
        ([{"id": f"s{i}", "variant": v, "score": (i % 2) + 1} for i in range(5) for v in VARIANTS], "at least 10"),
        ([{"id": f"s{i}", "variant": v, "score": 3 if v == "typo" else (i % 3) + 1}
          for i in range(30) for v in VARIANTS], "'typo' used one category only"),
        ([{"id": "s1", "criterion": "a", "score": 1}, {"id": "s1", "criterion": "b", "score": 2}],
         "several criteria"),
    ],
)
def test_degenerate_files_are_one_line_errors(tmp_path, capsys, rows, words):
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["judge-irt", "--ratings", str(p), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("relgate: error:") and words in err and "\n" not in err and "please report" not in err


def test_unknown_judge_and_missing_file(tmp_path, capsys):
    path = _scores_file(tmp_path, n=20)
    assert main(["judge-irt", "--ratings", str(path), "--judge", "nobody"]) == 2
    assert "no rows for judge 'nobody'" in capsys.readouterr().err
    assert main(["judge-irt", "--ratings", str(tmp_path / "none.jsonl")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_a_single_human_column_gives_no_phase2_and_says_so_in_one_line(tmp_path, capsys):
    path = _scores_file(tmp_path, raters=False)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        r["human"] = float(int(r["id"][1:]) % 5 + 1)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "irt.json"
    assert main(["judge-irt", "--ratings", str(path), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["theta_ratio"] is None and doc["d_w"] is None and doc["phase2_label"] is None
    printed = capsys.readouterr().out.splitlines()
    said = [line for line in printed if "Phase 2 needs several human raters" in line]
    assert len(said) == 1


def test_cv_ddof_option(tmp_path):
    path = _scores_file(tmp_path, shift=0.5, n=200)
    docs = []
    for ddof in ("0", "1"):
        out = tmp_path / f"irt{ddof}.json"
        assert main(["judge-irt", "--ratings", str(path), "--cv-ddof", ddof, "--json", str(out), "--quiet"]) == 0
        docs.append(json.loads(out.read_text()))
    assert [d["c_v_ddof"] for d in docs] == [0, 1] and docs[0]["c_v"] != docs[1]["c_v"]
    assert docs[0]["theta_ratio"] is not None  # several raters: Phase 2 is reported


def test_null_scores_are_no_score_and_counted(tmp_path, capsys):
    path = _scores_file(tmp_path, n=200)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows[::7]:
        r["score"] = None
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "irt.json"
    assert main(["judge-irt", "--ratings", str(path), "--json", str(out)]) == 0
    n_null = len(rows[::7])
    doc = json.loads(out.read_text())
    assert doc["unscored_rows"] == n_null and doc["converged"] is True and doc["n_samples"] == 200
    assert f"{n_null} of {len(rows)} rows have a null score" in capsys.readouterr().out
