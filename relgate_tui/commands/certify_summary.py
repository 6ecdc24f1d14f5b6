"""What ``relgate certify`` prints after a run, as typed values (issue 28 §5): :class:`CertifySummary` is read once
from the run's result by :func:`summary_of` — today the result document :func:`run_certify` returns; when the
pipeline returns the typed result, only :func:`summary_of` changes — and :func:`print_summary` reads nothing but its
fields. Untrusted text (model names, messages, the run id) is printed as plain :class:`~rich.text.Text`, never
markup. Not a command (no ``NAME``): a helper of :mod:`.certify`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from relgate_tui.core.text import counted

__all__ = ["AssistedSummary", "CertifySummary", "JudgeSummary", "RankingSummary", "fmt_pct", "print_summary",
           "summary_of"]


def fmt_pct(x: float | None) -> str:
    """A fraction as the command line prints it: "83.2%", "—" for none (``relgate runs`` uses it too)."""
    return "—" if x is None else f"{100 * x:.1f}%"


@dataclass(frozen=True)
class AssistedSummary:
    """The judge-assisted bound's lines: ``lower_bound`` None = not computed (``message`` says why)."""

    message: str
    estimate: float | None = None
    lower_bound: float | None = None
    left_out_note: str | None = None
    more_labels_message: str | None = None
    kappa_note: str | None = None
    confidence: float = 0.95
    n_labels: int = 0
    n_judged: int = 0
    judge_model: str = ""
    more_labels: int | None = None
    n_agreement: int = 0
    agreement_rate: float | None = None
    kappa: float | None = None
    kappa_interval: tuple[float, float] | None = None
    false_accepts: int = 0
    n_human_no: int = 0
    false_accept_upper: float | None = None
    warning: str | None = None  # a constant verification judge (issue 31 item 7)
    failures: str | None = None  # verify_judge.failures_note: requests that gave no verdict (issue 29 N15)


@dataclass(frozen=True)
class RankingSummary:
    level: float | None
    lower_bound: float | None
    m_star: int | None
    coverage: float | None


@dataclass(frozen=True)
class JudgeSummary:
    """The pairwise judge's lines: both rankings, the cycles, the reordering and the judge's calls."""

    frequency: RankingSummary
    judge: RankingSummary
    n_items_with_cycle: int
    n_items_with_triples: int
    mean_rho: float
    n_items_reordered: int
    n_items_judged: int
    calls_made: int
    calls_cached: int


@dataclass(frozen=True)
class CertifySummary:
    """Every value the summary prints, and what the exit code follows from (``sampling_complete``, ``passed``)."""

    level: float | None
    lower_bound: float | None
    confidence: float
    n: int
    passed: bool | None
    sampling_complete: bool
    gate_on: str
    gate_summary: str | None
    n_skipped: int
    worst_level: float | None
    worst_lower_bound: float | None
    sets_message: str | None
    m_star: int | None
    alpha: float
    n_cal: int
    n_pending: int
    coverage: float | None
    n_incomplete: int
    n_not_sampled: int
    calibration_message: str | None
    calls_made: int
    calls_cached: int
    calls_failed: int
    saved_vs_kmax: float | None
    run_id: str
    canon_note: str | None = None  # which canonicalizer, when it was suggested rather than given (issue 31 item 4)
    assisted: AssistedSummary | None = None
    judge: JudgeSummary | None = None


def _assisted(block: Mapping[str, Any]) -> AssistedSummary:
    from relgate_tui.engine.judging.verify_judge import failures_note

    if block.get("lower_bound") is None:
        return AssistedSummary(message=str(block.get("message", "")))
    ag, judge = block["agreement"], block.get("judge") or {}
    kappa = ag["kappa"]
    return AssistedSummary(
        message=str(block.get("message", "")), estimate=block["estimate"], lower_bound=block["lower_bound"],
        confidence=float(block["confidence"]), n_labels=int(block["n_labels"]), n_judged=int(block["n_judged"]),
        judge_model=str(judge.get("model", "")), more_labels=block.get("more_labels") or None, n_agreement=int(ag["n"]),
        agreement_rate=ag["agreement_rate"], kappa=kappa["estimate"],
        kappa_interval=(kappa["lower"], kappa["upper"]) if kappa.get("lower") is not None else None,
        false_accepts=int(ag["table"]["judge_yes_human_no"]), n_human_no=int(ag["false_accept"]["n_human_no"]),
        false_accept_upper=ag["false_accept"]["upper"], failures=failures_note(block),
        warning=str(block["warning"]) if block.get("warning") else None, left_out_note=block.get("left_out_note"),
        more_labels_message=block.get("more_labels_message"), kappa_note=kappa.get("note"))


def _ranking(r: Mapping[str, Any]) -> RankingSummary:
    return RankingSummary(r["reliability_level"], r["reliability_lower_bound"], r["m_star"],
                          r["coverage"]["estimate"] if r.get("coverage") else None)


def _judge(j: Mapping[str, Any]) -> JudgeSummary:
    cyc = j["cycles"]
    return JudgeSummary(_ranking(j["rankings"]["frequency"]), _ranking(j["rankings"]["judge"]),
                        int(cyc["n_items_with_cycle"]), int(cyc["n_items_with_triples"]), float(cyc["mean_rho"] or 0),
                        int(j["n_items_reordered"]), int(j["n_items_judged"]), int(j["calls"]["made"]),
                        int(j["calls"]["cached"]))


def summary_of(doc: Mapping[str, Any]) -> CertifySummary:
    """The summary of a run's result document (the one adapter from the document to typed values)."""
    worst = doc.get("worst_case") or {}
    calls = doc["calls"]
    return CertifySummary(
        level=doc["reliability_level"], lower_bound=doc["reliability_lower_bound"],
        confidence=float(doc["confidence"]), n=int(doc["reliability_n"]), passed=doc["passed"],
        sampling_complete=bool(doc.get("sampling_complete", True)), gate_on=str(doc.get("gate_on") or ""),
        gate_summary=str(doc["gate"]["summary"]) if doc.get("gate") else None, n_skipped=int(doc["n_skipped"] or 0),
        worst_level=worst.get("level"), worst_lower_bound=worst.get("lower_bound"),
        sets_message=(doc.get("prediction_sets") or {}).get("message") or None, m_star=doc["m_star"],
        alpha=doc["alpha"], n_cal=int(doc["n_cal"]), n_pending=int(doc["n_pending"]), coverage=doc["coverage"],
        n_incomplete=int(doc.get("n_incomplete") or 0), n_not_sampled=int(doc.get("n_not_sampled") or 0),
        calibration_message=doc.get("calibration_message") or None, calls_made=int(calls["made"]),
        calls_cached=int(calls["cached"]), calls_failed=int(calls["failed"]), saved_vs_kmax=calls["saved_vs_kmax"],
        run_id=str(doc["run_id"]), canon_note=_canon_note(doc.get("canon")),
        assisted=_assisted(doc["judge_assisted"]) if doc.get("judge_assisted") else None,
        judge=_judge(doc["pairwise_judge"]) if doc.get("pairwise_judge") else None)


def _canon_note(canon: Any) -> str | None:
    if not isinstance(canon, Mapping) or not str(canon.get("source") or "").startswith(("suggested", "no reference")):
        return None
    return f"canonicalizer {canon.get('spec')}: {canon.get('source')} (--canon to choose)"


_BASIS = {"bound": "lower bound", "level": "level", "assisted": "judge-assisted bound", "best": "better bound"}


def print_summary(s: CertifySummary, run_path: Any) -> None:
    """The summary on stderr (plain text; PASS/FAIL in colour)."""
    from rich.console import Console
    from rich.text import Text

    con = Console(stderr=True, highlight=False, soft_wrap=True)
    line = (Text("reliability level: no verified items yet (n = 0)") if s.level is None else
            Text(f"reliability level {fmt_pct(s.level)} (≥ {fmt_pct(s.lower_bound)} with {s.confidence:.0%} "
                 f"confidence, n = {s.n})"))
    if s.passed is not None:
        line.append("  ").append("PASS" if s.passed else "FAIL", style="bold green" if s.passed else "bold red")
    con.print(line)
    if s.assisted is not None:
        _print_assisted(con, s.assisted)
    if s.gate_summary is not None:
        con.print(Text(f"gate (on the {_BASIS.get(s.gate_on, s.gate_on)}): {s.gate_summary}"))
    if s.n_skipped and s.worst_level is not None:
        con.print(Text(f"worst case with the {s.n_skipped} skipped item{'s' if s.n_skipped != 1 else ''} counted as "
                       f"{'misses' if s.n_skipped != 1 else 'a miss'}: level "
                       f"{fmt_pct(s.worst_level)} (≥ {fmt_pct(s.worst_lower_bound)})"))
    if s.canon_note:
        con.print(Text(s.canon_note))
    con.print(Text(f"M* = {'∞' if s.m_star is None else s.m_star} at α = {s.alpha}; calibration items {s.n_cal}, "
                   f"skipped {s.n_skipped}, pending {s.n_pending}"
                   + (f"; coverage {fmt_pct(s.coverage)}" if s.coverage is not None else "")))
    if s.sets_message:  # its "M* = ∞ at α: " is said in the line above (issue 31 item 22)
        con.print(Text(s.sets_message.split(": ", 1)[-1] if s.sets_message.startswith("M* = ") else s.sets_message,
                       style="yellow"))
    if s.n_incomplete:
        one = s.n_incomplete == 1
        never = (("not sampled at all" if s.n_not_sampled else "cut short") if one
                 else f"{s.n_not_sampled} of them not sampled at all")
        con.print(Text(f"sampling incomplete: {counted(s.n_incomplete, 'item')} not sampled to "
                       f"{'its' if one else 'their'} stop, {never} (requests failed) — no PASS/FAIL on partial data "
                       f"(exit 3); rerun the same command to retry {'it' if one else 'them'}", style="yellow"))
    if s.calibration_message:
        con.print(Text(s.calibration_message, style="yellow"))
    con.print(Text(f"calls made {s.calls_made}, cached {s.calls_cached}, failed {s.calls_failed}, saved vs K_max "
                   f"{fmt_pct(s.saved_vs_kmax)}; run {s.run_id} ({run_path})"))
    if s.judge is not None:
        j = s.judge
        for r, label in ((j.frequency, "frequency ranking"), (j.judge, "judge ranking    ")):
            con.print(Text(f"{label}: reliability {fmt_pct(r.level)} (≥ {fmt_pct(r.lower_bound)}), M* = "
                           f"{'∞' if r.m_star is None else r.m_star}"
                           + (f", coverage {fmt_pct(r.coverage)}" if r.coverage is not None else "")))
        con.print(Text(f"judge cycles: {j.n_items_with_cycle} of {j.n_items_with_triples} items with ≥ 3 compared "
                       f"answers have a preference cycle (mean ρ {j.mean_rho:.3f}); judge reordered "
                       f"{j.n_items_reordered} of {j.n_items_judged} items; judge calls made {j.calls_made}, cached "
                       f"{j.calls_cached}"))


def _print_assisted(con: Any, a: AssistedSummary) -> None:
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
