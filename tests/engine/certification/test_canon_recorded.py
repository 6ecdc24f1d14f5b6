"""Which canonicalizer, and why (issue 31 item 4): a task file without reference answers whose questions ask for
numbers is suggested ``numeric`` from its questions (never silently ``text``: "1332" and "1332.0" are one class, "I
don't know" is no class), the command says so, and the manifest and the result JSON record the canonicalizer and
its source."""

from __future__ import annotations

import json
import re
from pathlib import Path

from relgate_tui.core.canon import suggest_canonicalizer, suggestion_source
from relgate_tui.demo.server import DemoServer
from relgate_tui.engine.certification.tasks import load_task


def test_questions_decide_when_there_is_no_reference() -> None:
    sums = ["What is 576 plus 770?", "How many legs do 3 spiders have?", "Compute 12 * 7."]
    assert suggest_canonicalizer([], False, sums) == "numeric"
    assert suggestion_source([], False, sums).startswith("suggested from the questions")
    words = ["Name a colour.", "Who wrote Hamlet?", "What is 2 + 2?"]
    assert suggest_canonicalizer([], False, words) == "text"
    assert "no reference answers" in suggestion_source([], False, words)
    assert suggest_canonicalizer(["12", "7"], False, words) == "numeric"  # references first, as before


def test_a_task_file_without_references_is_numeric_and_recorded(incli, tmp_path: Path) -> None:
    task = tmp_path / "mine.jsonl"
    rows = [{"id": f"q{i}", "question": f"What is {300 + 7 * i} plus {500 + 3 * i}?"} for i in range(16)]
    task.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert load_task(str(task)).canon == "numeric"
    out = tmp_path / "doc.json"
    with DemoServer() as server:
        result = incli(tmp_path, "certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid",
                       "--k-max", "5", "--json", str(out))
    assert result.returncode in (0, 1, 3), result.stderr
    assert "canonicalizer numeric: suggested from the questions" in result.stderr
    doc = json.loads(out.read_text())
    assert doc["canon"]["spec"] == "numeric" and doc["canon"]["source"].startswith("suggested from the questions")
    classes = {c["answer"] for it in doc["items"] for c in it["classes"]}
    assert classes and all(re.fullmatch(r"-?\d+(\.\d+)?", c) for c in classes), classes
    (manifest,) = (tmp_path / "runs").rglob("manifest.json") if (tmp_path / "runs").exists() else \
        list(Path(tmp_path).rglob("manifest.json"))
    assert json.loads(manifest.read_text())["canon"]["spec"] == "numeric"


def test_a_bundled_task_records_its_canonicalizer(incli, tmp_path: Path) -> None:
    out = tmp_path / "doc.json"
    with DemoServer() as server:
        result = incli(tmp_path, "certify", "--task", "mmlu", "--limit", "6", "--endpoint", server.base_url,
                       "--model", "sim-mid", "--k-max", "3", "--json", str(out), "--quiet")
    assert result.returncode in (0, 1, 3), result.stderr
    assert json.loads(out.read_text())["canon"] == {"spec": "mcq", "source": "the bundled task's canonicalizer"}
