"""Setup's pre-flight box: the estimate of :func:`relgate_tui.engine.certification.setup.preflight` in words — calls, the latency
measured at the run's concurrency (or why it is not measured), time, cost, the pairwise judge's verdicts."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rich.text import Text

from relgate_tui.engine.certification.setup import Latency

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.setup import Preflight, RunSetup, TaskChoice

__all__ = ["BY_HAND", "judge_note", "preflight_text"]

BY_HAND = "verify the calibration items by hand even where references exist"


def judge_note(setup: RunSetup | None, task: TaskChoice | None) -> Text | None:
    """Setup's word before sampling (issue 31 item 1): a verification judge on a task whose every item has a
    reference has nothing to verify — say so and offer to verify the calibration items by hand (the judge is then
    asked about them too, so its verdicts can be checked against the person's). None when there is nothing to say."""
    if (setup is None or not setup.verify_judge_model or task is None or not task.has_references
            or setup.verification == "human"):
        return None
    return Text.assemble(
        ("The verification judge has nothing to verify: ", "bold yellow"),
        ("every item of this task has a reference answer. ", "yellow"),
        (f"Press Verify by hand to {BY_HAND} (the judge's verdicts are then checked against yours), or choose a "
         "task without references (arithmetic-unreferenced).", "dim"))


def _fmt_duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "unknown"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def preflight_text(pf: Preflight, setup: RunSetup | None, latency: Latency | tuple[float, ...] | None,
                   parallel: int, error: str) -> Text:
    """The box's text; ``parallel``: requests the probe sent at once; ``error``: why there is no latency."""
    t = Text()
    t.append(f"{pf.n_items} items", style="bold")
    t.append(f" ({pf.n_cal} calibration)\n")
    t.append("worst case  ", style="dim")
    t.append(f"{pf.worst_calls:,} calls\n", style="bold")
    t.append("expected    ", style="dim")
    t.append(f"≈ {pf.expected_calls:,} calls", style="bold green")
    low, high = pf.calls_range
    t.append(f" ({low:,}–{high:,})\n" if high > low else "\n", style="dim")
    if pf.judge_calls:
        t.append("judge calls ", style="dim")
        t.append(f"{'≤ ' if setup is not None and setup.pairwise_judge_model else ''}{pf.judge_calls:,}\n")
    t.append("latency     ", style="dim")
    if latency is not None:
        lat = Latency(*latency)
        t.append(f"{_ms(lat.seconds)} per call, measured with {lat.parallel or parallel} at once\n")
        if lat.note:  # the probe fell back to one request at a time: why
            t.append("            " + lat.note + "\n", style="yellow")
        judge_s = lat.judge_seconds
        if pf.judge_calls and judge_s is not None:  # a verdict is not an answer (issue 31 item 8): timed on its own
            t.append("            ", style="dim")
            t.append(f"{_ms(judge_s)} per judge verdict\n")
        elif pf.judge_calls:
            t.append("            verdicts timed as answers (the judge was not measured)\n", style="dim")
    else:
        t.append((error or "not measured (^l)") + "\n", style="dim")
    t.append("time        ", style="dim")
    t.append(f"≈ {_fmt_duration(pf.seconds)}")
    if pf.seconds_range is not None and pf.seconds_range[1] > pf.seconds_range[0]:
        t.append(f" ({_fmt_duration(pf.seconds_range[0])}–{_fmt_duration(pf.seconds_range[1])})", style="dim")
    t.append("\n")
    t.append("cost        ", style="dim")
    t.append("—\n" if pf.cost is None else f"≈ ${pf.cost:,.2f}\n")
    if setup is not None and setup.batch is not None:  # issue 32: the Batch API's price beside the direct one
        t.append("batch cost  ", style="dim")
        t.append(("—" if pf.cost is None else f"≈ ${pf.cost * setup.batch:,.2f}")
                 + f" (×{setup.batch:g} of direct, through the Batch API)\n")
    if setup is not None and setup.pairwise_judge_model:
        from relgate_tui.engine.judging.certify_judge import MAX_JUDGE_CLASSES

        per_item = math.comb(MAX_JUDGE_CLASSES, 2) * setup.pairwise_judge_reps
        t.append("judge       ", style="dim")
        t.append(f"≤ {pf.n_items * per_item:,} verdicts", style="bold")
        t.append(f" ({setup.pairwise_judge_reps} verdicts in random orders per pair of an item's top ≤ "
                 f"{MAX_JUDGE_CLASSES} answers; unanimous items need none)\n", style="dim")
    if pf.note:
        t.append(pf.note, style="dim italic")
    return t
