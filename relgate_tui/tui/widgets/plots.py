"""Charts drawn by plotext through ``textual-plotext`` (Textualize's widget): line and scatter charts, bar charts.

:class:`Chart` is the one chart widget: its ``draw(plt, width, height)`` callback fills a fresh plotext figure at the
widget's current size (or returns a one-line message to show instead), and an optional ``caption(width)`` is shown
under the chart. :func:`xy` and :func:`bars` are the two chart kinds the screens use; they draw through plotext's
own API. Ticks we choose ourselves (whole-number y ticks, the histogram's) go through :func:`distinct_ticks`: plotext
keeps them in a set of (tick, label) pairs, so their drawing order follows Python's per-process string hashing, and
of two ticks falling in one row (or two labels that would touch) the one drawn last wins — a chart that differed
from one process to the next. Each tick is given a cell of its own, or left out. The legend is a caption (:func:`legend`, each series' marker in its colour) rather than plotext's own,
which is drawn inside the plot area and would hide the data under it. Every text handed to plotext (titles, axis
labels) goes through :func:`label`: plotext output is parsed as ANSI, so an id or a model name carrying escape
sequences must never reach it raw.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult, RenderResult
from textual.containers import Vertical
from textual.widgets import Static
from textual_plotext import PlotextPlot

from relgate_tui.core.text import one_line

__all__ = ["Chart", "Draw", "Series", "bars", "distinct_ticks", "label", "legend", "plot_rows", "xy"]

#: ``draw(plt, width, height)``: fill the figure ``plt``; return None, or a message to show instead of a chart.
Draw = Callable[[Any, int, int], "str | None"]
#: the reference line's colour (the target y = x, e.g. coverage against 1 − α)
TARGET_COLOR = "gray"
#: plotext colour → the Rich style the legend writes its marker in
LEGEND_STYLES = {"cyan": "bold cyan", "orange": "bold yellow", "magenta": "bold magenta", "green": "bold green",
                 "red": "bold red", "blue": "bold blue", "white": "bold white", "gray": "dim"}


def label(text: object, limit: int = 40) -> str:
    """``text`` as a plotext label: one line, no control or escape characters, at most ``limit`` characters."""
    return one_line(str(text), limit)


@dataclass(frozen=True)
class Series:
    """Points to draw: ``xs``/``ys`` (non-finite points are left out), a plotext ``marker`` (a character, or
    ``"braille"`` for a fine line), a plotext ``color``, a legend ``label``, and whether to join the points."""

    xs: Sequence[float]
    ys: Sequence[float]
    marker: str = "•"
    color: str = "cyan"
    label: str = ""
    line: bool = False


def _finite(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
    pts = [(float(x), float(y)) for x, y in zip(xs, ys, strict=False)
           if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)]
    return [p[0] for p in pts], [p[1] for p in pts]


def plot_rows(height: int, *, title: bool, x_label: bool) -> int:
    """The rows of plotext's plot area in a figure ``height`` rows tall with x tick labels: the height less the
    frame's two lines, the tick labels' row, the title's row and the x label's row (checked against plotext's own
    layout in the tests)."""
    return max(0, height - 3 - int(title) - int(x_label))


def distinct_ticks(ticks: Sequence[float], lo: float, hi: float, cells: int) -> list[float]:
    """The ``ticks`` within [lo, hi] that each fall in a cell (row) of their own under plotext's mapping of a value to
    one of ``cells`` cells, c(t) = ⌊0.5 + (cells − 1)(t − lo)/(hi − lo)⌋; ticks sharing a cell are all left out
    (no label can name a row that holds two values), so the ticks kept do not depend on their drawing order."""
    if hi <= lo or cells < 1:
        return []
    where = {t: math.floor(round(0.5 + (cells - 1) * (t - lo) / (hi - lo), 8)) for t in ticks if lo <= t <= hi}
    taken = list(where.values())
    return [t for t, c in where.items() if taken.count(c) == 1]


def _apart_marks(marks: Sequence[int], lo: int, hi: int, columns: int) -> list[int]:
    """Of the histogram's x ``marks`` (lo and hi first, then the others), those whose labels stay clear of every
    label kept before, on ``columns`` plot columns: bar m is centred near column (m − lo + ½)·columns/(hi − lo + 1),
    and plotext draws a label only with a blank column either side, so two labels are kept only when their centres
    are at least (len₁ + len₂)/2 + 3 columns apart (one column to spare for the estimate)."""
    def centre(m: int) -> float:
        return (m - lo + 0.5) * columns / (hi - lo + 1)

    kept: list[int] = []
    for m in sorted(set(marks), key=lambda m: (m not in (lo, hi), m)):
        if all(abs(centre(m) - centre(k)) >= (len(str(m)) + len(str(k))) / 2 + 3 for k in kept):
            kept.append(m)
    return sorted(kept)


def xy(plt: Any, series: Sequence[Series], *, x_range: tuple[float, float] | None = None,
       y_range: tuple[float, float] | None = None, x_label: str = "", title: str = "", target: bool = False,
       integer_y: bool = False, height: int = 0) -> None:
    """A line / scatter chart of ``series``; ``target`` draws y = x as the reference line (dotted, grey).
    Ranges default to plotext's (the data's); ``integer_y`` puts the y ticks on whole numbers (set sizes), each on a
    row of its own in the figure ``height`` rows tall (:func:`distinct_ticks`)."""
    if target:
        lo, hi = x_range or y_range or (0.0, 1.0)
        plt.plot([lo, hi], [lo, hi], marker="braille", color=TARGET_COLOR)
    for s in series:
        xs, ys = _finite(s.xs, s.ys)
        if not xs:
            continue
        if s.line and s.marker != "braille":  # a fine line through the points, the points in their marker
            plt.plot(xs, ys, marker="braille", color=s.color)
            plt.scatter(xs, ys, marker=s.marker, color=s.color)
        elif s.line:
            plt.plot(xs, ys, marker=s.marker, color=s.color)
        else:
            plt.scatter(xs, ys, marker=s.marker, color=s.color)
    if x_range is not None:
        plt.xlim(*x_range)
    if y_range is not None:
        plt.ylim(*y_range)
        if integer_y:
            whole = range(math.ceil(y_range[0]), math.floor(y_range[1]) + 1)
            rows = plot_rows(height, title=bool(title), x_label=bool(x_label))
            plt.yticks(distinct_ticks(whole, *y_range, rows))
    if title:
        plt.title(label(title, 80))
    if x_label:
        plt.xlabel(label(x_label, 80))


def legend(series: Sequence[Series], *, target: bool = False) -> Text:
    """The legend line under a chart: each labelled series' marker in its colour, then its label (untrusted names
    as plain text); ``target`` adds the y = x reference line."""
    text = Text()
    for s in series:
        if s.label:
            text.append(("─" if s.marker == "braille" else s.marker) + " ", style=LEGEND_STYLES.get(s.color, ""))
            text.append(label(s.label) + "  ", style="dim")
    if target:
        text.append("┈ target y = x", style="dim")
    return text


def bars(plt: Any, values: Sequence[int], *, lo: int, hi: int, width: int, height: int, x_label: str = "",
         title: str = "", color: str = "magenta") -> None:
    """A histogram of integer ``values`` in a ``width`` × ``height`` figure: one bar per integer from ``lo`` to
    ``hi`` (its count); x ticks at lo, the middle and hi, y ticks at 0, half and the largest count — each tick in a
    cell of its own (:func:`distinct_ticks`; an x label takes its width and a space either side)."""
    counts = [0] * (hi - lo + 1)
    for v in values:
        if lo <= int(v) <= hi:
            counts[int(v) - lo] += 1
    plt.bar([str(lo + i) for i in range(len(counts))], counts, color=color, width=0.6)
    top = max(1, max(counts, default=0))
    plt.ylim(0, top)
    plt.yticks(distinct_ticks(sorted({0, top // 2, top}), 0, top, plot_rows(height, title=bool(title),
                                                                           x_label=bool(x_label))))
    columns = width - len(str(top)) - 3  # the y tick labels, their space and the frame's two lines
    marks = _apart_marks([lo, (lo + hi) // 2, hi], lo, hi, columns)
    plt.xticks([m - lo + 1 for m in marks], [str(m) for m in marks])  # the bars sit at 1 … n
    if title:
        plt.title(label(title, 80))
    if x_label:
        plt.xlabel(label(x_label, 80))


class _Canvas(PlotextPlot):
    """The plotext canvas of a :class:`Chart`: every render starts a fresh figure and asks ``draw`` to fill it."""

    def __init__(self) -> None:
        super().__init__()
        self.draw: Draw | None = None

    def render(self) -> RenderResult:
        if self.draw is None or self.size.width < 12 or self.size.height < 4:
            return Text("")
        self.plt.clear_figure()
        message = self.draw(self.plt, self.size.width, self.size.height)
        if message is not None:
            return Text(message, style="dim")
        return super().render()


class Chart(Vertical):
    """A plotext chart drawn by ``draw`` at the widget's size, with an optional ``caption(width)`` under it."""

    DEFAULT_CSS = """
    Chart { height: 14; width: 1fr; }
    Chart > _Canvas { height: 1fr; width: 1fr; }
    Chart > .chart-caption { height: auto; width: 1fr; }
    """

    def __init__(self, draw: Draw | None = None, *, caption: Callable[[int], Text] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._draw = draw
        self._caption = caption

    def compose(self) -> ComposeResult:
        canvas = _Canvas()
        canvas.draw = self._draw
        yield canvas
        yield Static("", classes="chart-caption")

    def on_mount(self) -> None:
        self._show_caption()

    def on_resize(self) -> None:
        self._show_caption()

    def set_draw(self, draw: Draw | None, caption: Callable[[int], Text] | None = None) -> None:
        self._draw, self._caption = draw, caption
        for canvas in self.query(_Canvas):
            canvas.draw = draw
        self.redraw()

    def redraw(self) -> None:
        """Draw again (after the data behind ``draw`` / ``caption`` changed)."""
        for canvas in self.query(_Canvas):
            canvas.refresh()
        self._show_caption()

    def _show_caption(self) -> None:
        boxes = self.query(".chart-caption").results(Static)
        box = next(boxes, None)
        if box is None:
            return
        box.display = self._caption is not None
        if self._caption is not None:
            box.update(self._caption(self.size.width))
