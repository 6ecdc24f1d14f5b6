"""The relgate Textual application (SPEC §5): the App owns the flow, screens report back through ``dismiss()``.

Flow::

    Home ─new──▶ Setup ──RunSetup──▶ Sampling ──▶ Spot-check (when items need a human) ──▶ Results ──▶ Home
         ─runs─▶ Runs ──open/resume/compare──▶ Results / Sampling / Compare ──▶ Runs
         ─judge▶ Judge audit          ─settings▶ Settings          ─studies▶ Judge studies (IRT, jury)

Every screen is pushed on top of Home's slot and dismissed when done, so the stack stays shallow; modals (help,
confirm, item samples) are pushed on top of the current screen. Every screen is opened *by name* through one
registry, :mod:`relgate_tui.tui.registry` through :meth:`RelgateApp.open_screen` — the app's flow methods and the
screens alike (a screen reaches it through :func:`relgate_tui.tui.services.host`), so no screen imports another
screen's module or the app to push it.

``make_app(...)`` is the factory the CLI, the screenshot command, the benchmark and the tests use; every external
dependency (runs dir, cache dir, server discovery, the embedded demo endpoint, the progress-bar clock) can be
injected there. ``run()`` is the ``relgate`` entry point (no arguments).

Nothing heavy is imported at module import time: the engine (numpy, scipy, httpx …) is imported on first use and
pre-warmed in a background thread once the first screen is on screen, so cold start stays well under 1.5 s.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from relgate_tui.tui.help import HelpScreen, key_rows
from relgate_tui.tui.services import AppServices

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.engine.certification.setup import RunSetup
    from relgate_tui.engine.judging.audit_run import JudgeAuditConfig
    from relgate_tui.tui.home import HomeChoice
    from relgate_tui.tui.settings_file import UISettings

__all__ = ["RelgateApp", "make_app", "run"]

class RelgateApp(App[None]):
    """relgate's Textual App. Build it with :func:`make_app`."""

    TITLE = "relgate"
    SUB_TITLE = "LLM reliability certification"
    CSS_PATH = "app.tcss"
    # every screen is usable from 80×24 (issue 24 §4): below 110 columns / 30 rows a screen carries "-narrow" /
    # "-short", and its stylesheet stacks or trims panels for it
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?", id="app.help", tooltip="Show every key"),
        Binding("f1", "help", "Help", show=False, id="app.help_f1", tooltip="Show every key"),
    ]

    def __init__(self, services: AppServices | None = None) -> None:
        super().__init__()
        self.services = services or AppServices()
        self.settings: UISettings | None = None
        self.session: Session | None = None  # the run currently shown (for palette commands)
        self.demo: Any = None  # the embedded DemoServer, once started
        self._last_setup: RunSetup | None = None
        self._last_judge_audit: JudgeAuditConfig | None = None
        self._return_to_runs = False
        self.history: list[tuple[str, Any]] = []  # (screen, dismissed value), in order — the flow as it happened

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """Every notification is plain text: messages carry item ids, paths and server or exception text, which is
        never parsed as markup (``[@click=…]`` would be an action link) and never reaches the terminal with
        controls (:mod:`relgate_tui.core.text`). ``markup`` is accepted for Textual's callers and ignored."""
        from relgate_tui.core.text import strip_controls

        super().notify(strip_controls(str(message)), title=strip_controls(str(title)), severity=severity,
                       timeout=timeout, markup=False)

    # ------------------------------------------------------------------------------------------------- lifecycle
    def on_mount(self) -> None:
        self.settings = self._load_settings()
        if self.settings.theme and self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        self.show_home()
        self._prewarm()

    @work(thread=True, exit_on_error=False, group="prewarm")
    def _prewarm(self) -> None:
        """Import the engine and the judge audit's screens in the background after the first paint (keeps cold start
        short, and ``j`` on Home opens the judge audit at once instead of after its 1–7 s of imports with nothing
        on screen)."""
        import relgate_tui.engine.certification.session  # noqa: F401
        import relgate_tui.tui.judge  # noqa: F401

    def on_unmount(self) -> None:
        self.close_session()
        self.stop_demo()

    def _load_settings(self) -> UISettings:
        from relgate_tui.tui.settings_file import UISettings, load_ui_settings

        try:
            settings = load_ui_settings(self.services.resolved_settings_path())
        except ValueError as exc:
            self.notify(str(exc), title="Settings ignored", severity="warning")
            return UISettings()
        if settings.note:
            self.notify(settings.note, title="Settings")
        return settings

    # ------------------------------------------------------------------------------------------------------ demo
    def ensure_demo(self) -> str:
        """Start the embedded simulated endpoint (once) and return its base URL."""
        if self.demo is None:
            from relgate_tui.tui.demo_endpoint import start_demo

            self.demo = start_demo(self.services.demo_latency_ms, self.services.demo_port)
        return str(self.demo.base_url)

    def stop_demo(self) -> None:
        if self.demo is not None:
            try:
                self.demo.stop()
            finally:
                self.demo = None

    def close_session(self) -> None:
        if self.session is not None:
            try:
                self.session.close()
            finally:
                self.session = None

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Textual's ``push_screen``; a screen never mounted gets its breakpoint classes for the current size first
        (:meth:`_breakpoint_classes`)."""
        if isinstance(screen, Screen) and not screen.is_mounted:
            screen.update_classes(self._breakpoint_classes(screen), update=False)
        return super().push_screen(screen, *args, **kwargs)

    def _breakpoint_classes(self, screen: Screen[Any]) -> dict[str, bool]:
        """The breakpoint classes (``-narrow`` / ``-wide``, ``-short`` / ``-tall``) that Textual's ``Screen._on_resize``
        gives ``screen`` at the app's size — computed as it does. Set before the screen mounts, its first Resize
        finds them in place and styles nothing again: otherwise every new screen is styled twice (once without
        them, then all of it again), and the first layout is done at the wrong breakpoint."""
        horizontal = (self.HORIZONTAL_BREAKPOINTS if screen.HORIZONTAL_BREAKPOINTS is None
                      else screen.HORIZONTAL_BREAKPOINTS) or []
        vertical = (self.VERTICAL_BREAKPOINTS if screen.VERTICAL_BREAKPOINTS is None
                    else screen.VERTICAL_BREAKPOINTS) or []
        classes = {name: False for _, name in horizontal + vertical}
        for dimension, points in ((self.size.width, horizontal), (self.size.height, vertical)):
            for limit, name in sorted(points, reverse=True):
                if dimension >= limit:
                    classes[name] = True
                    break
        return classes

    # ------------------------------------------------------------------------------------------------------ flow
    def show_home(self) -> None:
        self._return_to_runs = False
        self.close_session()
        self.open_screen("home", self._home_status(), callback=self._after_home)

    def _home_status(self) -> str:
        try:
            root = self.services.resolved_runs_dir()
            n = sum(1 for p in root.iterdir() if (p / "manifest.json").is_file()) if root.is_dir() else 0
        except OSError:
            n = 0
        return f"{n} stored run{'s' if n != 1 else ''} — Open run (o) reviews them without any network access."

    def _after_home(self, choice: HomeChoice | None) -> None:
        self.history.append(("home", choice))
        if choice == "new":
            self.show_setup(self._last_setup)
        elif choice == "runs":
            self.show_runs()
        elif choice == "review":
            self.open_screen("review_connect", callback=lambda _: self.show_home())
        elif choice == "judge":
            self.open_screen("judge", self._last_judge_audit, callback=self._after_judge)
        elif choice == "studies":
            self.open_screen("studies", callback=lambda _: self.show_home())
        elif choice == "settings":
            self.open_screen("settings", self.settings, self.available_themes, callback=self._after_settings)
        elif choice == "quit":
            self.exit()
        else:
            self.show_home()

    def _after_judge(self, config: JudgeAuditConfig | None) -> None:
        """Back from the judge audit: its last configuration is where the next visit starts."""
        self._last_judge_audit = config or self._last_judge_audit
        self.show_home()

    def _after_settings(self, settings: UISettings | None) -> None:
        self.history.append(("settings", settings))
        if settings is not None:
            from relgate_tui.tui.settings_file import save_ui_settings

            self.settings = settings
            if settings.theme in self.available_themes:
                self.theme = settings.theme
            try:
                save_ui_settings(self.services.resolved_settings_path(), settings)
            except OSError as exc:
                self.notify(f"could not save the settings: {exc}", severity="error")
        self.show_home()

    def show_setup(self, previous: RunSetup | None = None) -> None:
        self.open_screen("setup", self, previous, callback=self._after_setup)

    def _after_setup(self, setup: RunSetup | None) -> None:
        self.history.append(("setup", setup))
        if setup is None:
            self.show_home()
            return
        self._last_setup = setup
        from relgate_tui.engine.certification.session import Session

        try:
            session = Session.create(
                setup,
                runs_dir=self.services.resolved_runs_dir(),
                cache_dir=self.services.resolved_cache_dir(),
            )
        except ValueError as exc:
            self.notify(str(exc), title="Cannot start the run", severity="error", timeout=10)
            self.show_setup(setup)
            return
        self.session = session
        self.show_sampling(session)

    def show_sampling(self, session: Session) -> None:
        self.session = session
        self.open_screen("sampling", session, clock=self.services.progress_clock, callback=self._after_sampling)

    def _after_sampling(self, outcome: str | None) -> None:
        """``outcome``: "done" / "partial" (continue with what was sampled) or "back" (leave the run as is)."""
        self.history.append(("sampling", outcome))
        session = self.session
        if session is None or outcome in (None, "back"):
            self._back()
            return
        self.show_spotcheck_or_results(session)

    def show_spotcheck_or_results(self, session: Session) -> None:
        if session.pending_items():
            self.show_spotcheck(session)
        else:
            self.show_results(session)

    def show_spotcheck(self, session: Session) -> None:
        self.session = session
        self.open_screen("spotcheck", session, callback=lambda value: self._after_spotcheck(session, value))

    def _after_spotcheck(self, session: Session, outcome: str | None) -> None:
        self.history.append(("spotcheck", outcome))
        self.show_results(session)

    def show_results(self, session: Session) -> None:
        """Results against the run's own gate (``Session.gate``: made in Setup, or stored with its results) — so
        Runs, Results, Compare, ``relgate report`` and the JSON tell one story about it; Settings only prefill Setup."""
        self.session = session
        self.open_screen("results", session, callback=self._after_results)

    def _after_results(self, action: str | None) -> None:
        self.history.append(("results", action))
        session = self.session
        if action == "spotcheck" and session is not None:
            self.show_spotcheck(session)
            return
        self._back()

    def _back(self) -> None:
        if self._return_to_runs:
            self.show_runs()
        else:
            self.show_home()

    def show_runs(self) -> None:
        self.close_session()
        self._return_to_runs = True
        self.open_screen("runs", self.services.resolved_runs_dir(), callback=self._after_runs)

    def _after_runs(self, choice: tuple[str, list[Path]] | None) -> None:
        self.history.append(("runs", choice))
        if choice is None:
            self.show_home()
            return
        action, paths = choice
        from relgate_tui.engine.certification.session import Session

        if action == "audit":  # a stored judge audit, reopened offline (issue 9)
            self.open_screen("judge", self._last_judge_audit, reopen=paths[0], callback=lambda _: self.show_runs())
            return
        if action == "compare":
            self.open_screen("compare", paths, callback=lambda _: self.show_runs())
            return
        try:
            from relgate_tui.tui.demo_endpoint import SIMULATED_MODELS

            session = Session.open(paths[0], cache_dir=self.services.resolved_cache_dir(),
                                   simulated_models=SIMULATED_MODELS)
        except ValueError as exc:
            self.notify(str(exc), title="Cannot open the run", severity="error", timeout=10)
            self.show_runs()
            return
        self.session = session
        if action == "resume" and not session.sampling_complete:
            self.show_sampling(session)
        elif action == "resume":
            self.show_spotcheck_or_results(session)
        else:
            self.show_results(session)

    # --------------------------------------------------------------------------------------------------- actions
    def action_help(self) -> None:
        screen = self.screen
        if isinstance(screen, HelpScreen):
            screen.dismiss(None)
            return
        screen_rows, app_rows = key_rows(screen, self)
        title = getattr(screen, "HELP_TITLE", "") or type(screen).__name__.replace("Screen", "").replace("Modal", "")
        self.open_screen("help", title, screen_rows, app_rows, getattr(screen, "HELP", ""))

    def open_screen(self, name: str, *args: Any, callback: Callable[[Any], Any] | None = None,
                    **kwargs: Any) -> Screen[Any]:
        """Build the screen registered as ``name`` with ``args`` / ``kwargs``, push it (``callback`` receives what it
        dismisses with) and return it. The one way any screen is opened."""
        from relgate_tui.tui.registry import open_screen

        return open_screen(self, name, *args, callback=callback, **kwargs)

    def confirm(self, question: str, callback: Callable[[bool | None], None], detail: str = "", **kw: str) -> None:
        """Open the ``confirm`` modal (yes / no) and call ``callback`` with the answer."""
        self.open_screen("confirm", question, detail, callback=callback, **kw)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help: keys of this screen", "Show every key of the current screen", self.action_help)
        if self.session is not None:
            session = self.session
            for fmt, name in (("json", "JSON"), ("csv", "CSV"), ("md", "Markdown report")):
                yield SystemCommand(
                    f"Export results as {name}",
                    f"Write the run's results ({fmt}) into its run folder",
                    lambda fmt=fmt: self.export_results(fmt),
                )
            yield SystemCommand(
                "Open run folder",
                f"Open {session.path} in the file manager (and copy its path)",
                self.open_run_folder,
            )
        yield SystemCommand("Home", "Back to the home screen", self._go_home)

    def _go_home(self) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.show_home()

    def save_run_config(self, setup: RunSetup) -> Path | None:
        """Setup's "Save config": ``setup`` (with its gate) as a run config ``relgate certify --config`` reads
        (:mod:`relgate_tui.engine.certification.run_config`), in ``<data dir>/configs/``; notifies the path."""
        import re

        from relgate_tui.engine.certification.run_config import save_run_config
        from relgate_tui.engine.certification.setup import certify_config

        cfg = certify_config(setup, None)
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{setup.model}-{Path(setup.task).stem}").strip("._")[:100] or "run"
        path = self.services.resolved_runs_dir().parent / "configs" / f"{name}.toml"
        try:
            save_run_config(cfg, path, header=f"saved by the relgate TUI: {setup.model} on {setup.task}")
        except (ValueError, OSError) as exc:
            self.notify(str(exc), title="Config not saved", severity="error")
            return None
        self.notify(f"{path}\nrelgate certify --config {path}", title="Run config saved")
        return path

    def export_results(self, fmt: str, alpha: float | None = None) -> Path | None:
        """Export the current run's results (JSON / CSV / Markdown) next to its files; notifies the path."""
        session = self.session
        if session is None:
            self.notify("no run is open", severity="warning")
            return None
        if alpha is None:
            alpha = getattr(self.screen, "alpha", None)
        try:
            path = session.export(fmt, alpha=alpha)  # against the run's own gate
        except (ValueError, OSError) as exc:
            self.notify(str(exc), title="Export failed", severity="error")
            return None
        self.notify(f"{path.name}\nin {path.parent}", title=f"Exported {fmt.upper()}")  # the name whole, first
        return path

    def open_run_folder(self) -> None:
        session = self.session
        if session is None:
            return
        path = Path(session.path)
        self.copy_to_clipboard(str(path))
        if os.environ.get("DISPLAY") or sys.platform == "darwin":
            self.open_url(path.resolve().as_uri())
        self.notify(str(path), title="Run folder (path copied)")


def make_app(services: AppServices | None = None, **overrides: Any) -> RelgateApp:
    """Build the app. ``overrides`` are :class:`AppServices` fields (``make_app(runs_dir=tmp, embedded_demo=True)``)."""
    services = replace(services or AppServices(), **overrides)
    return RelgateApp(services)


def run(argv: list[str] | None = None) -> int:
    """The ``relgate`` entry point with no sub-command: run the TUI. Returns the exit code."""
    app = make_app()
    app.run()
    return 0 if app.return_code in (None, 0) else int(app.return_code)
