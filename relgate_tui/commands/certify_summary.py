"""What ``relgate certify`` prints after a run (issue 28 §5, issue 37): :func:`print_summary` reads the run's
:class:`~relgate_tui.engine.certification.result.RunResult` — its fields, never the document's keys. The headline
bound is the run's, the one its gate decides on; the fixed-n Clopper–Pearson value, where it differs, is printed once
under its own name with its condition. Untrusted text (model names, messages, the run id) is printed as plain
:class:`~rich.text.Text`, never markup. Not a command (no ``NAME``): a helper of :mod:`.certify`.
"""

from __future__ import annotations

from typing import Any

from relgate_tui.core.text import counted
from relgate_tui.engine.certification.result import AssistedView, RunResult

__all__ = ["fmt_pct", "print_summary", "undecided"]


def fmt_pct(x: float | None) -> str:
    """A fraction as the command line prints it: "83.2%", "—" for none (``relgate runs`` uses it too)."""
    return "—" if x is None else f"{100 * x:.1f}%"


_BASIS = {"bound": "lower bound", "level": "level", "assisted": "judge-assisted bound", "best": "judge-assisted bound"}


def undecided(r: RunResult) -> bool:
    """No PASS/FAIL was decided: sampling incomplete, or a gate without a decision (no verified item, a one-look not
    reached yet) — ``relgate certify`` exits 3."""
    return not r.sampling_complete or (r.gate is not None and r.passed is None)


def print_summary(r: RunResult, run_path: Any) -> None:
    """The summary on stderr (plain text; PASS/FAIL in colour)."""
    from rich.console import Console
    from rich.text import Text

    con = Console(stderr=True, highlight=False, soft_wrap=True)
    b = fmt_pct(r.reliability_lower_bound) if r.reliability_lower_bound is not None else (r.bound_note or "—")
    basis = (f"with {r.confidence:.0%} confidence" if r.watch in ("once", None) else r.bound_name)
    line = (Text("reliability level: no verified items yet (n = 0)") if r.reliability_level is None else
            Text(f"reliability level {fmt_pct(r.reliability_level)} (≥ {b} {basis}, n = {r.reliability_n})"
                 if r.watch in ("once", None) else
                 f"reliability level {fmt_pct(r.reliability_level)} (≥ {b}: {basis}, n = {r.reliability_n})"))
    if r.passed is not None:
        line.append("  ").append("PASS" if r.passed else "FAIL", style="bold green" if r.passed else "bold red")
    con.print(line)
    if r.fixed_n_line:
        con.print(Text(r.fixed_n_line, style="dim"))
    if r.assisted is not None:
        _print_assisted(con, r.assisted)
    if r.gate is not None:
        con.print(Text(f"gate (on the {_BASIS.get(r.gate_on, r.gate_on)}): {r.gate.summary()}"))
        if r.judge_cost:
            con.print(Text(r.judge_cost, style="yellow"))
    if r.n_skipped and r.worst_level is not None:
        con.print(Text(f"worst case with the {r.n_skipped} skipped item{'s' if r.n_skipped != 1 else ''} counted as "
                       f"{'misses' if r.n_skipped != 1 else 'a miss'}: level "
                       f"{fmt_pct(r.worst_level)} (≥ {fmt_pct(r.worst_lower_bound)})"))
    canon_note = _canon_note(r)
    if canon_note:
        con.print(Text(canon_note))
    con.print(Text(f"M* = {'∞' if r.m_star is None else r.m_star} at α = {r.alpha}; calibration items {r.n_cal}, "
                   f"skipped {r.n_skipped}, pending {r.n_pending}"
                   + (f"; coverage {fmt_pct(r.coverage)}" if r.coverage is not None else "")))
    sets = r.sets_message
    if sets:  # its "M* = ∞ at α: " is said in the line above (issue 31 item 22)
        con.print(Text(sets.split(": ", 1)[-1] if sets.startswith("M* = ") else sets, style="yellow"))
    if r.n_incomplete:
        one = r.n_incomplete == 1
        never = (("not sampled at all" if r.n_not_sampled else "cut short") if one
                 else f"{r.n_not_sampled} of them not sampled at all")
        con.print(Text(f"sampling incomplete: {counted(r.n_incomplete, 'item')} not sampled to "
                       f"{'its' if one else 'their'} stop, {never} (requests failed) — no PASS/FAIL on partial data "
                       f"(exit 3); rerun the same command to retry {'it' if one else 'them'}", style="yellow"))
    if r.calibration_message:
        con.print(Text(r.calibration_message, style="yellow"))
    c = r.calls
    con.print(Text(f"calls made {c.made}, cached {c.cached}, failed {c.failed}, saved vs K_max "
                   f"{fmt_pct(c.saved_vs_kmax)}; run {r.run_id} ({run_path})"))
    if r.judge is not None:
        j = r.judge
        for rk, label in ((j.frequency, "frequency ranking"), (j.judge, "judge ranking    ")):
            con.print(Text(f"{label}: reliability {fmt_pct(rk.reliability_level)} (≥ "
                           f"{fmt_pct(rk.reliability_lower_bound)}), M* = {'∞' if rk.m_star is None else rk.m_star}"
                           + (f", coverage {fmt_pct(rk.coverage)}" if rk.coverage is not None else "")))
        con.print(Text(f"judge cycles: {j.n_items_with_cycle} of {j.n_items_with_triples} items with ≥ 3 compared "
                       f"answers have a preference cycle (mean ρ {j.mean_rho or 0.0:.3f}); judge reordered "
                       f"{j.n_items_reordered} of {j.n_items_judged} items; judge calls made {j.calls_made or 0}, "
                       f"cached {j.calls_cached or 0}"))


def _canon_note(r: RunResult) -> str | None:
    if not (r.canon_source or "").startswith(("suggested", "no reference")):
        return None
    return f"canonicalizer {r.canon_spec}: {r.canon_source} (--canon to choose)"


def _print_assisted(con: Any, a: AssistedView) -> None:
    from rich.text import Text

    if a.lower_bound is None:
        con.print(Text(f"judge-assisted: {a.message}"))
        return
    if a.warning:
        con.print(Text(f"warning: {a.warning}", style="bold yellow"))
    con.print(Text(f"judge-assisted reliability {fmt_pct(a.estimate)} (≥ {fmt_pct(a.lower_bound)} with "
                   f"{a.confidence:.0%} confidence; {counted(a.n_labels, 'human label')}, {counted(a.n_judged, 'item')} judged by "
                   f"{a.judge_model})" + (f"; to clear the gate: {a.more_labels_message}" if a.more_labels_message
                                          else f"; ≈ {a.more_labels} more labels to clear the gate" if a.more_labels
                                          else "")))
    if a.failures:
        con.print(Text(a.failures, style="yellow"))
    if a.left_out_note:
        con.print(Text(a.left_out_note, style="yellow"))
    kappa_text = ("—" if a.kappa is None else f"{a.kappa:.2f}"
                  + (f" [{a.kappa_interval[0]:.2f}, {a.kappa_interval[1]:.2f}]" if a.kappa_interval
                     else f" ({a.kappa_note})" if a.kappa_note else ""))
    con.print(Text(f"judge vs human on {a.n_agreement} labelled items: agreement {fmt_pct(a.agreement_rate)}, "
                   f"κ {kappa_text}, false accepts {a.false_accepts} of {a.n_human_no} wrong answers (rate ≤ "
                   f"{fmt_pct(a.false_accept_upper)} with {a.confidence:.0%} confidence)"))
