"""`relgate judge-intervals` on judge scores files: the JSON of issue 12, and one-line errors for bad files."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from relgate_tui.cli import main
from relgate_tui.core.judge_intervals.simulate import simulate

ROOT = Path(__file__).resolve().parents[2]


def _write(path, n, *, seed=0, raters=1, humans=None, logprobs=True, judges=("sim",)):
    z, y, raw = simulate(n, seed=seed, raters=raters)
    if humans is not None:
        y = np.asarray(humans, dtype=float)
    with open(path, "w") as fh:
        for judge in judges:
            for i in range(n):
                rec = {"id": f"it{i}", "judge": judge, "criterion": "overall", "human": float(y[i]),
                       "score": float(raw[i])}
                if logprobs:
                    rec["logprobs"] = {str(k + 1): float(v) for k, v in enumerate(z[i])}
                fh.write(json.dumps(rec) + "\n")
    return path


def test_json_document_has_the_issue_fields(tmp_path, capsys):
    f = _write(tmp_path / "s.jsonl", 60, seed=3)
    out = tmp_path / "r.json"
    code = main(["judge-intervals", "--scores", str(f), "--methods", "r2ccp,ordinal-aps", "--seeds", "2",
                 "--json", str(out)])
    assert code == 0
    assert "| r2ccp | regression |" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["n_items"] == 60 and doc["alpha"] == 0.1 and doc["seeds"] == [1, 2]
    assert list(doc["methods"]) == ["r2ccp", "ordinal-aps"]
    m = doc["methods"]["r2ccp"]
    assert {"coverage_mean", "coverage_sd", "width_mean", "width_sd", "adjusted", "items"} <= set(m)
    assert {"coverage_mean", "coverage_sd", "width_mean", "width_sd"} <= set(m["adjusted"])
    test_first = np.random.RandomState(1).permutation(60)[:30]
    assert [it["id"] for it in m["items"]] == [f"it{i}" for i in test_first]
    for it in m["items"]:
        assert it["adj_lower"] == round(it["adj_lower"]) and it["adj_upper"] == round(it["adj_upper"])  # integer grid
    assert doc["scores"]["raw"]["mse"] is not None and "r2ccp" in doc["scores"]["midpoint"]
    assert doc["judge"] == "sim" and doc["grid"]["name"] == "integer"


def test_json_to_stdout_and_partial_adjustment(tmp_path, capsys):
    f = _write(tmp_path / "s.jsonl", 40, seed=4, raters=3)
    assert main(["judge-intervals", "--scores", str(f), "--methods", "ordinal-rc", "--seeds", "1", "--adjust", "0.1",
                 "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["adjust_lambda"] == 0.1 and doc["grid"]["name"] == "thirds"


def test_infinite_quantile_is_the_full_scale_with_its_reason(tmp_path, capsys):
    f = _write(tmp_path / "s.jsonl", 12, seed=5)     # 6 calibration items: ⌈7·0.9⌉ = 7 > 6
    assert main(["judge-intervals", "--scores", str(f), "--methods", "ordinal-aps", "--seeds", "2",
                 "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    m = doc["methods"]["ordinal-aps"]
    assert any("q̂ = ∞" in r for r in m["reasons"])
    assert all(it["lower"] == 1 and it["upper"] == 5 for it in m["items"])
    assert m["width_mean"] == 4.0 and m["coverage_mean"] == 1.0


@pytest.mark.parametrize(("kind", "needle"), [
    ("no-logprobs", "no log-probabilities"),
    ("one-class", "one class only"),
    ("off-grid", "off the"),
    ("tiny", "< 1/α"),
    ("two-judges", "choose one with --judge"),
])
def test_bad_files_give_one_line(tmp_path, capsys, kind, needle):
    f = tmp_path / "bad.jsonl"
    if kind == "no-logprobs":
        _write(f, 30, logprobs=False)
    elif kind == "one-class":
        _write(f, 30, humans=[3.0] * 30)
    elif kind == "off-grid":
        _write(f, 30, humans=[2.37] + [3.0] * 14 + [4.0] * 15)
    elif kind == "tiny":
        _write(f, 5)
    else:
        _write(f, 30, judges=("a", "b"))
    assert main(["judge-intervals", "--scores", str(f), "--seeds", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and needle in err and "Traceback" not in err


def test_bad_options_give_one_line(tmp_path, capsys):
    f = _write(tmp_path / "s.jsonl", 30)
    for extra, needle in ((["--methods", "cqr,nope"], "unknown method"), (["--adjust", "lots"], "--adjust"),
                          (["--grid", "x"], "--grid"), (["--alpha", "1.5"], "--alpha")):
        assert main(["judge-intervals", "--scores", str(f), *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and needle in err


def _builder():
    spec = importlib.util.spec_from_file_location("intervals_data", ROOT / "bench" / "intervals_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_dialsummeval_human_ratings_with_a_simulated_judge(tmp_path, capsys):
    mod = _builder()
    if not mod.DATA.exists():
        pytest.skip("../shared/data/dialsummeval is not present (it is never bundled)")
    f = tmp_path / "dse.jsonl"
    assert mod.build_dialsummeval_scores(f, criteria=("consistency",), limit=280) == 280
    first = json.loads(f.read_text().splitlines()[0])
    assert "simulated" in first["judge"] and len(first["humans"]) == 3
    assert main(["judge-intervals", "--scores", str(f), "--methods", "r2ccp,ordinal-aps", "--seeds", "2",
                 "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n_items"] == 280 and doc["grid"]["name"] == "thirds"
    assert doc["methods"]["r2ccp"]["adjusted_never_lower"] is True


def test_shift_scores_calibrate_on_a_test_on_b(tmp_path, capsys):
    a = _write(tmp_path / "a.jsonl", 60, seed=8)
    b = _write(tmp_path / "b.jsonl", 40, seed=9)
    out = tmp_path / "r.md"
    assert main(["judge-intervals", "--scores", str(a), "--shift-scores", str(b), "--methods", "ordinal-aps",
                 "--seeds", "2", "--json", "-", "--markdown", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["method"] for s in doc["shift"]] == ["ordinal-aps"]
    assert doc["shift_scores_file"] == str(b)
    assert "## Calibrate on A, test on B" in out.read_text()


def test_ordinal_grid_option_and_uninformative_fields(tmp_path, capsys):
    path = _write(tmp_path / "s.jsonl", 200, raters=3)
    out = tmp_path / "iv.json"
    assert main(["judge-intervals", "--scores", str(path), "--methods", "ordinal-aps", "--seeds", "2",
                 "--ordinal-grid", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["ordinal_classes"] == "label grid"
    m = doc["methods"]["ordinal-aps"]
    assert {"full_scale_share", "uninformative", "uninformative_reason"} <= set(m)
    assert m["uninformative"] is False and m["uninformative_reason"] is None
    assert "ordinal methods on the 13 label-grid classes" in capsys.readouterr().out
