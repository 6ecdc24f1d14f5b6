"""The generic samples JSONL → :class:`~relgate_tui.engine.importers.model.ImportedLog`.

One item per line::

    {"id": "q1", "question": "What is 2+2?", "answer": "4", "samples": ["4", "four", "4"]}
    {"id": "q2", "question": "Capital of France?", "choices": ["London", "Paris"], "acceptable_answers": ["B"],
     "samples": ["B", "Paris", "(B)"]}

``id`` (string or integer, unique), ``question``, optional ``answer`` and/or ``acceptable_answers`` (merged, as in
task files), optional ``choices`` (multiple choice, at most 10), and ``samples``: the item's raw answers in the
order they were drawn. Optional ``model``, ``temperature`` and ``seed`` are read from the first line that has them (the
latter two only feed the flags).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from relgate_tui.engine.importers.model import (
    ImportedItem,
    ImportedLog,
    LogLines,
    SourceFile,
    check_totals,
    parse_json_line,
)
from relgate_tui.errors import data_error

__all__ = ["load_samples"]


def _strings(path: Path, line: int, field: str, value: Any) -> list[str]:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        return [str(v) for v in value]
    raise data_error(path, "expected a string or a list of strings", line=line, field=field)


def load_samples(path: str | Path, task: str | None = None) -> ImportedLog:
    """Read a generic samples JSONL file, line by line (:class:`~relgate_tui.engine.importers.model.LogLines`:
    one line in memory at a time). One-line :class:`~relgate_tui.errors.DataError` for anything wrong."""
    p = Path(path)
    lines = LogLines(p, what="a samples file")
    items: list[ImportedItem] = []
    seen: dict[str, int] = {}
    n_answers = 0
    temperature: float | None = None
    seed: int | None = None
    model = "imported"
    for lineno, line in lines:
        if not line.strip():
            continue
        row = parse_json_line(p, lineno, line)
        if not isinstance(row, dict):
            raise data_error(p, f"expected a JSON object, got {type(row).__name__}", line=lineno)
        raw_id = row.get("id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or not str(raw_id).strip():
            raise data_error(p, "missing or not a string/integer", line=lineno, field="id")
        item_id = str(raw_id).strip()
        if item_id in seen:
            raise data_error(p, f"duplicate id {item_id!r} (first on line {seen[item_id]})", line=lineno, field="id")
        seen[item_id] = lineno
        if "samples" not in row:
            raise data_error(p, "missing (the item's raw answers)", line=lineno, field="samples")
        samples = row["samples"]
        if not isinstance(samples, list) or not samples or not all(isinstance(s, str) for s in samples):
            raise data_error(p, "expected a non-empty list of answer strings", line=lineno, field="samples")
        question = row.get("question", "")
        if not isinstance(question, str):
            raise data_error(p, "expected a string", line=lineno, field="question")
        answers: list[str] = []
        for key in ("answer", "acceptable_answers"):
            if row.get(key) is not None:
                answers += _strings(p, lineno, key, row[key])
        choices = row.get("choices") or []
        if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices) or len(choices) > 10:
            raise data_error(p, "expected a list of at most 10 option texts", line=lineno, field="choices")
        if temperature is None and isinstance(row.get("temperature"), (int, float)) and not isinstance(
                row.get("temperature"), bool):
            temperature = float(row["temperature"])
        if seed is None and isinstance(row.get("seed"), int) and not isinstance(row.get("seed"), bool):
            seed = int(row["seed"])
        if model == "imported" and isinstance(row.get("model"), str) and row["model"].strip():
            model = row["model"].strip()
        items.append(ImportedItem(item_id, question, tuple(samples), tuple(dict.fromkeys(answers)), tuple(choices)))
        n_answers += len(samples)
        check_totals(p, len(items), n_answers, line=lineno)
    if not items:
        raise data_error(p, "no items (empty file)")
    return ImportedLog(tool="samples", version=None, task=task or p.stem, model=model,
                       files=(SourceFile(str(p), lines.sha256),), items=tuple(items), temperature=temperature,
                       seed=seed)
