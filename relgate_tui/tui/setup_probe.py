"""Setup's latency probe (the pre-flight box's "latency" line): when it runs, and what it keeps.

The automatic probe runs when something it depends on changed (:func:`~relgate_tui.engine.certification.setup.
probe_key`: the endpoint, the model, the task, the concurrency once its field is left, the judges) — never on a
keystroke of a field it does not read, and never again for what it already measured, so a one-slot server is not
handed a new batch of requests while it still answers the abandoned one. ``^l`` always measures again. The probe
itself starts at concurrency 1 and falls back to it by itself (:func:`~relgate_tui.engine.certification.setup.
probe_latency`)."""

from __future__ import annotations

from typing import Any

from textual import work

from relgate_tui.engine.certification.setup import Latency, RunSetup, probe_key, probe_latency, probe_parallelism

__all__ = ["LatencyProbe"]


class LatencyProbe:
    """Mixed into ``SetupScreen``, which has ``collect()``, ``relgate`` (the app's services), ``latency``,
    ``latency_error``, ``latency_parallel`` and ``_update_preflight()``."""

    _probed: tuple[Any, Latency | None] | None = None  # (probe_key, its latency) of the last probe started

    @work(exclusive=True, group="probe", exit_on_error=False)
    async def _probe(self, setup: RunSetup) -> Latency:
        return await probe_latency(setup)

    def _probe_done(self, result: Latency) -> None:
        if self._probed is not None:
            self._probed = (self._probed[0], result)

    def _remeasure(self) -> None:
        screen: Any = self
        screen.latency = None
        screen._update_preflight()
        self._auto_probe()

    def _auto_probe(self) -> None:
        screen: Any = self
        if screen.relgate.services.probe_latency:
            self.action_probe(quiet=True)

    def action_probe(self, quiet: bool = False) -> None:
        """``^l`` measures again; the automatic probe (``quiet``) only when what it depends on changed."""
        screen: Any = self
        try:
            setup = screen.collect()
        except ValueError as exc:
            if not quiet:
                screen.notify(str(exc), severity="warning")
            return
        key = probe_key(setup)
        if quiet and self._probed is not None and self._probed[0] == key:
            if screen.latency is None and self._probed[1] is not None:  # the same figure, kept
                screen.latency = self._probed[1]
                screen._update_preflight()
            return
        self._probed = (key, None)
        screen.latency_error = "measuring…"
        screen.latency_parallel = probe_parallelism(setup)
        screen._update_preflight()
        self._probe(setup)
