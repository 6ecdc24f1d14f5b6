"""The TUI's own preferences file (gate threshold and ``gate_on``, confidence, audit fraction, theme): a small JSON
file read by :func:`load_ui_settings` and written atomically by :func:`save_ui_settings`. TUI-only: the engine never
reads it.

Files written before ``gate_on`` was the one name of the gate's basis hold ``gate_basis`` ("lower_bound" | "level");
:func:`load_ui_settings` reads it once as ``gate_on`` ("bound" | "level") and says so in :data:`UISettings.note`;
the next save writes ``gate_on``."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Literal

__all__ = ["SettingsGateOn", "UISettings", "load_ui_settings", "save_ui_settings"]

SettingsGateOn = Literal["bound", "level"]
"""The Settings screen's gate bases (:data:`relgate_tui.core.certification.gate.GateOn` without "assisted", which needs
a verification judge): the default basis of new runs — "bound" stands for Setup's "auto" (the judge-assisted bound
with a verification judge, as ``relgate certify``'s); a run keeps its own ``gate_on``."""


@dataclass(frozen=True)
class UISettings:
    """Preferences of the TUI.

    The gate fields are the defaults of **new** runs (Setup is prefilled with them; a run keeps the gate it was made
    with): ``gate``: the reliability threshold for PASS/FAIL (None = no gate); ``gate_on``: compare the reliability
    level ("level", the paper's gate) or its lower confidence bound ("bound"); ``confidence``: the bound's; ``audit_fraction``: share of automatically
    verified calibration items shown for human confirmation in audit mode; ``theme``: Textual theme name.
    """

    gate: float | None = 0.90
    gate_on: SettingsGateOn = "bound"  # issue 11 §4: gate on the confidence bound by default
    confidence: float = 0.95
    audit_fraction: float = 0.20
    theme: str = "textual-dark"
    note: str | None = field(default=None, compare=False)  # what loading changed (never saved)

    def __post_init__(self) -> None:
        if self.gate is not None and not (isinstance(self.gate, (int, float)) and 0.0 <= self.gate <= 1.0):
            raise ValueError(f"settings: the gate threshold must be in [0, 1], got {self.gate!r}")
        if self.gate_on not in ("bound", "level"):
            raise ValueError(f"settings: gate_on must be 'bound' or 'level', got {self.gate_on!r}")
        if not (isinstance(self.confidence, (int, float)) and 0.5 <= self.confidence < 1.0):
            raise ValueError(f"settings: confidence must be in [0.5, 1), got {self.confidence!r}")
        if not (isinstance(self.audit_fraction, (int, float)) and 0.0 < self.audit_fraction <= 1.0):
            raise ValueError(f"settings: the audit fraction must be in (0, 1], got {self.audit_fraction!r}")
        if not isinstance(self.theme, str):
            raise ValueError("settings: theme must be a string")


def load_ui_settings(path: str | os.PathLike[str]) -> UISettings:
    """Read the settings file; a missing file gives the defaults, a bad one raises ValueError (one line)."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return UISettings()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{p}: unreadable settings file ({exc.__class__.__name__}); using the defaults") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{p}: the settings file must hold a JSON object; using the defaults")
    known = {f.name for f in fields(UISettings)} - {"note"}
    values = {k: v for k, v in raw.items() if k in known}
    note = None
    if "gate_basis" in raw and "gate_on" not in raw:  # a file from before `gate_on` (read once, rewritten on save)
        old = raw["gate_basis"]
        if old not in ("lower_bound", "level"):
            raise ValueError(f"settings: gate_basis must be 'level' or 'lower_bound', got {old!r}")
        values["gate_on"] = "level" if old == "level" else "bound"
        note = (f"{p}: the old setting gate_basis = {old!r} is read as gate_on = {values['gate_on']!r}; saving the "
                "settings writes the new name")
    return UISettings(**values, note=note)


def save_ui_settings(path: str | os.PathLike[str], settings: UISettings) -> None:
    """Write the settings through the one file write (atomic; never renamed over a device or pipe)."""
    from relgate_tui.engine.runs.outputs import write_file

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    data = asdict(settings)
    data.pop("note", None)
    write_file(p, json.dumps(data, indent=2) + "\n")

