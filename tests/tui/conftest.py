"""Shared fixtures of the TUI tests: every test gets its own data dir (``RELGATE_HOME``), nothing touches the
user's real directories, animations are off and input cursors do not blink (stable snapshots)."""

from __future__ import annotations

import os

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from textual.widgets import Input  # noqa: E402

from relgate_tui.tui.services import AppServices  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "relgate-home"
    monkeypatch.setenv("RELGATE_HOME", str(home))
    monkeypatch.setattr(Input, "cursor_blink", False)
    return home


@pytest.fixture
def services(tmp_path: Path) -> AppServices:
    """Services for a test app: tmp dirs, no real discovery, the embedded demo on, no latency probe."""
    home = tmp_path / "relgate-home"
    return AppServices(
        runs_dir=home / "runs",
        cache_dir=home / "cache",
        settings_path=home / "settings.json",
        discover=lambda: [],
        embedded_demo=True,
        demo_latency_ms=0.0,
        demo_port=0,
        probe_latency=False,
    )
