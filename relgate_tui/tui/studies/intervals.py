"""The Intervals view of paper 001's study (issue 12 item 6): which conformal interval method to trust for a judge.

- **The method table**: per method, mean ± sd over the seeds of coverage and width before and after boundary
  adjustment (§3.3), each coverage marked ✓ when its mean is ≥ 1 − α and ✗ otherwise; the share of seeds whose
  coverage (before / after adjustment) is ≥ 1 − α; the median over seeds of the exact two-sided binomial p-value of
  the adjusted covered count against 1 − α (small p: the coverage differs from nominal — above it for a conservative
  method); seconds per run; and a degenerate result's reason (q̂ = ∞: the interval is the full scale).
- **The per-item chart** of the selected method (the first seed's test items): each interval a vertical bar, green
  when the human label (●) is inside, red when not; ``a`` switches between before and after adjustment.
- **Width vs judge error**: the selected method's mean width and coverage per bin of |judge score − human| (the raw
  judge score when every item has one, else Σ k·softmax(z)_k); an adaptive method widens where the judge errs.
- **Point scores** (§3.4): raw score, weighted average and the selected method's midpoint (l + u)/2 before and
  after adjustment, against the human label by MSE, MAE, Spearman ρ and Kendall τ.

Keys: ``n`` / ``p`` next / previous method (or move in the table), ``a`` before/after adjustment, ``j`` JSON (the
study's ``to_json`` — the document of ``relgate judge intervals --json``), ``c`` CSV of every method's per-item
intervals, ``m`` Markdown (the command's report), ``Escape`` back.
"""

from __future__ import annotations

import math
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Header, Label, Static

from relgate_tui.engine.judging.studies import intervals_caveats
from relgate_tui.tui.studies.base import StudyView
from relgate_tui.tui.studies.common import num, plain, safe
from relgate_tui.tui.studies.intervals_chart import (
    draw_intervals,
    error_bins,
    error_panel,
    error_step,
    interval_caption,
    interval_chart,
    intervals_csv,
    judge_scores,
    points_panel,
)
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.plots import Chart


def _pct(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{100 * x:.1f}%"


def coverage_cell(mean: float, sd: float, target: float) -> Text:
    """``90.3% ± 2.1 ✓``: ✓ when the mean coverage over the seeds is ≥ 1 − α."""
    t = Text(f"{_pct(mean)} ± {num(100 * sd if math.isfinite(sd) else sd, 1)}")
    if math.isfinite(mean):
        ok = mean >= target - 1e-12
        t.append(" ✓" if ok else " ✗", style="bold green" if ok else "bold red")
    return t


class IntervalsView(StudyView):
    """An :class:`~relgate_tui.core.judge_intervals.study.IntervalStudy`. ``data`` (its ``StudyInput``, optional)
    gives the judge's score per item for width vs error; ``audit`` (an ``AuditScores``) adds the audit to the JSON."""

    KIND = "intervals"
    CSS_PATH = "intervals.tcss"
    BINDINGS = [
        Binding("n", "method(1)", "Next method", id="intervals.next", tooltip="Chart the next method"),
        Binding("p", "method(-1)", "Prev. method", id="intervals.prev", tooltip="Chart the previous method"),
        Binding("a", "toggle_adjusted", "Before/after adj.", id="intervals.adjusted",
                tooltip="Chart the intervals before or after boundary adjustment"),
        Binding("c", "export('csv')", "CSV", id="intervals.csv", tooltip="Write every method's per-item intervals"),
    ]
    HELP = ("Coverage: the share of test items whose human rating lies in its interval (mean ± sd over the seeds); "
            "✓ when the mean is ≥ 1 − α; 'uninformative' when most intervals span the whole scale (valid but no "
            "finding). Width: mean interval length on the rating scale. 'adj.' = after snapping "
            "the ends to the admissible labels (never lowers coverage). The chart shows the selected method's "
            "intervals on the first seed's test items (green: human label inside; red: outside).")
    HELP_TITLE = "Judge score intervals"

    def __init__(self, result: Any, title: str, *, data: Any = None, audit: Any = None, **kwargs: Any) -> None:
        super().__init__(result, title, **kwargs)
        self.data = data
        self.audit = audit
        self.method_index = 0
        self.adjusted = True
        self.scores: tuple[dict[str, float], str] | None = judge_scores(data) if data is not None else None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Label(id="iv-title")
        yield DataTable(id="iv-methods", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="iv-lower"):
            yield Chart(id="iv-chart")
            with Vertical(id="iv-side"):
                yield Static(id="iv-method")
                yield Static(id="iv-errors")
                yield Static(id="iv-points")
        yield StockFooter()

    def on_mount(self) -> None:
        self.sub_title = "judge score intervals (paper 001)"
        s = self.result
        lab = s.labels
        title = Text.assemble(("Judge score intervals", "bold"), " · ", safe(self.title_text, 60))
        for key in ("judge", "variant", "audit"):
            if lab.get(key) and plain(lab[key], 40) not in self.title_text:
                title.append_text(Text.assemble(f" · {key} ", safe(lab[key], 40, "bold")))
        title.append(f"\n{s.n_items} items ({s.dropped} dropped) · α {s.alpha:g} → target coverage "
                     f"{100 * (1 - s.alpha):g}% · {len(s.seeds)} seeds (50/50 splits) · {s.grid.name} grid "
                     f"(step {s.grid.step:.3g}) · λ {s.adjust_lambda:.3g}", style="dim")
        for line in intervals_caveats(s):  # small samples say so (issue 24 §7)
            title.append(f"\ncaveat: {line}", style="bold yellow")
        self.query_one("#iv-title", Label).update(title)
        self._fill_methods()
        self.query_one("#iv-chart", Chart).set_draw(self._draw_chart, caption=self._caption)
        self._show_method()
        self.query_one("#iv-methods", DataTable).focus()

    # ---------------------------------------------------------------------------------------------- the table
    def _fill_methods(self) -> None:
        s = self.result
        target = 1 - s.alpha
        table = self.query_one("#iv-methods", DataTable)
        for key, label in (("method", "method"), ("cov", "coverage"), ("wid", "width"), ("acov", "adj. coverage"),
                           ("awid", "adj. width"), ("share", "seeds ≥ 1−α"), ("p", "binom p adj."),
                           ("sec", "s/run"), ("note", "note")):
            table.add_column(label, key=key)
        for m in s.methods:
            note = Text(plain(m.reasons[0], 40), style="yellow") if m.reasons else Text("")
            if m.uninformative:
                note = Text("uninformative", style="bold yellow")
            if not m.never_dropped:
                note = Text("adjustment lowered coverage", style="bold red")
            table.add_row(
                Text(m.name, style="bold"),
                coverage_cell(m.raw.coverage_mean, m.raw.coverage_sd, target),
                f"{num(m.raw.width_mean)} ± {num(m.raw.width_sd)}",
                coverage_cell(m.adjusted.coverage_mean, m.adjusted.coverage_sd, target),
                f"{num(m.adjusted.width_mean)} ± {num(m.adjusted.width_sd)}",
                f"{_share(m.raw.share_covered)} / {_share(m.adjusted.share_covered)}",
                num(m.adjusted.binom_p_median, 3),
                num(m.seconds_mean, 2),
                note,
                key=m.name,
            )

    @on(DataTable.RowHighlighted, "#iv-methods")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.cursor_row != self.method_index:
            self.method_index = event.cursor_row
            self._show_method()

    # ---------------------------------------------------------------------------------------------- selection
    @property
    def method(self) -> Any:
        """The selected method's result."""
        methods = self.result.methods
        return methods[self.method_index % len(methods)]

    def action_method(self, step: int) -> None:
        n = len(self.result.methods)
        self.method_index = (self.method_index + step) % n
        self.query_one("#iv-methods", DataTable).move_cursor(row=self.method_index)
        self._show_method()

    def action_toggle_adjusted(self) -> None:
        self.adjusted = not self.adjusted
        self._show_method()

    def _show_method(self) -> None:
        m = self.method
        s = self.result
        when = "after" if self.adjusted else "before"
        head = Text.assemble((m.name, "bold"), f" ({m.family}) · intervals {when} adjustment (a switches)")
        for r in (*m.reasons, m.uninformative_reason):
            if r:
                head.append("\n" + plain(r, 160), style="yellow")
        self.query_one("#iv-method", Static).update(head)
        if self.scores is None:
            errors = Text("width vs judge error: needs the judge's scores (open the study from a scores file or an "
                          "audit)", style="dim")
        else:
            lo, hi = s.grid.values[0], s.grid.values[-1]
            bins = error_bins(m.items, self.scores[0], adjusted=self.adjusted, step=error_step(lo, hi))
            errors = error_panel(bins, score_name=self.scores[1], full=hi - lo)
        self.query_one("#iv-errors", Static).update(errors)
        self.query_one("#iv-points", Static).update(points_panel(s, m))
        self.query_one("#iv-chart", Chart).redraw()

    def _scale(self) -> tuple[float, float]:
        return float(self.result.grid.values[0]), float(self.result.grid.values[-1])

    def _draw_chart(self, plt: Any, width: int, height: int) -> str | None:
        if not self.method.items:
            return "no test items"
        lo, hi = self._scale()
        draw_intervals(plt, self.method.items, width, lo=lo, hi=hi, adjusted=self.adjusted)
        return None

    def _caption(self, width: int) -> Text:
        lo, hi = self._scale()
        return interval_caption(self.method.items, width, lo=lo, hi=hi, adjusted=self.adjusted)

    def _chart(self, width: int, height: int) -> Text:
        """The chart and its caption as text (off screen), as :func:`interval_chart` renders them."""
        lo, hi = self._scale()
        return interval_chart(self.method.items, width, height, lo=lo, hi=hi, adjusted=self.adjusted)

    # ---------------------------------------------------------------------------------------------- exports
    def document(self) -> dict[str, Any]:
        """The study's ``to_json`` (``relgate judge intervals --json``), with the audit's counts when from an audit."""
        doc: dict[str, Any] = self.result.to_json()
        if self.audit is not None:
            doc["audit"] = self.audit.to_json()
        return doc

    def markdown(self) -> str:
        from relgate_tui.core.judge_intervals.report import render_markdown

        md = render_markdown(self.result)
        if self.audit is not None:  # as ``relgate judge intervals --audit`` writes it
            md = md.rstrip("\n") + f"\n\n{plain(self.audit.summary(), 400)}\n"
        return md

    def export_text(self, fmt: str) -> str:
        return intervals_csv(self.result) if fmt == "csv" else super().export_text(fmt)


def _share(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{100 * x:.0f}%"
