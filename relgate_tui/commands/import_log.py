"""``relgate import {lm-eval,inspect,samples} PATH``: certify a run another tool already made (zero model calls).

Writes the same JSON document as ``certify`` (``calls.made`` = 0) plus ``imported_from``; exit 0 = passed (or no
gate), 1 = below ``--min-reliability``, 2 = error (one line on stderr).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from relgate_tui.core.text import counted

if TYPE_CHECKING:
    from relgate_tui.engine.certification.result import RunResult

NAME = "import"


_INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn"}


def safe(text: object, limit: int = 300) -> str:
    """Untrusted text (file names, model names, notes from a log) for one terminal line: control, format and bidi
    characters dropped, length bounded."""
    import unicodedata

    s = "".join(ch if unicodedata.category(ch) not in _INVISIBLE else " " for ch in str(text))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        NAME, help="certify an lm-eval / Inspect / samples log (no model calls; exit 0 pass / 1 below gate / 2 error)",
        description="Import the repeated answers of an lm-evaluation-harness --log_samples file, an Inspect log "
                    "(.json or .eval) or a samples JSONL into a run, and certify it with zero model calls.")
    p.add_argument("source", choices=("lm-eval", "inspect", "samples"), help="the tool that wrote the log")
    p.add_argument("path", metavar="PATH", help="the log file (lm-eval: a samples file or its output directory)")
    p.add_argument("--task", metavar="NAME", help="task to import from an lm-eval directory; the run's task name")
    p.add_argument("--canon", metavar="SPEC", help="numeric | mcq | text | regex:PATTERN (default: suggested)")
    p.add_argument("--alpha", type=float, default=0.10, help="conformal miscoverage level (default 0.10)")
    p.add_argument("--n-cal", type=int, metavar="N", help="calibration items (default: half)")
    p.add_argument("--seed", type=int, default=0, help="seed of the calibration split and tie-breaks")
    p.add_argument("--labels", metavar="FILE", help="JSONL verdicts, as for certify")
    p.add_argument("--min-reliability", type=float, metavar="R", help="gate: exit 1 below this reliability level")
    p.add_argument("--json", metavar="PATH", dest="json_path", help="write the result document to PATH ('-' = stdout)")
    p.add_argument("--run-dir", metavar="DIR", help="directory holding runs (default: the data dir's runs/)")
    p.add_argument("--quiet", action="store_true", help="no summary on stderr")


def _summary(r: RunResult, run_path: Any, reused: bool) -> None:
    from rich.console import Console
    from rich.text import Text

    from relgate_tui.commands.certify_summary import fmt_pct as pct

    imp = r.imported
    assert imp is not None  # an imported run's result has its provenance
    con = Console(stderr=True, highlight=False, soft_wrap=True)
    k = "?" if imp.k is None else imp.k
    con.print(Text(f"imported {r.task.items} items × up to K = {k} answers from {imp.tool} "
                   f"{safe(imp.version)} ({safe(imp.model)}); 0 model calls" + ("; run already existed, results "
                                                                                 "recomputed" if reused else "")))
    verdict = {None: "", True: "  PASS", False: "  FAIL"}[r.passed]
    basis = f"with {r.confidence:.0%} confidence" if r.watch in ("once", None) else f"the {r.bound_name}"
    con.print(Text(f"reliability level {pct(r.reliability_level)} (≥ {pct(r.reliability_lower_bound)} "
                   f"{basis}, n = {r.reliability_n}); M* = "
                   f"{'∞' if r.m_star is None else r.m_star} at α = {r.alpha}{verdict}"))
    if r.fixed_n_line:
        con.print(Text(r.fixed_n_line, style="dim"))
    if imp.n_flagged:
        con.print(Text(f"{imp.n_flagged} of {r.task.items} items flagged: no self-consistency signal",
                       style="yellow"))
        for flag, n in imp.flags:
            con.print(Text(f"  {flag}: {counted(n, 'item')} — {imp.flag_reasons.get(flag, '')}", style="yellow"))
    if r.n_incomplete:
        one = r.n_incomplete == 1
        con.print(Text(f"{counted(r.n_incomplete, 'item')} {'has' if one else 'have'} fewer than K = {k} "
                       f"answers (unfinished log or errored samples): {'its' if one else 'their'} answers are used as "
                       "they are", style="yellow"))
    for note in imp.notes:
        con.print(Text(f"note: {safe(note)}"))
    from relgate_tui.engine.importers.run import counting_notes

    for note in counting_notes(r):  # how this figure relates to the tool's own (issue 31 item 26)
        con.print(Text(f"note: {note}"))
    con.print(Text(f"run {safe(r.run_id)} ({safe(run_path)})"))


def run(args: argparse.Namespace) -> int:
    from relgate_tui.engine.importers.run import ImportOptions, import_file
    from relgate_tui.engine.runs.outputs import check_outputs

    inputs = (args.path, args.labels)
    check_outputs((args.json_path,), inputs)
    opts = ImportOptions(canon=args.canon, alpha=args.alpha, n_cal=args.n_cal, seed=args.seed, labels=args.labels,
                         min_reliability=args.min_reliability, run_dir=args.run_dir)
    outcome = import_file(args.source, args.path, args.task, opts)  # the answers are freed once stored
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json(outcome.document, args.json_path, inputs)
    if not args.quiet:
        _summary(outcome.result, outcome.run_path, outcome.reused)
    return outcome.exit_code
