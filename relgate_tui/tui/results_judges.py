"""The Results screen's judge panels: the pairwise judge's rankings and cycles (issue 4 item 3, paper 000), read from
the typed :class:`~relgate_tui.engine.certification.judge_section.JudgeSectionView` (never the JSON section), and
the verification judge's judge-assisted bound with its agreement table (issue 22), from the typed
:class:`~relgate_tui.engine.certification.assisted.AssistedSection` (never the ``judge_assisted`` JSON)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from relgate_tui.core.certification.gate import ASSISTED_GATES, GateDecision
from relgate_tui.core.text import counted, one_line
from relgate_tui.tui.widgets.cycles import edge_verdicts
from relgate_tui.tui.widgets.safetext import clean, safe_line

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.assisted import AssistedSection
    from relgate_tui.engine.certification.judge_section import JudgedItem, JudgeSectionView

__all__ = ["JUDGE_COLUMNS", "judge_summary", "judge_cells", "cycle_view", "assisted_view"]

JUDGE_COLUMNS = ("id", "n", "rho", "cycles", "cost", "freq", "judge", "s", "sj")


def _m(m: int | None) -> str:
    return "∞" if m is None else str(m)


def _pct(x: float | None) -> str:
    return "—" if x is None or x != x else f"{x:.1%}"  # None or NaN


def judge_summary(judge: JudgeSectionView) -> Table:
    """Both rankings side by side (the same labels calibrate both) and the cycle / position-bias figures."""
    f, j = judge.frequency, judge.judge
    grid = Table(box=None, padding=(0, 1), expand=False, show_edge=False)
    grid.add_column("ranking by", style="dim", no_wrap=True, min_width=12)
    grid.add_column("frequency", no_wrap=True, min_width=9)
    grid.add_column("judge", no_wrap=True, min_width=9)
    grid.add_row("reliability", _pct(f.reliability_level), _pct(j.reliability_level))
    grid.add_row(f"{f.confidence:.0%} bound", _pct(f.reliability_lower_bound), _pct(j.reliability_lower_bound))
    grid.add_row(f"M* (α={judge.alpha:.2f})", _m(f.m_star), _m(j.m_star))
    grid.add_row("coverage", "—" if f.coverage is None else f"{f.coverage:.1%}",
                 "—" if j.coverage is None else f"{j.coverage:.1%}")
    grid.add_row("avg set size", "—" if f.avg_set_size is None else f"{f.avg_set_size:.2f}",
                 "—" if j.avg_set_size is None else f"{j.avg_set_size:.2f}")
    notes = Text()
    if judge.judge_model is not None:
        notes.append(f"judge {clean(judge.judge_model)}, {judge.judge_reps} verdicts/pair, random order\n", "bold")
    notes.append(f"{judge.n_items_with_cycle}", style="bold red" if judge.n_items_with_cycle else "bold")
    notes.append(f" of {judge.n_items_with_triples} items with ≥ 3 compared answers have a preference cycle")
    if judge.mean_rho is not None:
        notes.append(f" (mean ρ {judge.mean_rho:.3f}, max {judge.max_rho:.3f}; a coin-flip judge: 0.25)")
    notes.append(f"\njudge reordered {judge.n_items_reordered} of {judge.n_items_judged} judged items, "
                 f"changed the top answer on {judge.n_top_changed}")
    if judge.first_shown_share is not None:
        notes.append(f"\nfirst-shown answer wins {judge.first_shown_share:.1%} of {judge.n_valid_verdicts} valid "
                     f"verdicts; {judge.pairs_flipped_by_order} of {judge.pairs_decisive_both_orders} pairs flip "
                     "with the order")
        notes.append("\nposition-only judge (verdicts follow the order)" if judge.position_only else "", "bold red")
    notes.append(f"\nverdicts {judge.verdicts_valid} valid of {judge.verdicts_total}", style="dim")
    if judge.calls_made is not None:
        notes.append(f" · judge calls made {judge.calls_made}, cached {judge.calls_cached}", style="dim")
    outer = Table.grid(padding=(0, 3), expand=True)
    outer.add_column(no_wrap=True)
    outer.add_column(ratio=1)
    outer.add_row(grid, notes)
    return outer


def _score_cell(score: float | None) -> str:
    """"·" not verified yet (as the Items table), "∞" no acceptable answer, else the rank."""
    if score is None:
        return "·"
    return "∞" if math.isinf(score) else str(int(score))


def judge_cells(it: JudgedItem) -> tuple:
    freq_top = it.compared[0] if it.compared else "—"
    judge_top = it.judge_order[0] if it.judge_order else "—"
    return (
        safe_line(it.id),
        str(len(it.compared)),
        Text("—" if it.rho is None else f"{it.rho:.2f}", style="bold red" if it.rho else "dim"),
        str(it.n_cycles),
        str(it.mfas_cost),
        safe_line(freq_top, 14, overflow="ellipsis"),
        safe_line(judge_top, 14, style="bold yellow" if judge_top != freq_top else "", overflow="ellipsis"),
        _score_cell(it.frequency_score),
        _score_cell(it.judge_score),
    )


def cycle_view(it: JudgedItem) -> Text:
    """One item's cycle viewer: each cyclic triple with the verdicts behind each of its edges (both orders)."""
    def behind(x: str, y: str) -> str:
        """x's wins – y's wins: in total, with x shown first, with y shown first."""
        v = edge_verdicts(it.pairs, x, y)
        if v is None:
            return "no verdicts"
        (tx, ty), (xx, xy), (yx, yy) = v.total, v.x_first, v.y_first
        return f"{tx}–{ty}  (x first {xx}–{xy}, y first {yx}–{yy})"

    t = Text()
    t.append(one_line(str(it.id)), style="bold")
    rho = "—" if it.rho is None else f"{it.rho:.2f}"
    t.append(f"  ρ = {rho}, {counted(it.n_cycles, 'cyclic triple')}\n", style="bold red" if it.rho else "")
    t.append("frequency order  ", style="dim")
    t.append(one_line(" > ".join(it.compared)) + "\n")
    t.append("judge order      ", style="dim")
    t.append(one_line(" > ".join(it.judge_order)), style="bold")
    t.append(f"  (MFAS cost {it.mfas_cost})\n")
    for tri in it.cyclic_triples[:6]:
        a, b, c = tri
        ca, cb, cc = (one_line(str(x)) for x in tri)  # shown without controls; verdicts keyed by the raw names
        t.append(f"\n{ca} → {cb} → {cc} → {ca}\n", style="bold yellow")
        for x, y in ((a, b), (b, c), (c, a)):
            t.append(f"  x={one_line(str(x))} beats y={one_line(str(y))}: ", style="dim")
            t.append(behind(x, y) + "\n")
    if len(it.cyclic_triples) > 6:
        t.append(f"… and {len(it.cyclic_triples) - 6} more\n", style="dim")
    if not it.cyclic_triples:
        t.append("\nno preference cycle among this item's answers\n", style="dim")
        for p in it.pairs[:6]:
            if p.winner:
                loser = p.b if p.winner == p.a else p.a
                t.append(f"  x={one_line(str(p.winner))} beats y={one_line(str(loser))}: ", style="dim")
                t.append(behind(p.winner, loser) + "\n")
    return t


def assisted_view(section: AssistedSection | None, gate: GateDecision | None = None, *,
                  imported_tool: str | None = None) -> Text:
    """The verification judge's panel from the typed section: the judge-assisted bound, the judge-vs-human table, κ
    and the false-accept bound (issue 22 §3), and the gate when it was decided on the assisted bounds. Without one,
    why not and what can be done (``imported_tool``: the tool an imported run's log came from)."""
    from relgate_tui.engine.certification.assisted import no_verification_judge

    t = Text()
    if section is None:
        reason = no_verification_judge(imported_tool)
        t.append(reason[0].upper() + reason[1:] + ".", style="dim")
        if imported_tool is None:
            t.append(" A verification judge checks every item's top answer, and the judge-assisted bound then needs "
                     "fewer human labels when the judge is good.", style="dim")
        return t
    if section.bound is None or section.agreement is None:
        t.append(clean(section.message or ""), style="yellow")
        return t
    conf, ag = section.confidence, section.agreement
    if section.warning:  # a constant verification judge (issue 31 item 7)
        t.append(f"⚠ {clean(section.warning)}\n\n", style="bold yellow")
    t.append("Judge-assisted reliability ", style="bold")
    t.append(f"{_pct(section.bound.estimate)}, ≥ {_pct(section.bound.lower)} with {conf:.0%} confidence\n",
             style="bold")
    t.append(f"{counted(section.n_labels, 'human label')}, {counted(section.n_judged, 'item')} judged by "
             f"{one_line(section.judge_model)}; {one_line(section.population)}\n", style="dim")
    if section.prefix.left_out:  # issue 33 §2: only the labelled prefix counts
        t.append(clean(section.prefix.note or "") + "\n", style="yellow")
    if section.gate is not None and section.more_labels != 0 and section.more_labels_message:
        t.append(f"gate: {clean(section.more_labels_message)}\n", style="yellow")  # issue 33 §6
    t.append("\n                 human: correct   human: wrong\n", style="dim")
    t.append(f"judge: correct   {ag.yes_yes:>14}   {ag.yes_no:>12}\n")
    t.append(f"judge: wrong     {ag.no_yes:>14}   {ag.no_no:>12}\n")
    t.append(f"\nagreement {_pct(ag.agreement_rate)}; Cohen's κ ")
    t.append("—" if ag.kappa is None else f"{ag.kappa:.2f}")
    if ag.kappa_lower is not None:
        t.append(f" [{ag.kappa_lower:.2f}, {ag.kappa_upper:.2f}]")
    elif ag.kappa_note:
        t.append(f" ({clean(ag.kappa_note)})")
    t.append("\nfalse accepts ", style="bold")
    t.append(f"{ag.yes_no} of {ag.yes_no + ag.no_no} wrong answers; rate ≤ {_pct(ag.false_accept_upper)} with "
             f"{conf:.0%} confidence\n", style="bold red" if (ag.false_accept_upper or 0) > 0.3 else "")
    if gate is not None and gate.gate_on in ASSISTED_GATES:
        t.append(f"\ngate: {one_line(gate.summary())}\n", style="bold")
    t.append("\nt: judge certificate — on which items may this judge grade instead of people?\n", style="dim")
    return t
