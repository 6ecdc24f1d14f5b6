"""What the app needs from the outside world (:class:`AppServices`, all injectable) and what a screen may ask of the
app that hosts it (:class:`AppHost`) — so a screen needs the app's services without importing the app module."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from textual.clock import Clock

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.tui.settings_file import UISettings

__all__ = ["AppServices", "AppHost"]


@dataclass
class AppServices:
    """What the app needs from the outside world (all injectable; ``None`` = the real default).

    * ``runs_dir`` / ``cache_dir`` / ``settings_path``: default to :mod:`relgate_tui.engine.runs.paths`.
    * ``discover``: returns the model servers running on loopback (default: :func:`engine.transport.discovery.discover`).
    * ``embedded_demo``: start the built-in simulated endpoint in-process when nothing is discovered.
    * ``demo_latency_ms``: latency of that embedded endpoint (a little latency makes the live view readable).
    * ``demo_port``: its preferred loopback port (a stable URL keeps demo runs resumable); 0 = any free port.
    * ``progress_clock``: the clock of the sampling ProgressBar (``textual.clock.MockClock`` for snapshots).
    * ``probe_latency``: measure a round trip before estimating sampling time (off in fast tests).
    * ``seed``: the default run seed.
    """

    runs_dir: Path | None = None
    cache_dir: Path | None = None
    settings_path: Path | None = None
    discover: Callable[[], Sequence[Any]] | None = None
    embedded_demo: bool = True
    demo_latency_ms: float = 2.0
    demo_port: int = 47820
    progress_clock: Clock | None = None
    probe_latency: bool = True
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def resolved_runs_dir(self) -> Path:
        from relgate_tui.engine.runs.paths import runs_dir

        return Path(self.runs_dir) if self.runs_dir is not None else runs_dir()

    def resolved_cache_dir(self) -> Path:
        from relgate_tui.engine.runs.paths import cache_dir

        return Path(self.cache_dir) if self.cache_dir is not None else cache_dir()

    def resolved_settings_path(self) -> Path:
        from relgate_tui.engine.runs.paths import data_dir

        return Path(self.settings_path) if self.settings_path is not None else data_dir() / "settings.json"


class AppHost(Protocol):
    """The part of the running app a screen uses: its services, the UI settings and the embedded demo endpoint."""

    services: AppServices
    settings: UISettings | None

    def ensure_demo(self) -> str: ...
