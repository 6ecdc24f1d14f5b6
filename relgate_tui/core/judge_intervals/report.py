"""The one Markdown renderer of an :class:`~relgate_tui.core.judge_intervals.study.IntervalStudy`."""

from __future__ import annotations

import math
import re

from .study import IntervalStudy, PointMetrics

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def _cell(text: object) -> str:
    """Untrusted text for a table cell: control/bidi characters dropped, pipes escaped, bounded length."""
    s = _CONTROL.sub("", str(text)).replace("|", "\\|")
    return s if len(s) <= 80 else s[:79] + "…"


def _f(x: float | None, digits: int = 3) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _pct(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{100 * x:.2f}%"


def _pm(p: PointMetrics | None) -> str:
    if p is None:
        return "– | – | – | –"
    return f"{_f(p.mse)} | {_f(p.mae)} | {_f(p.spearman)} | {_f(p.kendall)}"


def render_markdown(study: IntervalStudy) -> str:
    """A self-contained Markdown report: the method table, point scores, calibration-size curve, shift, notes."""
    target = 1 - study.alpha
    lab = study.labels
    head = " · ".join(f"{k} {_cell(v)}" for k, v in lab.items())
    lines = [
        "# Judge score intervals (conformal, paper 001)",
        "",
        f"{head}" if head else "",
        f"{study.n_items} items ({study.dropped} rows dropped: no log-probs or no human rating) · α = {study.alpha:g} "
        f"(target coverage {100 * target:g}%) · {len(study.seeds)} seeds · grid {study.grid.name} "
        f"(step {study.grid.step:.4g}) · adjustment λ = {study.adjust_lambda:.4g}"
        + (f" · ordinal methods on the {len(study.grid.values)} label-grid classes" if study.ordinal_grid else ""),
        "",
        "| method | family | coverage | width | adj. coverage | adj. width | seeds ≥ 1−α (adj.) | binom p (adj.) | "
        "criterion | s/run |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in study.methods:
        ok = "✓" if m.adjusted.coverage_mean >= target else "✗"
        if m.uninformative:
            ok += " uninformative"
        lines.append(
            f"| {m.name} | {m.family} | {_pct(m.raw.coverage_mean)} ± {_pct(m.raw.coverage_sd)} | "
            f"{_f(m.raw.width_mean)} ± {_f(m.raw.width_sd)} | {_pct(m.adjusted.coverage_mean)} ± "
            f"{_pct(m.adjusted.coverage_sd)} | {_f(m.adjusted.width_mean)} ± {_f(m.adjusted.width_sd)} | "
            f"{100 * m.adjusted.share_covered:.0f}% | {_f(m.adjusted.binom_p_median)} | {ok} | "
            f"{m.seconds_mean:.2f} |")
    lines += ["", "Criterion ✓: mean coverage after adjustment ≥ 1 − α; *uninformative*: most of the method's "
              "intervals span the whole scale (valid, but no finding). Coverage after adjustment is never lower "
              "than before (Theorem 1): " + ("holds on every split for every method."
                                             if all(m.never_dropped for m in study.methods) else
                                             "VIOLATED for " + ", ".join(m.name for m in study.methods
                                                                          if not m.never_dropped) + "."), ""]
    lines += ["## Point scores against the human label (test halves, mean over seeds)", "",
              "| score | MSE | MAE | Spearman ρ | Kendall τ |", "|---|---|---|---|---|",
              f"| raw judge score | {_pm(study.raw_score)} |", f"| weighted average Σ k·p_k | {_pm(study.weighted)} |"]
    for m in study.methods:
        lines.append(f"| {m.name} midpoint | {_pm(m.midpoint)} |")
        lines.append(f"| {m.name} midpoint, adjusted | {_pm(m.midpoint_adjusted)} |")
    if study.curve:
        lines += ["", "## Calibration-set size (before adjustment)", "",
                  "| method | share of calibration half | n | coverage | width |", "|---|---|---|---|---|"]
        for c in study.curve:
            lines.append(f"| {c.method} | {100 * c.fraction:.0f}% | {c.n_calibration} | {_pct(c.coverage_mean)} ± "
                         f"{_pct(c.coverage_sd)} | {_f(c.width_mean)} ± {_f(c.width_sd)} |")
    if study.shift:
        lines += ["", "## Calibrate on A, test on B", "",
                  "| method | coverage | width | adj. coverage | adj. width |", "|---|---|---|---|---|"]
        for s in study.shift:
            lines.append(f"| {s.method} | {_pct(s.coverage_mean)} ± {_pct(s.coverage_sd)} | {_f(s.width_mean)} | "
                         f"{_pct(s.adj_coverage_mean)} | {_f(s.adj_width_mean)} |")
    notes = [(m.name, r) for m in study.methods for r in (*m.reasons, m.uninformative_reason) if r]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {name}: {r}" for name, r in notes]
    return "\n".join(line for line in lines) + "\n"
