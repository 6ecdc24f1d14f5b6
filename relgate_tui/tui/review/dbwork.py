"""The review store off the UI thread (issue 28 §6): every call of a team-review screen to the database runs in a
thread worker, one at a time per screen, while the screen says what it is doing ("connecting…", "saving…") and keeps
handling keys — a PostgreSQL host that stops answering costs the connect timeout in the worker, never a frozen
screen. A key that needs the database while a call is pending is answered with a notice, not queued.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.worker import Worker, WorkerState

from relgate_tui.core.text import one_line

__all__ = ["StoreCalls"]


class StoreCalls:
    """Mixin for a Textual screen: :meth:`store_call` runs ``job`` in a thread worker and calls ``done(result)`` on
    the UI thread (``failed(error)`` when it raised; default: a notice). ``busy`` names the call in flight ("" when
    none); :meth:`show_busy` is called whenever it changes."""

    busy: str = ""

    def store_call(self, what: str, job: Callable[[], Any], done: Callable[[Any], None],
                   failed: Callable[[BaseException], None] | None = None) -> Worker[Any] | None:
        if self.busy:
            self.notify(f"{self.busy} — one moment", severity="warning", timeout=2)  # type: ignore[attr-defined]
            return None
        self.busy = what
        self.show_busy()
        worker: Worker[Any] = self.run_worker(job, thread=True, group="review-store",  # type: ignore[attr-defined]
                                              exit_on_error=False, name=what)
        calls: dict[Worker[Any], tuple[Callable[[Any], None], Callable[[BaseException], None] | None]] = \
            self.__dict__.setdefault("_store_calls", {})
        calls[worker] = (done, failed)
        return worker

    def show_busy(self) -> None:
        """Show :attr:`busy` (override)."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        calls = self.__dict__.get("_store_calls", {})
        if event.worker not in calls or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR,
                                                             WorkerState.CANCELLED):
            return
        done, failed = calls.pop(event.worker)
        self.busy = ""
        if event.state == WorkerState.SUCCESS:
            done(event.worker.result)
        elif event.state == WorkerState.ERROR and event.worker.error is not None:
            if failed is not None:
                failed(event.worker.error)
            else:
                self.notify(one_line(str(event.worker.error)) or type(event.worker.error).__name__,  # type: ignore[attr-defined]
                            severity="error", markup=False)  # a server's words: never markup
        self.show_busy()
