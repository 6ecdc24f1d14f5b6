"""The screen registry (issue 19): every screen of the TUI by name, and the one way to open one.

``SCREEN_FACTORIES`` maps a name to ``"module:factory"`` (a Screen class or a function returning a screen), imported
on first use so cold start imports none of them. :func:`open_screen` builds the named screen, pushes it on an app and
returns it; ``RelgateApp.open_screen`` (and the stand-alone review app's) call it, and a screen reaches it through
:func:`relgate_tui.tui.services.host` — so no screen imports another screen's module to push it, or the app.
(Textual's own ``SCREENS`` holds one cached instance per name, built without arguments; relgate's screens take the
run they show and are built anew on every visit, hence factories.)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.screen import Screen

__all__ = ["SCREEN_FACTORIES", "open_screen", "screen_factory"]

#: name → ``"module:factory"`` (a Screen class or a function returning a screen), imported on
#: first use so cold start imports none of them.
SCREEN_FACTORIES: dict[str, str] = {
    "home": "relgate_tui.tui.home:HomeScreen",
    "setup": "relgate_tui.tui.setup:SetupScreen",
    "sampling": "relgate_tui.tui.sampling:SamplingScreen",
    "spotcheck": "relgate_tui.tui.spotcheck:SpotCheckScreen",
    "results": "relgate_tui.tui.results:ResultsScreen",
    "runs": "relgate_tui.tui.runs:RunsScreen",
    "compare": "relgate_tui.tui.compare:CompareScreen",
    "import": "relgate_tui.tui.importer:ImportScreen",
    "judge": "relgate_tui.tui.judge:JudgeScreen",
    "studies": "relgate_tui.tui.studies.setup:StudiesScreen",
    "scores_picker": "relgate_tui.tui.studies.picker:ScoresPicker",
    "study_view": "relgate_tui.tui.studies:open_study_view",
    "settings": "relgate_tui.tui.settings:SettingsScreen",
    "help": "relgate_tui.tui.help:HelpScreen",
    "confirm": "relgate_tui.tui.confirm:ConfirmModal",
    "item_samples": "relgate_tui.tui.itemsamples:ItemSamplesModal",
    "cycle_viewer": "relgate_tui.tui.judge.views:CycleViewerModal",
    "judge_certificate": "relgate_tui.tui.judge.certificate:CertificateScreen",
    "review_connect": "relgate_tui.tui.review.connect:ReviewConnectScreen",
    "review_label": "relgate_tui.tui.review.label:ReviewLabelScreen",
    "review_adjudicate": "relgate_tui.tui.review.adjudicate:AdjudicateScreen",
    "review_publish": "relgate_tui.tui.review.publish:PublishModal",
}


def screen_factory(name: str) -> Callable[..., Screen[Any]]:
    """The factory registered as ``name`` in :data:`SCREEN_FACTORIES` (``KeyError`` for an unknown name)."""
    module, _, attr = SCREEN_FACTORIES[name].partition(":")
    factory: Callable[..., Screen[Any]] = getattr(importlib.import_module(module), attr)
    return factory


def open_screen(app: App[Any], name: str, *args: Any, callback: Callable[[Any], Any] | None = None,
                **kwargs: Any) -> Screen[Any]:
    """Build the screen registered as ``name`` with ``args`` / ``kwargs``, push it on ``app`` (``callback`` receives
    what it dismisses with) and return it."""
    screen = screen_factory(name)(*args, **kwargs)
    app.push_screen(screen, callback=callback)
    return screen
