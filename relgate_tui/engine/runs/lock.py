"""The write lock of a stored directory (a run, an audit): one process writes, any number read.

:func:`write_lock` takes an exclusive, non-blocking advisory ``flock`` on a lock file inside the directory and returns
its descriptor; the lock lasts until the descriptor is closed, and the kernel releases it when the process dies
(``kill -9`` included), so a crashed writer never leaves a stale lock behind. A second writer gets ``error(busy)``
at once (never a wait). Readers take no lock: viewing never blocks on, or changes, a directory being written.
Used by :class:`~relgate_tui.engine.runs.store.RunStore` (``run.lock``) and
:class:`~relgate_tui.engine.judging.store.AuditStore` (``audit.lock``).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from relgate_tui.errors import DataError


def write_lock(lock_path: Path, busy: str, error: type[DataError] = DataError) -> int:
    """Take the exclusive lock on ``lock_path`` (created if missing); the open descriptor holds it. Raises
    ``error(busy)`` when another process (or another open descriptor of this one) holds it."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise error(busy) from None
    return fd
