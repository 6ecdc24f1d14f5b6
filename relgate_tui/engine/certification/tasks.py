"""Task files (SPEC §6): one item per line, JSONL or CSV; and the bundled tasks shipped in ``assets/``.

Fields of an item:

``id``
    string or integer, unique within the file.
``question``
    the question text; or ``messages``: a list of ``{"role": ..., "content": ...}`` chat messages (JSONL only).
``answer`` / ``acceptable_answers``
    optional reference answer(s): a string or number, or a list of them. Both may be given; they are merged.
``choices``
    optional list of option texts (multiple choice); the reference may then be a letter or an option's text.
``weight``
    optional likelihood ratio p_test(x)/p_cal(x) of the item's question (a finite number ≥ 0), for weighted conformal
    sets under covariate shift (:mod:`relgate_tui.core.certification.weighted_sets`): a calibration item's weight weights its
    score, a deployment item's weight is its test weight w_{n+1}. Give every item a weight, or none.

CSV files have a header row with these column names. In CSV, ``acceptable_answers`` and ``choices`` are a JSON list
(``["Paris", "paris, france"]``) or ``|``-separated text (``London|Paris|Berlin``).

Bad input raises :class:`TaskError` with one line naming the file, the line and the field. Loading writes nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relgate_tui.engine.assets import assets_dir
from relgate_tui.engine.records import TaskItem
from relgate_tui.engine.runs.files import jsonl_objects


class TaskError(ValueError):
    """A task file cannot be used. ``str(err)`` is one line: ``file:line: field: problem``."""


@dataclass(frozen=True)
class Task:
    """A loaded task. ``sha256`` is the hash of the file's bytes; ``canon`` the suggested canonicalizer spec."""

    name: str
    path: str
    sha256: str
    items: tuple[TaskItem, ...]
    canon: str = "text"
    description: str = ""
    meta: dict = field(default_factory=dict)
    canon_source: str = ""  # why ``canon``: the bundled registry, or which suggestion rule chose it (issue 31 item 4)


@dataclass(frozen=True)
class BundledTask:
    """An entry of the bundled-task registry (``assets/tasks.json``)."""

    name: str
    file: str
    items: int
    canon: str
    description: str
    licence: str
    references: bool = True  # False: a task without reference answers (a person verifies; issue 31 item 1)


# ---------------------------------------------------------------------------------------------- bundled registry


def bundled_tasks() -> list[BundledTask]:
    """The tasks shipped with relgate, from ``assets/tasks.json``."""
    registry = json.loads((assets_dir() / "tasks.json").read_text(encoding="utf-8"))
    return [BundledTask(**entry) for entry in registry["tasks"]]


def bundled_task_names() -> list[str]:
    return [t.name for t in bundled_tasks()]


def format_task_table() -> str:
    """Plain-text table of the bundled tasks (``relgate tasks``)."""
    tasks = bundled_tasks()
    width = max(len(t.name) for t in tasks)
    lines = [f"{'task':{width}s}  {'items':>5s}  {'canon':7s}  description"]
    for t in tasks:
        refs = "" if t.references else " (no reference answers)"
        lines.append(f"{t.name:{width}s}  {t.items:5d}  {t.canon:7s}  {t.description}{refs} [{t.licence}]")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- loading


def load_task(name_or_path: str, limit: int | None = None, *, suggest: bool = True) -> Task:
    """Load a bundled task by name, or a ``.jsonl`` / ``.csv`` file by path. With ``limit``, only the first
    ``limit`` items are parsed (the rest of the file is hashed in 1 MiB chunks but neither kept nor validated), so a
    huge task file costs constant memory. The path must be a regular file (a device or a FIFO is refused).
    ``suggest`` False skips suggesting a canonicalizer for a file (``canon`` stays "text"): for a caller that
    already knows it (a stored run, an explicit ``--canon``). ``canon_source`` says why ``canon`` (issue 31 item 4):
    a file without reference answers is suggested a canonicalizer from its questions, never silently ``text``."""
    for entry in bundled_tasks():
        if name_or_path == entry.name:
            path = assets_dir() / entry.file
            items, digest = _load_file(path, display=entry.name, limit=limit)
            return Task(entry.name, str(path), digest, items, entry.canon, entry.description,
                        {"licence": entry.licence, "bundled": True}, "the bundled task's canonicalizer")
    path = Path(name_or_path).expanduser()
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        names = ", ".join(bundled_task_names())
        raise TaskError(f"{name_or_path}: no such task file or bundled task (bundled: {names})") from None
    except OSError as exc:
        raise TaskError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise TaskError(f"{path}: is a directory, not a task file")
    if not stat.S_ISREG(mode):
        raise TaskError(f"{path}: not a regular file (a device, FIFO or socket cannot be a task file)")
    items, digest = _load_file(path, display=str(path), limit=limit)
    canon, source = _suggest(items) if suggest else ("text", "")
    return Task(path.stem, str(path), digest, items, canon, "", {"bundled": False}, source)


def dump_items(items: tuple[TaskItem, ...] | list[TaskItem]) -> bytes:
    """The items as a task file (JSONL) that :func:`load_task` reads back to equal items — the copy a run keeps of
    the items it uses, so it opens after its task file moved."""
    lines = []
    for it in items:
        row: dict[str, Any] = {"id": it.id, "question": it.question}
        if it.answers:
            row["acceptable_answers"] = list(it.answers)
        if it.choices:
            row["choices"] = list(it.choices)
        if it.messages:
            row["messages"] = [dict(m) for m in it.messages]
        if it.weight is not None:
            row["weight"] = it.weight
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(lines).encode("utf-8")


def _suggest(items: tuple[TaskItem, ...]) -> tuple[str, str]:
    """The suggested canonicalizer of a task file and why (from its references, else from its questions)."""
    from relgate_tui.core.canon import suggest_canonicalizer, suggestion_source

    args = ([a for it in items for a in it.answers], any(it.choices for it in items), [it.question for it in items])
    return suggest_canonicalizer(*args), suggestion_source(*args)


def _file_sha256(path: Path, display: str) -> str:
    h = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    except OSError as exc:
        raise TaskError(f"{display}: cannot read: {exc.strerror or exc}") from None
    return h.hexdigest()


def _load_file(path: Path, display: str, limit: int | None = None) -> tuple[tuple[TaskItem, ...], str]:
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise TaskError(f"{display}: unknown task file type {path.suffix or '(none)'!r}: use .jsonl or .csv")
    if limit is not None:
        return _load_prefix(path, display, suffix, limit), _file_sha256(path, display)
    from relgate_tui.engine.runs.inputs import read_regular

    try:
        raw = read_regular(path, 1 << 30, what="a task file")  # a FIFO or /dev/zero is refused, not read
    except OSError as exc:
        raise TaskError(f"{display}: cannot read: {exc.strerror or exc}") from None
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TaskError(f"{display}:{line}: not UTF-8 text (byte {exc.start})") from None
    rows = _csv_rows(text, display) if suffix == ".csv" else jsonl_objects(text, display, TaskError)
    return _items_of(rows, display), digest


def _items_of(rows: Iterable[tuple[int, dict]], display: str, limit: int | None = None) -> tuple[TaskItem, ...]:
    items: list[TaskItem] = []
    seen: dict[str, int] = {}
    weighted: dict[bool, int] = {}  # with / without a weight → first line
    for line, row in rows:
        item = _item(row, display, line)
        if item.id in seen:
            raise TaskError(f"{display}:{line}: id: duplicate id {item.id!r} (first on line {seen[item.id]})")
        seen[item.id] = line
        has = item.weight is not None
        weighted.setdefault(has, line)
        if not has and True in weighted:
            raise TaskError(f"{display}:{line}: weight: missing (line {weighted[True]} has a weight: give every "
                            "item a weight, or none)")
        if has and False in weighted:
            raise TaskError(f"{display}:{line}: weight: given, but line {weighted[False]} has none (give every item "
                            "a weight, or none)")
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    if not items:
        raise TaskError(f"{display}: empty task file (no items)")
    return tuple(items)


def _load_prefix(path: Path, display: str, suffix: str, limit: int) -> tuple[TaskItem, ...]:
    """The first ``limit`` items, reading the file as a stream (line by line) and stopping there."""
    try:
        with path.open("rb") as f:
            if suffix == ".csv":
                text = io.TextIOWrapper(f, encoding="utf-8-sig", newline="")
                try:
                    return _items_of(_csv_rows(text, display), display, limit)
                except UnicodeDecodeError:
                    raise TaskError(f"{display}: not UTF-8 text") from None
            return _items_of(_jsonl_stream(f, display), display, limit)
    except OSError as exc:
        raise TaskError(f"{display}: cannot read: {exc.strerror or exc}") from None


def _jsonl_stream(f: Any, display: str) -> Iterator[tuple[int, dict]]:
    for line_no, raw in enumerate(f, start=1):
        try:
            line = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise TaskError(f"{display}:{line_no}: not UTF-8 text (byte {exc.start} of the line)") from None
        yield from jsonl_objects(line.rstrip("\n"), display, TaskError, first_line=line_no)


def _csv_rows(text: str | io.TextIOBase, display: str) -> Iterator[tuple[int, dict]]:
    reader = csv.DictReader(io.StringIO(text) if isinstance(text, str) else text)
    if not reader.fieldnames:
        raise TaskError(f"{display}: empty task file (no header row)")
    header = [h.strip() for h in reader.fieldnames]
    if "id" not in header:
        raise TaskError(f"{display}:1: id: missing column 'id' in the header")
    if "question" not in header:
        raise TaskError(f"{display}:1: question: missing column 'question' in the header")
    try:
        for row in reader:
            row = {(k or "").strip(): v for k, v in row.items()}
            if None in row.values() and all(v in (None, "") for v in row.values()):
                continue
            if all((v or "").strip() == "" for v in row.values() if isinstance(v, str)):
                continue
            cleaned: dict[str, Any] = {k: v for k, v in row.items() if k and v not in (None, "")}
            for key in ("acceptable_answers", "choices"):
                if key in cleaned:
                    cleaned[key] = _csv_list(cleaned[key], display, reader.line_num, key)
            yield reader.line_num, cleaned
    except csv.Error as exc:
        raise TaskError(f"{display}:{reader.line_num}: bad CSV: {exc}") from None


def _csv_list(value: str, display: str, line: int, key: str) -> list[str]:
    value = value.strip()
    if value.startswith("["):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as exc:
            raise TaskError(f"{display}:{line}: {key}: bad JSON list: {exc.msg}") from None
        return parsed
    return [part.strip() for part in value.split("|") if part.strip()]


def _scalar_answer(value: Any, display: str, line: int, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise TaskError(f"{display}:{line}: {key}: expected a string or number, got {type(value).__name__}")
    return str(value)


def _item(row: dict, display: str, line: int) -> TaskItem:
    if "id" not in row or row["id"] in (None, ""):
        raise TaskError(f"{display}:{line}: id: missing")
    raw_id = row["id"]
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
        raise TaskError(f"{display}:{line}: id: expected a string or integer, got {type(raw_id).__name__}")
    item_id = str(raw_id).strip()
    if not item_id:
        raise TaskError(f"{display}:{line}: id: empty")

    messages: tuple[dict, ...] = ()
    if "messages" in row:
        msgs = row["messages"]
        if not isinstance(msgs, list) or not msgs:
            raise TaskError(f"{display}:{line}: messages: expected a non-empty list of {{role, content}} objects")
        for m in msgs:
            if not (isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)):
                raise TaskError(f"{display}:{line}: messages: every message needs string 'role' and 'content'")
        messages = tuple({"role": m["role"], "content": m["content"]} for m in msgs)
    question = row.get("question")
    if question is None or (isinstance(question, str) and not question.strip()):
        if not messages:
            raise TaskError(f"{display}:{line}: question: missing (give 'question' or 'messages')")
        question = next((m["content"] for m in reversed(messages) if m["role"] == "user"), messages[-1]["content"])
    if not isinstance(question, str):
        raise TaskError(f"{display}:{line}: question: expected a string, got {type(question).__name__}")

    answers: list[str] = []
    if "answer" in row and row["answer"] is not None:
        value = row["answer"]
        if isinstance(value, list):
            answers.extend(_scalar_answer(v, display, line, "answer") for v in value)
        else:
            answers.append(_scalar_answer(value, display, line, "answer"))
    if "acceptable_answers" in row and row["acceptable_answers"] is not None:
        value = row["acceptable_answers"]
        if not isinstance(value, list):
            raise TaskError(f"{display}:{line}: acceptable_answers: expected a list, got {type(value).__name__}")
        answers.extend(_scalar_answer(v, display, line, "acceptable_answers") for v in value)

    choices: tuple[str, ...] = ()
    if "choices" in row and row["choices"] is not None:
        value = row["choices"]
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise TaskError(f"{display}:{line}: choices: expected a list of strings")
        if len(value) > 10:
            raise TaskError(f"{display}:{line}: choices: at most 10 options (A-J), got {len(value)}")
        choices = tuple(value)
    weight = _weight(row.get("weight"), display, line)
    return TaskItem(item_id, question, tuple(dict.fromkeys(answers)), choices, messages, weight)


def _weight(value: Any, display: str, line: int) -> float | None:
    """The ``weight`` field: a finite number ≥ 0 (a JSON number, or CSV text), or None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text)
        except ValueError:
            raise TaskError(f"{display}:{line}: weight: expected a number, got {text[:40]!r}") from None
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TaskError(f"{display}:{line}: weight: expected a number, got {type(value).__name__}")
    try:
        w = float(value)
    except OverflowError:  # a huge JSON integer
        raise TaskError(f"{display}:{line}: weight: must be finite") from None
    if not math.isfinite(w):
        raise TaskError(f"{display}:{line}: weight: must be finite, got {w}")
    if w < 0:
        raise TaskError(f"{display}:{line}: weight: must be ≥ 0 (a likelihood ratio), got {w:g}")
    return w
