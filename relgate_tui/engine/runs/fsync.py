"""The run store's periodic ``fsync`` on a thread of its own (issue 32 §6): the sampler's event loop appends a sample
and goes on while the disk syncs, instead of every request in flight waiting ~10 ms twice a second.

Correctness: the store marks its samples synced when it *starts* a background fsync; every write after that marks
them unsynced again, and ``fsync`` covers every write issued before it is called, so a later
:meth:`RunStore.sync_samples <relgate_tui.engine.runs.store.RunStore.sync_samples>` (which first :meth:`waits
<BackgroundFsync.wait>`) syncs whatever the background one may not have. A failed background fsync is reported by
:meth:`BackgroundFsync.wait`, and the store then syncs (and raises) inline. Durability against ``kill -9`` never
depended on fsync: a returned ``os.write`` belongs to the kernel.
"""

from __future__ import annotations

import os
import threading

__all__ = ["BackgroundFsync"]


class BackgroundFsync:
    """At most one ``fsync`` of a descriptor at a time, on a daemon thread."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._failed = False

    def start(self, fd: int) -> bool:
        """Start ``fsync(fd)`` unless one is still running; True when started."""
        if self._thread is not None and self._thread.is_alive():
            return False
        self._thread = threading.Thread(target=self._run, args=(fd,), name="relgate-fsync", daemon=True)
        self._thread.start()
        return True

    def _run(self, fd: int) -> None:
        try:
            os.fsync(fd)
        except OSError:
            self._failed = True

    def wait(self) -> bool:
        """Wait for the running fsync, if any (before the descriptor is synced inline or closed); True when every
        background fsync since the last wait succeeded."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        ok, self._failed = not self._failed, False
        return ok
