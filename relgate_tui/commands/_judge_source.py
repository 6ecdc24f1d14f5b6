"""The verdicts ``relgate judge certify`` and ``judge apply`` read (exactly one of --verdicts, --run, --audit), and
their bad rows reported one stderr line each. Shared by both; not a command module (leading underscore)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def _fingerprint(args: argparse.Namespace) -> dict[str, Any]:
    return {"endpoint": args.judge_endpoint, "model": args.judge_model, "prompt_hash": args.prompt_hash,
            "temperature": args.temperature, "top_logprobs": args.top_logprobs}


def report_rows(exc: Exception) -> int:
    """A verdicts file's bad rows, one stderr line each (the top level would join them into one); exit 2."""
    from relgate_tui.core.text import one_line

    for line in str(exc).splitlines():
        print(f"relgate: error: {one_line(line, 500)}", file=sys.stderr, flush=True)
    return 2


def load_source(args: argparse.Namespace) -> Any:
    """The :class:`~relgate_tui.engine.judging.certificate.Verdicts` of exactly one of --verdicts and --run."""
    from relgate_tui.engine.judging import certificate as store
    from relgate_tui.errors import UserError

    if sum(x is not None for x in (args.verdicts, args.run, args.audit)) != 1:
        raise UserError("give exactly one of --verdicts FILE, --run RUN and --audit ID")
    if args.audit is not None:
        from relgate_tui.engine.judging.certificate_audit import verdicts_from_audit

        return verdicts_from_audit(args.audit, args.audit_judge, args.variant)[0]
    if args.verdicts is not None:
        return store.load_verdicts_file(args.verdicts, _fingerprint(args))
    return store.verdicts_from_run(args.run, args.run_dir)[0]
