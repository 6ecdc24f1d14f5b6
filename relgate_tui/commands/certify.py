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
    """``relgate certify``'s parser: one flag per option of the option table
    (:mod:`relgate_tui.engine.certification.options`), and the flags that are no run option (``--config``, ``--json``,
    ``--quiet``, ``--batch``/``--batch-price``)."""
    from relgate_tui.engine.certification.options import flag_default, is_required, options

    c = sub.add_parser("certify", help="certify a model on a task (headless; exit 0 pass / 1 below gate / 2 error / "
                                       "3 sampling incomplete)",
                       description="Sample, verify, calibrate and report a model's reliability on a task.")
    c.add_argument("--config", metavar="FILE", help="a run config (TOML): every key is one of these flags "
                   "(k-max = 20); flags given here win")
    groups: dict[str, Any] = {}
    for name, opt, default in options():
        if opt.flag is None:
            continue
        target = c if not opt.group else groups.setdefault(opt.group, c.add_argument_group(opt.group))
        kwargs: dict[str, Any] = {"dest": name, "help": opt.help}
        if is_required(default):
            kwargs["required"] = True
        else:
            kwargs["default"] = flag_default(opt, default)
        for key in ("metavar", "choices", "type"):
            if getattr(opt, key) is not None:
                kwargs[key] = getattr(opt, key)
        target.add_argument(opt.flag, **kwargs)
        if name == "timeout_s":  # the flags that are no run option, in their old place in --help
            c.add_argument("--quiet", action="store_true", help="no progress output")
            from relgate_tui.commands.batch import price_factor

            c.add_argument("--batch", action="store_true",
                           help="sample through the endpoint's Batch API in rounds (issue 32)")
            c.add_argument("--batch-price", type=price_factor, default=0.5, metavar="FACTOR",
                           help="batch price as a fraction of the direct price (default 0.5)")
        elif name == "confidence":
            c.add_argument("--json", metavar="PATH", dest="json_path",
                           help="write the result document to PATH ('-' = stdout)")


def config_of(args: argparse.Namespace) -> Any:
    """The :class:`~relgate_tui.engine.certification.certify.CertifyConfig` of a parsed ``relgate certify``: every
    option from its flag; ``--gate-on`` by default the judge-assisted bound with a verification judge, else the bound;
    ``--batch`` at ``--batch-price``."""
    from relgate_tui.engine.certification.options import CertifyConfig, options

    values = {name: getattr(args, name) for name, opt, _ in options() if opt.flag is not None and name != "gate_on"}
    from relgate_tui.core.certification.gate_names import check_gate_on

    gate_on = check_gate_on(args.gate_on or ("assisted" if args.verify_judge_model else "bound"))
    return CertifyConfig(**values, gate_on=gate_on, batch=args.batch_price if args.batch else None)


class _Progress:
    """Progress of ``relgate certify`` on stderr: a Rich bar on a terminal, a few plain lines otherwise."""

    def __init__(self, total_items: int, k_max: int, quiet: bool, batched: bool = False) -> None:
        self.console: Any = None  # --quiet: Rich is never imported (issue 32 §6: start-up)
        if not quiet:
            from rich.console import Console

            self.console = Console(stderr=True, highlight=False, soft_wrap=True)
        self.quiet = quiet
        self.total = total_items
        self.k_max = k_max
        self.done_items = 0
        self.made = self.cached = self.failed = 0
        # --batch: a round's answers arrive at once and an item settles only when its stopping rule ends it (often
        # rounds later), so the line counts the samples stored, not only the items settled
        self.batched, self.stored, self._printed = batched, 0, -1
        self._bar = None
        self._task = None
        self._last_line = 0.0
        if not quiet and self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("[bold]sampling"), BarColumn(), MofNCompleteColumn(),
                TextColumn("items settled" if batched else "items"),
                TimeRemainingColumn(), TextColumn("{task.fields[calls]}"), console=self.console, transient=False,
            )
            self._task = self._bar.add_task("sampling", total=total_items, calls=self._calls_text())
            self._bar.start()

    def _calls_text(self) -> str:
        stored = f"{self.stored} samples stored · " if self.batched else ""
        return f"{stored}calls made {self.made} · cached {self.cached} · failed {self.failed}"

    def update(self, *, done_items: int, made: int, cached: int, failed: int, stored: int = 0,
               round_event: bool = False) -> None:
        """``stored``: samples stored so far; ``round_event``: a Batch API round's progress (with --batch the plain
        line is printed then, when samples were stored since the last one, and at the end — not mid-ingest)."""
        self.done_items, self.made, self.cached, self.failed = done_items, made, cached, failed
        self.stored = stored
        if self.quiet:
            return
        if self._bar is not None:
            assert self._task is not None
            self._bar.update(self._task, completed=done_items, calls=self._calls_text())
            return
        now = time.monotonic()
        due = (round_event and stored != self._printed) if self.batched else now - self._last_line >= 2.0
        if due or done_items == self.total:
            self._last_line, self._printed = now, stored
            self.console.print(f"sampling: {done_items}/{self.total} items{' settled' if self.batched else ''}, "
                               f"{self._calls_text()}")

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
    import gc

    collecting = gc.isenabled()
    gc.disable()  # the imports and checks below leave nothing to collect: ~100 young collections fewer (issue 42 §7)
    try:
        cfg = config_of(args).validate()
        from relgate_tui.engine.certification.pipeline import (
            Done,
            EndpointDown,
            EndpointUp,
            Judging,
            Sampling,
            run_certify,
        )

        if args.json_path and args.json_path != "-":
            from relgate_tui.engine.runs.outputs import check_output_path

            check_output_path(args.json_path, inputs=(args.task, args.labels))
    finally:
        gc.freeze()  # a one-shot process: the collector need not walk the modules again (issue 32 §6: ~0.07 s)
        if collecting:
            gc.enable()
    from relgate_tui.engine.transport.sampler import SampleDone

    progress: _Progress | None = None
    stored = [0]  # samples stored in this pass
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
            progress = _Progress(event.total_items, cfg.k_max, args.quiet, batched=cfg.batch is not None)
        if event.message:
            progress.message(event.message)
        stored[0] += isinstance(event.event, SampleDone)
        c = event.calls
        progress.update(done_items=event.done_items, made=c.made, cached=c.cached, failed=c.failed, stored=stored[0],
                        round_event=event.batch is not None)

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
