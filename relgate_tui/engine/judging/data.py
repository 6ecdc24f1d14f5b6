"""Judge-audit data sets (issue 4): inputs, candidate outputs, optional human scores per criterion.

File format — JSONL, one input per line::

    {"id": "P0",
     "input": "the prompt / source text the candidates respond to",
     "criteria": {"Coherence": "how much the story makes sense", ...},      # name -> description (optional)
     "candidates": [{"id": "S0", "text": "...", "human": {"Coherence": 3.33, ...}, "system": "GPT-2"}, ...]}

``criteria`` may be omitted on lines after the first (the first line's criteria then apply). Human scores are
optional (means over raters, any scale, typically Likert 1–5); ``system`` is optional metadata. Every input needs
at least two candidates with distinct ids. Bad input raises :class:`AuditDataError` with one line naming the file,
the line and the field.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from relgate_tui.engine.assets import assets_dir
from relgate_tui.engine.runs.files import jsonl_objects
from relgate_tui.errors import DataError


class AuditDataError(DataError):
    """A judge-audit data file cannot be used (one line: ``file:line: field: problem``)."""


@dataclass(frozen=True)
class AuditCandidate:
    id: str
    text: str
    human: dict[str, float] = field(default_factory=dict)
    system: str = ""


@dataclass(frozen=True)
class AuditInput:
    id: str
    input: str
    candidates: tuple[AuditCandidate, ...]


@dataclass(frozen=True)
class AuditSet:
    name: str
    path: str
    criteria: dict[str, str]
    inputs: tuple[AuditInput, ...]

    def criterion_description(self, criterion: str) -> str:
        for name, description in self.criteria.items():
            if name.casefold() == criterion.casefold():
                return description
        raise AuditDataError(f"{self.name}: unknown criterion {criterion!r} (have: {', '.join(self.criteria)})")

    def criterion_name(self, criterion: str) -> str:
        """The data set's own spelling of ``criterion`` (case-insensitive match)."""
        for name in self.criteria:
            if name.casefold() == criterion.casefold():
                return name
        raise AuditDataError(f"{self.name}: unknown criterion {criterion!r} (have: {', '.join(self.criteria)})")


@dataclass(frozen=True)
class BundledAuditSet:
    name: str
    file: str
    inputs: int
    candidates_per_input: int
    criteria: list[str]
    description: str
    licence: str


def bundled_audit_sets() -> list[BundledAuditSet]:
    registry = json.loads((assets_dir() / "judge.json").read_text(encoding="utf-8"))
    return [BundledAuditSet(**entry) for entry in registry["sets"]]


def load_audit_set(name_or_path: str) -> AuditSet:
    """Load a bundled audit set by name (e.g. ``hanna``) or a JSONL file by path."""
    for entry in bundled_audit_sets():
        if entry.name == name_or_path:
            return _load(assets_dir() / entry.file, entry.name)
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        names = ", ".join(s.name for s in bundled_audit_sets())
        raise AuditDataError(f"{name_or_path}: no such audit data file or bundled set (bundled: {names})")
    return _load(path, str(path))


def _load(path: Path, display: str) -> AuditSet:
    try:
        from relgate_tui.engine.runs.inputs import read_regular

        text = read_regular(path, 256 << 20, what="an audit data file").decode("utf-8-sig")
    except OSError as exc:
        raise AuditDataError(f"{display}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise AuditDataError(f"{display}: not UTF-8 text (byte {exc.start})") from None
    criteria: dict[str, str] = {}
    inputs: list[AuditInput] = []
    seen: set[str] = set()
    for line_no, row in jsonl_objects(text, display, AuditDataError):
        where = f"{display}:{line_no}"
        if "criteria" in row:
            if not isinstance(row["criteria"], dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in row["criteria"].items()
            ):
                raise AuditDataError(f"{where}: criteria: expected an object of name -> description strings")
            for k, v in row["criteria"].items():
                criteria.setdefault(k, v)
        input_id = row.get("id")
        if isinstance(input_id, bool) or not isinstance(input_id, (str, int)) or str(input_id).strip() == "":
            raise AuditDataError(f"{where}: id: missing or not a string/integer")
        input_id = str(input_id)
        if input_id in seen:
            raise AuditDataError(f"{where}: id: duplicate input id {input_id!r}")
        seen.add(input_id)
        if not isinstance(row.get("input"), str):
            raise AuditDataError(f"{where}: input: missing or not a string")
        cands = row.get("candidates")
        if not isinstance(cands, list) or len(cands) < 2:
            raise AuditDataError(f"{where}: candidates: expected a list of at least 2 candidates")
        parsed: list[AuditCandidate] = []
        for j, c in enumerate(cands):
            if not isinstance(c, dict) or not isinstance(c.get("text"), str):
                raise AuditDataError(f"{where}: candidates[{j}]: expected an object with a string 'text'")
            cid = str(c.get("id", j))
            human = c.get("human", {}) or {}
            if not isinstance(human, dict):
                raise AuditDataError(f"{where}: candidates[{j}].human: expected an object of criterion -> score")
            scores: dict[str, float] = {}
            for crit, value in human.items():
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                    raise AuditDataError(f"{where}: candidates[{j}].human.{crit}: expected a finite number")
                scores[str(crit)] = float(value)
            parsed.append(AuditCandidate(cid, c["text"], scores, str(c.get("system", "") or "")))
        if len({c.id for c in parsed}) != len(parsed):
            raise AuditDataError(f"{where}: candidates: duplicate candidate ids")
        inputs.append(AuditInput(input_id, row["input"], tuple(parsed)))
    if not inputs:
        raise AuditDataError(f"{display}: empty audit data file (no inputs)")
    if not criteria:
        names = sorted({k for i in inputs for c in i.candidates for k in c.human})
        criteria = {n: n for n in names}
    name = path.stem if display == str(path) else display
    return AuditSet(name, str(path), criteria, tuple(inputs))
