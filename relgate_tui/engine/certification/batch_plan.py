"""A Batch API round's plan (issue 32 §1, issue 42 §4): how many samples an item asks for in a round
(:func:`round_size`, the sizing rule of :mod:`relgate_tui.engine.certification.batch_rounds`), the ``custom_id`` of a
request (:func:`parse_custom_id`), the request files a round is split into (:func:`request_files`: at most
:data:`MAX_BATCH_LINES` lines and ``--batch-max-mb`` bytes each), the settings, and a round's progress.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from relgate_tui.engine.transport.batch import MAX_FILE_BYTES, RetryPolicy

__all__ = ["MAX_BATCH_LINES", "MAX_REQUEST_MB", "BatchProgress", "BatchSettings", "parse_custom_id", "request_files",
           "round_size"]

MAX_BATCH_LINES = 50_000  # OpenAI's limit per batch; a larger round is several batches
MAX_REQUEST_MB = 190  # --batch-max-mb: a request file's size (OpenAI takes up to 200 MB), separate from the download cap


@dataclass(frozen=True)
class BatchProgress:
    """A batch's state after a poll: round, id, status, and its request counts; ``eta_s`` when the provider gives
    one."""

    round: int
    batch_id: str
    status: str
    total: int
    completed: int
    failed: int
    eta_s: float | None = None
    note: str | None = None  # a notable event of the round instead of counts (unreadable lines)

    @property
    def text(self) -> str:
        if self.note:
            return f"batch round {self.round} ({self.batch_id}): {self.note}"
        eta = f", about {self.eta_s:.0f} s left" if self.eta_s is not None else ""
        return (f"batch round {self.round} ({self.batch_id}): {self.status}, {self.completed}/{self.total} completed, "
                f"{self.failed} failed{eta}")

    @property
    def line(self) -> str | None:
        """The round as one progress line (the TUI's sampling screen): submitted / in progress / completed, the ETA;
        None for a note."""
        if self.note:
            return None
        running = max(0, self.total - self.completed - self.failed)
        eta = f" · ETA {self.eta_s:.0f} s" if self.eta_s is not None else ""
        return (f"batch round {self.round} {self.status}: submitted {self.total} · in progress {running} · completed "
                f"{self.completed}" + (f" · failed {self.failed}" if self.failed else "") + eta)


@dataclass(frozen=True)
class BatchSettings:
    """Round sizing (module docstring: ``k0`` None = the rule's own earliest stop, ``growth`` = g), the retry budget
    (``max_attempts`` per sample, ``retry_rounds`` rounds after ``max_rounds`` for failed samples only), polling
    (first after ``first_poll_s``, doubling up to ``poll_interval_s``; a batch still running after ``deadline_s``
    — the 24 h completion window and an hour — stops the invocation, its id kept) and the download cap. Each control
    call is retried by the client's :class:`~relgate_tui.engine.transport.batch.RetryPolicy`."""

    k0: int | None = None
    growth: float = 0.25
    max_rounds: int = 8
    retry_rounds: int = 2
    max_attempts: int = 3
    first_poll_s: float = 0.02
    poll_interval_s: float = 10.0
    deadline_s: float = 25 * 3600.0
    max_file_bytes: int = MAX_FILE_BYTES
    max_request_bytes: int = MAX_REQUEST_MB * 1024 * 1024
    retry: RetryPolicy | None = None  # None: the client's default policy


def round_size(rule: Any, counts: Sequence[int], n: int, k_max: int, round_no: int, settings: BatchSettings) -> int:
    """Samples to ask for an unsettled item in round ``round_no`` (module docstring), 1 ≤ m ≤ K_max − n."""
    room = k_max - n
    if room <= 0:
        return 0
    if round_no >= settings.max_rounds:
        return room
    d = room
    values = list(counts)
    lead = max(range(len(values)), key=values.__getitem__) if values and max(values) > 0 else None
    for j in range(1, room + 1):
        trial = values + [j] if lead is None else [v + j if i == lead else v for i, v in enumerate(values)]
        if rule.should_stop(trial, n + j):
            d = j
            break
    if round_no <= 1:
        m = max(settings.k0 or 1, d)
    else:
        m = max(d, math.ceil(settings.growth * n))
    return max(1, min(room, m))


def parse_custom_id(custom_id: str) -> tuple[str, str, int] | None:
    """``(run id, item id, sample index)`` of ``<run>/<item>/<index>`` (item ids may hold ``/``), or None."""
    run, sep, rest = custom_id.partition("/")
    item, sep2, index = rest.rpartition("/")
    if not sep or not sep2 or not index.isdigit() or len(index) > 9:
        return None
    return run, item, int(index)


def request_files(lines: Sequence[bytes], max_lines: int, max_bytes: int) -> list[bytes]:
    """The request files of a round: consecutive lines, at most ``max_lines`` and ``max_bytes`` each (a line longer
    than ``max_bytes`` alone in its file: the provider says whether it takes it)."""
    files: list[bytes] = []
    part: list[bytes] = []
    size = 0
    for line in lines:
        if part and (len(part) >= max_lines or size + len(line) > max_bytes):
            files.append(b"".join(part))
            part, size = [], 0
        part.append(line)
        size += len(line)
    if part:
        files.append(b"".join(part))
    return files
