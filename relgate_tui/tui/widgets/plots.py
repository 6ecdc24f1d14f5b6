"""Terminal plots drawn with plain Rich text (no plotting dependency): line/scatter charts and histograms.

:func:`xy_chart` and :func:`histogram` are pure functions of their data and a size in cells, so they are easy to
test; :class:`Plot` is a widget that redraws its chart at its current size.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget


@dataclass(frozen=True)
class Series:
    """Points to draw: ``xs``/``ys`` (non-finite points are left out), one ``marker`` character, a Rich ``style``,
    and whether to join consecutive points (``line``)."""

    xs: Sequence[float]
    ys: Sequence[float]
    marker: str = "•"
    style: str = "bold cyan"
    label: str = ""
    line: bool = False


def _fmt(v: float) -> str:
    if abs(v) < 1e-12:
        return "0"
    if abs(v) >= 0.01 and abs(v) < 1000:
        return f"{v:.2f}".rstrip("0").rstrip(".") if abs(v) < 10 else f"{v:.0f}"
    return f"{v:.1g}"


def _scale(v: float, lo: float, hi: float, cells: int) -> int:
    if hi <= lo:
        return 0
    return max(0, min(cells - 1, int(round((v - lo) / (hi - lo) * (cells - 1)))))


def xy_chart(
    series: Sequence[Series],
    width: int,
    height: int,
    *,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    x_label: str = "",
    y_label: str = "",
    diagonal: bool = False,
) -> Text:
    """A character chart of ``series`` in a ``width`` × ``height`` cell box (axes and tick labels included).

    ``diagonal`` draws y = x as a dotted reference (e.g. coverage against 1 − α). Ranges default to the data's.
    """
    pts = [
        (x, y)
        for s in series
        for x, y in zip(s.xs, s.ys, strict=False)
        if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)
    ]
    gutter = 7
    plot_w = max(4, width - gutter - 1)
    legend = [s for s in series if s.label]
    plot_h = max(3, height - 2 - bool(x_label) - bool(y_label) - bool(legend))
    if x_range is None:
        xs = [p[0] for p in pts] or [0.0, 1.0]
        x_range = (min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1)
    if y_range is None:
        ys = [p[1] for p in pts] or [0.0, 1.0]
        y_range = (min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1)
    x0, x1 = x_range
    y0, y1 = y_range
    grid: list[list[tuple[str, str]]] = [[(" ", "")] * plot_w for _ in range(plot_h)]

    def put(col: int, row: int, ch: str, style: str) -> None:
        grid[plot_h - 1 - row][col] = (ch, style)

    if diagonal:
        for col in range(plot_w):
            v = x0 + (x1 - x0) * col / max(1, plot_w - 1)
            if y0 <= v <= y1:
                put(col, _scale(v, y0, y1, plot_h), "·", "dim")
    for s in series:
        cells = [
            (_scale(x, x0, x1, plot_w), _scale(y, y0, y1, plot_h))
            for x, y in zip(s.xs, s.ys, strict=False)
            if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)
        ]
        if s.line:
            for (ca, ra), (cb, rb) in zip(cells, cells[1:], strict=False):
                steps = max(abs(cb - ca), abs(rb - ra))
                for i in range(1, steps):
                    put(ca + round((cb - ca) * i / steps), ra + round((rb - ra) * i / steps), "─", s.style)
        for col, row in cells:
            put(col, row, s.marker, s.style)

    ticks: dict[int, str] = {}
    for value in (y0, (y0 + y1) / 2, y1):
        ticks.setdefault(plot_h - 1 - _scale(value, y0, y1, plot_h), _fmt(value))
    text = Text()
    if y_label:
        text.append(f"{y_label}\n", style="dim")
    for i, line in enumerate(grid):
        tick = ticks.get(i, "")
        text.append(f"{tick:>{gutter - 1}} ┤" if tick else " " * (gutter - 1) + " │", style="dim")
        for ch, style in line:
            text.append(ch, style=style or None)
        text.append("\n")
    text.append(" " * (gutter - 1) + " └" + "─" * plot_w + "\n", style="dim")
    left, mid, right = _fmt(x0), _fmt((x0 + x1) / 2), _fmt(x1)
    axis = [" "] * (plot_w + gutter + 1)
    for pos, label in ((gutter + 1, left), (gutter + 1 + plot_w // 2 - len(mid) // 2, mid),
                       (gutter + 1 + plot_w - len(right), right)):
        for j, ch in enumerate(label):
            if 0 <= pos + j < len(axis):
                axis[pos + j] = ch
    text.append("".join(axis).rstrip(), style="dim")
    if x_label:
        text.append("\n" + " " * (gutter + 1) + x_label, style="dim")
    if legend:
        text.append("\n" + " " * (gutter + 1))
        for s in legend:
            text.append(s.marker + " ", style=s.style)
            text.append(s.label + "  ", style="dim")
        if diagonal:
            text.append("· y=x", style="dim")
    return text


def histogram(
    values: Sequence[int],
    width: int,
    height: int,
    *,
    lo: int | None = None,
    hi: int | None = None,
    x_label: str = "",
    style: str = "bold magenta",
) -> Text:
    """Vertical-bar histogram of integer ``values`` (one bar per integer from ``lo`` to ``hi``, grouped into
    equal-width bins when there are more integers than columns). Counts are written above the tallest bar."""
    vals = [int(v) for v in values]
    if lo is None:
        lo = min(vals) if vals else 0
    if hi is None:
        hi = max(vals) if vals else 1
    span = hi - lo + 1
    gutter = 7
    plot_w = max(4, width - gutter - 1)
    n_bins = max(1, min(span, plot_w // 2))
    per_bin = math.ceil(span / n_bins)
    n_bins = math.ceil(span / per_bin)
    counts = [0] * n_bins
    for v in vals:
        if lo <= v <= hi:
            counts[(v - lo) // per_bin] += 1
    bar_w = max(1, min(4, plot_w // n_bins - 1))
    plot_h = max(3, height - 2 - (1 if x_label else 0))
    top = max(counts) if counts else 0
    text = Text()
    blocks = " ▁▂▃▄▅▆▇█"
    for row in range(plot_h, 0, -1):
        tick = str(top) if row == plot_h else ("0" if row == 1 and top == 0 else "")
        text.append(f"{tick:>{gutter - 1}} │", style="dim")
        for c in counts:
            level = c / top * plot_h if top else 0.0
            fill = level - (row - 1)
            ch = "█" if fill >= 1 else (blocks[int(round(fill * 8))] if fill > 0 else " ")
            text.append(ch * bar_w, style=style)
            text.append(" ")
        text.append("\n")
    text.append(" " * (gutter - 1) + " └" + "─" * (n_bins * (bar_w + 1)) + "\n", style="dim")
    line_w = gutter + 1 + n_bins * (bar_w + 1)
    labels = [" "] * line_w
    marks = [(0, str(lo), "left")]
    if n_bins > 4:
        marks.append((n_bins // 2, str(lo + (n_bins // 2) * per_bin), "left"))
    marks.append((n_bins - 1, str(hi), "right"))
    for i, label, align in marks:
        start = gutter + 1 + i * (bar_w + 1)
        pos = start if align == "left" else start + bar_w - len(label)
        for j, ch in enumerate(label):
            if 0 <= pos + j < line_w:
                labels[pos + j] = ch
    text.append("".join(labels).rstrip(), style="dim")
    if x_label:
        text.append("\n" + " " * (gutter + 1) + x_label, style="dim")
    return text


class Plot(Widget):
    """A widget that draws ``draw(width, height) -> Text`` at its current size (redrawn on resize / refresh)."""

    DEFAULT_CSS = """
    Plot {
        height: 14;
        width: 1fr;
    }
    """

    def __init__(self, draw: Callable[[int, int], Text] | None = None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._draw = draw

    def set_draw(self, draw: Callable[[int, int], Text] | None) -> None:
        self._draw = draw
        self.refresh()

    def render(self) -> Text:
        if self._draw is None or self.size.width < 12 or self.size.height < 4:
            return Text("")
        return self._draw(self.size.width, self.size.height)
