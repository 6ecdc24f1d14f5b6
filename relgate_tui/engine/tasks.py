"""Task files (SPEC §6): one item per line, JSONL or CSV.

Types only for now; the loader and the bundled-task registry are added in this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TaskItem:
    """One question. ``answers`` holds every acceptable reference answer (raw, not canonicalized); empty = none."""

    id: str
    question: str
    answers: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    messages: tuple[dict, ...] = ()  # chat messages ({"role", "content"}); empty = build from ``question``


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
