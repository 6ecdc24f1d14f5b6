"""The labels file of ``relgate certify --labels`` (SPEC §4.3) and applying verdicts to a run idempotently.

Crash-test seam: when the environment variable ``RELGATE_CRASH_AFTER_LABELS=N`` is set, the process SIGKILLs itself
right after persisting the N-th label event of the invocation (used by ``tests/engine/test_crash_resume.py`` to
land a kill mid-labelling deterministically; it has no other effect).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

from relgate_tui.engine.runs.store import Label, RunStore
from relgate_tui.errors import CertifyError

__all__ = ["CRASH_AFTER_LABELS_ENV", "parse_labels_file", "check_label_ranks", "apply_labels"]

CRASH_AFTER_LABELS_ENV = "RELGATE_CRASH_AFTER_LABELS"


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def parse_labels_file(path: str | os.PathLike[str], known_ids: Sequence[str] | None = None) -> list[Label]:
    """Read a labels file: JSONL, one verdict per line — ``{"id": ..., "rank": 1|2|...}``, ``{"id": ..., "none":
    true}`` or ``{"id": ..., "skip": true}`` (blank lines ignored). Raises :class:`CertifyError` naming the file and
    line for bad JSON, a missing/unknown/duplicate id, or not exactly one valid verdict. Nothing is written here."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise CertifyError(f"{p}: labels file not found") from None
    except OSError as exc:
        raise CertifyError(f"{p}: cannot read the labels file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CertifyError(f"{p}: the labels file is not UTF-8") from None
    known = set(known_ids) if known_ids is not None else None
    out: list[Label] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CertifyError(f"{where}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise CertifyError(f"{where}: expected a JSON object like {{\"id\": \"q1\", \"rank\": 1}}")
        item = obj.get("id")
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            item = str(item)
        if not isinstance(item, str) or not item:
            raise CertifyError(f"{where}: field 'id' is missing or not a string")
        unknown_keys = sorted(set(obj) - {"id", "rank", "none", "skip"})
        if unknown_keys:
            raise CertifyError(f"{where}: unknown field {unknown_keys[0]!r} (use one of rank, none, skip)")
        given = [k for k in ("rank", "none", "skip") if k in obj]
        if len(given) != 1:
            raise CertifyError(f"{where}: give exactly one of 'rank', 'none', 'skip' for item {item!r}")
        kind = given[0]
        value = obj[kind]
        if kind == "rank":
            if not _is_int(value) or value < 1:
                raise CertifyError(f"{where}: field 'rank' must be an integer >= 1, got {value!r}")
            label = Label(item, rank=int(value), source="file")
        else:
            if value is not True:
                raise CertifyError(f"{where}: field {kind!r} must be true, got {value!r}")
            label = Label(item, none=kind == "none", skip=kind == "skip", source="file")
        if known is not None and item not in known:
            raise CertifyError(f"{where}: item {item!r} is not in the task")
        if item in seen:
            raise CertifyError(f"{where}: item {item!r} already labelled on line {seen[item]}")
        seen[item] = lineno
        out.append(label)
    return out


def check_label_ranks(labels: Sequence[Label], n_classes: Mapping[str, int], source: str = "labels") -> None:
    """Every ranked verdict must name an existing candidate: rank ≤ the item's number of ranked classes."""
    for lab in labels:
        if lab.rank is not None and lab.rank > n_classes.get(lab.item, 0):
            have = n_classes.get(lab.item, 0)
            raise CertifyError(
                f"{source}: item {lab.item!r} has {have} candidate answer{'s' if have != 1 else ''}, "
                f"so rank {lab.rank} does not exist (use none if no candidate is acceptable)"
            )


def apply_labels(store: RunStore, labels: Sequence[Label]) -> int:
    """Persist the verdicts that differ from the ones in effect (one fsync'd event each); return how many were
    written. Idempotent: applying the same labels again writes nothing, so a rerun after a kill mid-way finishes
    the job and ends in the same state."""
    crash_after = _crash_after()
    current = store.current_labels()
    written = 0
    for lab in labels:
        have = current.get(lab.item)
        if have is not None and have.same_verdict(lab):
            continue
        store.append_label(lab)
        current[lab.item] = lab
        written += 1
        if crash_after is not None and written >= crash_after:
            os.kill(os.getpid(), signal.SIGKILL)
    return written


def _crash_after() -> int | None:
    value = os.environ.get(CRASH_AFTER_LABELS_ENV, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None

