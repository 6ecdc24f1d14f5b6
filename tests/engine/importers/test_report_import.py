"""``relgate report`` of an imported run (issue 15): the ``imported_from`` block and the flags, per flag and item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.engine.certification.report import report_markdown

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "imports"
SEEDED = next((FIX / "lm_eval" / "addition_seeded").glob("samples_*.jsonl"))
PLAIN = next((FIX / "lm_eval" / "addition").glob("samples_*.jsonl"))


def _import(path: Path, runs: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    out = runs.parent / f"{path.parent.name}.json"
    assert main(["import", "lm-eval", str(path), "--run-dir", str(runs), "--json", str(out), "--quiet"]) in (0, 1)
    capsys.readouterr()
    return json.loads(out.read_text(encoding="utf-8"))


def test_report_shows_imported_from_and_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    doc = _import(SEEDED, runs, capsys)
    imp = doc["imported_from"]
    flagged = [e["id"] for e in doc["items"] if "fixed_seed" in e.get("flags", [])]
    assert flagged and imp["flags"] == {"fixed_seed": len(flagged)}

    assert main(["report", doc["run_id"], "--run-dir", str(runs)]) == 0
    md = capsys.readouterr().out
    block = md.split("## Imported from", 1)[1].split("\n## ", 1)[0]
    assert f"- Tool: lm-eval {imp['version']}" in block and f"model {imp['model']}" in block
    assert f"K = {imp['k']}, temperature {imp['temperature']}" in block and f"seed {imp['seed']}" in block
    assert f"sha256 `{imp['files'][0]['sha256'][:16]}…`" in block
    assert f"**{len(flagged)} of {doc['task']['items']} items flagged: no self-consistency signal**" in block
    row = next(line for line in block.splitlines() if line.startswith("| fixed_seed |"))
    assert f"| {len(flagged)} | {imp['flag_reasons']['fixed_seed']} |" in row
    assert row.endswith(" | " + ", ".join(flagged[:20]) + " |")
    assert block.split(row, 1)[1].startswith("\n\n")  # the table ends before the notes


def test_report_of_an_unflagged_import_and_of_a_sampled_run(tmp_path: Path, capsys) -> None:
    doc = _import(PLAIN, tmp_path / "runs", capsys)
    assert doc["imported_from"]["n_flagged"] == 0
    md = report_markdown(doc)
    assert "## Imported from" in md and "- No items flagged" in md and "| flag |" not in md
    sampled = {k: v for k, v in doc.items() if k != "imported_from"}
    assert "Imported from" not in report_markdown(sampled)  # runs relgate sampled itself: no such block


def test_an_imported_run_labelled_by_a_person_shows_the_gates_bound(tmp_path: Path, capsys) -> None:
    """Issue 37 §2 on an imported run: with a person's labels the run's bound is the anytime one its gate decides on,
    in JSON, the import summary, the report and ``relgate runs``; the fixed-n value is shown once, by name (fails on
    the code before: all three said the fixed-n Clopper–Pearson bound)."""
    from relgate_tui.engine.certification.result import RunResult
    from relgate_tui.engine.importers.run import counting_notes, level_counts

    runs = tmp_path / "runs"
    first = _import(PLAIN, runs, capsys)
    cal = [e["id"] for e in first["items"] if e["role"] == "calibration"]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": i, "rank": 1}) + "\n" for i in cal[:5]))
    out = tmp_path / "labelled.json"
    assert main(["import", "lm-eval", str(PLAIN), "--run-dir", str(runs), "--json", str(out), "--labels", str(labels),
                 "--min-reliability", "0.5"]) in (0, 1)
    summary = capsys.readouterr().err
    doc = json.loads(out.read_text(encoding="utf-8"))
    r = RunResult.from_json(doc)
    assert r.watch == "anytime" and r.gate is not None and r.gate.watch == "anytime"
    assert doc["reliability_lower_bound"] == r.gate.lower_bound and r.fixed_n_lower_bound is not None
    bound = f"{100 * r.reliability_lower_bound:.1f}%"
    assert f"(≥ {bound} the 95% anytime lower bound, n = {r.reliability_n})" in summary
    assert summary.count("fixed-n Clopper–Pearson lower bound") == 1
    k, n = level_counts(r)
    assert n == r.reliability_n and f"reliability level {k}/{n + 1} = " in "\n".join(counting_notes(r))
    assert main(["report", doc["run_id"], "--run-dir", str(runs)]) == 0
    md = capsys.readouterr().out
    assert f"Top answer right on ≥ {bound} of such questions" in md and md.count("Fixed-n Clopper–Pearson") == 1
    assert main(["runs", "--run-dir", str(runs), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["reliability_lower_bound"] == doc["reliability_lower_bound"]
