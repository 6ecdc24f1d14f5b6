"""``relgate judge …``: the judge certificate (issue 30) — may this judge grade instead of a person, and on which items.

::

    relgate judge certify --verdicts FILE | --run RUN | --audit ID [--agreement 0.90] [--confidence 0.95] [--min-coverage 0.50]
                          [--require consistency>=X] [--json PATH|-] [--markdown PATH]
    relgate judge certify --verdicts CHEAP --verdicts STRONG [--verdicts …] | --from-run RUN1 --from-run RUN2 [--from-run …]
                          [--judge-cost 0.2] [the options above]
    relgate judge certify --plan [--agreement 0.90] --expect 0.95 [--min-coverage 0.50] [--confidence 0.95]
    relgate judge apply CERT --verdicts FILE | --run RUN [--publish] [--json PATH|-]
    relgate judge apply CERT --verdicts CHEAP --verdicts STRONG [--verdicts …] | --from-run RUN1 --from-run RUN2 …
                       [--json PATH|-]

Several ``--verdicts`` (or ``--from-run``) are a judge cascade, cheapest first (:mod:`relgate_tui.commands._judge_cascade`).

``certify`` exits 0 PASS, 1 FAIL, 2 error, 3 not decidable (too few labels; it says how many more). The first line of
its output is the verdict sentence. Zero model calls: the statistics are :mod:`relgate_tui.core.judge_certificate`,
the files :mod:`relgate_tui.engine.judging.certificate`.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

NAME = "judge"
EXITS = {"PASS": 0, "FAIL": 1, "NOT DECIDABLE": 3}


def _source(q: argparse.ArgumentParser) -> None:
    q.add_argument("--verdicts", metavar="FILE", action="append",
                   help="JSONL: id; p_yes in [0, 1] or judge 0/1 (optional votes: list of 0/1); human 0/1 or absent. "
                        "Several: a judge cascade, cheapest first (the same items)")
    q.add_argument("--run", metavar="RUN", help="a run with a verification judge (its id, prefix or directory)")
    q.add_argument("--run-dir", metavar="DIR")
    q.add_argument("--from-run", metavar="RUN", action="append", help="a judge cascade from runs: each run's "
                   "verification judge, cheapest first (once per judge)")
    q.add_argument("--audit", metavar="ID", help="a stored pairwise judge audit with human scores (agreement = the "
                                                 "judge's preference matches the humans')")
    q.add_argument("--audit-judge", metavar="NAME", help="--audit: which of its judges (default: the first)")
    q.add_argument("--variant", metavar="NAME", help="--audit: the prompt variant (default: original)")
    f = q.add_argument_group("the judge's fingerprint for --verdicts (a certificate applies only to the same judge)")
    f.add_argument("--judge-endpoint", metavar="URL")
    f.add_argument("--judge-model", metavar="NAME")
    f.add_argument("--prompt-hash", metavar="HASH")
    f.add_argument("--temperature", type=float, metavar="T")
    f.add_argument("--top-logprobs", type=int, metavar="K")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(NAME, help="judges: audit, intervals, irt, jury, certify, apply, list",
                              description="Study an LLM judge: audit it, its score intervals, IRT and jury studies, "
                                          "its certificate (may it grade instead of a person, on which items) and "
                                          "the stored audits.")
    sub = p.add_subparsers(dest="judge_command", metavar="ACTION", parser_class=p.__class__, required=True)
    q = sub.add_parser("certify", help="certify a judge from its verdicts and human labels (exit 0 PASS, 1 FAIL, "
                                       "3 not decidable)")
    _source(q)
    q.add_argument("--agreement", type=float, default=0.90, metavar="A", help="guaranteed agreement (default 0.90)")
    q.add_argument("--confidence", type=float, default=0.95, help="confidence of the guarantee (default 0.95)")
    q.add_argument("--min-coverage", type=float, default=0.50, metavar="C",
                   help="PASS needs the judge to decide at least this share of items (default 0.50)")
    q.add_argument("--require", action="append", default=[], metavar="consistency>=X",
                   help="also require the share of items whose repeated verdicts agree to be ≥ X")
    q.add_argument("--judge-cost", type=float, metavar="K",
                   help="a cascade: one call of each judge after the first, in people's labels (default 0.2)")
    q.add_argument("--plan", action="store_true", help="print the labels needed instead (with --expect)")
    q.add_argument("--expect", type=float, metavar="E", help="--plan: the agreement you expect on decided items")
    q.add_argument("--json", metavar="PATH", dest="json_path", help="write the certificate as JSON ('-' = stdout)")
    q.add_argument("--markdown", metavar="PATH", help="write the certificate as Markdown")
    q = sub.add_parser("apply", help="apply a stored certificate to new verdicts: decided items keep the judge's "
                                     "verdict, the rest are listed for people")
    q.add_argument("cert", metavar="CERT", help="a certificate id (jc-…) or file")
    _source(q)
    q.add_argument("--publish", action="store_true", help="put the escalated items into a team-review session "
                                                          "(needs --run)")
    q.add_argument("--per-item", type=int, default=2, metavar="R", help="--publish: reviewers per item (default 2)")
    q.add_argument("--db", metavar="URL", help="--publish: the review store (default: $RELGATE_DB, else embedded)")
    q.add_argument("--json", metavar="PATH", dest="json_path", help="write the decisions as JSON ('-' = stdout)")


def _say(text: str) -> None:
    from relgate_tui.core.text import one_line

    print(one_line(text, 2000), file=sys.stderr, flush=True)


def _levels(args: argparse.Namespace) -> None:
    from relgate_tui.errors import UserError

    for name in ("agreement", "confidence"):
        v = getattr(args, name)
        if not 0.0 < v < 1.0:
            raise UserError(f"--{name} must be in (0, 1), got {v:g}")
    if not 0.0 <= args.min_coverage <= 1.0:
        raise UserError(f"--min-coverage must be in [0, 1], got {args.min_coverage:g}")


def _require(specs: list[str]) -> float | None:
    from relgate_tui.errors import UserError

    out = None
    for spec in specs:
        m = re.fullmatch(r"\s*consistency\s*>=\s*([0-9.]+)\s*", spec)
        if not m or not 0.0 <= float(m.group(1)) <= 1.0:
            raise UserError(f"--require: expected consistency>=X with X in [0, 1], got {spec!r}")
        out = float(m.group(1))
    return out


def _plan(args: argparse.Namespace) -> int:
    from relgate_tui.core.judge_certificate import plan_labels
    from relgate_tui.engine.judging.certificate_doc import plan_line
    from relgate_tui.engine.runs.outputs import check_outputs
    from relgate_tui.errors import UserError

    if args.expect is None or not 0.0 < args.expect <= 1.0:
        raise UserError("--plan needs --expect E in (0, 1]: the agreement you expect on the items the judge decides")
    if args.verdicts or args.run or args.audit:
        raise UserError("--plan reads no verdicts: drop --verdicts / --run / --audit")
    if args.markdown:
        raise UserError("--plan writes no Markdown: drop --markdown (use --json)")
    check_outputs((args.json_path,))
    plan = plan_labels(args.agreement, args.expect, max(args.min_coverage, 1e-3), args.confidence)
    print(plan_line(plan))
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json({"plan": plan.to_json()}, args.json_path)
    return 0


def run(args: argparse.Namespace) -> int:
    from relgate_tui.commands._judge_cascade import cascade_command, cascade_files

    files = cascade_files(args)  # one --verdicts: exactly as before
    if files:
        if args.judge_command == "certify":
            _levels(args)
        return cascade_command(args, files, EXITS)
    if args.judge_command == "apply":
        from relgate_tui.commands.judge_apply import apply_command

        return apply_command(args)
    _levels(args)
    if args.judge_cost is not None:
        from relgate_tui.errors import UserError

        raise UserError("--judge-cost applies to a cascade (two or more --verdicts, or --from-run): one judge saves "
                        "no other judge's calls; drop it")
    if args.plan:
        return _plan(args)
    from relgate_tui.commands._judge_source import load_source, report_rows
    from relgate_tui.engine.judging import certificate as store
    from relgate_tui.engine.judging.certificate_doc import compute, render_markdown
    from relgate_tui.engine.runs.outputs import check_outputs, write_display

    require = _require(args.require)
    from relgate_tui.errors import DataError

    check_outputs((None if args.json_path == "-" else args.json_path, args.markdown), (args.verdicts,))
    try:
        v = load_source(args)
    except DataError as exc:
        return report_rows(exc)
    doc = compute(v, agreement=args.agreement, confidence=args.confidence, min_coverage=args.min_coverage,
                  require_consistency=require)
    cert_id, path = store.save(doc)
    md = render_markdown(doc)
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json(doc.to_json(), args.json_path, inputs=(args.verdicts,))
    if args.markdown:
        write_display(args.markdown, md, inputs=(args.verdicts,))
    if args.json_path != "-":
        sys.stdout.write(md)
    _say(f"stored certificate {cert_id} ({path})")
    return EXITS[doc.certificate.verdict]
