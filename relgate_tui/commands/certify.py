"""``relgate certify``: sample, verify, calibrate and report a model's reliability on a task (SPEC §5.5; headless).

Exit 0 done (and passed, or no gate), 1 below ``--min-reliability``, 2 error, 3 sampling incomplete (some items were
not sampled to their stop because requests failed: no PASS/FAIL is decided on partial data; rerun the same command to
retry them). ``relgate certify --config FILE`` reads every flag from a TOML file (``cli.py`` expands it; flags win).
Never imports Textual.
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from relgate_tui.engine.certification.result import UsageInfo

NAME = "certify"
ORDER = 0  # first in --help
EXIT_OK, EXIT_BELOW_GATE, EXIT_INCOMPLETE = 0, 1, 3


def register(sub: Any) -> None:
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
                        "time; Clopper-Pearson when every verdict is a reference answer, the anytime bound when a "
                        "person labelled items), on the point estimate (passes such a model about half the time), "
                        "or on the judge-assisted bound at the full confidence (assisted = best: the default with "
                        "--verify-judge-model)")
    c.add_argument("--one-look", type=int, metavar="N", default=None,
                   help="decide the human-only gate once, at exactly N labels fixed now, before labelling (exact "
                        "Clopper-Pearson; nothing is decided before N labels). Part of the run id.")
    c.add_argument("--population", choices=("task", "items"), default="task",
                   help="what the judge-assisted bound is about: the task (default; a Clopper-Pearson step from the "
                        "N judged items) or the N judged items themselves (no step). Part of the run id.")
    c.add_argument("--confidence", type=float, default=0.95, metavar="C",
                   help="confidence of the lower bound (default 0.95)")
    c.add_argument("--json", metavar="PATH", dest="json_path", help="write the result document to PATH ('-' = stdout)")
    c.add_argument("--run-dir", metavar="DIR", help="directory holding runs (default: the data dir's runs/)")
    c.add_argument("--price-in", type=float, metavar="X", help="price per million input tokens")
    c.add_argument("--price-out", type=float, metavar="Y", help="price per million output tokens")
    c.add_argument("--limit", type=int, metavar="N", help="use only the first N items of the task file")
    c.add_argument("--timeout", type=float, default=60.0, metavar="S", help="per-request timeout in seconds")
    c.add_argument("--quiet", action="store_true", help="no progress output")
    from relgate_tui.commands.batch import price_factor

    c.add_argument("--batch", action="store_true", help="sample through the endpoint's Batch API in rounds (issue 32)")
    c.add_argument("--batch-price", type=price_factor, default=0.5, metavar="FACTOR",
                   help="batch price as a fraction of the direct price (default 0.5)")
    c.add_argument("--batch-max-mb", type=float, default=190.0, metavar="MB",
                   help="largest batch request file, in MiB (default 190; a round over it is several batches)")
    c.add_argument("--batch-deadline", type=float, default=25.0, metavar="HOURS",
                   help="stop when a batch has run this long, its id kept for a rerun (default 25: the 24 h window + 1)")
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



class _Progress:
    """Progress of ``relgate certify`` on stderr: a Rich bar on a terminal, a few plain lines otherwise."""

    def __init__(self, total_items: int, k_max: int, quiet: bool) -> None:
        self.console: Any = None  # --quiet: Rich is never imported (issue 32 §6: start-up)
        if not quiet:
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



def run(args: argparse.Namespace) -> int:
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
        one_look=args.one_look,
        population=args.population,
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
        batch=args.batch_price if args.batch else None,
        batch_max_mb=args.batch_max_mb,
        batch_deadline_h=args.batch_deadline,
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

    import gc

    gc.freeze()  # a one-shot process: the collector need not walk the modules again (issue 32 §6: ~0.07 s)
    try:
        outcome = run_certify(cfg, on_event)
    finally:
        if progress is not None:
            progress.close()
    doc = outcome.document
    if args.json_path:
        from relgate_tui.engine.certification.report import emit_json

        emit_json(doc, args.json_path, (args.task, args.labels))
    from relgate_tui.commands.certify_summary import print_summary, undecided
    from relgate_tui.engine.certification.result import RunResult

    result = RunResult.from_json(doc)
    if not args.quiet:
        print_summary(result, outcome.run_path)
        _print_cost(result.usage)
    if undecided(result):
        return EXIT_INCOMPLETE  # not decided: sampling incomplete, no verified item, a one-look not reached yet
    return EXIT_BELOW_GATE if result.passed is False else EXIT_OK


def _print_cost(usage: UsageInfo) -> None:
    """The run's cost (with --price-in/--price-out) on stderr; with --batch at the batch price beside the direct one
    (issue 32 §5)."""
    if usage.cost is None:
        return
    import sys

    text = f"cost ≈ ${usage.cost:.4f}"
    if usage.cost_direct is not None:
        text += f" at the batch price (×{usage.batch_price or 0.5:g} of direct ${usage.cost_direct:.4f})"
    print(text, file=sys.stderr)
