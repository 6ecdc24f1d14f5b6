"""The judge certificate screen (issue 30 §4): may this judge grade instead of a person, and on which items.

Opened from Results → Verification judge (``t``, a run's verification judge and its labels) and from the judge audit
results (``t``, the stored audit's pairwise preferences against the human scores). It shows the verdict sentence;
agreement against coverage on the labelled items (observed, and its exact lower bound point by point) with the
target A and the certified threshold t̂ marked; accuracy, TPR and TNR with their lower bounds, κ, the base rate,
the corrected pass rate, consistency and warnings; and the planner's line. ``+`` / ``-`` move the target agreement
by 5 points and recompute — to explore only: choosing A after looking at the labels costs validity, so the screen
says so and ``s`` stores a certificate only at the A it was opened with (``relgate judge apply`` uses it).

A judge cascade (kind "cascade", ``ref``: its verdicts files in cascade order, cheapest first, joined by
``os.pathsep``) shows its sentence and, per judge, its threshold, the share it decides and its agreement with its
exact lower bound, then the pooled bound, the strong judges' calls avoided and the items left to people
(:func:`cascade_figures`); ``+`` / ``-`` and ``s`` work as for one judge. A cascade made from runs (kind "runs",
``ref``: their directories in cascade order joined by ``os.pathsep``) is opened from the Runs screen (mark the runs
with Space, cheapest first, then ``t``) and read with the reader of ``relgate judge certify --from-run``
(:func:`relgate_tui.engine.judging.cascade.verdicts_from_runs`); a refusal (fewer than two runs, a run without a
verification judge, runs whose judges did not judge the same answers) is the screen's one red line.

The figures beside the chart scroll (↑/↓, PgUp/PgDn, the mouse wheel) where they do not fit, as at 80×24.

The verdicts are read and the certificate computed in a thread worker, with the functions ``relgate judge certify``
uses (:mod:`relgate_tui.engine.judging.certificate`, :func:`relgate_tui.engine.judging.certificate_doc.compute`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Static
from textual.worker import Worker, WorkerState

from relgate_tui.core.text import one_line
from relgate_tui.engine.judging.certificate_doc import CertificateDoc
from relgate_tui.tui.widgets.footer import KeysFooter
from relgate_tui.tui.widgets.plots import Chart, Series, legend, xy

__all__ = ["CertificateScreen"]

_STYLE = {"PASS": "bold green", "FAIL": "bold red", "NOT DECIDABLE": "bold yellow"}
AFTER_LOOKING = ("the target A was chosen after looking at these labels: the guarantee holds for an A fixed in advance "
                 "(choosing it by looking can reach 10% error) — store it at the first A, or certify again on new labels "
                 "with the A you want")


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * float(x):.1f}%"


def figures(doc: CertificateDoc) -> Text:
    """The figures beside the chart (plain Text: ids, names and messages are untrusted), read from the type."""
    cert = doc.certificate
    sel = cert.selective
    t = Text()
    t.append("threshold t̂ ", style="bold")
    t.append("none — the judge may decide nothing\n" if sel.threshold is None
             else f"{sel.threshold:.4f} on the judge's confidence\n")
    t.append(f"decided {_pct(sel.coverage.value)} [{_pct(sel.coverage.lower)}, {_pct(sel.coverage.upper)}] of "
             f"{cert.n_items} items; agreement on them ≥ {_pct(sel.agreement_lower)}\n")
    t.append(f"  where humans said yes {_pct(cert.decided_yes.value)} ≥ {_pct(cert.decided_yes.lower)} "
             f"(n = {cert.decided_yes.n}), no {_pct(cert.decided_no.value)} ≥ {_pct(cert.decided_no.lower)} "
             f"(n = {cert.decided_no.n})\n\n")
    unit = " (one per input)" if cert.unit == "group" else ""
    t.append(f"{cert.n_labelled} labelled items{unit} ({_pct(sel.confidence)} lower bounds)\n", style="dim")
    for b, name in ((cert.accuracy, "accuracy"), (cert.tpr, "TPR"), (cert.tnr, "TNR")):
        t.append(f"{name:<9}", style="bold")
        t.append(f"{_pct(b.value):>7}  ≥ {_pct(b.lower)}  (n = {b.n})\n")
    t.append(f"base rate: humans say yes to {_pct(cert.base_rate.value)}\n")
    if cert.kappa is not None:
        t.append(f"Cohen's κ {cert.kappa:.2f}" + (f" [{cert.kappa_lower:.2f}, {cert.kappa_upper:.2f}]\n"
                                                  if cert.kappa_lower is not None and cert.kappa_upper is not None
                                                  else "\n"))
    rg = cert.corrected_pass_rate
    corrected = "cannot be corrected" if rg.value is None else _pct(rg.value)
    t.append(f"pass rate {_pct(rg.apparent)} by the judge, corrected {corrected} "
             f"[{_pct(rg.lower)}, {_pct(rg.upper)}]\n")
    if cert.consistency is not None:
        c = cert.consistency
        t.append(f"consistency: repeats agree on {_pct(c.share.value)} of {c.n_items} items\n")
    if doc.pairwise:
        pw = doc.pairwise
        t.append(f"position flips {_pct(pw.get('position_flip_rate'))} · cycle share {_pct(pw.get('cycle_share'))}\n")
    for w in (*cert.warnings, *doc.notes):
        t.append(one_line(str(w), 300) + "\n", style="bold yellow")
    if cert.next_step:
        t.append("next: " + one_line(cert.next_step, 300) + "\n", style="dim")
    return t


def cascade_figures(doc: Mapping[str, Any]) -> Text:
    """A cascade certificate's figures (:func:`relgate_tui.engine.judging.cascade.compute_cascade`'s document): one
    line per judge, then the pooled figures and the cost saved (plain Text)."""
    sel, calls = doc["selective"], doc["calls_saved"]
    t = Text()
    for k, s in enumerate(doc["cascade"], start=1):
        t.append(f"judge {k} ", style="bold")
        t.append(one_line(str(s["judge"]), 60) + "\n")
        t.append("  decides nothing\n" if s["threshold"] is None else
                 f"  threshold {s['threshold']:.4f} · decides {_pct(s['decided_share'])} ({s['decided']} of "
                 f"{s['reached']} asked) · agreement {_pct(s['agreement'])} ≥ {_pct(s['agreement_lower'])}\n")
    t.append(f"\ndecided {_pct(sel['coverage'])} [{_pct(sel['coverage_lower'])}, {_pct(sel['coverage_upper'])}] of "
             f"{doc['n_items']} items; pooled agreement on them ≥ {_pct(sel['agreement_lower'])}\n")
    if sel["route"] == "none":  # nothing certified: no judge is used, so there is no saving to claim
        t.append("no judge is certified: no judge's calls are saved\n")
    else:
        for c in calls["judges"]:
            t.append(f"calls of {one_line(str(c['judge']), 60)} avoided: {c['avoided']} "
                     f"({_pct(c['avoided_share'])})\n")
    t.append(f"left to people: {calls['people']} items ({calls['people_unlabelled']} not labelled yet)\n")
    for w in (*doc.get("warnings", ()), *doc.get("notes", ())):
        t.append(one_line(str(w), 300) + "\n", style="bold yellow")
    return t


def chart_series(doc: CertificateDoc) -> list[Series]:
    """Agreement and its lower bound against coverage, the target A, and t̂ (a vertical line at its coverage)."""
    curve, cert = doc.curve, doc.certificate
    sel = cert.selective
    a = sel.agreement
    series = [Series(list(curve.coverage), list(curve.agreement), marker="braille", color="cyan", label="agreement",
                     line=True),
              Series(list(curve.coverage), list(curve.lower), marker="braille", color="orange",
                     label=f"{sel.confidence:.0%} lower bound", line=True),
              Series([0.0, 1.0], [a, a], marker="braille", color="gray", label=f"target {a:.0%}", line=True)]
    if sel.threshold is not None and cert.n_labelled:
        x = sel.n_decided_labelled / cert.n_labelled
        series.append(Series([x, x], [0.5, 1.0], marker="braille", color="red",
                             label=f"t̂ = {sel.threshold:.3f}", line=True))
    return series


class CertificateScreen(Screen[None]):
    """One judge's certificate (module docstring). ``kind``: "run", "audit" (``ref``: its id or directory) or
    "verdicts" (``ref``: a verdicts file, as ``relgate judge certify --verdicts``); a cascade's: "cascade" (``ref``:
    verdicts files) or "runs" (``ref``: runs, as ``--from-run``), joined by ``os.pathsep``, cheapest first."""

    BINDINGS = [
        Binding("plus,equals_sign", "target(1)", "A+", key_display="+", id="certificate.up",
                tooltip="Raise the target agreement by 5 points"),
        Binding("minus,underscore", "target(-1)", "A−", key_display="-", id="certificate.down",
                tooltip="Lower the target agreement by 5 points"),
        Binding("s", "store", "Store", id="certificate.store",
                tooltip="Store this certificate in the data dir (relgate judge apply uses it)"),
        Binding("escape", "back", "Back", id="certificate.back", tooltip="Back"),
    ]
    DEFAULT_CSS = """
    CertificateScreen #cert-sentence { padding: 1 2 0 2; height: auto; }
    CertificateScreen #cert-body { height: 1fr; padding: 0 1; }
    CertificateScreen #cert-chart { width: 3fr; height: 1fr; }
    CertificateScreen #cert-figures-box { width: 2fr; height: 1fr; scrollbar-size-vertical: 1; }
    CertificateScreen #cert-figures { width: 1fr; height: auto; padding: 0 1; }
    CertificateScreen #cert-plan { padding: 0 2 1 2; height: auto; color: $text-muted; }
    """
    HELP = ("The judge certificate: the share of items the judge may decide alone with a guaranteed agreement with "
            "your reviewers (fixed-sequence exact binomial tests over its confidence); the rest go to people. "
            "A judge cascade (several judges, cheapest first) is certified as a whole: from Runs, mark the runs of "
            "your judges with Space in cascade order, then t. The figures at the right scroll with ↑/↓ and "
            "PgUp/PgDn where they do not fit.")
    HELP_TITLE = "Judge certificate"

    def __init__(self, kind: str, ref: str, *, agreement: float = 0.90, confidence: float = 0.95,
                 min_coverage: float = 0.50) -> None:
        super().__init__()
        self.kind, self.ref = kind, ref
        self.agreement, self.confidence, self.min_coverage = agreement, confidence, min_coverage
        self.verdicts: Any = None
        self.doc: CertificateDoc | None = None
        self.cascade: dict[str, Any] | None = None  # a cascade's document (kind "cascade")
        self.first_agreement = agreement

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("computing the certificate…", style="dim"), id="cert-sentence")
        with Horizontal(id="cert-body"):
            yield Chart(id="cert-chart")
            with VerticalScroll(id="cert-figures-box"):
                yield Static("", id="cert-figures")
        yield Static("", id="cert-plan")
        yield KeysFooter()

    def on_mount(self) -> None:
        from pathlib import Path

        if self.kind in ("cascade", "runs"):
            self.sub_title = f"judge certificate · cascade of {'runs ' if self.kind == 'runs' else ''}" + ", ".join(
                one_line(Path(r).name, 30) for r in self.ref.split(os.pathsep))
        else:
            what = {"run": "run", "audit": "audit", "verdicts": "verdicts file"}.get(self.kind, self.kind)
            self.sub_title = f"judge certificate · {what} {one_line(Path(self.ref).name, 60)}"
        self._compute()

    @work(thread=True, exclusive=True, group="certificate", exit_on_error=False)
    def _compute(self) -> CertificateDoc | dict[str, Any]:
        from relgate_tui.engine.judging.certificate_doc import compute

        if self.kind in ("cascade", "runs"):
            from relgate_tui.engine.judging.cascade import compute_cascade, verdicts_from_runs
            from relgate_tui.engine.judging.certificate import load_verdicts_file

            refs = self.ref.split(os.pathsep)
            if self.verdicts is None:
                self.verdicts = (verdicts_from_runs(refs) if self.kind == "runs"
                                 else [load_verdicts_file(r) for r in refs])
            return compute_cascade(self.verdicts, agreement=self.agreement, confidence=self.confidence,
                                   min_coverage=self.min_coverage)
        if self.verdicts is None:
            if self.kind == "audit":
                from relgate_tui.engine.judging.certificate_audit import verdicts_from_audit

                self.verdicts = verdicts_from_audit(self.ref)[0]
            elif self.kind == "verdicts":
                from relgate_tui.engine.judging.certificate import load_verdicts_file

                self.verdicts = load_verdicts_file(self.ref)
            else:
                from relgate_tui.engine.judging.certificate import verdicts_from_run

                self.verdicts = verdicts_from_run(self.ref)[0]
        return compute(self.verdicts, agreement=self.agreement, confidence=self.confidence,
                       min_coverage=self.min_coverage)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "certificate":
            return
        if event.state == WorkerState.ERROR:
            self.query_one("#cert-sentence", Static).update(
                Text(one_line(str(event.worker.error), 300), style="bold red"))
        elif event.state == WorkerState.SUCCESS and isinstance(event.worker.result, CertificateDoc):
            self.show(event.worker.result)
        elif event.state == WorkerState.SUCCESS and isinstance(event.worker.result, dict):
            self.show_cascade(event.worker.result)

    def show_cascade(self, doc: dict[str, Any]) -> None:
        """A cascade's certificate: the sentence, :func:`cascade_figures`, no curve (one per judge would mislead)."""
        self.cascade = doc
        self.query_one("#cert-sentence", Static).update(Text(one_line(str(doc["sentence"]), 300),
                                                             style=_STYLE.get(str(doc["verdict"]), "bold")))
        self.query_one("#cert-figures", Static).update(cascade_figures(doc))
        plan = Text("the guarantee is on the whole cascade: agreement on all the items it decides, whichever judge "
                    "decides them", style="dim")
        if self.agreement != self.first_agreement:
            plan.append(f"\n{AFTER_LOOKING}", style="bold yellow")
        self.query_one("#cert-plan", Static).update(plan)
        self.query_one("#cert-chart", Chart).set_draw(lambda _plt, _w, _h: "a judge cascade: its stages are at the "
                                                      "right", caption=lambda _w: Text(""))

    def show(self, doc: CertificateDoc) -> None:
        from relgate_tui.engine.judging.certificate_doc import plan_line

        self.doc = doc
        cert = doc.certificate
        self.query_one("#cert-sentence", Static).update(Text(one_line(cert.sentence, 300),
                                                             style=_STYLE.get(cert.verdict, "bold")))
        self.query_one("#cert-figures", Static).update(figures(doc))
        plan = Text(plan_line(cert.plan))
        if self.agreement != self.first_agreement:
            plan.append(f"\n{AFTER_LOOKING}", style="bold yellow")
        self.query_one("#cert-plan", Static).update(plan)
        series = chart_series(doc)

        def draw(plt: Any, width: int, height: int) -> str | None:
            if not doc.curve.coverage:
                return "no labelled item: nothing to draw"
            xy(plt, series, x_range=(0.0, 1.0), y_range=(0.5, 1.0), x_label="share of labelled items decided",
               title="agreement with your reviewers against coverage", height=height)
            return None

        self.query_one("#cert-chart", Chart).set_draw(draw, caption=lambda _w: legend(series))

    def action_target(self, direction: int) -> None:
        new = round(min(0.99, max(0.5, self.agreement + 0.05 * direction)), 2)
        if new != self.agreement and self.verdicts is not None:
            self.agreement = new
            self._compute()

    def action_store(self) -> None:
        if self.doc is None and self.cascade is None:
            return
        from relgate_tui.engine.judging.certificate import save, save_document

        if self.agreement != self.first_agreement:
            self.notify(f"not stored: {AFTER_LOOKING}", severity="warning", timeout=10)
            return
        try:
            cert_id, _path = save(self.doc) if self.cascade is None and self.doc is not None else \
                save_document(self.cascade or {})
        except OSError as exc:
            self.notify(one_line(f"could not store the certificate: {exc}", 200), severity="error")
            return
        flag = "--from-run RUN " if self.kind == "runs" else "--verdicts FILE "
        use = (flag * len(self.cascade["cascade"])).strip() if self.cascade is not None else "--run RUN"
        self.notify(f"stored certificate {cert_id}: relgate judge apply {cert_id} {use}")

    def action_back(self) -> None:
        self.dismiss(None)
