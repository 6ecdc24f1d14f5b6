"""The Jury view of paper 003's study (issue 14 item 5): the methods' Kendall τ with significance marks, per-judge
predictor quality, the jury of a selected item next to every judge's score and the human score, and τ per split.

A method is marked ``*`` when the one-sided exact Wilcoxon test of jury-on-demand against it over the splits has
p < the study's ``claim_alpha`` (jury-on-demand is then significantly better than it). The chart draws the jury's
test τ per split next to the best other method's (highest mean τ: a static jury or a single judge).

Keys: ``Enter`` on an item shows its jury; ``j`` JSON, ``m`` Markdown, ``Escape`` back.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Header, Label, Static

from relgate_tui.engine.judging.studies import jury_caveats
from relgate_tui.tui.studies.base import StudyView
from relgate_tui.tui.studies.common import num, plain, safe
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.plots import Chart, Series, legend, xy

JURY_TEXT_FALLBACK = "tf-idf + truncated SVD (text-only fallback)"


def jury_document(study: Any, source: str, criterion: str, embeddings: str = JURY_TEXT_FALLBACK) -> dict[str, Any]:
    """The JSON document of ``relgate judge jury --json`` for ``study``."""
    from relgate_tui import __version__

    head = {"relgate_version": __version__, "scores_file": source, "criterion": criterion, "embeddings": embeddings}
    return head | study.to_json()


class JuryView(StudyView):
    """A :class:`~relgate_tui.core.jury.protocol.JuryStudy`. ``data`` (its ``JuryData``, optional) adds the scores
    of the judges that did not sit on an item's jury to the item detail."""

    KIND = "jury"
    CSS_PATH = "jury.tcss"
    HELP = ("Kendall τ of each method against the human scores on the test splits; * = jury-on-demand is "
            "significantly better (one-sided exact Wilcoxon over the splits). AUC: how well each judge's reliability "
            "predictor ranks its agreeing items. Select an item (Enter) to see why its jury sat.")
    HELP_TITLE = "Jury-on-demand"
    BINDINGS = [Binding("enter", "show_item", "Item's jury", id="jury.item", tooltip="Show the jury of the item")]

    def __init__(self, result: Any, title: str, *, data: Any = None, criterion: str = "",
                 embeddings: str = JURY_TEXT_FALLBACK, **kwargs: Any) -> None:
        super().__init__(result, title, **kwargs)
        self.data = data
        self.criterion = criterion
        self.embeddings = embeddings
        self.selected: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Label(id="jury-title")
        with Horizontal(id="jury-main"):
            with Vertical(id="jury-left"):
                yield DataTable(id="jury-methods", cursor_type="row", zebra_stripes=True)
                yield DataTable(id="jury-judges", cursor_type="row", zebra_stripes=True)
                yield Chart(id="jury-chart")
            with Vertical(id="jury-right"):
                yield DataTable(id="jury-items", cursor_type="row", zebra_stripes=True)
                yield Static(id="jury-detail")
        yield StockFooter()

    def on_mount(self) -> None:
        self.sub_title = "jury-on-demand (paper 003)"
        study = self.result
        verdict = ("claims an improvement over every baseline", "bold green") if study.claims_improvement else \
            ("does not claim an improvement", "bold yellow")
        self.query_one("#jury-title", Label).update(Text.assemble(
            ("Jury-on-demand", "bold"), " · ", safe(self.title_text, 80),
            f" · {study.n_items} items, {len(study.judges)} judges, {study.splits} splits (60/20/20, ",
            safe(study.split_words(), 60), ")\n", verdict,
            f" (* = jury significantly better by the corrected resampled t-test, p < {study.claim_alpha:g}; the "
            f"paper's Wilcoxon beside it) · K per split "
            f"{list(study.k_per_split)[:12]} · features: {', '.join(plain(g, 16) for g in study.feature_groups)}",
            *(part for w in study.warnings for part in ("\n", safe("warning: " + w, 200, "yellow"))),
            *((f"\ncaveat: {line}", "bold yellow") for line in jury_caveats(study))))
        self._fill_methods()
        self._fill_judges()
        self._fill_items()
        self._draw_chart()
        self.query_one("#jury-detail", Static).update(Text("Enter on an item shows its jury.", style="dim"))
        self.query_one("#jury-items", DataTable).focus()

    # ---------------------------------------------------------------------------------------------- tables
    def _fill_methods(self) -> None:
        study = self.result
        table = self.query_one("#jury-methods", DataTable)
        table.add_column("method", key="method")
        table.add_column("Kendall τ", key="tau")
        table.add_column("p corr. (jury >)", key="p")
        table.add_column("p Wilcoxon", key="pw")
        table.add_column("paired δ", key="delta")
        comp = {c.baseline: c for c in study.comparisons}
        for name, m in sorted(study.methods.items(), key=lambda kv: -kv[1].tau_mean):
            c = comp.get(name)
            label = safe(name, 34, "bold" if name == "jury" else "")
            if c is None:
                p_cell, w_cell, d_cell = Text("—", style="dim"), Text("—", style="dim"), Text("—", style="dim")
            else:
                sig = c.p_corrected < study.claim_alpha
                p_cell = Text(num(c.p_corrected, 3) + (" *" if sig else ""), style="bold green" if sig else "")
                w_cell = Text(num(c.p_value, 3), style="dim")
                d_cell = Text(num(c.cliffs_delta, 2, signed=True))
            table.add_row(label, f"{num(m.tau_mean, 3)} ± {num(m.tau_sd, 3)}", p_cell, w_cell, d_cell, key=name)

    def _fill_judges(self) -> None:
        study = self.result
        table = self.query_one("#jury-judges", DataTable)
        for key, label in (("judge", "judge"), ("auc", "predictor AUC"), ("tol", "tolerance"), ("tau", "τ alone")):
            table.add_column(label, key=key)
        tol = np.array(study.tolerance_per_split, dtype=float) if study.tolerance_per_split else None
        for i, j in enumerate(study.judges):
            auc = study.auc_per_judge.get(j)
            m = study.methods.get(f"judge:{j}")
            table.add_row(safe(j, 30), num(auc, 3),
                          num(float(np.median(tol[:, i])), 2) if tol is not None and tol.ndim == 2 else "—",
                          num(m.tau_mean, 3) if m is not None else "—", key=f"judge{i}")

    def _fill_items(self) -> None:
        table = self.query_one("#jury-items", DataTable)
        for key, label in (("id", "item (split 1 test)"), ("human", "human"), ("score", "jury ŷ"), ("k", "K")):
            table.add_column(label, key=key)
        for n, item in enumerate(self.result.example_items):
            table.add_row(safe(item.get("id", ""), 30), num(item.get("human"), 2), num(item.get("score"), 3),
                          str(len(item.get("jury", ()))), key=str(n))

    @on(DataTable.RowSelected, "#jury-items")
    def _item_selected(self, event: DataTable.RowSelected) -> None:
        self.show_item(int(str(event.row_key.value)))

    def action_show_item(self) -> None:
        table = self.query_one("#jury-items", DataTable)
        if table.row_count:
            self.show_item(table.cursor_row)

    def show_item(self, n: int) -> None:
        """Show example item ``n``: its jury members with predicted reliability and weight, each judge's score."""
        item = self.result.example_items[n]
        self.selected = item
        text = Text.assemble(("item ", "bold"), safe(item.get("id", ""), 60, "bold"),
                             f" · human {num(item.get('human'), 2)} · jury ŷ {num(item.get('score'), 3)} (0–1)\n")
        text.append(f"{'judge':<19}{'reliab.':>8}{'weight':>8}{'score':>7}\n", style="dim")
        members = set()
        for m in item.get("jury", ()):
            members.add(m.get("judge"))
            text.append_text(safe(m.get("judge", ""), 18, "bold"))
            text.append(" " * max(1, 19 - len(plain(m.get("judge", ""), 18))))
            text.append(f"{num(m.get('reliability'), 3):>8}{num(m.get('weight'), 3):>8}{num(m.get('score'), 1):>7}\n")
        for judge, score in self._other_scores(item, members):
            text.append_text(safe(judge, 18, "dim"))
            text.append(" " * max(1, 19 - len(plain(judge, 18))))
            text.append(f"{'not on jury':>16}{num(score, 1):>7}\n", style="dim")
        missing = item.get("not_scored") or []
        if missing:
            text.append("no score from: " + ", ".join(plain(j, 25) for j in missing), style="yellow")
        self.query_one("#jury-detail", Static).update(text)

    def _other_scores(self, item: dict[str, Any], members: set[Any]) -> list[tuple[str, float]]:
        data = self.data
        if data is None or item.get("id") not in data.ids:
            return []
        row = data.ids.index(item["id"])
        return [(j, float(data.scores[row, c])) for c, j in enumerate(data.judges)
                if j not in members and math.isfinite(float(data.scores[row, c]))]

    # ---------------------------------------------------------------------------------------------- chart
    def best_baseline(self) -> str | None:
        """The non-jury method with the highest mean τ."""
        others = [(m.tau_mean, name) for name, m in self.result.methods.items() if name != "jury"]
        return max(others)[1] if others else None

    def _series(self) -> list[Series]:
        """τ per split of the jury and of the best baseline (empty without a jury result)."""
        methods = self.result.methods
        jury = methods.get("jury")
        if jury is None:
            return []
        xs = [float(i + 1) for i in range(len(jury.tau_per_split))]
        series = [Series(xs, list(jury.tau_per_split), marker="●", color="green", label="jury", line=True)]
        best = self.best_baseline()
        if best is not None:
            series.append(Series(xs, list(methods[best].tau_per_split), marker="▲", color="magenta",
                                 label=plain(best, 30), line=True))
        return series

    def _draw_chart(self) -> None:
        series = self._series()

        def draw(plt: Any, width: int, height: int) -> str | None:
            if not series:
                return "no jury result"
            xy(plt, series, x_label="split", title="test Kendall τ per split")
            return None

        self.query_one("#jury-chart", Chart).set_draw(draw, caption=(lambda w: legend(series)) if series else None)

    # ---------------------------------------------------------------------------------------------- exports
    def document(self) -> dict[str, Any]:
        return jury_document(self.result, self.source, self.criterion, self.embeddings)

    def markdown(self) -> str:
        return str(self.result.to_markdown())
