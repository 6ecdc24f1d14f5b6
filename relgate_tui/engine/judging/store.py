"""Stored audits: a directory per audit in the data dir, like a run (issue 9 item 4).

``<data dir>/audits/<id>/``:

* ``manifest.json`` — ``{"format": 1, "kind": "audit", "id", "created", "relgate_version", "spec": AuditSpec,
  "data": {"name", "path", "sha256"}, "inputs": [input ids], "answers_per_judge"}``; written once, atomically;
* ``answers.jsonl`` — append-only, one line per answer, written (``os.write`` on an ``O_APPEND`` descriptor) as each
  answer arrives, so a ``kill -9`` loses at most the answer being written (a torn last line is dropped on reopen)::

      {"judge": "sim-judge", "key": ["direct", "original", "P3", "S1"], "rep": 0, "text": "4",
       "logprobs": [["4", -0.12, [["4", -0.12], ["3", -2.3]]]], "usage": [52, 1]}

* ``results.json`` — the audit's JSON document (:meth:`AuditResult.to_json`), written when the audit finishes, and
  ``calls.json`` — the calls per judge and the wall time of the run that finished it;
* ``audit.lock`` — the write lock (:func:`~relgate_tui.engine.runs.lock.write_lock`, the runs' mechanism): the one
  process writing the audit holds it, so two processes resuming the same audit can never both append answers (the
  second gets a one-line :class:`~relgate_tui.errors.DataError`). :meth:`AuditStore.create_or_open` takes it, every
  write takes it; :meth:`AuditStore.open` and reading (answers, results, :func:`reopen_result`, :func:`list_audits`)
  take none.

The id is derived from the spec (data, criterion, judges, variants, protocol, reps, selection, seed, α), so running
the same audit again reopens the same directory and asks only what is missing. :func:`reopen_result` recomputes the
result from the stored answers with no endpoint at all; :func:`list_audits` lists the directories.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from relgate_tui import __version__
from relgate_tui.core.jsonsafe import dumps
from relgate_tui.engine.judging.ask import Answer
from relgate_tui.engine.runs.files import atomic_write_bytes
from relgate_tui.engine.transport import logprobs as lp
from relgate_tui.errors import DataError

FORMAT = 1
MANIFEST, ANSWERS, RESULTS, CALLS = "manifest.json", "answers.jsonl", "results.json", "calls.json"
LOCK = "audit.lock"


def audits_dir() -> Path:
    from relgate_tui.engine.runs.paths import data_dir

    return data_dir() / "audits"


def audit_id(spec: Any) -> str:
    """``audit-<data>-<criterion>-<first model>-<12 hex of the spec's hash>``."""
    d = spec.identity()
    digest = hashlib.sha256(json.dumps(d, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:12]
    words = [str(spec.data).rsplit("/", 1)[-1], spec.criterion, spec.judges[0].model if spec.judges else "judge"]
    slug = "-".join(re.sub(r"[^A-Za-z0-9._]+", "_", w).strip("_.")[:24] or "x" for w in words)
    return f"audit-{slug}-{digest}"


def file_sha256(path: str) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def _answer_json(a: Answer) -> str:
    return json.dumps({"judge": a.judge, "key": list(a.key), "rep": a.rep, "text": a.text,
                       "logprobs": lp.to_json(a.logprobs), "usage": [a.prompt_tokens, a.completion_tokens]},
                      ensure_ascii=False, allow_nan=True).replace("-Infinity", "null")


class AuditStore:
    """One audit directory. :meth:`create_or_open` for a spec (takes the write lock); :meth:`open` for an existing
    directory (reading: no lock; a write through it takes the lock first)."""

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        self.path = path
        self.manifest = manifest
        self._fd: int | None = None
        self._lock_fd: int | None = None

    @property
    def id(self) -> str:
        return self.path.name

    @classmethod
    def create_or_open(cls, plan: Any, root: Path | None = None) -> AuditStore:
        """The directory of ``plan``'s spec under ``root`` (default ``<data dir>/audits``): reopened when it exists
        (its manifest must match), else created with a manifest. Either way the store holds the audit's write lock
        until :meth:`close`; :class:`DataError` when another process holds it."""
        spec = plan.spec
        path = (root or audits_dir()) / audit_id(spec)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(f"cannot create the audit directory {path}: {exc.strerror or exc}") from None
        lock = _lock(path)
        try:
            if (path / MANIFEST).is_file():  # looked at under the lock: a concurrent creator has finished
                store = cls.open(path)
                if store.manifest.get("data", {}).get("sha256") != file_sha256(plan.audit_set.path):
                    raise DataError(f"{path}: the audit's data file {plan.audit_set.path} has changed since the "
                                    "audit started; start a new audit (move this directory away)")
            else:
                store = cls(path, cls._new_manifest(path, plan))
        except BaseException:
            os.close(lock)
            raise
        store._lock_fd = lock
        return store

    @staticmethod
    def _new_manifest(path: Path, plan: Any) -> dict[str, Any]:
        spec = plan.spec
        manifest = {
            "format": FORMAT, "kind": "audit", "id": path.name,
            "created": datetime.now(UTC).replace(microsecond=0).isoformat(), "relgate_version": __version__,
            "spec": spec.to_json(),
            "data": {"name": plan.audit_set.name, "path": plan.audit_set.path, "sha256": file_sha256(plan.audit_set.path)},
            "criterion": plan.criterion, "inputs": [i.id for i in plan.inputs],
            "answers_per_judge": plan.answers_per_judge,
        }
        atomic_write_bytes(path / MANIFEST, dumps(manifest).encode())
        return manifest

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> AuditStore:
        p = Path(path)
        try:
            manifest = json.loads((p / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError(f"{p}: not a stored audit (no {MANIFEST})") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(f"{p / MANIFEST}: unreadable ({type(exc).__name__})") from None
        if not isinstance(manifest, dict) or manifest.get("kind") != "audit" or manifest.get("format") != FORMAT:
            raise DataError(f"{p / MANIFEST}: not an audit manifest of format {FORMAT}")
        return cls(p, manifest)

    def spec(self) -> Any:
        from relgate_tui.engine.judging.audit import AuditSpec

        try:
            return AuditSpec.from_json(self.manifest["spec"])
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{self.path / MANIFEST}: field 'spec': {exc}") from None

    # -- answers -------------------------------------------------------------------------------------------------
    def answers(self) -> Iterator[Answer]:
        """The stored answers in write order (a torn last line, from a kill mid-write, is skipped)."""
        path = self.path / ANSWERS
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        end = data.rfind(b"\n")
        for n, raw in enumerate(data[: end + 1].split(b"\n")[:-1] if end >= 0 else [], start=1):
            if not raw.strip():
                continue
            try:
                d = json.loads(raw)
                key = tuple(d["key"])
                if not all(isinstance(k, str) for k in key) or not isinstance(d["text"], str):
                    raise TypeError
                usage = d.get("usage") or [0, 0]
                yield Answer(str(d["judge"]), key, int(d["rep"]), d["text"], lp.from_json(d.get("logprobs")), True,
                             int(usage[0]), int(usage[1]))
            except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError, IndexError):
                raise DataError(f"{path}:{n}: a stored answer is corrupt") from None

    def lock(self) -> None:
        """Take the write lock now (every write takes it anyway); :class:`DataError` when another process holds
        it."""
        if self._lock_fd is None:
            self._lock_fd = _lock(self.path)

    def append(self, answer: Answer) -> None:
        self.lock()
        if self._fd is None:
            self._fd = _open_append(self.path / ANSWERS)
        data = (_answer_json(answer) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

    def write_results(self, result: Any) -> None:
        """``results.json`` and ``calls.json`` (per-judge calls and the wall time, so a reopened audit shows them)."""
        self.lock()
        calls = {"calls": result.calls, "wall_seconds": result.wall_seconds}
        atomic_write_bytes(self.path / CALLS, dumps(calls).encode())
        atomic_write_bytes(self.path / RESULTS, dumps(result.to_json()).encode())

    def calls(self) -> dict[str, Any]:
        try:
            doc = json.loads((self.path / CALLS).read_text(encoding="utf-8"))
            calls = {str(j): {k: int(c[k]) for k in ("made", "cached", "failed")} for j, c in doc["calls"].items()}
            return {"calls": calls, "wall_seconds": float(doc.get("wall_seconds") or 0.0)}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
            return {}

    def results(self) -> dict[str, Any] | None:
        try:
            doc = json.loads((self.path / RESULTS).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        return doc if isinstance(doc, dict) else None

    def close(self) -> None:
        """Close the answers file and release the write lock. Idempotent."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _lock(path: Path) -> int:
    from relgate_tui.engine.runs.lock import write_lock

    return write_lock(path / LOCK, f"audit {path.name} is in use by another relgate process (it is being run or "
                                   "resumed there); wait for it to finish or stop it")


def _open_append(path: Path) -> int:
    """Open for appending after cutting a torn (unterminated) last line, if any."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    size = os.fstat(fd).st_size
    if size:
        data = os.pread(fd, size, 0)
        keep = data.rfind(b"\n") + 1
        if keep != size:
            os.ftruncate(fd, keep)
    return fd


def reopen_result(path: str | os.PathLike[str]) -> Any:
    """The audit's result recomputed from its stored answers, fully offline (no endpoint, no cache)."""
    from relgate_tui.engine.judging.audit import analyse, plan_audit

    store = AuditStore.open(path)
    plan = plan_audit(store.spec())
    answers: dict[str, dict[Any, dict[int, Answer]]] = {}
    for a in store.answers():
        answers.setdefault(a.judge, {}).setdefault(a.key, {})[a.rep] = a
    ordered = {j: {k: [reps[r] for r in sorted(reps)] for k, reps in by_key.items()} for j, by_key in answers.items()}
    from relgate_tui.engine.judging.ask import AskCalls

    meta = store.calls()
    calls = {j: AskCalls(**c) for j, c in meta.get("calls", {}).items()}
    wall = float(meta.get("wall_seconds", 0.0))
    return analyse(plan, ordered, calls, wall)


@dataclass(frozen=True)
class AuditSummary:
    """One row of ``relgate audits`` / the Runs screen."""

    id: str
    path: str
    created: str
    data: str
    criterion: str
    judges: tuple[str, ...]
    variants: tuple[str, ...]
    protocol: str
    answers: int
    planned: int
    finished: bool


def list_audits(root: Path | None = None) -> list[AuditSummary]:
    """Every stored audit under ``root`` (default ``<data dir>/audits``), newest first; unreadable ones skipped."""
    base = root or audits_dir()
    out = []
    for p in sorted(base.iterdir()) if base.is_dir() else []:
        with contextlib.suppress(DataError, KeyError, TypeError, AttributeError):
            m = AuditStore.open(p).manifest
            spec = m["spec"]
            n = 0
            with contextlib.suppress(OSError), open(p / ANSWERS, "rb") as f:
                n = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
            judges = tuple(str(j.get("name") or j.get("model")) for j in spec["judges"])
            out.append(AuditSummary(p.name, str(p), str(m.get("created", "")), str(m["data"]["name"]),
                                    str(m.get("criterion", spec["criterion"])), judges,
                                    tuple(str(v["name"]) for v in spec["variants"]), str(spec["protocol"]), n,
                                    int(m.get("answers_per_judge", 0)) * len(judges), (p / RESULTS).is_file()))
    return sorted(out, key=lambda s: s.created, reverse=True)
