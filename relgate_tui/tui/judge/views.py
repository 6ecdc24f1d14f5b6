"""The results part of the judge audit screen: one judge × variant of an :class:`AuditResult` shown as it is — cycle
statistics (mean ρ, the cycle share, the random baseline 0.25; paper 000 Table 1), position consistency (with the
``position_only`` flag of a judge that follows the presentation order), the ranking methods side by side with their mean Kendall τ-b against the human ranking,
the inputs sorted by ρ, and, when direct scores were asked, the Likert conformal table with a width-vs-error chart.
Enter (or ``v``) on an input opens the :class:`CycleViewerModal`: each cyclic triple with the verdicts behind each
of its edges, per presentation order.

Nothing is computed here: every number is read from the typed result (``engine.judging.results``,
``engine.judging.pairwise``, ``engine.judging.direct``), never from its JSON document.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from relgate_tui.core.jsonsafe import finite_or_none
from relgate_tui.core.judge import verdicts_by_order
from relgate_tui.core.text import counted, one_line
from relgate_tui.engine.judging.direct import DirectResult
from relgate_tui.engine.judging.pairwise import PairwiseInput, PairwiseResult
from relgate_tui.engine.judging.results import AuditResult, StudyCell, unparseable_line
from relgate_tui.tui.widgets.cycles import edge_verdicts
from relgate_tui.tui.widgets.plots import Chart, Series, legend, xy
from relgate_tui.tui.widgets.safetext import safe_line

INPUT_COLUMNS = ("id", "n", "rho", "cycles", "cost", "tau", "top")
RANKING_COLUMNS = ("method", "tau", "n")
LIKERT_COLUMNS = ("alpha", "target", "coverage", "width", "spearman", "q")
METHOD_NAMES = {
    "win_rate": "win rate",
    "bradley_terry": "Bradley–Terry",
    "schulze": "Schulze",
    "copeland": "Copeland",
    "mfas_exact": "MFAS exact",
    "mfas_copeland": "MFAS Copeland",
}


def fmt(x: float | None, spec: str = ".3f") -> str:
    """A number of the result (None, NaN or ±∞ = undefined, shown as —)."""
    x = finite_or_none(x)
    return "—" if x is None else format(x, spec)


# ------------------------------------------------------------------------------------------------ summary texts
def heading(result: AuditResult, cell: StudyCell, endpoint_label: str, study: str | None = None) -> Text:
    """What was audited (the endpoint by its label: a URL's port may change from one start to the next); ``study``
    names the judge × variant shown when the audit has several."""
    sizes = sorted(set(result.candidates_per_input))
    t = Text()
    t.append(one_line(str(study or result.judges[0].get("model"))), style="bold")
    t.append(f" judging {result.data} / ")
    t.append(one_line(str(result.criterion)), style="bold")
    t.append(f" · {result.protocol}, k = {result.reps} · {result.n_inputs} inputs × "
             f"{'/'.join(map(str, sizes))} candidates · α = {result.alpha:.2f} · seed {result.seed}\n")
    t.append(one_line(endpoint_label), style="dim")
    c = result.total_calls
    t.append(f"  ·  calls made {c['made']:,}, cached {c['cached']:,}, ", style="dim")
    t.append(f"failed {c['failed']}", style="bold red" if c["failed"] else "dim")
    share = unparseable_line(cell)  # per judge × variant: garbage is counted, never scored
    if share:
        t.append("\n" + share, style="bold yellow")
    return t


def cycle_stats(pw: PairwiseResult) -> Text:
    c = pw.transitivity
    t = Text()
    t.append("Preference cycles", style="bold")
    t.append(f" ({c.n_inputs} inputs" + (f", k = {pw.k})\n" if pw.k else ")\n"))
    if pw.n_verdicts and pw.n_invalid == pw.n_verdicts:
        t.append("no valid verdicts — ", style="bold yellow")
        t.append(f"all {pw.n_verdicts:,} unparseable: no cycles, no τ", style="yellow")
        return t
    baseline = c.random_baseline
    mean_rho = finite_or_none(c.mean_rho)
    for name, value in (("mean ρ", fmt(mean_rho)),
                        ("random baseline", fmt(baseline, ".3f") if baseline is not None else ""),
                        ("cycle share", fmt(c.cycle_share, ".0%")),
                        ("max ρ", fmt(c.max_rho)), ("median ρ", fmt(c.median_rho))):
        if not value:
            continue
        t.append(f"{name:<20}", style="dim")
        t.append(value + "\n", style="bold red" if name == "mean ρ" and (mean_rho or 0) > 0
                 else "dim" if name == "random baseline" else "bold")
    t.append(f"{'verdicts (invalid)':<20}", style="dim")
    t.append(f"{pw.n_verdicts:,} ({pw.n_invalid:,})")
    if c.n_unresolved_pairs:
        t.append(f"\n{'unresolved pairs':<20}", style="dim")
        t.append(f"{c.n_unresolved_pairs:,}", style="yellow")
    return t


FLAG_TEXT = {
    "position_only": ("POSITION-ONLY judge: it picks by slot, not content", "bold red"),
    "position_biased": ("position-biased", "bold yellow"),
    "no_bias_detected": ("no position bias detected", "green"),
    "insufficient": ("too few verdicts to test", "dim"),
}


def bias_stats(pw: PairwiseResult) -> Text:
    pc = pw.position
    b = pc.bias
    t = Text()
    t.append("Position consistency\n", style="bold")
    label, style = FLAG_TEXT.get(pc.flag, (str(pc.flag), "bold"))
    t.append(label + "\n", style=style)
    t.append(f"{'first shown wins':<18}", style="dim")
    t.append(fmt(b.first_share, ".1%"), style="bold")
    t.append(f" of {b.n_valid:,}\n")
    t.append(f"{'p (no bias)':<18}", style="dim")
    t.append(fmt(b.first_share_pvalue, ".3g") + "\n")
    t.append(f"{'flip share':<18}", style="dim")
    t.append(fmt(b.flip_share, ".1%"), style="bold")
    t.append(f"  {b.n_pairs_flipped:,} of {b.n_pairs_decisive_both_orders:,} pairs\n")
    t.append("(pairs whose winner changes with the order)", style="dim")
    return t


def ranking_rows(pw: PairwiseResult) -> list[tuple[str, str, str]]:
    return [(METHOD_NAMES.get(m, m), fmt(tau, "+.3f"), str(pw.n_tau_inputs[m]))
            for m, tau in pw.mean_kendall_tau.items()]


def input_cells(inp: PairwiseInput) -> tuple:
    mfas = inp.rankings.get("mfas_exact")
    order = list(mfas.order) if mfas is not None else []
    rho = finite_or_none(inp.transitivity.rho)
    return (
        safe_line(inp.id),
        str(len(inp.candidates)),
        Text(fmt(rho), style="bold red" if (rho or 0) > 0 else "dim"),
        str(inp.transitivity.n_cycles),
        str(inp.mfas.cost),
        fmt(inp.kendall_tau.get("mfas_exact") if mfas is not None else None, "+.2f"),
        safe_line(order[0] if order else "—", overflow="ellipsis"),
    )


def likert_rows(direct: DirectResult) -> list[tuple[str, ...]]:
    return [(f"{r.alpha:.2f}", f"{r.target_coverage:.2f}", fmt(r.coverage), fmt(r.mean_width, ".2f"),
             fmt(r.spearman_width_error, "+.3f"),
             "∞" if finite_or_none(r.mean_q_hat) is None else f"{r.mean_q_hat:.2f}")
            for r in direct.table]


def width_error_series(direct: DirectResult) -> list[Series]:
    """Set width against the judge's error |ŷ − y*| on the test half of one calibration/test split, with the mean
    width at each error value; empty when there are none."""
    we = direct.width_vs_error
    if we is None or not we.errors:
        return []
    q = finite_or_none(we.q_hat)
    q_hat = "∞" if q is None else format(q, ".2f")
    points = Series([float(e) for e in we.errors], [float(w) for w in we.widths], marker="•", color="cyan",
                    label=f"test items of split 1, q̂={q_hat}")
    means = we.mean_width_by_error()
    return [points, Series([m[0] for m in means], [m[1] for m in means], marker="◆", color="orange", label="mean",
                           line=True)]


def draw_width_error(chart: Chart, direct: DirectResult) -> None:
    """Fill ``chart`` with :func:`width_error_series` (a one-line notice when there are no points)."""
    series = width_error_series(direct)

    def draw(plt: Any, width: int, height: int) -> str | None:
        if not series:
            return "width vs error: too few scored candidates"
        x_max = max(1.0, max(series[0].xs))
        xy(plt, series, x_range=(0.0, x_max), y_range=(0.0, 5.0), x_label="judge error |ŷ − y*|", title="set width")
        return None

    chart.set_draw(draw, caption=(lambda w: legend(series)) if series else None)


# ------------------------------------------------------------------------------------------------ results view
class AuditResultsView(Vertical):
    """Every figure of one judge × variant of an audit; ``show(result, cell, endpoint_label, study)`` fills it."""

    def compose(self) -> ComposeResult:
        yield Static("", id="res-heading")
        with Horizontal(id="res-summary"):
            yield Static("", id="cycle-stats")
            yield Static("", id="bias-stats")
            yield DataTable(id="rankings", cursor_type="none", show_cursor=False)
        with Horizontal(id="res-body"):
            with Vertical(id="res-inputs"):
                yield Label("", id="inputs-title", classes="panel-title")
                yield DataTable(id="inputs", cursor_type="row", zebra_stripes=True)
            with Vertical(id="res-direct"):
                yield Label("Likert conformal sets (direct scores)", classes="panel-title")
                yield DataTable(id="likert", cursor_type="none", show_cursor=False)
                yield Static("", id="likert-note")
                yield Chart(id="width-error")

    def on_mount(self) -> None:
        for key, label, width in (("method", "ranking method", 14), ("tau", "mean τ-b", 8), ("n", "inputs", 6)):
            self.query_one("#rankings", DataTable).add_column(label, key=key, width=width)
        for key, label in zip(INPUT_COLUMNS, ("input", "cands", "ρ", "cycles", "MFAS cost", "τ-b", "top (MFAS)"), strict=True):
            self.query_one("#inputs", DataTable).add_column(label, key=key)
        for key, label in zip(LIKERT_COLUMNS, ("α", "target", "coverage", "width", "r_s(w,err)", "q̂"), strict=True):
            self.query_one("#likert", DataTable).add_column(label, key=key)

    def show(self, result: AuditResult, cell: StudyCell, endpoint_label: str, study: str | None = None) -> None:
        self.query_one("#res-heading", Static).update(heading(result, cell, endpoint_label, study))
        self._show_pairwise(cell.pairwise)
        self._show_direct(cell.direct, result.protocol)

    def _show_pairwise(self, pw: PairwiseResult | None) -> None:
        rankings = self.query_one("#rankings", DataTable)
        inputs = self.query_one("#inputs", DataTable)
        rankings.clear()
        inputs.clear()
        for w in (self.query_one("#res-summary"), self.query_one("#res-inputs")):
            w.display = pw is not None
        if pw is None:
            return
        self.query_one("#cycle-stats", Static).update(cycle_stats(pw))
        self.query_one("#bias-stats", Static).update(bias_stats(pw))
        for row in ranking_rows(pw):
            rankings.add_row(*row)
        for inp in pw.inputs:  # most cyclic first
            inputs.add_row(*input_cells(inp), key=inp.id)
        n_cyclic = sum(1 for i in pw.inputs if i.transitivity.n_cycles)
        tau = pw.mean_kendall_tau.get("mfas_exact")
        self.query_one("#inputs-title", Label).update(
            f"Inputs by ρ — {n_cyclic} of {len(pw.inputs)} with a cycle · mean τ-b (MFAS) {fmt(tau, '+.3f')} · "
            "Enter: cycle viewer")

    def _show_direct(self, direct: DirectResult | None, protocol: str) -> None:
        table = self.query_one("#likert", DataTable)
        table.clear()
        box = self.query_one("#res-direct")
        box.display = direct is not None
        if direct is None:
            return
        for row in likert_rows(direct):
            table.add_row(*row)
        table.display = bool(direct.table)
        protocol_used = "mean of k" if direct.likert_protocol == "mean" else "single"
        note = Text(f"{direct.n_scored} scored · ŷ = {protocol_used} score · 20 seeded 50/50 splits", style="dim")
        if direct.note:  # another scale than paper 000's 1–5: no sets, and why
            note = Text(one_line(str(direct.note), 300), style="yellow")
        elif not direct.table:
            note = Text("too few scored candidates with human scores for conformal sets (need 4)", style="yellow")
        self.query_one("#likert-note", Static).update(note)
        draw_width_error(self.query_one("#width-error", Chart), direct)
        self.set_class(protocol == "direct", "-direct-only")

    def input_at_cursor(self, pw: PairwiseResult) -> PairwiseInput | None:
        table = self.query_one("#inputs", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((i for i in pw.inputs if i.id == key), None)


# ------------------------------------------------------------------------------------------------ cycle viewer
def _verdicts_behind(pairs: list[dict[str, Any]], x: str, y: str) -> str:
    """x's wins – y's wins over both orders, then per order (x shown first / y shown first), then no-verdicts."""
    v = edge_verdicts(pairs, x, y)
    if v is None:
        return "no verdicts"
    (tx, ty), (xx, xy), (yx, yy) = v.total, v.x_first, v.y_first
    return f"{tx}–{ty}   {x} shown first {xx}–{xy}, {y} shown first {yx}–{yy}   no verdict {v.no_verdict}"


def cycle_text(inp: PairwiseInput) -> Text:
    n_cycles = inp.transitivity.n_cycles
    pairs = verdicts_by_order(inp.tournament, list(inp.verdicts))  # the verdicts behind each pair, per order
    t = Text()
    t.append(one_line(str(inp.id)), style="bold")
    t.append(f"   ρ = {fmt(inp.transitivity.rho)} · {counted(n_cycles, 'cyclic triple')} · "
             f"MFAS cost {inp.mfas.cost}\n",
             style="bold red" if n_cycles else "")
    human = dict(inp.human)
    for name, key in (("MFAS order", "mfas_exact"), ("win-rate order", "win_rate")):
        ranking = inp.rankings.get(key)
        order = list(ranking.order) if ranking is not None else []
        t.append(f"{name:<16}", style="dim")
        t.append(" > ".join(order) + "\n")
    if human:
        t.append(f"{'human scores':<16}", style="dim")
        t.append(", ".join(f"{c} {human[c]:.2f}" for c in sorted(human, key=lambda c: (-human[c], c))) + "\n")
    t.append("\nverdicts: x wins–y wins over both orders, then per presentation order\n", style="dim")
    for a, b, c in inp.transitivity.cycles:
        t.append(f"\n{a} → {b} → {c} → {a}\n", style="bold yellow")
        for x, y in ((a, b), (b, c), (c, a)):
            t.append(f"  {x} beats {y}: ", style="dim")
            t.append(_verdicts_behind(pairs, x, y) + "\n")
    if not inp.transitivity.cycles:
        t.append("\nno preference cycle among this input's candidates; its majority edges:\n", style="dim")
        for e in inp.tournament.edges:
            t.append(f"  {e.winner} beats {e.loser}: ", style="dim")
            t.append(_verdicts_behind(pairs, e.winner, e.loser) + "\n")
    return t


class CycleViewerModal(ModalScreen[None]):
    """One input's cyclic triples with the verdicts behind each edge. Escape / v / q closes it."""

    CSS_PATH = "views.tcss"
    BINDINGS = [
        Binding("escape,v,q", "close", "Close", id="cycles.close", tooltip="Back to the audit results"),
        Binding("question_mark,f1", "app.help", "Help", key_display="?", id="cycles.help", tooltip="Show every key"),
    ]
    HELP = ("Each directed 3-cycle of the majority tournament, and behind each of its edges the judge's verdicts: "
            "in total and split by which candidate was shown first (position bias shows up as a split that "
            "follows the order).")
    HELP_TITLE = "Cycle viewer"

    def __init__(self, inp: PairwiseInput) -> None:
        super().__init__()
        self.input = inp

    @property
    def triples(self) -> Sequence[Sequence[str]]:
        return self.input.transitivity.cycles

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="cycles-panel"):
            yield Label("Cycle viewer", classes="panel-title")
            yield Static(cycle_text(self.input), id="cycles-text")
            yield Label("Escape closes", classes="muted")

    def action_close(self) -> None:
        self.dismiss(None)
