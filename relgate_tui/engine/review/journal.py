"""The reviewer's local journal (issue 21 §8): every keypress is written here before it is sent, so a database that
is down loses nothing.

**Durability.** A keypress is one ``write`` of a complete line before the send (it survives ``kill -9`` from then
on) and is fsync'd — as the run store fsyncs a label — before the screen moves on, unless the database committed it
first (then the server's commit made it durable, and a second fsync on the reviewer's disk would only add latency
to every key). So a keypress reported as "waiting" is always on disk.

One append-only JSONL file per (database, session, reviewer) under ``<data dir>/review/``::

    {"op": "label", "key": K, "item": ID, "verdict": V, "ts": T}    a label to send
    {"op": "undo",  "key": K, "target": K2 | null, "ts": T}          undo label K2 (null: the reviewer's last one)
    {"op": "sent",  "key": K, "outcome": "committed"|"duplicate"|"rejected"|"undone"|"nothing", "note": …}

An entry is *waiting* until its "sent" line is written. :meth:`Journal.waiting` lists them in order; the client sends
them in that order and writes each "sent" line after the database committed. A crash between the commit and the
"sent" line resends the entry: a label's key is unique in the store ("duplicate"), an undo by key deletes nothing
the second time — so every entry takes effect exactly once. The file names the database by its public URL only.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from relgate_tui.engine.runs.files import open_append, write_all

__all__ = ["Journal", "journal_path", "find_journal"]


def _root(root: Path | None) -> Path:
    if root is not None:
        return root
    from relgate_tui.engine.runs.paths import data_dir

    return data_dir() / "review"


def journal_path(public_url: str, session_id: str, reviewer: str, root: Path | None = None) -> Path:
    digest = hashlib.sha256(f"{public_url}\0{session_id}\0{reviewer}".encode()).hexdigest()[:16]
    return _root(root) / f"journal-{session_id}-{digest}.jsonl"


def find_journal(public_url: str, session_prefix: str, reviewer: str, root: Path | None = None) -> Path | None:
    """The journal of the one session whose id starts with ``session_prefix`` (used while the database cannot
    resolve the prefix), None when there is none or more than one."""
    folder = _root(root)
    hits = []
    for p in folder.glob("journal-*.jsonl") if folder.is_dir() else ():
        sid = p.name[len("journal-"):].rsplit("-", 1)[0]
        if sid.startswith(session_prefix) and journal_path(public_url, sid, reviewer, folder) == p:
            hits.append(p)
    return hits[0] if len(hits) == 1 else None


class Journal:
    """The append-only, fsync'd journal of one reviewer on one session (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = open_append(path)  # a torn last line (killed mid-write) is cut off
        self._entries: list[dict[str, Any]] = []
        self._sent: set[str] = set()
        for line in path.read_bytes().splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict) and isinstance(ev.get("key"), str):
                self._note(ev)

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
