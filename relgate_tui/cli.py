"""Command-line entry point: ``relgate`` (the TUI) and its headless sub-commands (SPEC §5.5, issue 5 item 7).

::

    relgate                                  the terminal UI
    relgate certify --task T --endpoint URL --model M [options]   headless certification (exit 0 / 1 / 2)
    relgate certify --config run.toml [options]   the same, every flag read from a TOML file (flags win)
    relgate runs [--run-dir DIR] [--repair RUN]   list runs (or quarantine a run's corrupt lines)
    relgate runs rm RUN | relgate runs prune [--dry-run]
    relgate report RUN [--format md|json|csv] [--output PATH]
    relgate tasks                            bundled tasks
    relgate demo-server [--port N] [--latency-ms X] [--fault-rate R]
    relgate judge-audit --data hanna --criterion Coherence --endpoint URL --model NAME [...]

Exit codes: 0 done (and passed, or no gate), 1 below ``--min-reliability``, 2 error, 3 sampling incomplete (some
items were not sampled to their stop because requests failed: no PASS/FAIL is decided on partial data; rerun the same
command to retry them). Every user error is one line on stderr ("relgate: error: …"), never a traceback.
``relgate certify`` never imports Textual.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, NoReturn

EXIT_OK, EXIT_BELOW_GATE, EXIT_ERROR, EXIT_INCOMPLETE = 0, 1, 2, 3


class UsageError(Exception):
    """A bad command line (raised instead of argparse's multi-line usage dump)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _err(message: str) -> None:
    from relgate_tui.core.redact import redact, redact_urls
    from relgate_tui.core.text import one_line

    text = " ".join(one_line(redact_urls(redact(str(message)))).split()) or "unknown error"
    print(f"relgate: error: {text}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------------------ parser
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="relgate", description="How far can this language model be trusted on this task?")
    from relgate_tui import __version__

    parser.add_argument("--version", action="version", version=f"relgate {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    c = sub.add_parser("certify", help="certify a model on a task (headless; exit 0 pass / 1 below gate / 2 error / "
                                       "3 sampling incomplete)",
                       description="Sample, verify, calibrate and report a model's reliability on a task.")
    c.add_argument("--config", metavar="FILE", help="a run config (TOML): every key is one of these flags "
                   "(k-max = 20); flags given here win")
    c.add_argument("--task", required=True, metavar="NAME_OR_PATH", help="bundled task name or .jsonl/.csv file")
    c.add_argument("--endpoint", required=True, metavar="URL", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    c.add_argument("--model", required=True, metavar="NAME")
    c.add_argument("--api-key-env", metavar="VAR", help="NAME of the environment variable holding the API key")
    c.add_argument("--canon", metavar="SPEC", help="numeric | mcq | text | math | regex:PATTERN (default: the task's)")
    c.add_argument("--system", metavar="PROMPT", help="system prompt")
    c.add_argument("--temperature", type=float, default=0.7)
    c.add_argument("--max-tokens", type=int, metavar="N")
    c.add_argument("--k-max", type=int, default=20, metavar="K", help="samples per item at most (default 20)")
    c.add_argument("--delta", type=float, default=0.05, help="stopping-rule error level (default 0.05)")
    c.add_argument("--stopping", choices=("anytime", "paper", "none"), default="anytime")
    c.add_argument("--alpha", type=float, default=0.10, help="conformal miscoverage level (default 0.10)")
    c.add_argument("--n-cal", type=int, metavar="N", help="calibration items (default: half)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--concurrency", type=int, default=8)
    c.add_argument("--labels", metavar="FILE", help='JSONL verdicts: {"id", "rank": r} | {"id", "none": true} | {"id", "skip": true}')
    c.add_argument("--min-reliability", type=float, metavar="R",
                   help="gate: exit 1 when the reliability (see --gate-on) is below R")
    c.add_argument("--gate-on", choices=("bound", "level", "assisted", "best"), default=None,
                   help="gate on the lower confidence bound (default: a model at R passes <= 1 - confidence of the "
                        "time), on the point estimate (passes such a model about half the time), on the "
                        "judge-assisted bound, or on the better of the human-only and assisted bounds at half the "
                        "error each (best: the default with --verify-judge-model)")
    c.add_argument("--confidence", type=float, default=0.95, metavar="C",
                   help="confidence of the lower bound (default 0.95)")
    c.add_argument("--json", metavar="PATH", dest="json_path", help="write the result document to PATH ('-' = stdout)")
    c.add_argument("--run-dir", metavar="DIR", help="directory holding runs (default: the data dir's runs/)")
    c.add_argument("--price-in", type=float, metavar="X", help="price per million input tokens")
    c.add_argument("--price-out", type=float, metavar="Y", help="price per million output tokens")
    c.add_argument("--limit", type=int, metavar="N", help="use only the first N items of the task file")
    c.add_argument("--timeout", type=float, default=60.0, metavar="S", help="per-request timeout in seconds")
    c.add_argument("--quiet", action="store_true", help="no progress output")
    j = c.add_argument_group("pairwise judge (optional): a second ranking of each item's answers by an LLM judge")
    j.add_argument("--pairwise-judge-endpoint", metavar="URL", help="the judge's OpenAI-compatible base URL")
    j.add_argument("--pairwise-judge-model", metavar="NAME", help="the judge model")
    j.add_argument("--pairwise-judge-api-key-env", metavar="VAR", help="NAME of the variable holding the judge's key")
    j.add_argument("--pairwise-judge-reps", type=int, default=3, metavar="K",
                   help="odd number of verdicts per pair, random orders (default 3)")

    v = c.add_argument_group("verification judge (optional): checks every item's top answer; the judge-assisted "
                             "bound needs fewer human labels when the judge is good")
    v.add_argument("--verify-judge-model", metavar="NAME", help="the verification judge model")
    v.add_argument("--verify-judge-endpoint", metavar="URL", help="its OpenAI-compatible base URL (default: --endpoint)")
    v.add_argument("--verify-judge-api-key-env", metavar="VAR", help="NAME of the variable holding its key")
    c.add_argument("--verification", choices=("auto", "human", "audit"), default="auto",
                   help="auto: references verify; human: a person verifies every calibration item (the spot-check); "
                        "audit: auto, and a person re-checks --audit-fraction of the reference verdicts")
    c.add_argument("--audit-fraction", type=float, default=0.2, metavar="F", help="audit: the share re-checked (0.2)")

    r = sub.add_parser("runs", help="list runs", description="List the runs in the data dir (or --run-dir).")
    r.add_argument("--run-dir", metavar="DIR")
    r.add_argument("--json", action="store_true", dest="as_json", help="print the list as JSON")
    r.add_argument("--repair", metavar="RUN", help="move the corrupt lines of a run's samples/labels to *.quarantine")
    r.add_argument("action", nargs="?", choices=("rm", "prune"),
                   help="rm RUN: delete a run; prune: delete every run holding nothing (no sample, label or result)")
    r.add_argument("target", nargs="?", metavar="RUN", help="the run to delete (rm): id, unique prefix or directory")
    r.add_argument("--dry-run", action="store_true", help="prune: list what would be deleted, delete nothing")

    p = sub.add_parser("report", help="export a run's results", description="Print or write a run's results.")
    p.add_argument("run", metavar="RUN", help="run id (or unique prefix) or run directory")
    p.add_argument("--format", choices=("md", "json", "csv"), default="md")
    p.add_argument("--output", "-o", metavar="PATH", help="write to PATH instead of stdout")
    p.add_argument("--run-dir", metavar="DIR")

    sub.add_parser("tasks", help="list the bundled tasks")
    sub.add_parser("demo-server", help="serve simulated models on 127.0.0.1 (OpenAI API)", add_help=False)
    from relgate_tui import commands

    for mod in commands.modules():
        mod.register(sub)
        COMMANDS[mod.NAME] = mod.run

    p = sub.add_parser(
        "judge-audit", help="audit an LLM judge: preference cycles, MFAS rankings, position bias, Likert sets",
        description="Audit an LLM judge on a data set with human scores (paper 000).",
    )
    from relgate_tui.engine.judging.audit_cli import add_arguments

    add_arguments(p)
    return parser


# ---------------------------------------------------------------------------------------------------------- progress
class _Progress:
    """Progress of ``relgate certify`` on stderr: a Rich bar on a terminal, a few plain lines otherwise."""

    def __init__(self, total_items: int, k_max: int, quiet: bool) -> None:
        from rich.console import Console

        self.console = Console(stderr=True, highlight=False, soft_wrap=True)
        self.quiet = quiet
        self.total = total_items
        self.k_max = k_max
        self.done_items = 0
        self.made = self.cached = self.failed = 0
        self._bar = None
        self._task = None
        self._last_line = 0.0
        if not quiet and self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("[bold]sampling"), BarColumn(), MofNCompleteColumn(), TextColumn("items"),
                TimeRemainingColumn(), TextColumn("{task.fields[calls]}"), console=self.console, transient=False,
            )
            self._task = self._bar.add_task("sampling", total=total_items, calls=self._calls_text())
            self._bar.start()

    def _calls_text(self) -> str:
        return f"calls made {self.made} · cached {self.cached} · failed {self.failed}"

    def update(self, *, done_items: int, made: int, cached: int, failed: int) -> None:
        self.done_items, self.made, self.cached, self.failed = done_items, made, cached, failed
        if self.quiet:
            return
        if self._bar is not None:
            assert self._task is not None
            self._bar.update(self._task, completed=done_items, calls=self._calls_text())
        else:
            now = time.monotonic()
            if now - self._last_line >= 2.0 or done_items == self.total:
                self._last_line = now
                self.console.print(f"sampling: {done_items}/{self.total} items, {self._calls_text()}")

    def message(self, text: str) -> None:
        if not self.quiet:
            from rich.text import Text

            from relgate_tui.core.text import one_line

            self.console.print(Text(one_line(text)))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


# ---------------------------------------------------------------------------------------------------------- commands
def _cmd_certify(args: argparse.Namespace) -> int:
    from relgate_tui.engine.certification.certify import CertifyConfig

    cfg = CertifyConfig(
        task=args.task,
        endpoint=args.endpoint,
        model=args.model,
        api_key_env=args.api_key_env,
        canon=args.canon,
        system=args.system,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        k_max=args.k_max,
        delta=args.delta,
        stopping=args.stopping,
        alpha=args.alpha,
        n_cal=args.n_cal,
        seed=args.seed,
        concurrency=args.concurrency,
        labels=args.labels,
        min_reliability=args.min_reliability,
        gate_on=args.gate_on or ("best" if args.verify_judge_model else "bound"),
        confidence=args.confidence,
        run_dir=args.run_dir,
        price_in=args.price_in,
        price_out=args.price_out,
        limit=args.limit,
        timeout_s=args.timeout,
        pairwise_judge_endpoint=args.pairwise_judge_endpoint,
        pairwise_judge_model=args.pairwise_judge_model,
        pairwise_judge_api_key_env=args.pairwise_judge_api_key_env,
        pairwise_judge_reps=args.pairwise_judge_reps,
        verify_judge_model=args.verify_judge_model,
        verify_judge_endpoint=args.verify_judge_endpoint,
        verify_judge_api_key_env=args.verify_judge_api_key_env,
        verification=args.verification,
        audit_fraction=args.audit_fraction,
    ).validate()
    from relgate_tui.engine.certification.pipeline import Done, EndpointDown, EndpointUp, Judging, Sampling, run_certify

    if args.json_path and args.json_path != "-":
        from relgate_tui.engine.runs.outputs import check_output_path

        check_output_path(args.json_path, inputs=(args.task, args.labels))
    progress: _Progress | None = None
    judge_state = {"last": 0.0}

    def on_event(event: Any) -> None:
        nonlocal progress
        if isinstance(event, Judging):
            on_judge_progress(event)
            return
        if isinstance(event, Done):
            return
        if isinstance(event, (EndpointDown, EndpointUp)):
            if progress is not None:
                progress.message(event.message)
            return
        assert isinstance(event, Sampling)
        if progress is None:
            progress = _Progress(event.total_items, cfg.k_max, args.quiet)
        if event.message:
            progress.message(event.message)
        c = event.calls
        progress.update(done_items=event.done_items, made=c.made, cached=c.cached, failed=c.failed)

    def on_judge_progress(update: Judging) -> None:
        if args.quiet:
            return
        from rich.console import Console
        from rich.text import Text

        from relgate_tui.core.text import one_line

        con = Console(stderr=True, highlight=False, soft_wrap=True)
        if update.message:
            con.print(Text(one_line(update.message)))
        now = time.monotonic()
        if now - judge_state["last"] >= 2.0 or update.done == update.total:
            judge_state["last"] = now
            c = update.calls
            con.print(f"{update.which} judge: {update.done}/{update.total} verdicts, calls made {c.made} · "
                      f"cached {c.cached} · failed {c.failed}")

    try:
        outcome = run_certify(cfg, on_event)
    finally:
        if progress is not None:
            progress.close()
    doc = outcome.document
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json(doc, args.json_path, (args.task, args.labels))
    if not args.quiet:
        _print_summary(doc, outcome.run_path)
    if not doc.get("sampling_complete", True):
        return EXIT_INCOMPLETE
    return EXIT_BELOW_GATE if doc["passed"] is False else EXIT_OK


def _fmt_pct(x: Any) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _print_summary(doc: dict[str, Any], run_path: Any) -> None:
    from rich.console import Console
    from rich.markup import escape

    con = Console(stderr=True, highlight=False, soft_wrap=True)
    m = doc["m_star"]
    calls = doc["calls"]
    verdict = {None: "", True: "  [bold green]PASS[/]", False: "  [bold red]FAIL[/]"}[doc["passed"]]
    con.print(
        f"reliability level {_fmt_pct(doc['reliability_level'])} "
        f"(≥ {_fmt_pct(doc['reliability_lower_bound'])} with {doc['confidence']:.0%} confidence, "
        f"n = {doc['reliability_n']}){verdict}"
    )
    assisted = doc.get("judge_assisted")
    if assisted:
        _print_assisted(con, assisted)
    if doc.get("gate"):
        basis = {"bound": "lower bound", "level": "level", "assisted": "judge-assisted bound",
                 "best": "better bound"}.get(doc["gate_on"], doc["gate_on"])
        con.print(f"gate (on the {basis}): {escape(doc['gate']['summary'])}")
    worst = doc.get("worst_case") or {}
    if doc.get("n_skipped") and worst.get("level") is not None:
        con.print(f"worst case with the {doc['n_skipped']} skipped item(s) counted as misses: level "
                  f"{_fmt_pct(worst['level'])} (≥ {_fmt_pct(worst['lower_bound'])})")
    if (doc.get("canon") or {}).get("source", "").startswith(("suggested", "no reference")):  # issue 31 item 4
        con.print(f"canonicalizer {escape(doc['canon']['spec'])}: {escape(doc['canon']['source'])} (--canon to choose)")
    con.print(
        f"M* = {'∞' if m is None else m} at α = {doc['alpha']}; calibration items {doc['n_cal']}, "
        f"skipped {doc['n_skipped']}, pending {doc['n_pending']}"
        + (f"; coverage {_fmt_pct(doc['coverage'])}" if doc["coverage"] is not None else "")
    )
    if sets_message := (doc.get("prediction_sets") or {}).get("message"):  # its "M* = ∞ at α: " is said above
        con.print(f"[yellow]{escape(sets_message.split(': ', 1)[-1] if sets_message.startswith('M* = ') else sets_message)}[/]")
    if doc.get("n_incomplete"):
        con.print(
            f"[yellow]sampling incomplete: {doc['n_incomplete']} item(s) not sampled to their stop, "
            f"{doc.get('n_not_sampled', 0)} of them not sampled at all (requests failed) — no PASS/FAIL on partial "
            "data (exit 3); rerun the same command to retry them[/]"
        )
    if doc.get("calibration_message"):
        con.print(f"[yellow]{escape(doc['calibration_message'])}[/]")
    con.print(
        f"calls made {calls['made']}, cached {calls['cached']}, failed {calls['failed']}, "
        f"saved vs K_max {_fmt_pct(calls['saved_vs_kmax'])}; run {escape(doc['run_id'])} ({escape(str(run_path))})"
    )
    judge = doc.get("pairwise_judge")
    if judge:
        for name, label in (("frequency", "frequency ranking"), ("judge", "judge ranking    ")):
            r = judge["rankings"][name]
            con.print(f"{label}: reliability {_fmt_pct(r['reliability_level'])} "
                      f"(≥ {_fmt_pct(r['reliability_lower_bound'])}), M* = {'∞' if r['m_star'] is None else r['m_star']}"
                      + (f", coverage {_fmt_pct(r['coverage']['estimate'])}" if r.get("coverage") else ""))
        cyc = judge["cycles"]
        con.print(f"judge cycles: {cyc['n_items_with_cycle']} of {cyc['n_items_with_triples']} items with ≥ 3 "
                  f"compared answers have a preference cycle (mean ρ {cyc['mean_rho'] or 0:.3f}); judge reordered "
                  f"{judge['n_items_reordered']} of {judge['n_items_judged']} items; judge calls made "
                  f"{judge['calls']['made']}, cached {judge['calls']['cached']}")


def _print_assisted(con: Any, block: dict[str, Any]) -> None:
    from rich.markup import escape

    if block.get("lower_bound") is None:
        con.print(f"judge-assisted: {escape(str(block.get('message', '')))}")
        return
    ag = block["agreement"]
    far = ag["false_accept"]
    kappa = ag["kappa"]
    if block.get("warning"):  # a constant verification judge (issue 31 item 7)
        con.print(f"[bold yellow]warning: {escape(str(block['warning']))}[/]")
    con.print(f"judge-assisted reliability {_fmt_pct(block['estimate'])} (≥ {_fmt_pct(block['lower_bound'])} with "
              f"{block['confidence']:.0%} confidence; {block['n_labels']} human labels, {block['n_judged']} items "
              f"judged by {escape(block['judge']['model'])})"
              + (f"; ≈ {block['more_labels']} more labels to clear the gate" if block.get("more_labels") else ""))
    kappa_text = ("—" if kappa["estimate"] is None else f"{kappa['estimate']:.2f}"
                  + (f" [{kappa['lower']:.2f}, {kappa['upper']:.2f}]" if kappa["lower"] is not None else ""))
    con.print(f"judge vs human on {ag['n']} labelled items: agreement {_fmt_pct(ag['agreement_rate'])}, "
              f"κ {kappa_text}, false accepts {ag['table']['judge_yes_human_no']} of {far['n_human_no']} wrong "
              f"answers (rate ≤ {_fmt_pct(far['upper'])} with {block['confidence']:.0%} confidence)")


def _cmd_runs(args: argparse.Namespace) -> int:
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
        print(f"run {store.run_id}: " + (f"moved {total} corrupt line(s) to *.quarantine ({detail})" if total
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

    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=200)  # piped: full rows, no truncation
    columns = ["run", "task", "model", "created", "status", "samples", "labels", "reliability", "bound", "M*", "gate"]
    if console.width < 150:  # narrow terminal: the run id already names the task and model
        columns = ["run", "status", "samples", "reliability", "bound", "M*", "gate"]
    from rich.text import Text

    from relgate_tui.core.text import one_line

    table = Table(title=Text(f"runs in {one_line(str(root))}"), title_justify="left")
    for col in columns:
        if col == "run":
            table.add_column(col, no_wrap=True, overflow="ellipsis", max_width=max(20, console.width - 62))
        else:
            table.add_column(col, no_wrap=True, overflow="ellipsis",
                             min_width=7 if col == "gate" else max(len(col), 4))  # "no gate" whole
    for r in rows:
        cells = {
            "run": r.run_id, "task": r.task, "model": r.model + (" (simulated)" if r.simulated else ""), "created": r.created.replace("T", " ")[:19],
            "status": r.status, "samples": str(r.n_samples), "labels": str(r.n_labels),
            "reliability": _fmt_pct(r.reliability_level), "bound": _fmt_pct(r.reliability_lower_bound),
            "M*": r.m_star_text,
            "gate": r.gate_text,
        }
        table.add_row(*(Text(one_line(str(cells[c]))) for c in columns))  # ids and names are untrusted text
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


def _cmd_report(args: argparse.Namespace) -> int:
    from relgate_tui.engine.certification.report import render_report, write_report
    from relgate_tui.engine.runs.listing import open_run
    from relgate_tui.engine.runs.paths import runs_dir

    store = open_run(args.run, runs_dir(args.run_dir))
    doc = store.read_results()
    if doc is None:
        raise ValueError(
            f"run {store.run_id} has no results yet (status: {store.status}); rerun its certify command to finish it"
        )
    if args.output:
        path = write_report(doc, args.format, args.output)
        print(f"wrote {path}", file=sys.stderr)
    else:
        sys.stdout.write(render_report(doc, args.format))
    return EXIT_OK


def _cmd_tasks(args: argparse.Namespace) -> int:
    from relgate_tui.engine.certification.tasks import format_task_table

    print(format_task_table())
    return EXIT_OK


def _cmd_judge_audit(args: argparse.Namespace) -> int:
    from relgate_tui.engine.judging.audit_cli import judge_audit_main

    return judge_audit_main(args)


COMMANDS = {
    "certify": _cmd_certify,
    "runs": _cmd_runs,
    "report": _cmd_report,
    "tasks": _cmd_tasks,
    "judge-audit": _cmd_judge_audit,
}


def _run_tui() -> int:
    try:
        from relgate_tui.tui.app import run
    except ImportError:
        _err("the terminal UI is not installed in this build")
        return EXIT_ERROR
    result = run()
    return result if isinstance(result, int) else EXIT_OK


def _user_error_types() -> tuple[type[BaseException], ...]:
    """Error types whose message is meant for the user: :class:`relgate_tui.errors.RelgateError` (the root), and,
    until every module raises it, ValueError (TaskError, CertifyError, RunStoreError, the canonicalizer's and the
    stopping rule's errors); OSError covers files and sockets."""
    from relgate_tui.errors import RelgateError

    types: list[type[BaseException]] = [RelgateError, ValueError, OSError, UsageError]
    for module, name in (("relgate_tui.engine.transport.sampler", "EndpointUnreachable"),):
        mod = sys.modules.get(module)
        exc = getattr(mod, name, None) if mod is not None else None
        if isinstance(exc, type) and issubclass(exc, BaseException):
            types.append(exc)
    return tuple(types)


def _expand_config(argv: list[str]) -> list[str]:
    """``relgate certify --config FILE …``: the file's keys become flags placed before the command line's own, so
    a flag given on the command line wins (:mod:`relgate_tui.engine.certification.run_config`)."""
    if not argv or argv[0] != "certify":
        return argv
    rest, path = [], None
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--config" and i + 1 < len(argv):
            path, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--config="):
            path = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    if path is None:
        return argv
    from relgate_tui.engine.certification.run_config import config_argv, load_run_config

    return ["certify", *config_argv(load_run_config(path)), *rest]


def main(argv: list[str] | None = None) -> int:
    """Run relgate. Returns the process exit code (0 ok / pass, 1 below the gate, 2 error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        return _run_tui()
    if argv[0] == "demo-server":
        from relgate_tui.demo.cli import main as demo_main

        return int(demo_main(argv[1:]) or 0)
    try:
        argv = _expand_config(argv)
        args = build_parser().parse_args(argv)
        if args.command is None:
            return _run_tui()
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        _err("interrupted (the run is saved; rerun the same command to resume)")
        return EXIT_ERROR
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - the top level turns every error into one line
        if isinstance(exc, _user_error_types()):
            _err(str(exc) or exc.__class__.__name__)
        else:
            _err(f"unexpected {exc.__class__.__name__}: {exc} — please report this (with the command you ran)")
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
