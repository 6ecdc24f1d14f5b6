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
from relgate_tui.engine.runs.files import atomic_write_bytes, open_append, quarantine_lines
from relgate_tui.engine.runs.inputs import open_regular, read_regular
from relgate_tui.engine.transport import logprobs as lp
from relgate_tui.errors import DataError

FORMAT = 1
MANIFEST, ANSWERS, RESULTS, CALLS = "manifest.json", "answers.jsonl", "results.json", "calls.json"
LOCK = "audit.lock"
MAX_DOCUMENT = 64 << 20
"""Largest manifest / results / calls document read back (they are written by relgate; a bigger one is planted)."""
MAX_ANSWER_LINE = 64 << 20
"""Longest stored answer line (answer text and log-probs are bounded where they arrive, far below this)."""
MAX_AUDIT_BYTES = 512 << 20
"""Total size of one audit's stored answers: a judge that answers with megabytes of log-probs per request stops the
audit with one line instead of filling the disk and, when reopened, the memory."""
AUDIT_REPAIR_HINT = "`relgate audits --repair AUDIT` moves corrupt lines aside"


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
        with open_regular(path, what="an audit's data file") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except (OSError, DataError):
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
                store.check_data(plan, "start a new audit (move this directory away)")
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
            manifest = json.loads(read_regular(p / MANIFEST, MAX_DOCUMENT, what="an audit manifest"))
        except FileNotFoundError:
            raise DataError(f"{p}: not a stored audit (no {MANIFEST})") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise DataError(f"{p / MANIFEST}: unreadable ({type(exc).__name__})") from None
        if not isinstance(manifest, dict) or manifest.get("kind") != "audit" or manifest.get("format") != FORMAT:
            raise DataError(f"{p / MANIFEST}: not an audit manifest of format {FORMAT}")
        return cls(p, manifest)

    def check_data(self, plan: Any, advice: str) -> None:
        """:class:`DataError` when the audit's data file is not the one it was run on (the SHA-256 recorded in the
        manifest): resuming, reopening and the studies all refuse, with ``advice``."""
        recorded = (self.manifest.get("data") or {}).get("sha256") if isinstance(self.manifest.get("data"), dict) \
            else None
        if recorded is not None and recorded != file_sha256(plan.audit_set.path):  # None: an audit from before it
            raise DataError(f"{self.path}: the audit's data file {plan.audit_set.path} has changed since the audit "
                            f"(its SHA-256 differs from the one recorded); {advice}")

    def spec(self) -> Any:
        from relgate_tui.engine.judging.audit import AuditSpec

        raw = self.manifest.get("spec")
        seed = raw.get("seed") if isinstance(raw, dict) else None
        if isinstance(raw, dict) and (isinstance(seed, bool) or not isinstance(seed, int)):  # issue 29: one line
            raise DataError(f"{self.path / MANIFEST}: field 'spec.seed': {str(seed)[:40]!r} is not an integer")
        try:
            return AuditSpec.from_json(raw)  # type: ignore[arg-type]
        except KeyError as exc:
            raise DataError(f"{self.path / MANIFEST}: field 'spec': {exc} is missing") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"{self.path / MANIFEST}: field 'spec': not an audit spec ({type(exc).__name__})") from None

    # -- answers -------------------------------------------------------------------------------------------------
    def answers(self) -> Iterator[Answer]:
        """The stored answers in write order (a torn last line, from a kill mid-write, is skipped)."""
        path = self.path / ANSWERS
        try:
            f = open_regular(path, what="an audit's answers file")
        except FileNotFoundError:
            return
        with f:
            yield from self._parse_answers(path, f)

    def repair(self) -> int:
        """Move the corrupt lines of ``answers.jsonl`` to ``answers.jsonl.quarantine`` (the runs' repair,
        :func:`~relgate_tui.engine.runs.files.quarantine_lines`); takes the write lock. Returns the lines moved."""
        self.lock()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

        def valid(raw: bytes) -> bool:
            try:
                for _ in self._parse_answers(self.path / ANSWERS, _OneLine(raw + b"\n")):
                    pass
            except DataError:
                return False
            return True

        return quarantine_lines(self.path / ANSWERS, valid) or 0

    @staticmethod
    def _parse_answers(path: Path, f: Any) -> Iterator[Answer]:
        """Answers read one line at a time (memory: one line, at most :data:`MAX_ANSWER_LINE` bytes)."""
        n = 0
        while raw := f.readline(MAX_ANSWER_LINE + 1):
            n += 1
            if not raw.endswith(b"\n"):
                if len(raw) > MAX_ANSWER_LINE:
                    raise DataError(f"{path}:{n}: a stored answer is longer than {MAX_ANSWER_LINE >> 20} MB; "
                                    f"{AUDIT_REPAIR_HINT}")
                return  # a torn last line (a kill mid-write): dropped
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
            except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError, IndexError,
                    RecursionError):
                raise DataError(f"{path}:{n}: a stored answer is corrupt; {AUDIT_REPAIR_HINT}") from None

    def lock(self) -> None:
        """Take the write lock now (every write takes it anyway); :class:`DataError` when another process holds
        it."""
        if self._lock_fd is None:
            self._lock_fd = _lock(self.path)

    def append(self, answer: Answer) -> None:
        self.lock()
        if self._fd is None:
            self._fd = open_append(self.path / ANSWERS)
        data = (_answer_json(answer) + "\n").encode("utf-8")
        if len(data) > MAX_ANSWER_LINE or os.fstat(self._fd).st_size + len(data) > MAX_AUDIT_BYTES:
            raise DataError(f"{self.path / ANSWERS}: the stored answers would exceed {MAX_AUDIT_BYTES >> 20} MB "
                            "(the judge's answers or log-probs are unusually large); audit stopped")
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
            doc = json.loads(read_regular(self.path / CALLS, MAX_DOCUMENT, what="an audit's calls"))
            calls = {str(j): {k: int(c[k]) for k in ("made", "cached", "failed")} for j, c in doc["calls"].items()}
            return {"calls": calls, "wall_seconds": float(doc.get("wall_seconds") or 0.0)}
        except (OSError, DataError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError,
                AttributeError, RecursionError):
            return {}

    def results(self) -> dict[str, Any] | None:
        try:
            doc = json.loads(read_regular(self.path / RESULTS, MAX_DOCUMENT, what="an audit's results"))
        except (OSError, DataError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
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


class _OneLine:
    """One line as the file :meth:`AuditStore._parse_answers` reads (the repair checks each line alone)."""

    def __init__(self, raw: bytes) -> None:
        self.raw: bytes | None = raw

    def readline(self, _limit: int) -> bytes:
        raw, self.raw = self.raw or b"", None
        return raw


def _lock(path: Path) -> int:
    from relgate_tui.engine.runs.lock import write_lock

    return write_lock(path / LOCK, f"audit {path.name} is in use by another relgate process (it is being run or "
                                   "resumed there); wait for it to finish or stop it")


def reopen_result(path: str | os.PathLike[str]) -> Any:
    """The audit's result recomputed from its stored answers, fully offline (no endpoint, no cache)."""
    from relgate_tui.engine.judging.audit import analyse, plan_audit

    store = AuditStore.open(path)
    plan = plan_audit(store.spec())
    store.check_data(plan, "its stored answers no longer match the texts and human scores; restore the file or "
                           "rerun the audit")
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
            with contextlib.suppress(OSError), open_regular(p / ANSWERS, what="an audit's answers file") as f:
                n = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
            judges = tuple(str(j.get("name") or j.get("model")) for j in spec["judges"])
            out.append(AuditSummary(p.name, str(p), str(m.get("created", "")), str(m["data"]["name"]),
                                    str(m.get("criterion", spec["criterion"])), judges,
                                    tuple(str(v["name"]) for v in spec["variants"]), str(spec["protocol"]), n,
                                    int(m.get("answers_per_judge", 0)) * len(judges), (p / RESULTS).is_file()))
    return sorted(out, key=lambda s: s.created, reverse=True)
