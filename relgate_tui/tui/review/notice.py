"""The Results screen's message line: the calibration message, and what the last ``relgate review pull`` into the
run brought ("team review … (strict) · 3 disputed items counted as misses · Fleiss κ …"), and in audit mode the
reference verdicts a person's labels contradict, by item."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from relgate_tui.core.text import one_line
from relgate_tui.engine.review.summary import misses_line, read_review_summary


def show_message(widget: Static, calibration_message: str | None, run_path: Path, audit_line: str | None = None) -> None:
    """Fill (or hide, when there is nothing to say) the message line of Results."""
    text = Text(calibration_message or "", style="bold yellow")
    review = read_review_summary(run_path)
    if review is not None:
        text.append("\n" if text.plain else "").append(one_line(misses_line(review)), style="bold")
    if audit_line is not None:
        text.append("\n" if text.plain else "").append(one_line(audit_line), style="bold red")
    widget.update(text)
    widget.display = bool(text.plain)
