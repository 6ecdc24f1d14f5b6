"""The IRT view of paper 002's study (issue 13 item 5): one column per judge, pass marks, the diagnosis sentences,
category response curves per prompt variant, and the score-level plot.

Curves. For a variant with used categories c_0 < … < c_{K−1}, discrimination α and thresholds β_1 … β_{K−1}, the
graded response model (paper 002, Eq. 1) gives P(Y ≥ c_k | θ) = 1 / (1 + exp(−α(θ − β_k))), and the category response
curve P(Y = c_k | θ) = P(Y ≥ c_k | θ) − P(Y ≥ c_{k+1} | θ) (with P(Y ≥ c_0) = 1 and P(Y ≥ c_K) = 0), drawn for
θ ∈ [−4, 4]. The score-level plot is the median θ̂ per human score, one line per judge plus the humans' own θ̂.

Keys: ``v`` next variant, ``g`` next judge (whose curves are drawn), ``j`` JSON, ``m`` Markdown, ``Escape`` back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Header, Label, Static

from relgate_tui.engine.judging.studies import irt_caveats
from relgate_tui.tui.studies.base import StudyView
from relgate_tui.tui.studies.common import num, plain, safe
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.plots import Chart, Series, legend, xy

PROMPT_ADVICE = "— fix the prompt (more detailed instructions), not the model"  # core/irt/metrics.phase1_diagnosis
COLORS = ("cyan", "magenta", "orange", "green", "red", "blue", "white")  # plotext colours, one per category / judge
MARKERS = ("●", "▲", "■", "◆", "★", "✚")
THETA = np.linspace(-4.0, 4.0, 81)


def category_curves(a: float, b: Sequence[float], theta: np.ndarray = THETA) -> np.ndarray:
    """P(Y = c_k | θ) for k = 0 … K−1 (rows) at each θ (columns), from discrimination ``a`` and the K−1 ordered
    thresholds ``b`` (Eq. 1); each column sums to 1."""
    ge = 1.0 / (1.0 + np.exp(-a * (theta[None, :] - np.asarray(b, dtype=float)[:, None])))
    upper = np.vstack([np.ones_like(theta), ge])
    lower = np.vstack([ge, np.zeros_like(theta)])
    return upper - lower


def _mark(ok: bool | None) -> Text:
    if ok is None:
        return Text("")
    return Text(" ✓", style="bold green") if ok else Text(" ✗", style="bold red")


class IRTView(StudyView):
    """Phase 1 / Phase 2 of every judge of an :class:`~relgate_tui.core.irt.study.IRTStudy`."""

    KIND = "irt"
    CSS_PATH = "irt.tcss"
    BINDINGS = [
        Binding("v", "variant(1)", "Variant", id="irt.variant", tooltip="Curves of the next prompt variant"),
        Binding("g", "judge(1)", "Judge", id="irt.judge", tooltip="Curves of the next judge"),
    ]
    HELP = ("Each column is one judge. Phase 1 passes when C_V ≤ 0.10 (prompt consistency) and ρ ≥ 0.70 (marginal "
            "reliability); Phase 2 compares the judge's θ range with the humans' (θ_ratio ≈ 1 is good) and D_W their "
            "distributions. The curves are P(Y = k | θ) of one judge under one prompt variant.")
    HELP_TITLE = "IRT diagnostics"

    def __init__(self, result: Any, title: str, *, audit: Any = None, **kwargs: Any) -> None:
        super().__init__(result, title, **kwargs)
        self.audit = audit  # an AuditScores when the study comes from a stored audit
        self.judge_index = 0
        self.variant_index = 0

    def compose(self) -> ComposeResult:
        yield Header()
        yield Label(id="irt-title")
        yield DataTable(id="irt-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="irt-diagnosis")
        with Horizontal(id="irt-plots"):
            yield Chart(id="irt-curves")
            yield Chart(id="irt-levels")
        yield StockFooter()

    def on_mount(self) -> None:
        self.sub_title = "IRT diagnostics (paper 002)"
        study = self.result
        title = Text.assemble(("IRT diagnostics", "bold"), " · ", safe(self.title_text, 100))
        if plain(study.criterion, 40) not in self.title_text:
            title.append_text(Text.assemble(" · criterion ", safe(study.criterion, 40, "bold")))
        title.append(f" · {len(study.judges)} judge{'s' if len(study.judges) != 1 else ''} · ✓/✗ = Phase 1 marks")
        self.query_one("#irt-title", Label).update(title)
        self._fill_table()
        self._fill_diagnosis()
        self._draw_curves()
        self._draw_levels()
        self.query_one("#irt-table", DataTable).focus()

    # ---------------------------------------------------------------------------------------------- the table
    def _fill_table(self) -> None:
        table = self.query_one("#irt-table", DataTable)
        judges = self.result.judges
        table.add_column("", key="metric")
        for i, j in enumerate(judges):
            table.add_column(safe(j.judge, 24), key=f"j{i}")

        def p1(j: Any) -> Text:
            label = {True: ("PASS", "bold green"), False: ("FAIL", "bold red"), None: ("—", "dim")}[j.phase1_pass]
            return Text(*label)

        def ratio(j: Any) -> Text:
            t = Text(num(j.theta_ratio))
            if j.phase2_label:
                t.append(f" {plain(j.phase2_label, 20)}", style="dim")
            return t

        def cv(j: Any) -> Text:
            return Text(num(j.c_v)) + _mark(None if j.c_v is None else j.c_v <= 0.10)

        def rho(j: Any) -> Text:
            return Text(num(j.rho)) + _mark(None if j.rho is None else j.rho >= 0.70)

        rows: list[tuple[str, Any]] = [
            ("samples", lambda j: str(len(j.ids))),
            ("C_V (≤ 0.10)", cv),
            ("ρ (≥ 0.70)", rho),
            ("Phase 1", p1),
            ("θ range judge / human", lambda j: f"{num(j.theta_range_llm)} / {num(j.theta_range_human)}"),
            ("θ_ratio (≈ 1)", ratio),
            ("D_W", lambda j: num(j.d_w)),
            ("monotone in human score", lambda j: {True: "yes", False: "no", None: "—"}[j.monotone]),
            ("converged", lambda j: Text("yes") if j.converged else Text("no", style="bold red")),
        ]
        variants = list(dict.fromkeys(v for j in judges for v in j.variants))
        for v in variants:
            rows.append((f"α {plain(v, 16)} (v̄)", lambda j, v=v: self._alpha(j, v)))
        if self.audit is not None and getattr(self.audit, "unparseable_by", None):
            for v in variants:  # garbage is counted per judge × variant, never scored (issue 24 §3)
                rows.append((f"unparseable {plain(v, 12)}", lambda j, v=v: self._unparseable(j, v)))
        small = bool(irt_caveats(self.result))  # a small n: the marks are indications (the caveat below says why)
        for name, get in rows:
            shown = "Phase 1 (indication)" if small and name == "Phase 1" else name
            table.add_row(Text(shown, style="bold"), *(get(j) for j in judges), key=name)

    def _unparseable(self, j: Any, variant: str) -> Text:
        bad, total = self.audit.unparseable_by.get((j.judge, variant), (0, 0))
        if not total:
            return Text("—", style="dim")
        return Text(f"{bad} of {total}", style="bold yellow" if bad else "")

    @staticmethod
    def _alpha(j: Any, variant: str) -> str:
        if variant not in j.fit.items:
            return "—"
        p = j.fit.items.index(variant)
        vbar = f" ({num(j.v_bar[p])})" if j.v_bar else ""
        return f"{num(j.fit.a[p])}{vbar}"

    def _phase1_sentence(self, j: Any, small: bool) -> str:
        """Phase 1's sentence; on a small sample the prompt-sensitivity advice gives way to what the caveat says (the
        C_V excess may be the sample's upward bias, not the prompt's)."""
        sentence = str(j.phase1_sentence)
        if small and PROMPT_ADVICE in sentence:
            sentence = sentence.replace(PROMPT_ADVICE, (
                f"— at n = {len(j.ids)} C_V is biased upward (the caveat above), so this may be the small sample: "
                "score more items before changing the prompt"))
        return sentence

    def _fill_diagnosis(self) -> None:
        text = Text()
        small = any(line.startswith("small sample") for line in irt_caveats(self.result))
        for line in irt_caveats(self.result):  # small samples say so (issue 24 §7), first: never cut off (issue 31 item 9)
            text.append(f"caveat: {line}\n", style="bold yellow")
        for k, j in enumerate(self.result.judges):
            if k:
                text.append("\n")
            text.append_text(safe(j.judge, 40, "bold"))
            text.append(": " + plain(self._phase1_sentence(j, small), 300))
            if j.phase2_sentence:
                text.append("; " + plain(j.phase2_sentence, 300))
            if j.reason:
                text.append(f" [{plain(j.reason, 200)}]", style="yellow")
        self.query_one("#irt-diagnosis", Static).update(text)

    # ---------------------------------------------------------------------------------------------- the plots
    def _current(self) -> tuple[Any, int] | None:
        judges = self.result.judges
        if not judges:
            return None
        j = judges[self.judge_index % len(judges)]
        if not j.fit.items:
            return None
        return j, self.variant_index % len(j.fit.items)

    def _draw_curves(self) -> None:
        plot = self.query_one("#irt-curves", Chart)
        cur = self._current()
        if cur is None:
            plot.set_draw(None)
            return
        j, p = cur
        curves = category_curves(j.fit.a[p], j.fit.b[p])
        series = [Series(THETA.tolist(), curves[k].tolist(), marker="braille", color=COLORS[k % len(COLORS)],
                         label=f"P(Y={c:g})", line=True) for k, c in enumerate(j.fit.categories[p])]
        title = (f"{plain(j.judge, 24)} · {plain(j.fit.items[p], 16)} · α {num(j.fit.a[p])}"
                 f"{'' if j.fit.converged else ' (not converged)'}")
        plot.set_draw(lambda plt, w, h: xy(plt, series, x_range=(-4.0, 4.0), y_range=(0.0, 1.0),
                                           x_label="θ (latent quality)", title=title),
                      caption=lambda w: legend(series))

    def _levels_series(self) -> list[Series]:
        """One line per judge (median θ̂ per human score) and the humans' own line."""
        series = []
        human = None
        for k, j in enumerate(self.result.judges):
            if j.curve_llm:
                series.append(Series([c[0] for c in j.curve_llm], [c[1] for c in j.curve_llm],
                                     marker=MARKERS[k % len(MARKERS)], color=COLORS[k % len(COLORS)],
                                     label=plain(j.judge, 20), line=True))
            if human is None and j.curve_human:
                human = j.curve_human
        if human is not None:
            series.append(Series([c[0] for c in human], [c[1] for c in human], marker="○", color="white",
                                 label="humans", line=True))
        return series

    def _draw_levels(self) -> None:
        series = self._levels_series()

        def draw(plt: Any, width: int, height: int) -> str | None:
            if not series:
                return "no score-level curve: the file has no human scores (Phase 2 needs them)"
            xy(plt, series, x_label="human score", title="median θ̂ per human score")
            return None

        self.query_one("#irt-levels", Chart).set_draw(draw, caption=(lambda w: legend(series)) if series else None)

    def action_variant(self, step: int) -> None:
        self.variant_index += step
        self._draw_curves()

    def action_judge(self, step: int) -> None:
        self.judge_index += step
        self.variant_index = 0
        self._draw_curves()

    @property
    def curve_key(self) -> tuple[str, str] | None:
        """(judge, variant) whose curves are drawn."""
        cur = self._current()
        return None if cur is None else (cur[0].judge, cur[0].fit.items[cur[1]])

    # ---------------------------------------------------------------------------------------------- exports
    def document(self) -> dict[str, Any]:
        from relgate_tui.engine.judging.studies import document

        return document(self.result, None if self.audit is not None else self.source, self.audit)

    def markdown(self) -> str:
        return str(self.result.to_markdown())
