"""``relgate batch write`` / ``relgate batch read``: a certification run's rounds as Batch JSONL files, run elsewhere
(``vllm run-batch`` on a GPU box, or a Batch API uploaded by hand) — issue 32 §3.

``relgate batch write --config RUN.toml --out requests.jsonl`` opens (or creates) the run of the config and writes the
requests of its next round: ``{"custom_id", "method", "url", "body"}`` lines, each the very request a direct call
would send (same body, same per-sample seed), for the items the stopping rule has not settled
(:mod:`relgate_tui.engine.certification.batch_rounds`). ``relgate batch read RUN results.jsonl [errors.jsonl]`` takes
the outputs in (``{"custom_id", "response": {"status_code", "body"}, "error"}`` lines, as ``vllm run-batch`` and the
Batch APIs write them): answers go to the run and the request cache, unreadable lines and failed requests are counted
and asked again in the next round. Repeat until ``read`` says the run is complete (exit 0; 3 = more rounds to go),
then ``relgate certify --config RUN.toml`` writes the results without a call.
"""

from __future__ import annotations

import argparse
import contextlib
import stat
from pathlib import Path
from typing import Any

from relgate_tui.core.text import counted

NAME = "batch"
EXIT_MORE_ROUNDS = 3


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(NAME, help="a run's rounds as Batch JSONL files (vllm run-batch, Batch APIs by hand)",
                              description="Write a run's next round of requests as Batch JSONL, or read its results.")
    sub = p.add_subparsers(dest="batch_action", metavar="ACTION", required=True)
    w = sub.add_parser("write", help="write the next round's requests", description="Write the requests of the run's "
                       "next round (items the stopping rule has not settled) as Batch JSONL.")
    w.add_argument("--config", required=True, metavar="RUN.toml", help="the run config (as relgate certify --config)")
    w.add_argument("--out", required=True, metavar="PATH", help="the requests file to write")
    w.add_argument("--run-dir", metavar="DIR", help="directory holding runs (default: the config's, else the data dir's)")
    w.add_argument("--retry-failed", action="store_true",
                   help="ask again the items a round recorded as failed for good (a 4xx line, attempts used up)")
    r = sub.add_parser("read", help="read a round's results into the run", description="Store a round's results "
                       "(output and error JSONL of vllm run-batch or a Batch API) in the run.")
    r.add_argument("run", metavar="RUN", help="run id (or unique prefix) or run directory")
    r.add_argument("results", nargs="+", metavar="RESULTS.jsonl", help="output (and error) files of the round")
    r.add_argument("--run-dir", metavar="DIR", help="directory holding runs (default: the data dir's runs/)")


def price_factor(text: str) -> float:
    """``--batch-price FACTOR``: the batch price as a fraction of the direct price, in [0, 1] (argparse type)."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{value!r} is not in [0, 1]")
    return value


def _say(text: str) -> None:
    from rich.console import Console
    from rich.text import Text

    from relgate_tui.core.text import one_line

    Console(stderr=True, highlight=False, soft_wrap=True).print(Text(one_line(text, 400)))


def _config(path: str, run_dir: str | None) -> Any:
    from dataclasses import replace

    from relgate_tui.engine.certification.certify import CertifyConfig
    from relgate_tui.engine.certification.run_config import CONFIG_KEYS, load_run_config
    from relgate_tui.errors import UserError

    values = load_run_config(path)
    fields: dict[str, Any] = {}
    for key, value in values.items():
        field = CONFIG_KEYS.get(key)
        if field:
            fields[field] = value
    for needed in ("task", "endpoint", "model"):
        if needed not in fields:
            raise UserError(f"--config {path}: the run config has no {needed!r}")
    try:
        cfg = CertifyConfig(**fields)
    except TypeError as exc:
        raise UserError(f"--config {path}: {exc}") from None
    return (replace(cfg, run_dir=run_dir) if run_dir else cfg).validate()


def _write(args: argparse.Namespace) -> int:
    from relgate_tui.engine.certification.batch_rounds import make_batch_sampler
    from relgate_tui.engine.certification.certify import prepare
    from relgate_tui.engine.certification.pipeline import open_cache, sampling_job
    from relgate_tui.engine.runs.files import atomic_write_bytes
    from relgate_tui.engine.runs.outputs import check_outputs

    cfg = _config(args.config, args.run_dir)
    out = Path(args.out).expanduser()
    check_outputs((out,), (args.config, cfg.task))  # the one output guard: never over the store, a run, an input
    prepared = prepare(cfg)
    try:
        cache = open_cache(cfg)
        try:
            prepared.store.lock()
            sampler = make_batch_sampler(prepared, cache)
            round_no, lines, open_items = sampler.offline_requests(sampling_job(prepared), args.retry_failed)
            prepared.store.sync_samples()
        finally:
            cache.close()
        run_id = prepared.store.run_id
        if not lines:
            _say(f"run {run_id}: complete, no request left — `relgate certify --config {args.config}` writes its "
                 "results without a call")
            return 0
        atomic_write_bytes(out, b"".join(lines))
        _say(f"run {run_id} round {round_no}: {counted(len(lines), 'request')} for {counted(open_items, 'item')} "
             f"written to {out}; run them (e.g. `vllm run-batch -i {out} -o results.jsonl --model {cfg.model}`), then "
             f"`relgate batch read {run_id} results.jsonl`")
        return 0
    finally:
        prepared.close()


def _read(args: argparse.Namespace) -> int:
    from relgate_tui.engine.certification.batch_rounds import BatchProgress, make_batch_sampler
    from relgate_tui.engine.certification.certify import open_prepared
    from relgate_tui.engine.certification.pipeline import open_cache, sampling_job
    from relgate_tui.engine.runs.listing import open_run
    from relgate_tui.engine.transport.batch import MAX_FILE_BYTES
    from relgate_tui.engine.transport.sampler import SampleDone, SampleFailed
    from relgate_tui.errors import UserError

    files = []
    for name in args.results:
        path = Path(name).expanduser()
        try:
            info = path.stat()
        except FileNotFoundError:
            raise UserError(f"{name}: no such file") from None
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            raise UserError(f"{name}: not a regular file of at most {MAX_FILE_BYTES:,} bytes (a batch results file)")
        files.append(path)
    store = open_run(args.run, args.run_dir)
    path = store.path
    store.close()
    prepared = open_prepared(path)
    try:
        cache = open_cache(prepared.config)
        try:
            prepared.store.lock()
            sampler = make_batch_sampler(prepared, cache)
            with contextlib.ExitStack() as stack:  # read line by line: one line in memory at a time
                opened = [stack.enter_context(f.open("rb")) for f in files]
                round_no, events, open_items = sampler.offline_results(sampling_job(prepared), opened)
            prepared.store.sync_samples()
        finally:
            cache.close()
        stored = sum(isinstance(e, SampleDone) for e in events)
        earlier = sum(isinstance(e, SampleDone) and e.cached for e in events)  # answers an earlier read cached
        failed = [e for e in events if isinstance(e, SampleFailed)]
        final = sum(e.final for e in failed)
        t = sampler.totals
        run_id = prepared.store.run_id
        if not t.made and not failed:
            _say(f"run {run_id}: nothing in {'these files' if len(files) > 1 else 'this file'} answers the "
                 f"requests of its round {round_no + 1} ({counted(t.failed, 'line')} refused or unreadable); no "
                 "round is counted")
        else:
            why = [f"{counted(n, 'answer')} not stored: {reason}" for reason, n in sampler.unstored.most_common()]
            if earlier:
                why.append(f"{earlier} from answers an earlier read kept")
            _say(f"run {run_id} round {round_no}: {counted(t.made, 'answer')} read, "
                 f"{counted(stored, 'sample')} stored" + (f" ({'; '.join(why)})" if why else "")
                 + f", {counted(t.failed, 'failed or unreadable line')}"
                 + (f" ({counted(final, 'item')} failed for good, recorded)" if final else "")
                 + (" — the rest asked again next round" if t.failed > final else ""))
        for event in failed[:3]:
            _say(f"  item {event.item_id} sample {event.index}: {event.error_kind}: {event.message}")
        for note in [e.text for e in events if isinstance(e, BatchProgress)][:1]:
            _say(f"  {note}")
        if open_items:
            _say(f"{counted(open_items, 'item')} still open: "
                 "`relgate batch write --config RUN.toml --out requests.jsonl` "
                 "writes the next round")
            return EXIT_MORE_ROUNDS
        failures = sampler.recorded_failures
        if failures:
            _say(f"{counted(len(failures), 'item')} failed for good (first: {next(iter(failures.values()))}); "
                 "`relgate batch write --retry-failed …` asks them again")
        _say("complete: every request is answered or recorded as failed; `relgate certify --config RUN.toml` writes "
             "the results without a call")
        return 0
    finally:
        prepared.close()


def run(args: argparse.Namespace) -> int:
    return _write(args) if args.batch_action == "write" else _read(args)
