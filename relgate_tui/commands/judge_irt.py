"""``relgate judge irt``: paper 002's IRT diagnostics of a judge from a judge scores file (zero model calls).

::

    relgate judge irt (--ratings FILE | --audit ID_OR_PATH) [--judge NAME] [--criterion NAME] [--prior mml|map] [--original VARIANT]
                      [--cv-ddof 0|1]
                      [--json PATH] [--markdown PATH] [--quiet]

The file is a judge scores file in long format: one row per sample × prompt variant (``id``, ``variant``, ``score``,
optional ``judge``, ``criterion``, ``human``/``humans``). ``--audit`` reads a stored judge audit instead (its direct
answers, repetition 0, one variant per prompt variant: ``engine/judging/as_scores.py``). Exit 0 when the study ran (whatever it found), 2 on an error
(one line).
"""

from __future__ import annotations

import argparse
from typing import Any

from relgate_tui.core.text import printable

NAME = "judge-irt"


def register(sub: Any) -> None:
    p = sub.add_parser(NAME, help="IRT diagnostics of a judge under prompt perturbations (paper 002; zero calls)",
                       description="Fit a graded response model to a judge's ratings under several prompt variants "
                                   "and report prompt consistency C_V, marginal reliability ρ, θ_ratio and D_W.")
    p.add_argument("--ratings", metavar="FILE", help="judge scores file (JSONL or CSV), long format")
    p.add_argument("--audit", metavar="ID_OR_PATH",
                   help="instead of --ratings: a stored judge audit (its id or directory; direct protocol, prompt "
                        "variants)")
    p.add_argument("--judge", metavar="NAME", help="the judge to study (default: every judge in the file)")
    p.add_argument("--criterion", metavar="NAME", help="the criterion (required when the file has several)")
    p.add_argument("--prior", choices=("mml", "map"), default="mml",
                   help="mml: marginal maximum likelihood (default); map: with the paper's priors")
    p.add_argument("--cv-ddof", type=int, choices=(0, 1), default=0,
                   help="C_V's variance convention: 0 population (default), 1 sample variances (the paper leaves it "
                        "open)")
    p.add_argument("--original", default="original", metavar="VARIANT", help="the unperturbed prompt's variant name")
    p.add_argument("--json", dest="json_path", metavar="PATH", help="write the JSON document ('-' = stdout)")
    p.add_argument("--markdown", metavar="PATH", help="write a Markdown report")
    p.add_argument("--quiet", action="store_true", help="no table on stdout")



def _table(study: Any) -> str:
    def f(x: float | None) -> str:
        return "—" if x is None or x != x or x in (float("inf"), float("-inf")) else f"{x:.2f}"

    lines = [f"IRT diagnostics — criterion {printable(study.criterion)}",
             f"{'judge':<28}{'n':>6}{'C_V':>7}{'ρ':>7}  {'Phase 1':<8}{'θ_ratio':>8}{'D_W':>7}"]
    for j in study.judges:
        p1 = {True: "pass", False: "fail", None: "—"}[j.phase1_pass]
        lines.append(f"{printable(j.judge, 27):<28}{len(j.ids):>6}{f(j.c_v):>7}{f(j.rho):>7}  {p1:<8}"
                     f"{f(j.theta_ratio):>8}{f(j.d_w):>7}")
    for j in study.judges:
        lines.append(f"- {printable(j.judge)}: {j.phase1_sentence}"
                     + (f"; {j.phase2_sentence}" if j.phase2_sentence else "")
                     + (f" [{j.reason}]" if j.reason else ""))
    return "\n".join(lines)


def _flips(table: Any, study: Any, args: argparse.Namespace) -> tuple[str, ...]:
    """Judges whose Phase 1 mark changes under the other prior — refitted only for small samples (cheap there,
    and where it matters: with many items both priors agree)."""
    from relgate_tui.engine.judging.studies import IRT_STABLE_N, build_study
    from relgate_tui.errors import RelgateError

    if min((len(j.ids) for j in study.judges), default=IRT_STABLE_N) >= IRT_STABLE_N:
        return ()
    other = "map" if args.prior == "mml" else "mml"
    try:
        alt = build_study(table, judge=args.judge, criterion=args.criterion, prior=other, original=args.original)
    except (RelgateError, ValueError):
        return ()
    marks = {j.judge: j.phase1_pass for j in alt.judges}
    return tuple(j.judge for j in study.judges if j.judge in marks and marks[j.judge] != j.phase1_pass)


def run(args: argparse.Namespace) -> int:
    from relgate_tui.commands.judge_intervals import source_table
    from relgate_tui.engine.certification.report import emit_json
    from relgate_tui.engine.judging.scores_file import load_scores
    from relgate_tui.engine.judging.studies import build_study, document, irt_caveats
    from relgate_tui.engine.runs.outputs import check_outputs, echo, write_display

    inputs = (args.ratings,)
    check_outputs((args.json_path, args.markdown), inputs)
    table, audit = source_table(args, "ratings")
    if table is None:
        table = load_scores(args.ratings)
    study = build_study(table, judge=args.judge, criterion=args.criterion, prior=args.prior, original=args.original,
                        cv_ddof=args.cv_ddof)
    if not args.quiet and args.json_path != "-":
        if note := table.unscored_note():
            echo(note)
        echo(_table(study))
        for line in irt_caveats(study, _flips(table, study, args)):  # small samples say so (issue 24 §7)
            echo(f"caveat: {line}")
    if args.json_path:
        emit_json(document(study, None if audit else str(args.ratings), audit, table.unscored()), args.json_path,
                  inputs)
    if args.markdown:
        write_display(args.markdown, study.to_markdown(), inputs=inputs)
    return 0
