"""Jury splits without leakage (issue 20 §2-3): grouped splits on HANNA (11 stories per prompt), the default
grouping, the warning for grouped-looking ids, and the corrected significance beside the paper's Wilcoxon."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from relgate_tui.cli import main
from relgate_tui.core.jury.groups import group_splits, id_prefix, item_splits, looks_grouped
from relgate_tui.core.jury.protocol import corrected_t_greater, paired_delta, wilcoxon_greater
from relgate_tui.core.jury.study import splits_of
from relgate_tui.engine.judging.scores_file import load_scores
from relgate_tui.engine.judging.studies import build_data

# shared/ sits beside the checkout (CI clones it there); RELGATE_SHARED_DATA overrides the place
DATA = Path(os.environ.get("RELGATE_SHARED_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")
HANNA = DATA / "hanna" / "hanna_with_models.jsonl"


def _hanna_file(tmp_path: Path, prompts: int = 96, judges: int = 3, *, with_input: bool = True) -> Path:
    """HANNA's real stories and human Relevance means, scored by simulated judges (human + seeded noise)."""
    if not HANNA.is_file():
        pytest.skip("shared/data/hanna is not present")
    rows = [json.loads(line) for line in HANNA.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if int(r["prompt_id"][1:]) < prompts]
    rng = np.random.default_rng(5)
    lines = []
    for r in rows:
        for j in range(judges):
            score = float(np.clip(np.round(r["Relevance"] + rng.normal(0, 0.6 + 0.4 * j)), 1, 5))
            row = {"id": f"{r['prompt_id']}-{r['story_id']}", "judge": f"judge-{j}", "criterion": "relevance",
                   "score": score, "human": r["Relevance"], "output": r["story"], "prompt_id": r["prompt_id"]}
            if with_input:
                row["input"] = r["prompt"]
            lines.append(json.dumps(row))
    path = tmp_path / "hanna.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_grouped_splits_on_hanna_keep_every_prompt_in_one_part(tmp_path):
    table = load_scores(_hanna_file(tmp_path))
    data, _ = build_data(table, None)  # default: grouped by the input text (the prompt) when there is one
    assert data.group_by == "input" and data.groups is not None and len(set(data.groups)) == 96
    prompt = np.array([i.split("-")[0] for i in data.ids])
    n = len(data.ids)
    for tr, va, te in splits_of(data, 10, seed=0):
        assert sorted(np.concatenate([tr, va, te]).tolist()) == list(range(n))
        test_groups = set(prompt[te])
        assert test_groups and not test_groups & set(prompt[tr]) and not test_groups & set(prompt[va])
        assert not set(prompt[va]) & set(prompt[tr])
        assert abs(tr.size / n - 0.6) < 0.03 and abs(te.size / n - 0.2) < 0.03
    # the paper's item-level splits put nearly every test prompt into the training part too
    leaked = [len(set(prompt[te]) & set(prompt[tr])) / len(set(prompt[te])) for tr, _, te in item_splits(n, 10, 0)]
    assert min(leaked) > 0.9


def test_group_by_a_field_and_by_id_prefix_give_the_same_groups(tmp_path):
    table = load_scores(_hanna_file(tmp_path, prompts=20, with_input=False))
    by_field, _ = build_data(table, None, "prompt_id")
    by_prefix, _ = build_data(table, None, "id-prefix")
    assert by_field.group_by == "prompt_id" and by_prefix.group_by == "id-prefix"
    assert len(set(by_field.groups)) == len(set(by_prefix.groups)) == 20
    assert [s[2].tolist() for s in splits_of(by_field, 3, 1)] == [s[2].tolist() for s in splits_of(by_prefix, 3, 1)]
    plain, _ = build_data(table, None)  # no input texts: item-level by default, with a warning
    assert plain.groups is None and plain.group_by is None
    assert len(plain.warnings) == 1 and "look grouped" in plain.warnings[0] and "--group-by" in plain.warnings[0]


def test_cli_json_states_the_grouping_and_warns_on_grouped_ids(tmp_path, capsys):
    path = _hanna_file(tmp_path, prompts=12)  # 132 stories: the JSON's fields and the warnings, not the statistics
    out = tmp_path / "jury.json"
    assert main(["jury", "--scores", str(path), "--splits", "3", "--search", "1", "--json", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert doc["group_by"] == "input" and doc["n_groups"] == 12 and doc["warnings"] == []
    assert "look grouped" not in capsys.readouterr().err
    vs = doc["methods"]["jury"]["vs"]
    for c in vs.values():
        assert 0 <= c["p_corrected"] <= 1 and 0 <= c["p_value"] <= 1 and c["significant"] == (c["p_corrected"] < 0.05)
        assert abs(c["cliffs_delta"] * 3 - round(c["cliffs_delta"] * 3)) < 1e-9  # paired: (won − lost) / 3 splits
    assert doc["claims_improvement"] == doc["methods"]["jury"]["claims_improvement"]
    assert main(["jury", "--scores", str(path), "--splits", "2", "--search", "1", "--group-by", "none",
                 "--json", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert doc["group_by"] is None and doc["n_groups"] is None and len(doc["warnings"]) == 1
    err = capsys.readouterr().err
    assert err.count("relgate: warning: item ids look grouped") == 1
    assert main(["jury", "--scores", str(path), "--group-by", "nothing_here", "--quiet"]) == 2
    assert "no row has that field" in capsys.readouterr().err


def test_group_helpers():
    assert id_prefix("P12-S3", "-") == "P12" and id_prefix("x", "-") == "x"
    assert looks_grouped([f"d{i // 4}_{i % 4}" for i in range(40)]) == ("_", 10)
    assert looks_grouped([f"item{i}" for i in range(40)]) is None
    assert looks_grouped([f"a-{i}" for i in range(3)]) is None
    groups = [f"g{i % 12}" for i in range(120)]
    for tr, va, te in group_splits(groups, 5, 0):
        g = np.array(groups)
        assert not set(g[te]) & set(g[tr]) and not set(g[va]) & (set(g[tr]) | set(g[te]))
    with pytest.raises(ValueError, match="at least three"):
        group_splits(["a", "b"] * 10, 1, 0)


def test_corrected_resampled_t_is_more_cautious_than_wilcoxon():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.4, 0.6, 10)
    jury = base + 0.01 + rng.normal(0, 0.012, 10)  # small, noisy, mostly positive differences
    p_w, p_c = wilcoxon_greater(jury, base), corrected_t_greater(jury, base)
    d = jury - base
    t = d.mean() / np.sqrt((1 / 10 + 0.25) * d.var(ddof=1))
    from scipy import stats

    assert p_c == pytest.approx(stats.t.sf(t, 9)) and p_c > p_w
    assert corrected_t_greater(base + 0.1, base) == 0.0 and corrected_t_greater(base, base) == 1.0
    assert paired_delta([3, 4, 5, 1], [1, 2, 5, 2]) == pytest.approx((2 - 1) / 4)


def test_the_claim_follows_the_corrected_test_not_wilcoxon():
    from relgate_tui.core.jury.protocol import Comparison, JuryStudy, MethodResult

    base = (0.60, 0.60, 0.61, 0.60, 0.61, 0.62, 0.60, 0.60, 0.62, 0.60)
    wins = (0.001, 0.002, 0.003, 0.004, 0.03, 0.001, 0.002, 0.05, 0.001, 0.002)  # all won, one by a lot
    taus = {"jury": tuple(b + w for b, w in zip(base, wins, strict=True)), "average-all": base}
    comp = Comparison("average-all", wilcoxon_greater(taus["jury"], taus["average-all"]),
                      paired_delta(taus["jury"], taus["average-all"]),
                      corrected_t_greater(taus["jury"], taus["average-all"]))
    assert comp.p_value < 0.05 < comp.p_corrected  # the paper's test says "significant", the corrected one not
    study = JuryStudy(judges=("a", "b"), n_items=100, splits=10, seed=0,
                      methods={m: MethodResult(m, t, (20,) * 10) for m, t in taus.items()}, k_per_split=(2,) * 10,
                      tolerance_per_split=((0.0, 0.0),) * 10, auc_per_judge={"a": None, "b": None},
                      comparisons=(comp,), feature_groups=(), example_items=(), group_by="input", n_groups=40)
    assert not study.claims_improvement
    doc = study.to_json()
    assert doc["group_by"] == "input" and doc["claims_improvement"] == study.claims_improvement
    assert doc["methods"]["jury"]["vs"]["average-all"]["p_corrected"] == comp.p_corrected
    md = study.to_markdown()
    assert "p corrected" in md and "p Wilcoxon (paper)" in md and "grouped by input: 40 groups" in md
