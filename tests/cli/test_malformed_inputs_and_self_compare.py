"""Issue 29, still there from the round before: a run compared with itself says so; malformed inputs are one line
naming file, line and field (never "unexpected RecursionError / OverflowError / TypeError" nor a library's text)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from relgate_tui.cli import main
from tests.cli.test_compare_cli import _import


def _err(capsys) -> list[str]:
    return capsys.readouterr().err.strip().splitlines()


def test_a_run_compared_with_itself_says_so(tmp_path: Path, capsys) -> None:
    a = _import(tmp_path, "a", "model-a", 40)
    out = tmp_path / "cmp.json"
    capsys.readouterr()
    assert main(["compare", a, a, "--run-dir", str(tmp_path / "runs"), "--json", str(out)]) in (0, 3)
    err = capsys.readouterr().err
    assert "same run" in err
    assert "same run" in json.loads(out.read_text())["note"]
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "runs" / a, copy)  # a backup copy: the same run id in another folder
    assert main(["compare", a, str(copy), "--run-dir", str(tmp_path / "runs"), "--json", str(out)]) in (0, 3)
    assert "same run id" in capsys.readouterr().err
    b = _import(tmp_path, "b", "model-b", 40)
    assert main(["compare", a, b, "--run-dir", str(tmp_path / "runs"), "--json", str(out)]) in (0, 3)
    assert "note" not in json.loads(out.read_text()) and "same run" not in capsys.readouterr().err


# ---- malformed inputs: one line naming file, line and field, in our own words -----------------------------------
LIBRARY_TEXT = ("unexpected", "Traceback", "Out of range float", "codec can't", "invalid literal", "Exceeds the limit",
                "RecursionError", "OverflowError", "TypeError")


def _one_line_ours(capsys, *needles: str) -> str:
    err = _err(capsys)
    assert len(err) == 1, err
    assert not any(t in err[0] for t in LIBRARY_TEXT), err[0]
    for n in needles:
        assert n in err[0], err[0]
    return err[0]


@pytest.mark.parametrize(("value", "says"), [
    ("[" * 50_000 + "]" * 50_000, "nested too deeply"),
    ("9" * 400, "400 digits"),
    ("9" * 5000, "5,000 digits"),
    ("1e400", "beyond the range of a double"),
    ("-1e400", "beyond the range of a double"),
    ("Infinity", "not a JSON number"),
    ("NaN", "not a JSON number"),
    ('"a\\ud800b"', "lone surrogate"),
], ids=["deep", "int400", "int5000", "1e400", "-1e400", "Infinity", "NaN", "surrogate"])
def test_a_hostile_samples_line_is_one_line_naming_file_and_line(tmp_path: Path, capsys, value: str,
                                                                 says: str) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps({"id": "ok", "question": "q", "samples": ["1"]}) + "\n"
                 + '{"id": "x", "question": "q", "samples": ["1"], "answer": ' + value + "}\n")
    assert main(["import", "samples", str(p), "--run-dir", str(tmp_path / "runs"), "--quiet"]) == 2
    _one_line_ours(capsys, f"{p}:2", says)


def test_a_lone_surrogate_in_an_id_is_refused_before_anything_is_written(tmp_path: Path, capsys) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text('{"id": "a\\udc00", "question": "q", "samples": ["1"]}\n')
    assert main(["import", "samples", str(p), "--run-dir", str(tmp_path / "runs"), "--quiet"]) == 2
    _one_line_ours(capsys, f"{p}:1", "lone surrogate")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


@pytest.mark.parametrize("seed", ["x", "1.5", 1.5, 1e300, True])
def test_an_lm_eval_seed_that_is_no_integer_is_one_line_naming_the_field(tmp_path: Path, capsys, seed) -> None:
    fix = Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "lm_eval" / "addition"
    for f in fix.iterdir():
        shutil.copy(f, tmp_path / f.name)
    (samples,) = tmp_path.glob("samples_*.jsonl")
    rows = [json.loads(x) for x in samples.read_text().splitlines() if x.strip()]
    for row in rows:  # the requests' generation settings: where lm-eval records the seed it sent
        row["arguments"]["gen_args_0"]["arg_1"]["seed"] = seed
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["import", "lm-eval", str(samples), "--run-dir", str(tmp_path / "runs"), "--quiet"]) == 2
    _one_line_ours(capsys, "seed", f"{samples.name}:1")


def test_an_lm_eval_integer_seed_still_imports(tmp_path: Path, capsys) -> None:
    fix = Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "lm_eval" / "addition"
    for f in fix.iterdir():
        shutil.copy(f, tmp_path / f.name)
    (results,) = tmp_path.glob("results_*.json")
    doc = json.loads(results.read_text())
    doc["config"]["gen_kwargs"] = {"seed": "1234"}
    results.write_text(json.dumps(doc))
    (samples,) = tmp_path.glob("samples_*.jsonl")
    assert main(["import", "lm-eval", str(samples), "--run-dir", str(tmp_path / "runs"), "--quiet"]) in (0, 1, 3)


def _scores(path: Path, bad: dict) -> Path:
    rows = []
    for i in range(40):
        rec = {"id": f"d{i}", "judge": "j", "criterion": "c", "human": 1 + i % 5, "score": 1 + (i * 3) % 5,
               "logprobs": {str(k): -abs(k - 1 - i % 5) - 0.1 for k in range(1, 6)}}
        rows.append(rec | (bad if i == 7 else {}))
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("bad", [{"score": 1e300}, {"human": -1e300}, {"humans": [1, 1e300]}])
@pytest.mark.parametrize("command", [["judge-intervals", "--scores", "{p}", "--seeds", "1", "--methods", "cqr"],
                                     ["judge", "audit", "--scores", "{p}"], ["judge-irt", "--ratings", "{p}"]])
def test_off_scale_judge_scores_are_refused_with_a_line(tmp_path: Path, capsys, bad: dict, command: list) -> None:
    import warnings

    p = _scores(tmp_path / "s.jsonl", bad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy overflow warning fails the test
        assert main([c.replace("{p}", str(p)) for c in command]) == 2
    field = next(iter(bad))
    _one_line_ours(capsys, f"{p}:8", field, "off any rating scale")


def test_a_log_replaced_during_an_import_records_the_hash_of_what_was_read(tmp_path: Path, monkeypatch,
                                                                           capsys) -> None:
    """The log is swapped for another file (``os.replace``) after its first line was read: the import goes on
    reading the file it opened, and the run's provenance names that file's bytes, never the replacement's."""
    import hashlib
    import os

    from relgate_tui.engine.importers import samples as samples_mod
    from relgate_tui.engine.runs.listing import list_runs

    log = tmp_path / "s.jsonl"
    original = "".join(json.dumps({"id": f"q{i}", "question": f"{i}?", "samples": [str(i)] * 3}) + "\n"
                       for i in range(30)).encode()
    log.write_bytes(original)
    other = tmp_path / "other.jsonl"
    other.write_bytes(original.replace(b'"q', b'"z'))
    real = samples_mod.parse_json_line
    swapped = []

    def parse_then_swap(path, lineno, line):
        if not swapped:
            os.replace(other, log)  # the path now names another file; the open descriptor still reads the first
            swapped.append(lineno)
        return real(path, lineno, line)

    monkeypatch.setattr(samples_mod, "parse_json_line", parse_then_swap)
    assert main(["import", "samples", str(log), "--run-dir", str(tmp_path / "runs"), "--quiet"]) in (0, 1, 3)
    assert swapped
    (run,) = list_runs(tmp_path / "runs")
    manifest = json.loads((run.path / "manifest.json").read_text())
    files = manifest["imported_from"]["files"]
    assert files[0]["sha256"] == hashlib.sha256(original).hexdigest()
    assert files[0]["sha256"] != hashlib.sha256(log.read_bytes()).hexdigest()


def test_audits_scores_writes_the_columnar_table_back_as_records(tmp_path: Path, capsys) -> None:
    """``relgate audits ID --scores FILE``: the records are built from the columnar table (no second copy of every
    row as a dict); the file reads back as the same table."""
    from relgate_tui.engine.judging.as_scores import audit_scores
    from relgate_tui.engine.judging.scores_file import load_scores
    from tests.engine.stored_audit import stored_audit

    audit = stored_audit(tmp_path / "home")
    out = tmp_path / "scores.jsonl"
    assert main(["audits", str(audit), "--scores", str(out)]) == 0
    scores = audit_scores(audit)
    assert f"wrote {len(scores.table)} scores" in capsys.readouterr().err
    back = load_scores(out)
    assert [r.key for r in back.rows] == [r.key for r in scores.table.rows]
    assert [(r.score, r.human, r.logprobs) for r in back.rows] == [(r.score, r.human, r.logprobs)
                                                                    for r in scores.table.rows]


@pytest.mark.parametrize("seed", ["x", 1.5, None, True])
def test_a_stored_audit_whose_manifest_seed_is_no_integer_is_one_line(tmp_path: Path, capsys, seed) -> None:
    """A manifest ``"seed": "x"`` planned other requests than the stored answers (a misleading "0 answers, 4
    planned answers missing") or raised Python's own text: now one line naming the manifest and the field."""
    from tests.engine.stored_audit import stored_audit

    audit = stored_audit(tmp_path / "home")
    manifest = audit / "manifest.json"
    doc = json.loads(manifest.read_text())
    doc["spec"]["seed"] = seed
    manifest.write_text(json.dumps(doc))
    capsys.readouterr()
    for argv in (["judge", "list", str(audit)], ["judge", "list", str(audit), "--scores", str(tmp_path / "s.jsonl")],
                 ["judge-intervals", "--audit", str(audit)]):
        assert main(argv) == 2
        _one_line_ours(capsys, "manifest.json", "spec.seed", "not an integer")
