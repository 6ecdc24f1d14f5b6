"""``relgate compare RUN_A RUN_B [--margin M]``: is B no worse than A on the items both runs share? (issue 15 §2).

Exit 0 = B not worse (decided), 1 = B worse by more than the margin, 3 = undecided at this n (the summary says how
many more items would decide it), 2 = error. Exact tests: see :mod:`relgate_tui.core.certification.paired`.
"""

from __future__ import annotations

import argparse
from typing import Any

NAME = "compare"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        NAME, help="paired gate: is run B no worse than run A? (exit 0 not worse / 1 worse / 3 undecided / 2 error)",
        description="Compare two runs on their shared items with an exact paired test of 'B is worse than A by more "
                    "than the margin'.")
    p.add_argument("run_a", metavar="RUN_A", help="baseline run (id, unique id prefix or directory)")
    p.add_argument("run_b", metavar="RUN_B", help="candidate run")
    p.add_argument("--margin", type=float, default=0.05, metavar="M",
                   help="non-inferiority margin on top-answer accuracy (default 0.05)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="two-sided confidence of the interval; each one-sided claim errs with (1-c)/2 (default 0.95)")
    p.add_argument("--match", choices=("auto", "question"), default="auto",
                   help="pair items by document hash / id (auto, default) or by question text (question)")
    p.add_argument("--json", metavar="PATH", dest="json_path", help="write the comparison to PATH ('-' = stdout)")
    p.add_argument("--run-dir", metavar="DIR", help="directory holding runs (default: the data dir's runs/)")
    p.add_argument("--quiet", action="store_true", help="no summary on stderr")


def _summary(doc: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.text import Text

    con = Console(stderr=True, highlight=False, soft_wrap=True)
    t, d = doc["table"], doc["difference"]

    def pct(x: Any) -> str:
        return "—" if x is None else f"{100 * x:+.1f}%" if x else "0.0%"

    from relgate_tui.commands.import_log import safe

    con.print(Text(f"A {safe(doc['run_a']['run_id'])} vs B {safe(doc['run_b']['run_id'])}: {doc['n']} paired items "
                   f"(matched by {doc['matched_by']}; {doc['n_unverified']} shared items unverified)"))
    con.print(Text(f"B lost {t['b_lost']}, won {t['b_won']}, both right {t['both_right']}, both wrong "
                   f"{t['both_wrong']}; accuracy B − A {pct(d['estimate'])} "
                   f"[{pct(d['lower'])}, {pct(d['upper'])}] ({d['confidence']:.0%} exact)"))
    verdict = {"not_worse": f"B is not worse than A by more than {doc['margin']:g}",
               "worse": f"B is worse than A by more than {doc['margin']:g}",
               "undecided": "undecided at this n"}[doc["decision"]]
    if doc["decision"] == "undecided":
        verdict += f": {doc.get('more_items_message') or 'more items at the same rates would not decide it'}"
    con.print(Text(f"{verdict} (p = {min(doc['test']['p_not_worse'], doc['test']['p_worse']):.4g}; "
                   f"{doc['test']['method']})"))
    for note in doc.get("notes") or ():
        con.print(Text(f"note: {safe(note, 400)}", style="yellow"))
    s = doc["set_size"]
    if s["n"]:
        con.print(Text(f"set size A {s['mean_a']:.2f}, B {s['mean_b']:.2f} (B larger on {s['larger']}, smaller on "
                       f"{s['smaller']} items)"))


def run(args: argparse.Namespace) -> int:
    from relgate_tui.engine.certification.paired_runs import EXIT_CODES, compare_runs
    from relgate_tui.errors import UserError

    if not 0.0 <= args.margin < 1.0:
        raise UserError(f"--margin must be in [0, 1), got {args.margin!r}")
    if not 0.0 < args.confidence < 1.0:
        raise UserError(f"--confidence must be in (0, 1), got {args.confidence!r}")
    from relgate_tui.engine.runs.outputs import check_outputs

    check_outputs((args.json_path,))
    doc = compare_runs(args.run_a, args.run_b, margin=args.margin, confidence=args.confidence,
                       runs_root=args.run_dir, match=args.match)
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json(doc, args.json_path)
    if not args.quiet:
        _summary(doc)
    return EXIT_CODES[doc["decision"]]
