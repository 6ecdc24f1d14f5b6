"""Results (SPEC §5.4): reliability level with its lower bound, PASS/FAIL, M* at α, validation metrics, the item
table with prediction sets, terminal plots, export.

``+`` / ``-`` change α by 0.01 and everything is recomputed at once (``session.results`` → ``compute_results``,
well under a millisecond). Dismisses with "back" or "spotcheck" (``l``: verify the items still pending).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Digits, Header, Label, Static, TabbedContent, TabPane

from relgate_tui.core.text import counted
from relgate_tui.tui.itemsamples import item_view_or_notice
from relgate_tui.tui.results_judges import JUDGE_COLUMNS, assisted_view, cycle_view, judge_cells, judge_summary
from relgate_tui.tui.review.notice import show_message
from relgate_tui.tui.services import host
from relgate_tui.tui.widgets.footer import KeysFooter
from relgate_tui.tui.widgets.plots import Chart, Series, bars, legend, xy
from relgate_tui.tui.widgets.safetext import safe_line

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.core.certification.gate_names import GateOn
    from relgate_tui.engine.certification.judge_section import JudgedItem, JudgeSectionView
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.engine.certification.views import ItemRow, ResultsView

FILTERS = ("all", "misses", "large sets", "ties")
ALPHA_MIN, ALPHA_MAX, ALPHA_STEP = 0.01, 0.50, 0.01
CURVE_ALPHAS = tuple(round(0.01 * i, 2) for i in range(1, 51))


def fmt_pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}%}"


def fmt_m_star(m: float) -> str:
    return "∞" if math.isinf(m) else str(int(m))


def fmt_prop(p) -> str:  # noqa: ANN001 - core Proportion
    if p is None:
        return "—"
    return f"{p.estimate:.1%} [{p.lower:.1%}, {p.upper:.1%}]"


def fmt_score(s: float | None) -> str:
    if s is None:
        return "·"
    return "∞" if math.isinf(s) else str(int(s))


def _readouts_for(inp, alpha: float, confidence: float):
    """SPEC §3.6 readouts at α: bootstrap intervals (B = 10,000, seeded) and 100-split stability (None when fewer
    than 2 verified items). Cheap: the multinomial bootstrap shortcut and one vectorised partition."""
    from relgate_tui.core.certification.readouts import bootstrap_summary, split_stability, verified_scores

    boot = bootstrap_summary(inp, alpha, confidence=confidence)
    scores = verified_scores(inp)
    stab = split_stability(scores, alpha=alpha) if scores.size >= 2 else None
    return boot, stab


class ResultsScreen(Screen[str]):
    CSS_PATH = "results.tcss"
    BINDINGS = [
        Binding("plus,equals_sign", "alpha(1)", "α+", key_display="+", id="results.alpha_up",
                tooltip="Increase α by 0.01 (smaller sets)"),
        Binding("minus,underscore", "alpha(-1)", "α−", key_display="-", id="results.alpha_down",
                tooltip="Decrease α by 0.01 (larger sets)"),
        Binding("f", "filter", "Filter", id="results.filter", tooltip="Items: all → misses → large sets → ties"),
        Binding("l", "spotcheck", "Label", id="results.spot", tooltip="Spot-check: verify the items still pending"),
        Binding("p", "plots", "Plots", id="results.plots", tooltip="Open the plots (on the plots: back to the items)"),
        Binding("d", "judge_tab", "Judge", id="results.judge",
                tooltip="Pairwise judge: both rankings side by side and the cycle diagnostics"),
        Binding("a", "assisted_tab", "Verifier", id="results.assisted",
                tooltip="Verification judge: the judge-assisted bound and judge vs human"),
        Binding("t", "certificate", "Certificate", id="results.certificate",
                tooltip="Judge certificate: may the verification judge grade instead of people, on which items"),
        Binding("j", "export('json')", "JSON", id="results.json", tooltip="Export results as JSON"),
        Binding("c", "export('csv')", "CSV", id="results.csv", tooltip="Export the item table as CSV"),
        Binding("m", "export('md')", "Report", id="results.md", tooltip="Export a Markdown report"),
        Binding("v", "details", "Details", id="results.details",
                tooltip="Show or hide the validation grid (hidden on a terminal under 30 rows)"),
        Binding("escape", "back", "Back", id="results.back", tooltip="Back (the run is saved)"),
    ]
    HELP = (
        "The reliability level 1−α* = #{s ≤ 1}/(n+1) (paper Def. 2.4) with its one-sided Clopper–Pearson lower "
        "bound. M* is the conformal rank threshold at α: prediction sets are each item's top-M* answers. "
        "Enter on an item shows its samples."
    )
    HELP_TITLE = "Results"

    def __init__(self, session: Session, *, gate: float | None = None, alpha: float | None = None,
                 gate_on: GateOn | None = None) -> None:
        """``gate`` / ``gate_on``: a "what if the gate were …" view (labelled so, never written); by default the run's
        own gate (``Session.gate``)."""
        super().__init__()
        self.session = session
        own = session.gate
        self.gate = own.threshold if gate is None else gate
        self.gate_on: GateOn = own.gate_on if gate_on is None else gate_on
        self.confidence = own.confidence
        self.what_if = (self.gate, self.gate_on) != (own.threshold, own.gate_on)
        self.alpha = round(alpha if alpha is not None else session.alpha, 2)
        self.filter_index = 0
        self.view: ResultsView | None = None
        self.exported: dict[str, str] = {}
        self.judge: JudgeSectionView | None = None
        self._judge_items: dict[str, JudgedItem] = {}
        self._judge_keys: list[str] | None = None

    # ---------------------------------------------------------------------------------------------- compose
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="plain")
        with Horizontal(id="summary"):
            with Vertical(id="level-box"):
                yield Label("Reliability level 1−α*", classes="panel-title")
                yield Digits("", id="level")
                yield Static("", id="bound")
            with Vertical(id="gate-box"):
                yield Static("", id="verdict")
                yield Static("", id="alpha-info")
            yield Static("", id="calls")
        yield Static("", id="validation")
        yield Static("", id="message")
        with TabbedContent(id="tabs"):
            with TabPane("Items", id="tab-items"):
                yield Label("", id="filter-label")
                yield DataTable(id="items", cursor_type="row", zebra_stripes=True)
            with TabPane("Plots", id="tab-plots"):
                with Horizontal(id="plots"):
                    yield Chart(id="plot-coverage")
                    yield Chart(id="plot-entropy")
                    yield Chart(id="plot-samples")
            with TabPane("Judge & cycles", id="tab-judge"):
                yield Static("", id="judge-summary")
                with Horizontal(id="judge-body"):
                    yield DataTable(id="judge-items", cursor_type="row", zebra_stripes=True)
                    yield Static("", id="judge-cycle")
            with TabPane("Verification judge", id="tab-assisted"):
                yield Static("", id="assisted")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.sub_title = f"results · {self.session.title}"
        table = self.query_one("#items", DataTable)
        labels = ("item", "role", "top answer", "prediction set", "size", "samples", "score", "covered", "tie",
                  "verified by")
        for key, label in zip(self.COLUMNS, labels, strict=False):
            table.add_column(label, key=key)
        judge_table = self.query_one("#judge-items", DataTable)
        for key, label in zip(JUDGE_COLUMNS, ("item", "n", "ρ", "cyc", "cost", "top (freq)", "top (judge)", "s",
                                              "s_J"), strict=False):
            judge_table.add_column(label, key=key)
        self.recompute()
        table.focus()
        try:  # keep the run's results.json (what the Runs list shows) current, against the run's own gate
            self.session.save_results(self.alpha)
        except (ValueError, OSError) as exc:
            self.notify(f"could not save results.json: {exc}", severity="warning")

    # --------------------------------------------------------------------------------------------- compute
    def recompute(self) -> None:
        """Recompute every number at the current α and redraw (called on mount and on every α change)."""
        self.view = self.session.results(
            self.alpha,
            gate=self.gate,
            gate_on=self.gate_on,
            confidence=self.confidence,
            curve_alphas=CURVE_ALPHAS,
        )
        self._render_summary()
        self._render_table()
        self._render_plots()
        self._render_judge()
        self._render_assisted()

    def _readouts(self, r):
        try:
            return _readouts_for(self.session.analysis().input, r.alpha, r.confidence)
        except (ValueError, AttributeError):
            return None, None

    def _weighted(self, r):
        """Weighted conformal sets (eq. 10.2) when the task file gives weights, else None."""
        try:
            return self.session.analysis().weighted(r.alpha, r.confidence)
        except (ValueError, AttributeError):
            return None

    def _extra_lines(self, r) -> list[Text]:
        """Below the validation grid: the worst-case level with skips, SPEC §3.6's bootstrap intervals, §3.4's
        adaptive sets and the split stability (issue 11 §4)."""
        lines = []
        if r.n_skipped:
            lines.append(Text(f"worst case, {r.n_skipped} skipped item{'s' if r.n_skipped != 1 else ''} counted as "
                              f"{'misses' if r.n_skipped != 1 else 'a miss'}: level "
                              f"{r.worst_case_level:.3f} (≥ {r.worst_case_lower_bound:.3f} with {r.confidence:.0%} "
                              "confidence)", style="yellow"))
        boot, stab = self._readouts(r)
        parts = []
        if boot is not None and boot.set_size is not None:
            b = boot.set_size
            parts.append(f"set size {b.estimate:.2f} [{b.lower:.2f}, {b.upper:.2f}]")
        if boot is not None and boot.samples_used is not None:
            b = boot.samples_used
            parts.append(f"samples/item {b.estimate:.2f} [{b.lower:.2f}, {b.upper:.2f}]")
        if parts:
            lines.append(Text(" · ".join(parts) + f" (bootstrap, B = {boot.n_boot:,})", style="dim"))
        if r.adaptive is not None:
            a = r.adaptive
            cov = "" if a.coverage is None else f", coverage {fmt_prop(a.coverage)}"
            lines.append(Text(f"adaptive sets (eq. 6.7): q̂ = {'∞' if math.isinf(a.threshold) else f'{a.threshold:.3f}'}, "
                              f"avg size {a.average_set_size:.2f}{cov}", style="dim"))
        weighted = self._weighted(r)
        if weighted is not None:
            from relgate_tui.core.certification.weighted_sets import weighted_summary

            lines.append(Text(weighted_summary(weighted), style="dim"))
        if stab is not None:
            m_mean = "∞" if math.isinf(stab.m_star_mean) else f"{stab.m_star_mean:.2f} ± {stab.m_star_sd:.2f}"
            lines.append(Text(f"{stab.n_splits} random splits ({stab.n_cal}/{stab.n_test}): M* {m_mean}, coverage "
                              f"{stab.coverage_mean:.1%} ± {stab.coverage_sd:.1%}", style="dim"))
        return lines

    def _render_summary(self) -> None:
        v = self.view
        assert v is not None
        r = v.result
        from relgate_tui.engine.certification.report import plain_sentence

        self.query_one("#plain", Static).update(Text(plain_sentence(
            r.reliability_lower_bound, r.confidence, r.reliability_n), style="bold"))
        self.query_one("#level", Digits).update("-" if r.reliability_level is None else f"{r.reliability_level:.3f}")
        bound = Text()
        if r.reliability_lower_bound is None:  # issue 33 §7: no number from nothing
            bound.append("no verified items yet\n", style="bold")
        else:
            bound.append(f"≥ {r.reliability_lower_bound:.3f}", style="bold")
            bound.append(f" with {r.confidence:.0%} confidence\n")
        bound.append(f"{r.reliability_successes} of {r.reliability_n} verified items: top answer acceptable",
                     style="dim")
        self.query_one("#bound", Static).update(bound)

        verdict = Text()
        if self.what_if:  # a viewer's gate: shown, labelled, never written
            own = self.session.gate
            verdict.append(f"what if the gate were {'none' if self.gate is None else f'{self.gate:.0%}'} "
                           f"({self.gate_on}); this run's: "
                           f"{'none' if own.threshold is None else f'{own.threshold:.0%} ({own.gate_on})'}\n",
                           style="italic yellow")
        d = r.gate_decision  # the one gate rule's decision (core/certification/gate.py)
        if d is None:
            verdict.append(" NO GATE ", style="reverse")
            verdict.append("  no gate for this run", style="dim")
        elif d.passed is None:
            verdict.append(" UNDECIDED ", style="bold reverse yellow")
            verdict.append("  " + d.summary().split(": ", 1)[-1])
        else:
            verdict.append(" PASS " if d.passed else " FAIL ", style="bold reverse green" if d.passed else
                           "bold reverse red")
            verdict.append("  " + d.summary().split(": ", 1)[1])
        self.query_one("#verdict", Static).update(verdict)

        info = Text()
        info.append(f"\nα = {r.alpha:.2f}", style="bold")
        info.append(f"   (1−α = {1 - r.alpha:.2f}, +/− to change)\n")
        info.append("M* = ", style="bold")
        info.append(fmt_m_star(r.m_star), style="bold cyan")
        info.append(f"   k = {r.k} of n = {r.n}\n")
        if r.no_guarantee:
            info.append("displayed sets: no coverage guarantee\n", style="bold yellow")
        info.append(f"skipped {r.n_skipped} · pending {r.n_pending}", style="dim")
        if v.n_unsampled:
            info.append(f" · not sampled {v.n_unsampled}", style="dim")
        self.query_one("#alpha-info", Static).update(info)

        size = "—" if math.isnan(r.average_set_size) else f"{r.average_set_size:.2f}"
        val = Table.grid(padding=(0, 1), expand=True)
        for _ in range(3):
            val.add_column(style="dim", no_wrap=True)
            val.add_column(ratio=1, no_wrap=True)
        if r.coverage is not None:
            cells = [
                ("coverage", fmt_prop(r.coverage)),
                ("conditional cov.", fmt_prop(r.conditional_coverage)),
                ("capability gap β", fmt_prop(r.capability_gap)),
                ("mode accuracy", fmt_prop(r.mode_accuracy)),
                ("1-sample accuracy", fmt_prop(r.single_sample_accuracy)),
                ("avg set size", f"{size} ({counted(r.n_deployment, 'item')})"),
            ]
            title = (f"Validation on {r.n_with_reference} deployment items with references "
                     f"({r.confidence:.0%} Wilson intervals; 1-sample = first samples)")
        else:
            cells = [("avg set size", f"{size} ({counted(r.n_deployment, 'item')})"),
                     ("coverage", "— (no references)"),
                     ("", "")]
            title = "Validation: the deployment items have no references, so coverage cannot be measured"
        while len(cells) % 3:
            cells.append(("", ""))
        for i in range(0, len(cells), 3):
            val.add_row(*(x for pair in cells[i:i + 3] for x in pair))
        outer = Table.grid(expand=True)
        outer.add_row(Text(title, style="bold"))
        outer.add_row(val)
        for line in self._extra_lines(r):
            outer.add_row(line)
        val = outer
        self.query_one("#validation", Static).update(val)

        calls = Text()
        calls.append("Calls\n", style="bold")
        calls.append(f"{'samples used':<14}", style="dim")
        calls.append(f"{r.samples_used} of {r.samples_budget}\n")
        calls.append(f"{'saved':<14}", style="dim")
        calls.append(f"{r.calls_saved:.1%} vs K_max\n", style="bold green" if r.calls_saved > 0 else "")
        calls.append(f"{'made/cached':<14}", style="dim")
        calls.append(f"{v.calls_made} / {v.calls_cached}\n")
        calls.append(f"{'failed':<14}", style="dim")
        calls.append(f"{v.calls_failed}\n", style="bold red" if v.calls_failed else "")
        calls.append(f"{'tie rate':<14}", style="dim")
        calls.append(fmt_pct(r.tie_rate) + "\n")
        audit = v.audit
        if audit.audited:
            n_bad = len(audit.disagreements)
            calls.append(f"{'audit':<14}", style="dim")
            calls.append(f"{n_bad} of {audit.audited} disagree", style="bold red" if n_bad else "")
        self.query_one("#calls", Static).update(calls)

        # the references a person's labels contradict, by name, at any width (the calls panel may be hidden)
        show_message(self.query_one("#message", Static), r.calibration_message, self.session.path, audit.line())

    def _rows(self) -> list[ItemRow]:
        assert self.view is not None
        rows = list(self.view.rows)
        name = FILTERS[self.filter_index]
        if name == "misses":
            rows = [r for r in rows if r.covered == 0]
        elif name == "large sets":
            rows = [r for r in rows if len(r.prediction_set) >= 2]
        elif name == "ties":
            rows = [r for r in rows if r.tie_broken]
        return rows

    COLUMNS = ("id", "role", "leader", "set", "size", "samples", "score", "covered", "tie", "source")

    @staticmethod
    def _cells(r: ItemRow) -> tuple:
        covered = {1: Text("✓", style="green"), 0: Text("✗", style="bold red")}.get(
            r.covered if r.covered is not None else -1, Text("·", style="dim")
        )
        return (
            safe_line(r.item_id),
            r.role[:3],
            safe_line(r.leader or "—", overflow="ellipsis"),
            safe_line("{" + ", ".join(r.prediction_set) + "}", overflow="ellipsis"),
            str(len(r.prediction_set)),
            str(r.samples),
            fmt_score(r.score),
            covered,
            "tie" if r.tie_broken else "",
            r.label_source,
        )

    def _render_table(self) -> None:
        """Show the filtered rows. When the same items are shown (e.g. only α changed) only the cells that changed
        are updated — rebuilding a large DataTable costs far more than the statistics."""
        table = self.query_one("#items", DataTable)
        rows = self._rows()
        keys = [r.item_id for r in rows]
        new_cells = {r.item_id: self._cells(r) for r in rows}
        if keys == getattr(self, "_shown_keys", None):
            old = self._shown_cells
            for key in keys:
                for col, a, b in zip(self.COLUMNS, old[key], new_cells[key], strict=False):
                    if str(a) != str(b) or (isinstance(a, Text) and isinstance(b, Text) and a.style != b.style):
                        table.update_cell(key, col, b)
        else:
            cursor = table.cursor_row
            table.clear()
            for key in keys:
                table.add_row(*new_cells[key], key=key)
            if rows:
                table.move_cursor(row=min(cursor, len(rows) - 1))
        self._shown_keys = keys
        self._shown_cells: dict[str, tuple] = new_cells
        name = FILTERS[self.filter_index]
        total = len(self.view.rows) if self.view else 0
        self.query_one("#filter-label", Label).update(
            f"[b]{len(rows)}[/] of {total} items · filter: [b]{name}[/] (f to change) · Enter: samples"
        )

    def _render_plots(self) -> None:
        v = self.view
        assert v is not None
        curve = v.curve
        one_minus = [1 - a for a in curve.alphas]
        cov = list(curve.coverage)
        has_cov = any(not math.isnan(c) for c in cov)
        alpha = self.alpha

        marker = Series([1 - alpha], [cov[CURVE_ALPHAS.index(alpha)]] if alpha in CURVE_ALPHAS else [],
                        marker="◆", color="orange", label=f"α={alpha:.2f}")
        coverage = [Series(one_minus, cov, marker="braille", label="coverage", line=True), marker]

        def draw_coverage(plt: object, w: int, h: int) -> str | None:
            if not has_cov:
                return "coverage vs 1−α needs references on the deployment items"
            xy(plt, coverage, x_range=(0.5, 1.0), y_range=(0.5, 1.0), x_label="1 − α", title="coverage",
               target=True)
            return None

        dep = [r for r in v.rows if r.role == "deployment"]
        ys = [float(len(r.prediction_set)) for r in dep]
        sizes = [Series([r.entropy for r in dep], ys, marker="•", color="cyan",
                        label=f"deployment items, α={alpha:.2f}")]

        def draw_entropy(plt: object, w: int, h: int) -> str | None:
            if not dep:
                return "no deployment items"
            xy(plt, sizes, y_range=(0, max(2.0, max(ys))), x_label="consensus entropy (nats)",
               title="prediction-set size", integer_y=True, height=h)
            return None

        def draw_samples(plt: object, w: int, h: int) -> str | None:
            bars(plt, list(v.samples_used), lo=1, hi=v.k_max, width=w, height=h, x_label="samples used per item",
                 title="items")
            return None

        self.query_one("#plot-coverage", Chart).set_draw(
            draw_coverage, caption=(lambda w: legend(coverage, target=True)) if has_cov else None)
        self.query_one("#plot-entropy", Chart).set_draw(draw_entropy,
                                                        caption=(lambda w: legend(sizes)) if dep else None)
        self.query_one("#plot-samples", Chart).set_draw(draw_samples)

    # ------------------------------------------------------------------------------------------------ judge
    def _render_assisted(self) -> None:
        """The verification judge's tab (issue 22): the judge-assisted bound, the agreement table, its gate."""
        block = self.session.assisted(self.confidence, self.gate)
        decision = None if self.view is None else self.view.result.gate_decision
        self.query_one("#assisted", Static).update(assisted_view(block, decision,
                                                                 imported_tool=self.session.imported_tool))

    def _render_judge(self) -> None:
        """The pairwise judge's tab: both rankings side by side, cycle statistics, the judged items by ρ."""
        summary = self.query_one("#judge-summary", Static)
        if not self.session.uses_judge:
            self.judge = None
            summary.update(Text("This run has no pairwise judge. Choose a judge model in Setup (or run "
                                "relgate certify --pairwise-judge-endpoint URL --pairwise-judge-model NAME) to rank "
                                "each item's answers by an LLM judge, calibrate that ranking with the same labels, "
                                "and see its preference cycles here.", style="dim"))
            self.query_one("#judge-body").display = False
            return
        self.judge = self.session.judge_view(self.alpha, gate=self.gate, confidence=self.confidence)
        if self.judge is None:
            summary.update(Text("The pairwise judge has not been asked yet: resume the run to ask it.",
                                style="yellow"))
            self.query_one("#judge-body").display = False
            return
        self.query_one("#judge-body").display = True
        summary.update(judge_summary(self.judge))
        table = self.query_one("#judge-items", DataTable)
        items = sorted(self.judge.items, key=lambda it: (-(it.rho or 0), -it.mfas_cost, it.id))
        keys = [it.id for it in items]
        self._judge_items = {it.id: it for it in items}
        if keys != self._judge_keys:
            table.clear()
            for it in items:
                table.add_row(*judge_cells(it), key=it.id)
            self._judge_keys = keys
        else:  # α changed: only the scores' context changed, the rows are the same
            for it in items:
                for col, value in zip(JUDGE_COLUMNS, judge_cells(it), strict=False):
                    table.update_cell(it.id, col, value)
        self._show_cycle(keys[table.cursor_row] if keys and 0 <= table.cursor_row < len(keys) else None)

    def _show_cycle(self, item_id: str | None) -> None:
        box = self.query_one("#judge-cycle", Static)
        item = self._judge_items.get(item_id) if item_id else None
        box.update(cycle_view(item) if item else Text("no judged item", style="dim"))

    @on(DataTable.RowHighlighted, "#judge-items")
    def _judge_row(self, event: DataTable.RowHighlighted) -> None:
        self._show_cycle(str(event.row_key.value) if event.row_key.value is not None else None)

    def action_judge_tab(self) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        tabs.active = "tab-items" if tabs.active == "tab-judge" else "tab-judge"
        if tabs.active == "tab-judge" and self.session.uses_judge:
            self.query_one("#judge-items", DataTable).focus()

    def action_assisted_tab(self) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        tabs.active = "tab-items" if tabs.active == "tab-assisted" else "tab-assisted"

    # ---------------------------------------------------------------------------------------------- actions
    def action_certificate(self) -> None:
        host(self.app).open_screen("judge_certificate", "run", str(self.session.path))

    def action_alpha(self, direction: int) -> None:
        new = round(min(ALPHA_MAX, max(ALPHA_MIN, self.alpha + direction * ALPHA_STEP)), 2)
        if new != self.alpha:
            self.alpha = new
            self.recompute()

    def action_filter(self) -> None:
        self.filter_index = (self.filter_index + 1) % len(FILTERS)
        self._render_table()

    def action_details(self) -> None:
        self.toggle_class("-details")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``v`` is a key only where the validation grid is hidden by default (under 30 rows)."""
        return "-short" in self.classes if action == "details" else True

    def on_resize(self) -> None:  # the breakpoint classes just changed: ``v`` may come or go
        self.call_after_refresh(self.refresh_bindings)

    def action_plots(self) -> None:
        """Open the Plots tab (from Items or Judge & cycles); on Plots, back to Items."""
        tabs = self.query_one("#tabs", TabbedContent)
        tabs.active = "tab-items" if tabs.active == "tab-plots" else "tab-plots"

    def action_export(self, fmt: str) -> None:
        path = self.app.export_results(fmt, alpha=self.alpha)  # type: ignore[attr-defined]
        if path is not None:
            self.exported[fmt] = str(path)

    def action_spotcheck(self) -> None:
        if self.session.pending_items():
            self.dismiss("spotcheck")
        else:
            self.notify("every calibration item already has a verdict")

    def action_back(self) -> None:
        self.dismiss("back")

    @on(DataTable.RowSelected, "#items")
    def _open_item(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        view = item_view_or_notice(self, self.session, str(key)) if key is not None else None
        if view is not None:
            host(self.app).open_screen("item_samples", view)
