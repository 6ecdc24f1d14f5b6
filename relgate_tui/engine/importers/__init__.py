"""Importers of other tools' logs (issue 15): lm-evaluation-harness, Inspect AI and a generic samples JSONL.

``load_log(kind, path, task)`` reads a log into an :class:`~relgate_tui.engine.importers.model.ImportedLog` (no
writes); :func:`~relgate_tui.engine.importers.run.import_log` turns it into a certified run in the run store.

Modules: ``model`` (the imported log), ``lmeval``, ``inspect_log``, ``samples`` (the readers), ``run`` (log → run).
"""

from __future__ import annotations

from pathlib import Path

from relgate_tui.engine.importers.model import FLAG_REASONS, ImportedItem, ImportedLog, assign_flags

__all__ = ["KINDS", "FLAG_REASONS", "ImportedItem", "ImportedLog", "assign_flags", "load_log"]

KINDS = ("lm-eval", "inspect", "samples")


def load_log(kind: str, path: str | Path, task: str | None = None) -> ImportedLog:
    """Read the log at ``path`` as ``kind`` ("lm-eval", "inspect" or "samples"). Flags are not set yet
    (:func:`assign_flags`). Raises :class:`~relgate_tui.errors.DataError` (one line) for a file it cannot read."""
    if kind == "lm-eval":
        from relgate_tui.engine.importers.lmeval import load_lm_eval

        return load_lm_eval(path, task)
    if kind == "inspect":
        from relgate_tui.engine.importers.inspect_log import load_inspect

        return load_inspect(path, task)
    if kind == "samples":
        from relgate_tui.engine.importers.samples import load_samples

        return load_samples(path, task)
    from relgate_tui.errors import UserError

    raise UserError(f"unknown import source {kind!r}: use {', '.join(KINDS)}")
