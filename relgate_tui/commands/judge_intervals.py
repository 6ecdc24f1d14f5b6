"""``relgate judge intervals``: conformal prediction intervals for a judge's scores from a judge scores file (issue 12).

Zero model calls: reads a judge scores file (``engine/judging/scores_file.py``: JSONL or CSV with per-item human ratings and
the judge's score-token log-probabilities) or a stored judge audit (``--audit ID_OR_PATH``,
``engine/judging/as_scores.py``: repetition 0 of each direct answer), runs the paper-001 comparison
(``core/judge_intervals``) and prints the Markdown report; ``--json PATH`` writes the result document ('-' = stdout).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from relgate_tui.core.text import printable

NAME = "judge-intervals"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        NAME, help="conformal intervals for judge scores from score-token log-probs (paper 001; zero model calls)",
        description="Prediction intervals with a coverage guarantee for the human rating of each item, from a judge "
                    "scores file with log-probabilities; the nine methods of paper 001, before and after boundary "
                    "adjustment, over seeded 50/50 calibration/test splits.")
    p.add_argument("--scores", metavar="FILE", help="judge scores file (.jsonl or .csv)")
    p.add_argument("--audit", metavar="ID_OR_PATH",
                   help="instead of --scores: a stored judge audit (its id or directory; direct protocol)")
    p.add_argument("--judge", metavar="NAME", help="the judge to study (needed when the file has several)")
    p.add_argument("--criterion", metavar="NAME", help="the criterion to study (needed when the file has several)")
    p.add_argument("--variant", metavar="NAME", help="prompt variant (default: 'original' when present)")
    p.add_argument("--methods", default="all", metavar="all|LIST",
                   help="comma-separated: cqr, asym-cqr, chr, lvd, boosted-cqr, boosted-lcp, r2ccp, ordinal-aps, "
                        "ordinal-rc (default all)")
    p.add_argument("--alpha", type=float, default=0.1, help="miscoverage level (default 0.1: 90%% coverage)")
    p.add_argument("--seeds", type=int, default=30, metavar="N", help="splits with seeds 1..N (default 30)")
    p.add_argument("--adjust", default="full", metavar="none|full|λ",
                   help="boundary adjustment: none, full (half the grid step), or a threshold λ (default full)")
    p.add_argument("--grid", default="auto", metavar="auto|integer|thirds|LIST",
                   help="admissible labels: detected, integers, thirds (3-rater means) or a comma-separated list")
    p.add_argument("--fit-share", type=float, metavar="F",
                   help="share of the calibration half that trains the learned methods (default 0.8, leaving at least "
                        "min(50, half) items to calibrate on); the rest calibrates")
    p.add_argument("--ordinal-grid", action="store_true",
                   help="ordinal methods classify on the label grid (13 classes for three-rater means; the authors' "
                        "construction: log-probs interpolated onto the grid, softmax) instead of the 1–K scale")
    p.add_argument("--shift-scores", metavar="FILE",
                   help="also calibrate on all of --scores and test on all of this file (distribution shift)")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="processes for the seeds (default 1)")
    p.add_argument("--json", metavar="PATH", dest="json_path", help="write the JSON document to PATH ('-' = stdout)")
    p.add_argument("--markdown", metavar="PATH", help="write the Markdown report to PATH")


def _lambda(spec: str) -> float | None:
    from relgate_tui.errors import UserError

    s = spec.strip().lower()
    if s == "none":
        return 0.0
    if s == "full":
        return None
    try:
        v = float(s)
    except ValueError:
        raise UserError(f"--adjust: expected none, full or a number, got {spec!r}") from None
    if not 0.0 <= v <= 10.0:
        raise UserError(f"--adjust: λ must be between 0 and 10, got {v:g}")
    return v


def _grid(spec: str) -> str | list[float]:
    from relgate_tui.errors import UserError

    s = spec.strip().lower()
    if s in ("auto", "integer", "thirds"):
        return s
    try:
        vals = [float(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--grid: expected auto, integer, thirds or a comma-separated list, got {spec!r}") from None
    if len(vals) < 2:
        raise UserError("--grid: a list needs at least two labels")
    return vals


def source_table(args: argparse.Namespace, file_option: str = "scores") -> tuple[Any, Any]:
    """``(ScoresTable or None, AuditScores or None)`` from exactly one of ``--<file_option>`` and ``--audit``: the
    file is loaded by the caller; a stored audit is read here (zero model calls) and its one-line summary goes to
    stderr. Shared by ``judge-intervals``, ``judge-irt`` and ``jury``."""
    from relgate_tui.errors import UserError

    given = getattr(args, file_option.replace("-", "_"))
    if (given is None) == (args.audit is None):
        raise UserError(f"give exactly one of --{file_option} FILE and --audit ID_OR_PATH")
    if args.audit is None:
        return None, None
    from relgate_tui.engine.judging.as_scores import audit_scores

    audit = audit_scores(args.audit)
    print(printable(audit.summary(), 400), file=sys.stderr)
    return audit.table, audit



def run(args: argparse.Namespace) -> int:
    from relgate_tui.core import jsonsafe
    from relgate_tui.core.judge_intervals.methods import parse_methods
    from relgate_tui.core.judge_intervals.report import render_markdown
    from relgate_tui.core.judge_intervals.study import run_study, shift_study
    from relgate_tui.engine.certification.report import emit_json
    from relgate_tui.engine.judging.studies import audit_input, intervals_caveats, load_input
    from relgate_tui.errors import UserError

    if not 0.0 < args.alpha < 1.0:
        raise UserError(f"--alpha must be in (0, 1), got {args.alpha:g}")
    if not 1 <= args.seeds <= 1000:
        raise UserError(f"--seeds must be 1..1000, got {args.seeds}")
    if not 1 <= args.workers <= 64:
        raise UserError(f"--workers must be 1..64, got {args.workers}")
    try:
        methods = parse_methods(args.methods)
    except ValueError as exc:
        raise UserError(f"--methods: {exc}") from None
    if args.fit_share is not None and not 0.05 <= args.fit_share <= 0.95:
        raise UserError(f"--fit-share must be in [0.05, 0.95], got {args.fit_share:g}")
    from relgate_tui.engine.runs.outputs import check_outputs, echo, write_display

    inputs = (args.scores, args.shift_scores)
    check_outputs((args.json_path, args.markdown), inputs)
    lam = _lambda(args.adjust)
    grid = _grid(args.grid)
    table, audit = source_table(args)
    if audit is not None:
        inp, labels = audit_input(audit, judge=args.judge, criterion=args.criterion, variant=args.variant, grid=grid,
                                  alpha=args.alpha)
    else:
        inp, labels = load_input(args.scores, judge=args.judge, criterion=args.criterion, variant=args.variant,
                                 grid=grid, alpha=args.alpha)
    seeds = range(1, args.seeds + 1)
    study = run_study(inp, methods=methods, alpha=args.alpha, seeds=seeds, lam=lam, labels=labels,
                      workers=args.workers, ordinal_grid=args.ordinal_grid, fit_share=args.fit_share)
    if args.shift_scores:
        import dataclasses

        inp_b, lab_b = load_input(args.shift_scores, judge=labels["judge"], criterion=labels["criterion"],
                                  variant=None, grid=grid, alpha=args.alpha)
        shift = shift_study(inp, inp_b, methods=methods, alpha=args.alpha, seeds=seeds, lam=lam,
                            ordinal_grid=args.ordinal_grid, fit_share=args.fit_share)
        study = dataclasses.replace(study, shift=shift, labels={**labels, "shift_scores_file": lab_b["scores_file"]})
    md = render_markdown(study)
    for line in intervals_caveats(study):  # small samples say so (issue 24 §7)
        md = md.rstrip("\n") + f"\n\nCaveat: {line}\n"
    if audit is not None:
        md = md.rstrip("\n") + f"\n\n{printable(audit.summary(), 400)}\n"
    doc = jsonsafe.jsonable(study) | ({"audit": audit.to_json()} if audit is not None else {})
    if args.markdown:
        write_display(args.markdown, md, inputs=inputs)
    if args.json_path != "-":
        echo(md, end="")
    if args.json_path:
        emit_json(doc, args.json_path, inputs)
    return 0
