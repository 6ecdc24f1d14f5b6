"""The reviewer's local journal (issue 21 §8): every keypress is written here before it is sent, so a database that
is down loses nothing.

**Durability.** A keypress is one ``write`` of a complete line before the send (it survives ``kill -9`` from then
on) and is fsync'd — as the run store fsyncs a label — before the screen moves on, unless the database committed it
first (then the server's commit made it durable, and a second fsync on the reviewer's disk would only add latency
to every key). So a keypress reported as "waiting" is always on disk.

One append-only JSONL file per (database, session, reviewer) under ``<data dir>/review/``, named by a digest of the
three (``journal-<digest>.jsonl``) — never by the session id, which comes from the database — and opened by a
``head`` line naming its session (what :func:`find_journal` reads while the database cannot resolve a prefix)::

    {"op": "head", "session": SID, "reviewer": NAME}

    {"op": "label", "key": K, "item": ID, "verdict": V, "ts": T}    a label to send
    {"op": "undo",  "key": K, "target": K2 | null, "ts": T}          undo label K2 (null: the reviewer's last one)
    {"op": "sent",  "key": K, "outcome": "committed"|"duplicate"|"rejected"|"undone"|"nothing", "note": …}

An entry is *waiting* until its "sent" line is written. :meth:`Journal.waiting` lists them in order; the client sends
them in that order and writes each "sent" line after the database committed. A crash between the commit and the
"sent" line resends the entry: a label's key is unique in the store ("duplicate"), an undo by key deletes nothing
the second time — so every entry takes effect exactly once. The file names the database by its public URL only.

**A malformed entry** (edited by hand, a disk fault: not JSON, no key, a label without an item or a verdict) never
blocks the reviewer: it is set aside — its line copied to ``<journal>.bad`` and a ``{"op": "set_aside", "line": N}``
entry appended, so it is skipped from then on — and :attr:`Journal.problems` says so in one line each. Nothing of it
reached the database, so its item stays in (or returns to) the queue: the repair is to label it again; the ``.bad``
file keeps the line for inspection.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from relgate_tui.core.review.verdicts import parse_verdict
from relgate_tui.core.text import one_line
from relgate_tui.engine.review.schema import session_id_ok
from relgate_tui.engine.runs.files import open_append, write_all

__all__ = ["Journal", "journal_path", "find_journal"]


def _root(root: Path | None) -> Path:
    if root is not None:
        return root
    from relgate_tui.engine.runs.paths import data_dir

    return data_dir() / "review"


def journal_path(public_url: str, session_id: str, reviewer: str, root: Path | None = None) -> Path:
    """The journal's path: a digest of (database, session, reviewer) — the session id is never part of a path. A
    journal of an older relgate (named ``journal-<session>-<digest>.jsonl``) is renamed to it."""
    digest = hashlib.sha256(f"{public_url}\0{session_id}\0{reviewer}".encode()).hexdigest()
    path = _root(root) / f"journal-{digest[:32]}.jsonl"
    if session_id_ok(session_id):
        old = _root(root) / f"journal-{session_id}-{digest[:16]}.jsonl"
        if old.is_file() and not path.exists():
            os.replace(old, path)
    return path


def _head_session(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            first = json.loads(f.readline(4096))
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(first, dict) and first.get("op") == "head" and isinstance(first.get("session"), str):
        return str(first["session"])
    return None


def find_journal(public_url: str, session_prefix: str, reviewer: str, root: Path | None = None) -> Path | None:
    """The journal of the one session whose id starts with ``session_prefix`` (used while the database cannot
    resolve the prefix), None when there is none or more than one."""
    folder = _root(root)
    hits = []
    for p in folder.glob("journal-*.jsonl") if folder.is_dir() else ():
        sid = _head_session(p)
        if sid is not None and sid.startswith(session_prefix) and journal_path(public_url, sid, reviewer, folder) == p:
            hits.append(p)
    return hits[0] if len(hits) == 1 else None


def _malformed(ev: object) -> str | None:
    """Why ``ev`` is not a journal entry this client can send (None: it is one)."""
    if not isinstance(ev, dict):
        return "not an object"
    op = ev.get("op")
    if op in ("head", "set_aside"):
        return None
    if not isinstance(ev.get("key"), str):
        return "no key"
    if op == "sent":
        return None
    ts = ev.get("ts")
    if ts is not None and (isinstance(ts, bool) or not isinstance(ts, (int, float))):
        return "a time that is not a number"
    if op == "label":
        if not isinstance(ev.get("item"), str) or not ev["item"]:
            return "a label without an item"
        try:
            parse_verdict(ev.get("verdict"))
        except ValueError as e:
            return str(e)
        return None
    if op == "undo":
        return None if ev.get("target") is None or isinstance(ev.get("target"), str) else "an undo of no label"
    return f"unknown op {str(op)[:20]!r}"


class Journal:
    """The append-only, fsync'd journal of one reviewer on one session (see the module docstring)."""

    def __init__(self, path: Path, session_id: str | None = None, reviewer: str | None = None) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = open_append(path)  # a torn last line (killed mid-write) is cut off
        self._entries: list[dict[str, Any]] = []
        self._sent: set[str] = set()
        self.problems: list[str] = []
        lines = path.read_bytes().splitlines()
        aside: set[int] = set()
        parsed: list[tuple[int, Any]] = []
        for n, line in enumerate(lines, 1):
            try:
                ev: Any = json.loads(line)
            except (ValueError, RecursionError):  # RecursionError: a line nested deeper than the parser goes
                ev = None
            if isinstance(ev, dict) and ev.get("op") == "set_aside" and isinstance(ev.get("line"), int):
                aside.add(int(ev["line"]))
            parsed.append((n, ev))
        if not lines and session_id is not None:
            self.append({"op": "head", "session": session_id, "reviewer": reviewer}, sync=False)
        for n, ev in parsed:
            if n in aside:
                continue
            why = "not JSON" if ev is None else _malformed(ev)
            if why is not None:
                self._set_aside(n, lines[n - 1], why)
                continue
            self._note(ev)

    def _set_aside(self, n: int, line: bytes, why: str) -> None:
        bad = self.path.with_name(self.path.name + ".bad")
        with bad.open("ab") as f:
            f.write(line + b"\n")
        self.append({"op": "set_aside", "line": n, "why": why})
        self.problems.append(f"journal {self.path.name} line {n} is malformed ({one_line(why, 80)}): set aside in "
                             f"{bad.name}; its item was not sent (label it again)")

    def _note(self, ev: Mapping[str, Any]) -> None:
        if ev.get("op") == "sent":
            self._sent.add(str(ev["key"]))
        elif ev.get("op") in ("label", "undo"):
            self._entries.append(dict(ev))

    def append(self, ev: Mapping[str, Any], *, sync: bool = True) -> None:
        """Write one entry (one ``write``: it survives ``kill -9`` once this returns) and, unless ``sync`` is
        False, fsync it."""
        write_all(self._fd, (json.dumps(dict(ev), ensure_ascii=False) + "\n").encode("utf-8"))
        if sync:
            os.fsync(self._fd)
        self._note(ev)

    def sync(self) -> None:
        os.fsync(self._fd)

    def mark_sent(self, key: str, outcome: str, note: str = "") -> None:
        """Record that an entry took effect. Not fsync'd: losing this line only makes the entry be sent again,
        which the store recognises (the label's key, the undo's target)."""
        self.append({"op": "sent", "key": key, "outcome": outcome, **({"note": note} if note else {})}, sync=False)

    def waiting(self) -> list[dict[str, Any]]:
        """The entries not yet sent, in order."""
        return [e for e in self._entries if e["key"] not in self._sent]

    def last_unsent_label(self) -> dict[str, Any] | None:
        """The latest waiting label not already cancelled by a waiting undo."""
        undone = {e.get("target") for e in self.waiting() if e["op"] == "undo"}
        for e in reversed(self.waiting()):
            if e["op"] == "label" and e["key"] not in undone:
                return e
        return None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
