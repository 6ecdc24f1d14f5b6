"""Pure pieces of the Intervals view (paper 001): the per-item interval chart (drawn by plotext), width against judge
error, the point score table and the per-item CSV. No Textual widget here: each function maps a study result to
text or fills a plotext figure, so tests check them directly.

Coverage of one item uses the core's tolerance: human label y is inside [l, u] when l ≤ y + 10⁻⁹ and y ≤ u + 10⁻⁹
(``core/judge_intervals/study.py``), so the marks here agree with the coverage in the table.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich.text import Text

from relgate_tui.core.text import csv_cell, strip_controls
from relgate_tui.tui.studies.common import num, plain

TOL = 1e-9
IN_STYLE, OUT_STYLE = "green", "bold red"  # the caption's in / out counts


def bounds(item: Any, adjusted: bool) -> tuple[float, float]:
    """The item's interval before (``lower, upper``) or after (``adj_lower, adj_upper``) boundary adjustment."""
    return (item.adj_lower, item.adj_upper) if adjusted else (item.lower, item.upper)


def covered(item: Any, adjusted: bool) -> bool:
    lo, up = bounds(item, adjusted)
    return bool(lo <= item.human + TOL and item.human <= up + TOL)


# ---- the per-item chart -----------------------------------------------------------------------------------------


IN_COLOR, OUT_COLOR, MARK_COLOR = "green", "red", "white"  # plotext colours: label inside / outside, the label


def chart_columns(width: int, lo: float, hi: float) -> int:
    """How many item columns a ``width``-cell chart has: the width less the y axis (its tick labels and the frame)."""
    gutter = max(len(f"{t:g}") for t in _integer_ticks(lo, hi) or [lo, hi]) + 2  # labels, "┤", the right frame
    return max(4, width - gutter)


def shown_items(items: Sequence[Any], columns: int, adjusted: bool) -> list[Any]:
    """The items in chart order (by human label, then interval midpoint, then id); with more items than
    ``columns``, evenly spaced items of that order (one per column)."""
    order = sorted(items, key=lambda it: (it.human, sum(bounds(it, adjusted)) / 2, str(it.id)))
    if len(order) <= columns:
        return order
    picks = np.unique(np.linspace(0, len(order) - 1, columns).round().astype(int))
    return [order[int(i)] for i in picks]


def draw_intervals(plt: Any, items: Sequence[Any], width: int, *, lo: float, hi: float, adjusted: bool) -> None:
    """Fill the plotext figure ``plt``: one column per shown test item (:func:`shown_items`), its interval as a
    vertical bar — green when the human label (●) is inside, red when it is not — on the rating scale [lo, hi]."""
    shown = shown_items(items, chart_columns(width, lo, hi), adjusted)
    for k, it in enumerate(shown, start=1):
        lo_i, up_i = bounds(it, adjusted)
        if math.isfinite(lo_i) and math.isfinite(up_i):
            plt.plot([k, k], [lo_i, up_i], marker="│", color=IN_COLOR if covered(it, adjusted) else OUT_COLOR)
    plt.scatter(list(range(1, len(shown) + 1)), [float(it.human) for it in shown], marker="●", color=MARK_COLOR)
    ticks = _integer_ticks(lo, hi)
    plt.yticks(ticks, [f"{t:g}" for t in ticks])
    plt.ylim(lo, hi)
    plt.xlim(0.5, len(shown) + 0.5)
    plt.xticks([])


def interval_caption(items: Sequence[Any], width: int, *, lo: float, hi: float, adjusted: bool) -> Text:
    """The line under the chart: how many human labels are in / out (coloured as the bars), the coverage, and how
    many of the items are drawn."""
    n = len(items)
    if not n:
        return Text("no test items", style="dim")
    shown = len(shown_items(items, chart_columns(width, lo, hi), adjusted))
    inside = sum(covered(it, adjusted) for it in items)
    caption = Text()
    caption.append(f"in {inside}", style=IN_STYLE)
    caption.append(" · ", style="dim")
    caption.append(f"out {n - inside}", style=OUT_STYLE)
    caption.append(f" ({100 * inside / n:.1f}% covered) · ", style="dim")
    caption.append(f"{shown} of {n} items" if shown < n else f"{n} items", style="dim")
    caption.append(" by human label (●)", style="dim")
    caption.truncate(width, overflow="ellipsis")
    return caption


def interval_chart(items: Sequence[Any], width: int, height: int, *, lo: float, hi: float,
                   adjusted: bool) -> Text:
    """The chart as the view draws it, rendered off screen (plotext's ``clear`` theme) with its caption: what the
    tests and the exports read."""
    from textual_plotext.plot import Plot

    if not items:
        return Text("no test items", style="dim")
    plt = Plot()
    plt.plotsize(width, max(4, height - 1))
    plt.theme("clear")
    draw_intervals(plt, items, width, lo=lo, hi=hi, adjusted=adjusted)
    text = Text.from_ansi(plt.build().rstrip())
    text.append("\n")
    text.append_text(interval_caption(items, width, lo=lo, hi=hi, adjusted=adjusted))
    return text


def _integer_ticks(lo: float, hi: float) -> list[float]:
    return [float(v) for v in range(math.ceil(lo - TOL), math.floor(hi + TOL) + 1)]


# ---- width against judge error -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorBin:
    """Test items whose judge error |judge score − human| lies in [low, high): their count, mean width, coverage."""

    low: float
    high: float
    n: int
    width_mean: float
    coverage: float


def judge_scores(data: Any) -> tuple[dict[str, float], str]:
    """Per item id, the judge's score the error is measured from, and its name: the raw judge score when every
    item has one, else the probability-weighted average Σ k·softmax(z)_k (paper 001 §3.4) for every item (never a
    mix of the two). ``data`` is the study's ``StudyInput``."""
    from relgate_tui.core.judge_intervals.features import weighted_average

    raw = np.asarray(data.raw, dtype=float)
    if raw.size and np.isfinite(raw).all():
        return dict(zip(data.ids, raw.tolist(), strict=True)), "raw judge score"
    wa = np.asarray(weighted_average(data.z, data.scale), dtype=float)
    return dict(zip(data.ids, wa.tolist(), strict=True)), "weighted average Σ k·p_k"


def error_step(lo: float, hi: float) -> float:
    """Bin width: an eighth of the scale rounded to a half (0.5 on 1–5, 1 on 1–10), at least 0.5."""
    return max(0.5, round((hi - lo) / 8 * 2) / 2)


def error_bins(items: Sequence[Any], scores: Mapping[str, float], *, adjusted: bool, step: float,
               bins: int = 5) -> list[ErrorBin]:
    """Mean width and coverage per bin of |judge score − human| (``bins`` bins of ``step``, the last open-ended);
    items without a score are left out; empty bins are kept (n = 0, NaN means)."""
    groups: list[list[Any]] = [[] for _ in range(bins)]
    for it in items:
        s = scores.get(it.id)
        if s is None or not math.isfinite(s):
            continue
        k = min(bins - 1, int(abs(s - it.human) / step + TOL))
        groups[k].append(it)
    out = []
    for k, g in enumerate(groups):
        widths = [bounds(it, adjusted)[1] - bounds(it, adjusted)[0] for it in g]
        cov = [covered(it, adjusted) for it in g]
        out.append(ErrorBin(k * step, (k + 1) * step if k < bins - 1 else math.inf, len(g),
                            float(np.mean(widths)) if g else math.nan, float(np.mean(cov)) if g else math.nan))
    return out


def error_panel(result: Sequence[ErrorBin], *, score_name: str, full: float, bar: int = 12) -> Text:
    """The bins as a small table with a bar of the mean width (full bar = the whole scale, ``full``)."""
    text = Text("width vs judge error", style="bold")
    text.append(f"\nerror = |{score_name} − human|\n", style="dim")
    text.append(f"{'|error|':<10}{'n':>5}{'width':>7}{'cover':>7}\n", style="dim")
    for b in result:
        rng = f"≥ {b.low:g}" if not math.isfinite(b.high) else f"{b.low:g}–{b.high:g}"
        text.append(f"{rng:<10}{b.n:>5}{num(b.width_mean):>7}"
                    f"{(f'{100 * b.coverage:.0f}%' if b.n else '—'):>7} ")
        if b.n and math.isfinite(b.width_mean) and full > 0:
            cells = max(0, min(bar, int(round(b.width_mean / full * bar))))
            text.append("█" * cells, style="cyan")
        text.append("\n")
    return text


# ---- point scores -------------------------------------------------------------------------------------------------


def points_panel(study: Any, method: Any) -> Text:
    """Raw judge score, weighted average, and the method's midpoint before/after adjustment against the human
    label: MSE, MAE, Spearman ρ, Kendall τ (means over the seeds' test halves)."""
    text = Text("point scores vs human", style="bold")
    text.append(f"  ({plain(method.name, 16)})\n", style="dim")
    text.append(f"{'score':<16}{'MSE':>6}{'MAE':>6}{'ρ':>6}{'τ':>6}\n", style="dim")
    rows = [("raw judge score", study.raw_score), ("weighted avg", study.weighted),
            ("midpoint", method.midpoint), ("midpoint adj.", method.midpoint_adjusted)]
    best_mae = min((p.mae for _, p in rows if p is not None and math.isfinite(p.mae)), default=math.nan)
    for name, p in rows:
        if p is None:
            text.append(f"{name:<16}{'—':>6}{'—':>6}{'—':>6}{'—':>6}\n", style="dim")
            continue
        style = "bold" if math.isfinite(p.mae) and p.mae == best_mae else ""
        text.append(f"{name:<16}{num(p.mse):>6}{num(p.mae):>6}{num(p.spearman):>6}{num(p.kendall):>6}\n", style=style)
    return text


# ---- CSV ------------------------------------------------------------------------------------------------------------

CSV_COLUMNS = ("id", "human", "lower", "upper", "adj_lower", "adj_upper", "covered", "adj_covered", "method")


def intervals_csv(study: Any) -> str:
    """Every method's intervals of the first seed's test items, one row per (method, item); text cells that a
    spreadsheet would run as a formula are escaped (:func:`relgate_tui.core.text.csv_cell`)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for m in study.methods:
        for it in m.items:
            w.writerow([csv_cell(strip_controls(str(it.id))), _csv_num(it.human), _csv_num(it.lower), _csv_num(it.upper),
                        _csv_num(it.adj_lower), _csv_num(it.adj_upper), int(covered(it, False)),
                        int(covered(it, True)), csv_cell(strip_controls(m.name))])
    return out.getvalue()


def _csv_num(x: float) -> str:
    return repr(float(x)) if math.isfinite(x) else ""
