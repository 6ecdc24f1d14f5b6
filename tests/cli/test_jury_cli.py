"""``relgate jury`` on a judge scores file (zero judge calls): JSON document and one-line errors."""

from __future__ import annotations

import json
import math

import pytest

from relgate_tui.cli import main
from relgate_tui.core.jury.simulate import simulate_pool


def _scores_file(tmp_path, n=150, judges=4, drop_human=False, one_judge=False, logprobs=True):
    data, texts = simulate_pool(n, judges, seed=2)
    lines = []
    for i, item in enumerate(data.ids):
        for c, judge in enumerate(data.judges[:1] if one_judge else data.judges):
            row = {"id": item, "judge": judge, "criterion": "coherence", "score": float(data.scores[i, c]),
                   "input": texts["input"][i], "output": texts["output"][i], "source": "a" if i % 2 else "b"}
            if not drop_human:
                row["human"] = float(data.human[i])
            if logprobs:
                s = int(data.scores[i, c])
                row["logprobs"] = {str(k): (-0.2 if k == s else -2.5 - abs(k - s)) for k in range(1, 6)}
            lines.append(json.dumps(row))
    p = tmp_path / "pool.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_json_document(tmp_path):
    path = _scores_file(tmp_path)
    out = tmp_path / "jury.json"
    md = tmp_path / "jury.md"
    assert main(["jury", "--scores", str(path), "--splits", "3", "--search", "1", "--json", str(out),
                 "--markdown", str(md), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert doc["criterion"] == "coherence" and doc["n_items"] == 150 and doc["splits"] == 3
    assert set(doc["methods"]) == {"jury", "average-all", "average-top-k", "weighted-regression", "weighted-tau",
                                   *(f"judge:sim-judge-{j}" for j in range(1, 5))}
    for m in doc["methods"].values():
        assert len(m["tau_per_split"]) == 3 and math.isfinite(m["tau_mean"])
        assert set(m["per_source"]) == {"a", "b"}
    jury = doc["methods"]["jury"]
    assert {"k", "tolerance", "auc", "vs", "claims_improvement"} <= set(jury)
    assert set(jury["vs"]["average-all"]) == {"p_value", "p_corrected", "cliffs_delta", "significant"}
    assert doc["group_by"] == "input" and doc["n_groups"] == 150  # every item has its own input text
    assert doc["claims_improvement"] == jury["claims_improvement"]
    assert "logprob" in doc["feature_groups"] and "embedding" in doc["feature_groups"]
    assert doc["embeddings"].startswith("tf-idf")
    assert "| jury |" in md.read_text()


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [({"one_judge": True}, "at least two judges"), ({"drop_human": True}, "no human scores")],
)
def test_bad_pools(tmp_path, capsys, kwargs, words):
    path = _scores_file(tmp_path, n=60, **kwargs)
    assert main(["jury", "--scores", str(path), "--splits", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "please report" not in err


def test_embeddings_options_go_together(tmp_path, capsys):
    path = _scores_file(tmp_path, n=60)
    assert main(["jury", "--scores", str(path), "--embeddings-model", "x", "--quiet"]) == 2
    assert "go together" in capsys.readouterr().err


def test_null_scores_are_no_score_for_that_judge(tmp_path, capsys):
    path = _scores_file(tmp_path, n=80, logprobs=False)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows[::9]:
        r["score"] = None
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "jury.json"
    assert main(["jury", "--scores", str(path), "--splits", "2", "--search", "1", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["unscored_rows"] == len(rows[::9]) and doc["n_items"] == 80
    assert f"{len(rows[::9])} of {len(rows)} rows have a null score" in capsys.readouterr().out
