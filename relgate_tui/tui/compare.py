"""Compare runs side by side (reliability with bounds, M*, coverage, calls) at one α, offline.

Each run is opened read-only through ``Session.open`` (no network) and its results are recomputed at the shared α;
``+`` / ``-`` change α for all of them at once. With exactly two runs the paired gate of ``relgate compare`` is shown
under the table (the second run is B, the first A; ``m`` cycles the margin) with the per-item diff: the items B lost
and won. Dismisses with None.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Header, Label

from relgate_tui.core.certification.gate import GateDecision
from relgate_tui.core.text import one_line
from relgate_tui.tui.results import ALPHA_MAX, ALPHA_MIN, ALPHA_STEP, fmt_m_star, fmt_prop
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.safetext import safe_line

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.paired_runs import PairedView
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.engine.certification.views import ResultsView


_WHOLE = ("model", "task", "run")


def _whole(text: str, style: str = "") -> Text:
    """A name shown whole: one line of text (controls stripped, at most 200 characters) folded to the column."""
    return Text(one_line(str(text), 200), style=style, overflow="fold")


class CompareScreen(Screen[None]):
    CSS_PATH = "compare.tcss"
    BINDINGS = [
        Binding("plus,equals_sign", "alpha(1)", "α+", key_display="+", id="compare.alpha_up",
                tooltip="Increase α by 0.01 for every run"),
        Binding("minus,underscore", "alpha(-1)", "α−", key_display="-", id="compare.alpha_down",
                tooltip="Decrease α by 0.01 for every run"),
        Binding("m", "margin", "Margin", id="compare.margin",
                tooltip="Cycle the paired gate's non-inferiority margin (two runs)"),
        Binding("t", "match", "Pair by text", id="compare.match",
                tooltip="Pair the two runs' items by question text instead of by id / document hash"),
        Binding("escape", "back", "Back", id="compare.back", tooltip="Back to the runs"),
    ]
    MARGINS = (0.0, 0.01, 0.02, 0.05, 0.10)
    HELP = "Every run recomputed at the same α. Runs are read from disk only."
    HELP_TITLE = "Compare runs"

    def __init__(self, paths: list[Path], *, alpha: float = 0.10, gate: float | None = None) -> None:
        super().__init__()
        self.paths = [Path(p) for p in paths]
        self.alpha = alpha
        self.gate = gate
        self.sessions: list[Session] = []
        self.errors: list[str] = []
        self.margin = 0.05
        self.paired: PairedView | None = None
        self.match = "auto"  # "question": pair by question text (t)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Label("", id="compare-title")
        yield DataTable(id="compare", cursor_type="row", zebra_stripes=True)
        yield Label("", id="compare-paired")
        yield DataTable(id="compare-diff", cursor_type="row", zebra_stripes=True)
        yield StockFooter()

    def on_mount(self) -> None:
        # opening runs reads every sample (seconds for big runs): say so first, open after that is on screen
        # (issue 31 item 16)
        self.sub_title = "compare runs"
        self.query_one("#compare-title", Label).update(
            Text(f"Opening {len(self.paths)} run{'s' if len(self.paths) != 1 else ''} … (reading their samples)",
                 style="bold yellow"))
        self.call_after_refresh(self._open_runs)

    def _open_runs(self) -> None:
        from relgate_tui.engine.certification.session import Session

        cache_dir = None
        services = getattr(self.app, "services", None)
        if services is not None:
            cache_dir = services.resolved_cache_dir()
        from relgate_tui.tui.demo_endpoint import SIMULATED_MODELS

        for p in self.paths:
            try:
                self.sessions.append(Session.open(p, cache_dir=cache_dir, simulated_models=SIMULATED_MODELS))
            except ValueError as exc:
                self.errors.append(str(exc))
        for err in self.errors:
            self.notify(err, title="Run not compared", severity="error")
        self.render_table()
        self.query_one("#compare", DataTable).focus()

    def on_unmount(self) -> None:
        for s in self.sessions:
            s.close()

    def render_table(self) -> None:
        table = self.query_one("#compare", DataTable)
        table.clear(columns=True)
        table.add_column("", key="metric")
        settings = getattr(self.app, "settings", None)
        views: list[ResultsView] = []
        # one column per run, sized so that every run is on screen from 80 columns (issue 24 §4)
        width = max(12, (self.app.size.width - 26 - 3 * len(self.sessions)) // max(1, len(self.sessions)))
        for i, s in enumerate(self.sessions):
            # "run A", "run B" …: the paired gate's names; the rows below say which model and task (a title cut to
            # the column said neither: issue 31 item 17)
            table.add_column(Text(f"run {chr(65 + i) if i < 26 else i + 1}", style="bold"), key=f"run{i}", width=width)
            # each run against its own gate, as Runs, Results and `relgate report` show it (issue 24 §5, 37 §3)
            own = s.gate
            gate, basis = own.threshold, own.gate_on
            if self.gate is not None:  # an explicit gate for every run
                gate, basis = self.gate, ("level" if getattr(settings, "gate_on", "") == "level" else "bound")
            views.append(s.results(self.alpha, gate=gate, gate_on=basis, confidence=own.confidence))
        best = max((v.result.reliability_level for v in views if v.result.reliability_level is not None),
                   default=None)

        def level(v: ResultsView) -> Text:
            r = v.result
            style = "bold green" if best is not None and r.reliability_level == best and len(views) > 1 else "bold"
            return Text("—" if r.reliability_level is None else f"{r.reliability_level:.3f}", style=style)

        rows: list[tuple[str, object]] = [
            ("model", lambda v, s: _whole(s.model)),  # untrusted names: plain Text, never markup
            ("task", lambda v, s: _whole(s.task_name)),
            ("endpoint", lambda v, s: safe_line(s.endpoint_label, overflow="ellipsis")),
            ("reliability 1−α*", lambda v, s: level(v)),
            ("lower bound", lambda v, s: "—" if v.result.reliability_lower_bound is None
             else f"{v.result.reliability_lower_bound:.3f}"),
            ("verified: top right", lambda v, s: f"{v.result.reliability_successes} of {v.result.reliability_n}"),
            ("calibration n (skipped)", lambda v, s: f"{v.result.n} ({v.result.n_skipped})"),
            (f"M* at α = {self.alpha:.2f}", lambda v, s: fmt_m_star(v.result.m_star)),
            ("avg set size", lambda v, s: "—" if math.isnan(v.result.average_set_size)
             else f"{v.result.average_set_size:.2f}"),
            ("coverage", lambda v, s: fmt_prop(v.result.coverage)),
            ("conditional coverage", lambda v, s: fmt_prop(v.result.conditional_coverage)),
            ("capability gap", lambda v, s: fmt_prop(v.result.capability_gap)),
            ("mode accuracy", lambda v, s: fmt_prop(v.result.mode_accuracy)),
            ("samples used / budget", lambda v, s: f"{v.result.samples_used} / {v.result.samples_budget}"),
            ("calls saved", lambda v, s: f"{v.result.calls_saved:.1%}"),
            ("last pass: calls m/c/f", lambda v, s: f"{v.calls_made} / {v.calls_cached} / {v.calls_failed}"),
            ("gate", lambda v, s: _gate_cell(v.result.gate_decision)),
            ("K_max · stopping", lambda v, s: f"{s.k_max} · {s.stopping}"),
            ("run", lambda v, s: _whole(s.run_id, style="dim")),
        ]
        for name, get in rows:  # cells of untrusted text are cut to the column, never wrapped — but the model,
            # the task and the run id, which name the run, are shown whole over the lines they need (issue 31 item 17)
            table.add_row(Text(name, style="bold"),
                          *(get(v, s) for v, s in zip(views, self.sessions, strict=True)),  # type: ignore[operator]
                          key=name, height=None if name in _WHOLE else 1)
        self.query_one("#compare-title", Label).update(
            f"[b]{len(self.sessions)}[/] runs at [b]α = {self.alpha:.2f}[/] (+/− to change)"
        )
        self.render_paired()

    def render_paired(self) -> None:
        """The paired gate (B = second run vs A = first) and the items B lost and won; hidden unless two runs."""
        from relgate_tui.engine.certification.paired_runs import paired_view, prompt_hash
        from relgate_tui.engine.certification.result import RunResult
        from relgate_tui.errors import DataError

        label = self.query_one("#compare-paired", Label)
        diff = self.query_one("#compare-diff", DataTable)
        diff.clear(columns=True)
        two = len(self.sessions) == 2
        label.display = diff.display = two
        if not two:
            self.paired = None
            return
        docs = [RunResult.from_json(s.document(self.alpha)) for s in self.sessions]
        items = [s.prepared.items for s in self.sessions]
        questions = tuple({it.id: prompt_hash(it) for it in its} for its in items)
        texts = tuple({it.id: it.question for it in its} for its in items)
        refs = tuple({it.id: it.answers for it in its} for its in items)
        try:
            p = self.paired = paired_view(docs[0], docs[1], margin=self.margin, match=self.match,
                                          questions=(questions[0], questions[1]), question_texts=(texts[0], texts[1]),
                                          references=(refs[0], refs[1]))
        except DataError as exc:  # not the same questions: no paired gate, one line saying why
            self.paired = None
            diff.display = False
            label.update(safe_line(f"No paired gate: {exc}", style="bold yellow"))
            return
        if p.no_pairs is not None:  # say why, with both id spaces and the offer to pair by question text
            reason = p.no_pairs.replace("--match question", "press t")
            label.update(Text.assemble(("Paired gate: ", "bold"), ("the two runs ", ""), (one_line(reason), "yellow")))
            return
        verdict = {"not_worse": ("B not worse", "bold green"), "worse": ("B worse", "bold red"),
                   "undecided": ("undecided", "bold yellow")}[p.decision]
        line = Text.assemble(
            ("Paired gate ", "bold"), (f"(margin {self.margin:g}, m to change): ", "dim"), verdict,
            f" · {p.n} paired items{' (by question text)' if p.matched_by == 'question' else ''} · B lost {p.b_lost}, "
            f"won {p.b_won} · accuracy B − A ",
            "—" if p.estimate is None else f"{p.estimate:+.3f} [{p.lower:+.3f}, {p.upper:+.3f}]")
        if p.decision == "undecided":
            line.append(f" · {p.more_message or 'more items would not decide'}")
        for note in p.notes:  # the same run twice; the same items under different prompts (issue 31 item 3)
            line.append(f"\nnote: {note}", style="dim")
        label.update(line)
        diff.add_column("item", key="item")
        diff.add_column("B", key="change")
        diff.add_column(Text("A's top answer", overflow="ellipsis"), key="a")
        diff.add_column(Text("B's top answer", overflow="ellipsis"), key="b")
        for c in p.changes:
            diff.add_row(safe_line(c.item_id), Text(c.change, style="red" if c.change == "lost" else "green"),
                         safe_line(c.top_a, overflow="ellipsis"), safe_line(c.top_b, overflow="ellipsis"),
                         key=f"{c.change}:{c.item_id}")

    def action_match(self) -> None:
        self.match = "auto" if self.match == "question" else "question"
        self.render_paired()

    def action_margin(self) -> None:
        i = self.MARGINS.index(self.margin) if self.margin in self.MARGINS else -1
        self.margin = self.MARGINS[(i + 1) % len(self.MARGINS)]
        self.render_paired()

    def action_alpha(self, direction: int) -> None:
        new = round(min(ALPHA_MAX, max(ALPHA_MIN, self.alpha + direction * ALPHA_STEP)), 2)
        if new != self.alpha:
            self.alpha = new
            self.render_table()

    def action_back(self) -> None:
        self.dismiss(None)


def _gate_cell(d: GateDecision | None) -> Text:
    """A run's gate as the one gate rule decided it (:func:`relgate_tui.core.certification.gate.decide_gate`)."""
    if d is None:
        return Text("no gate", style="dim")
    if d.passed is None:
        return Text("undecided", style="yellow")
    return Text("PASS" if d.passed else "FAIL", style="bold green" if d.passed else "bold red")
