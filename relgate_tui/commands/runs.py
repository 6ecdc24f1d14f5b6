"""``relgate runs``: list the runs (``--json``), quarantine a run's corrupt lines (``--repair RUN``), delete a run
(``rm RUN``) or every empty one (``prune [--dry-run]``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from relgate_tui.core.text import counted

NAME = "runs"
ORDER = 1
EXIT_OK = 0


def register(sub: Any) -> None:
    r = sub.add_parser("runs", help="list runs", description="List the runs in the data dir (or --run-dir).")
    r.add_argument("--run-dir", metavar="DIR")
    r.add_argument("--json", action="store_true", dest="as_json", help="print the list as JSON")
    r.add_argument("--repair", metavar="RUN", help="move the corrupt lines of a run's samples/labels to *.quarantine")
    r.add_argument("action", nargs="?", choices=("rm", "prune"),
                   help="rm RUN: delete a run; prune: delete every run holding nothing (no sample, label or result)")
    r.add_argument("target", nargs="?", metavar="RUN", help="the run to delete (rm): id, unique prefix or directory")
    r.add_argument("--dry-run", action="store_true", help="prune: list what would be deleted, delete nothing")



def run(args: argparse.Namespace) -> int:
    from relgate_tui.commands.certify_summary import fmt_pct
    from relgate_tui.demo.simulate import SIM_MODELS
    from relgate_tui.engine.runs.listing import list_runs
    from relgate_tui.engine.runs.paths import runs_dir

    root = runs_dir(args.run_dir)
    if args.action:
        return _runs_remove(args, root)
    if args.repair:
        from relgate_tui.engine.runs.listing import open_run, repair_run

        store = open_run(args.repair, root)
        try:
            moved = repair_run(store)
        finally:
            store.close()
        total = sum(moved.values())
        detail = ", ".join(f"{n} from {name}" for name, n in moved.items() if n)
        print(f"run {store.run_id}: " + (f"moved {counted(total, 'corrupt line')} to *.quarantine ({detail})" if total
                                         else "no corrupt line"), file=sys.stderr)
        return EXIT_OK
    rows = list_runs(root)
    if args.as_json:
        out = [
            {k: (str(v) if k == "path" else v) for k, v in row.__dict__.items()}
            for row in rows
        ]
        print(json.dumps(out, indent=2))
        return EXIT_OK
    if not rows:
        print(f"no runs in {root}")
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from relgate_tui.core.text import one_line

    def cells(r: Any) -> dict[str, str]:  # ids and names are untrusted text: one line each, no controls
        return {k: one_line(str(v)) for k, v in {
            "run": r.run_id, "task": r.task, "model": r.model + (" (simulated)" if r.is_simulated(SIM_MODELS) else ""),
            "created": r.created.replace("T", " ")[:19], "status": r.status_text, "samples": r.n_samples,
            "labels": r.n_labels, "reliability": fmt_pct(r.reliability_level),
            "bound": fmt_pct(r.reliability_lower_bound), "M*": r.m_star_text, "gate": r.gate_text}.items()}

    columns = ["run", "task", "model", "created", "status", "samples", "labels", "reliability", "bound", "M*", "gate"]
    console = Console(highlight=False)
    if not console.is_terminal:  # a pipe or a file: tab-separated, every cell whole, one header line (cut, awk)
        lines = ["\t".join(columns)] + ["\t".join(c[k] for k in columns) for c in map(cells, rows)]
        sys.stdout.write("\n".join(lines) + "\n")
        return EXIT_OK
    if console.width < 150:  # narrow terminal: the run id already names the task and model
        columns = ["run", "status", "samples", "reliability", "bound", "M*", "gate"]
    table = Table(title=Text(f"runs in {one_line(str(root))}"), title_justify="left")
    for col in columns:
        if col == "run":
            table.add_column(col, no_wrap=True, overflow="ellipsis", max_width=max(20, console.width - 62))
        else:
            table.add_column(col, no_wrap=True, overflow="ellipsis",
                             min_width=7 if col == "gate" else max(len(col), 4))  # "no gate" whole
    for r in rows:
        row = cells(r)
        table.add_row(*(Text(row[c]) for c in columns))
    console.print(table)
    return EXIT_OK


def _runs_remove(args: argparse.Namespace, root: Any) -> int:
    """``relgate runs rm RUN`` / ``relgate runs prune [--dry-run]``."""
    from relgate_tui.core.text import one_line
    from relgate_tui.engine.runs.listing import empty_runs, open_run, remove_run
    from relgate_tui.errors import UserError

    if args.action == "rm":
        if not args.target:
            raise UserError("relgate runs rm RUN: name the run to delete (`relgate runs` lists them)")
        store = open_run(args.target, root)
        from pathlib import Path

        if not Path(store.path).resolve().is_relative_to(Path(root).resolve()):  # a directory named by path
            store.close()
            raise UserError(f"{one_line(str(args.target), 200)} is not a run of {one_line(str(root), 200)}: runs rm "
                            "deletes only runs in the data dir (or --run-dir)")
        summary = f"{store.run_id} ({store.status}, {store.count_files()['samples']} samples)"
        remove_run(store)
        print(f"deleted run {one_line(summary)}", file=sys.stderr)
        return EXIT_OK
    if args.target:
        raise UserError("relgate runs prune takes no RUN (it deletes every empty run; rm RUN deletes one)")
    empty = empty_runs(root)
    for s in empty:
        if not args.dry_run:
            from relgate_tui.engine.runs.store import RunStore

            remove_run(RunStore(s.path))
        print(f"{'would delete' if args.dry_run else 'deleted'} {one_line(s.run_id)} ({one_line(s.status)}, "
              "no sample, label or result)", file=sys.stderr)
    if not empty:
        print(f"no empty run in {one_line(str(root))}", file=sys.stderr)
    return EXIT_OK
