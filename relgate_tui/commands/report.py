"""``relgate report RUN [--format md|json|csv] [--output PATH]``: print or write a run's results."""

from __future__ import annotations

import argparse
import sys
from typing import Any

NAME = "report"
ORDER = 2
EXIT_OK = 0


def register(sub: Any) -> None:
    p = sub.add_parser("report", help="export a run's results", description="Print or write a run's results.")
    p.add_argument("run", metavar="RUN", help="run id (or unique prefix) or run directory")
    p.add_argument("--format", choices=("md", "json", "csv"), default="md")
    p.add_argument("--output", "-o", metavar="PATH", help="write to PATH instead of stdout")
    p.add_argument("--run-dir", metavar="DIR")



def run(args: argparse.Namespace) -> int:
    from relgate_tui.demo.simulate import SIM_MODELS
    from relgate_tui.engine.certification.report import render_report, write_report
    from relgate_tui.engine.certification.result import read_result
    from relgate_tui.engine.runs.listing import open_run
    from relgate_tui.engine.runs.paths import runs_dir

    store = open_run(args.run, runs_dir(args.run_dir))
    doc = read_result(store)
    if doc is None:
        raise ValueError(
            f"run {store.run_id} has no results yet (status: {store.status}); rerun its certify command to finish it"
        )
    if args.output:
        path = write_report(doc, args.format, args.output, simulated_models=SIM_MODELS)
        print(f"wrote {path}", file=sys.stderr)
    else:
        sys.stdout.write(render_report(doc, args.format, simulated_models=SIM_MODELS))
    return EXIT_OK
