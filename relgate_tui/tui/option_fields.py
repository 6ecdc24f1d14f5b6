"""Setup's fields generated from the option table (issue 37 §5, :mod:`relgate_tui.engine.certification.options`): an
option with a :class:`~relgate_tui.engine.certification.options.SetupField` is a labelled Input or Select of the
form's section, read back and checked by :func:`collect_options` — so an option added to the table reaches Setup as it
reaches ``relgate certify`` and the run config. Each widget's id is the option's flag without its dashes."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Input, Label, Select

from relgate_tui.engine.certification.options import SetupField, setup_fields
from relgate_tui.tui.forms import parse_number

__all__ = ["collect_options", "option_widgets"]


def _text(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


def option_widgets(section: str, values: Any) -> ComposeResult:
    """The label and widget of every option of ``section``, showing ``values``' field of the same name."""
    for name, wid, f in setup_fields(section):
        yield Label(f.label)
        value = getattr(values, name)
        if f.kind == "select":
            yield Select(list(f.choices), value=f.auto if value is None and f.auto else value, allow_blank=False,
                         id=wid, compact=True)
        else:
            yield Input(_text(value), placeholder=f.placeholder, id=wid, type="integer" if f.kind == "integer" else "number",
                        compact=True)


def _read(screen: Any, wid: str, f: SetupField) -> Any:
    if f.kind == "select":
        value = str(screen.query_one(f"#{wid}", Select).value)
        return None if f.auto and value == f.auto else value
    text = screen.query_one(f"#{wid}", Input).value
    return parse_number(text, f.error_name, int if f.kind == "integer" else float, lo=f.lo, hi=f.hi,
                        lo_open=f.lo_open, optional=f.optional)


def collect_options(screen: Any, section: str) -> dict[str, Any]:
    """``section``'s values as the fields of the same names; ValueError (one line naming the field) for a bad one."""
    return {name: _read(screen, wid, f) for name, wid, f in setup_fields(section)}
