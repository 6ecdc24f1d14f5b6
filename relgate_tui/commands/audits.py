"""``relgate audits``: list the stored judge audits, or reopen one offline and export it (issue 9 item 4).

``relgate audits`` prints one line per audit (id, data / criterion, judges, variants, answers stored of planned,
finished or not). ``relgate audits ID`` recomputes that audit's result from its stored answers with no endpoint
(``--json FILE|-``, ``--markdown FILE``; default: the summary lines); ``--scores FILE`` writes its direct scores as a
judge scores file, the input of ``relgate judge intervals`` / ``judge irt`` / ``judge jury`` and of the TUI's Studies.
"""

from __future__ import annotations

import argparse
import sys

from relgate_tui.core.text import counted

NAME = "audits"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(NAME, help="list stored judge audits, or reopen one offline and export it",
                              description="List stored judge audits (<data dir>/audits), or reopen one offline.")
    p.add_argument("audit", nargs="?", default=None, help="an audit id (or its directory) to reopen")
    p.add_argument("--json", default=None, help="write the reopened audit's JSON here ('-' = stdout)")
    p.add_argument("--markdown", default=None, help="write the reopened audit's Markdown report here")
    p.add_argument("--repair", action="store_true",
                   help="move the corrupt lines of the audit's answers.jsonl to answers.jsonl.quarantine")
    p.add_argument("--scores", default=None, metavar="FILE",
                   help="write the audit's direct scores as a judge scores file (the Studies' input; JSONL)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from relgate_tui.engine.judging import audit_json, list_audits, markdown_report, reopen_result, summary_lines
    from relgate_tui.engine.judging.store import audits_dir
    from relgate_tui.engine.runs.outputs import check_outputs, echo, write_display, write_output
    from relgate_tui.errors import RelgateError

    if args.repair and args.audit is None:
        print("relgate: error: --repair needs an audit id (`relgate audits` lists them)", file=sys.stderr)
        return 2
    if args.audit is None:
        rows = list_audits()
        if not rows:
            print(f"no stored audits in {audits_dir()}")
            return 0
        for s in rows:
            state = "finished" if s.finished else "unfinished"
            echo(f"{s.id}  {s.data} / {s.criterion}  {s.protocol}  judges {', '.join(s.judges)}  "
                  f"variants {', '.join(s.variants)}  answers {s.answers}/{s.planned}  {state}  {s.created}")
        return 0
    path = Path(args.audit)
    if not path.is_dir():
        path = audits_dir() / args.audit
    if args.repair:
        from relgate_tui.engine.judging.store import AuditStore

        try:
            with AuditStore.open(path) as store:
                moved = store.repair()
        except RelgateError as exc:
            print(f"relgate: error: {str(exc).splitlines()[0]}", file=sys.stderr)
            return 2
        echo(f"audit {path.name}: " + (f"moved {counted(moved, 'corrupt line')} to answers.jsonl.quarantine" if moved
                                      else "no corrupt line"), file=sys.stderr)
        return 0
    try:
        check_outputs((args.json, args.markdown, args.scores))
        if args.scores:
            from relgate_tui.engine.judging.as_scores import audit_scores

            scores = audit_scores(path)
            write_output(args.scores, scores.scores_jsonl())
            echo(f"wrote {len(scores.records)} scores to {args.scores} ({scores.summary()})", file=sys.stderr)
        result = reopen_result(path)
        if args.json == "-":
            print(audit_json(result), end="")
        elif args.json:
            write_output(args.json, audit_json(result))
        if args.markdown:
            write_display(args.markdown, markdown_report(result))
    except RelgateError as exc:
        print(f"relgate: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    if args.json != "-":
        echo("\n".join(summary_lines(result)))
    return 0
