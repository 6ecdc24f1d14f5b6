"""``relgate judge-audit`` (issue 4, paper 000; issue 9): the command line over the judging platform.

The audit itself — asking, the pairwise and direct studies, several judges and prompt variants, stored audits — is
:mod:`relgate_tui.engine.judging`. This module holds the command's options (:class:`JudgeAuditConfig`, turned into an
:class:`~relgate_tui.engine.judging.AuditSpec`), a blocking runner for the CLI (:func:`audit_result`, which runs the
async audit with ``asyncio.run``) and the CLI entry point. Requests share certification's request cache
(``<cache dir>/samples``): a rerun costs zero calls. By default the audit is also stored (``<data dir>/audits/<id>``)
so a rerun of the same command after a kill resumes where it stopped.

The paraphrase variant (``--perturb …,paraphrase``) is written by a paraphraser model before the audit
(:mod:`relgate_tui.engine.judging.paraphrase`): ``--paraphraser model=NAME[,endpoint=URL,key_env=VAR]`` (default: the
first judge's endpoint and model), printed to stderr, stored in the audit's manifest and read back from there when
the audit is resumed (never asked again). ``--paraphrase-out FILE`` writes it to a file and stops, so it can be edited
and passed back with ``--variant paraphrase=FILE`` (a file variant named ``paraphrase`` must keep the placeholders and
the scale of the original, like a model-written one).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relgate_tui.engine.judging import (
    ORIGINAL,
    AuditFinished,
    AuditNote,
    AuditResult,
    AuditSpec,
    AuditStore,
    Judge,
    JudgeProgress,
    PromptVariant,
    audit_json,
    export_name,
    export_result,
    load_variant,
    markdown_report,
    perturbed_variants,
    plan_audit,
    planned_answers,
    run_audit,
    select,
    summary_lines,
)
from relgate_tui.engine.judging import paraphrase as para
from relgate_tui.errors import RelgateError, UserError

PROTOCOLS = ("pairwise", "direct", "both")
__all__ = ["PROTOCOLS", "JudgeAuditConfig", "audit_result", "run_judge_audit", "export_audit", "export_name",
           "markdown_report", "planned_answers", "select", "summary_lines", "add_arguments", "judge_audit_main",
           "parse_judge"]


@dataclass(frozen=True)
class JudgeAuditConfig:
    """Options of ``relgate judge-audit``. The first judge is ``endpoint``/``model``; ``more_judges`` adds others;
    ``variants`` adds prompt variants after the original. ``store``: keep the audit (resumable) in ``store_dir``
    (None = ``<data dir>/audits``);
    ``cache_dir``: None = ``<cache dir>/samples``; ``use_cache`` False skips the request cache."""

    data: str
    criterion: str
    endpoint: str
    model: str
    api_key_env: str | None = None
    protocol: str = "pairwise"
    reps: int = 3
    inputs: int | None = None
    candidates: int | None = None
    alpha: float = 0.10
    seed: int = 0
    concurrency: int = 8
    temperature: float = 0.7
    max_tokens: int | None = 16
    top_logprobs: int = 0
    timeout_s: float = 60.0
    cache_dir: str | None = None
    use_cache: bool = True
    more_judges: tuple[Judge, ...] = ()
    variants: tuple[PromptVariant, ...] = ()
    store: bool = False
    store_dir: str | None = None
    likert_protocol: str = "single"
    paraphraser: Judge | None = None  # writes a pending "paraphrase" variant (paraphrase.pending) before the audit
    prompt: str = "score-only"  # the direct study's built-in prompt: score-only | geval (engine/judging/geval.py)
    scale: int = 5  # the direct study's scale 1–K

    def judges(self) -> tuple[Judge, ...]:
        first = Judge(self.endpoint, self.model, self.api_key_env, self.temperature, self.max_tokens,
                      self.top_logprobs, self.timeout_s)
        return (first, *self.more_judges)

    def to_spec(self) -> AuditSpec:
        return AuditSpec(self.data, self.criterion, self.judges(), (ORIGINAL, *self.variants), self.protocol,
                         self.reps, self.inputs, self.candidates, self.alpha, self.seed, self.concurrency,
                         likert_protocol=self.likert_protocol, prompt=self.prompt, scale=self.scale).validate()

    def validate(self) -> None:
        self.to_spec()


def open_cache(cfg: JudgeAuditConfig) -> Any:
    from relgate_tui.engine.runs.paths import cache_dir
    from relgate_tui.engine.transport.cache import SampleCache

    if not cfg.use_cache:
        return None
    path = Path(cfg.cache_dir) if cfg.cache_dir else cache_dir() / "samples"
    try:
        return SampleCache(path)
    except OSError as exc:
        raise UserError(f"cannot open the request cache {path}: {exc.strerror or exc}") from None


def audits_root(cfg: JudgeAuditConfig) -> Path | None:
    """Where the audit is stored (None: not stored)."""
    from relgate_tui.engine.judging.store import audits_dir

    if not cfg.store:
        return None
    return Path(cfg.store_dir) if cfg.store_dir else audits_dir()


async def audit_events(cfg: JudgeAuditConfig, *, transport: Any = None) -> Any:
    """The audit's events (:func:`~relgate_tui.engine.judging.run_audit`) with the config's cache and store opened
    and closed around them; first a :class:`~relgate_tui.engine.judging.paraphrase.Paraphrased` when the audit has
    a model-written paraphrase (written now, or read back from the stored audit). The TUI iterates this in its
    worker."""
    spec = cfg.to_spec()
    cache = open_cache(cfg)
    store = None
    try:
        root = audits_root(cfg)
        spec, written = await para.resolve_paraphrase(spec, cfg.paraphraser, audits_root=root, cache=cache,
                                                      transport=transport)
        if written is not None:
            yield written
        store = AuditStore.create_or_open(plan_audit(spec), root) if root is not None else None
        async for event in run_audit(spec, store=store, cache=cache, transport=transport):
            yield event
    finally:
        if store is not None:
            store.close()
        if cache is not None:
            cache.close()


def paraphrase_to_file(cfg: JudgeAuditConfig, path: str) -> para.Paraphrased:
    """``--paraphrase-out FILE``: the audit's paraphrase (read back from its stored audit, else written by the
    paraphraser) written to ``path`` (:func:`~relgate_tui.engine.judging.paraphrase.file_text`); no judge is asked."""

    async def main() -> para.Paraphrased:
        cache = open_cache(cfg)
        try:
            _, done = await para.resolve_paraphrase(cfg.to_spec(), cfg.paraphraser, audits_root=audits_root(cfg),
                                                    cache=cache)
        finally:
            if cache is not None:
                cache.close()
        if done is None:
            raise UserError("--paraphrase-out needs --perturb …,paraphrase (a model-written paraphrase)")
        return done

    done = asyncio.run(main())
    text = para.file_text(done.variant, path)
    from relgate_tui.engine.runs.outputs import write_output

    write_output(path, text, inputs=(cfg.data,))
    return done


def audit_result(cfg: JudgeAuditConfig, on_event: Callable[[Any], None] | None = None) -> AuditResult:
    """Run the whole audit (blocking, ``asyncio.run``); ``on_event`` gets every audit event."""

    async def main() -> AuditResult:
        async for event in audit_events(cfg):
            if on_event is not None:
                on_event(event)
            if isinstance(event, AuditFinished):
                return event.result
        raise RuntimeError("the audit ended without a result")

    return asyncio.run(main())


def run_judge_audit(cfg: JudgeAuditConfig, on_event: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """The audit's JSON document (``relgate judge-audit --json``)."""
    return audit_result(cfg, on_event).to_json()


def export_audit(result: AuditResult, fmt: str, folder: Path) -> Path:
    """Write the audit as JSON (the ``--json`` document) or a Markdown report into ``folder``; returns the path."""
    return export_result(result, fmt, folder)


# ------------------------------------------------------------------------------------------------------ CLI
def parse_judge(spec: str, default_endpoint: str | None, defaults: argparse.Namespace) -> Judge:
    """``--judge model=NAME[,endpoint=URL][,name=LABEL][,temperature=T][,top_logprobs=K][,api_key_env=VAR]``."""
    fields: dict[str, str] = {}
    for part in spec.split(","):
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in ("model", "endpoint", "name", "temperature", "top_logprobs", "api_key_env",
                                          "max_tokens"):
            raise UserError(f"--judge: expected model=NAME[,endpoint=URL,name=…,temperature=…,top_logprobs=…], "
                            f"got {spec!r}")
        fields[key.strip()] = value.strip()
    endpoint = fields.get("endpoint") or default_endpoint
    if not endpoint or not fields.get("model"):
        raise UserError(f"--judge {spec!r}: needs model= and an endpoint (endpoint= or --endpoint)")
    try:
        return Judge(endpoint, fields["model"], fields.get("api_key_env") or None,
                     float(fields.get("temperature", defaults.temperature)),
                     int(fields.get("max_tokens", defaults.max_tokens)),
                     int(fields.get("top_logprobs", defaults.top_logprobs)),
                     timeout_s=float(getattr(defaults, "timeout", 60.0)), name=fields.get("name", ""))
    except ValueError as exc:
        raise UserError(f"--judge {spec!r}: {exc}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", default=None, help="bundled audit set (hanna) or a JSONL file")
    parser.add_argument("--criterion", default=None)
    parser.add_argument("--endpoint", default=None, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default=None, help="the (first) judge model")
    parser.add_argument("--api-key-env", default=None, help="NAME of the environment variable holding the API key")
    parser.add_argument("--judge", action="append", default=[], metavar="SPEC",
                        help="another judge: model=NAME[,endpoint=URL,name=LABEL,temperature=T,top_logprobs=K] "
                             "(repeatable)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=FILE",
                        help="a prompt variant template (text or JSON {pairwise, direct}); repeatable")
    parser.add_argument("--perturb", default="", metavar="KINDS",
                        help="add paper 002's prompt perturbations as variants: typo,newline (seeded by --seed), "
                             "paraphrase (written by --paraphraser)")
    parser.add_argument("--paraphraser", default=None, metavar="SPEC",
                        help="the model writing the paraphrase: model=NAME[,endpoint=URL,key_env=VAR,temperature=T] "
                             "(default: the first judge's endpoint and model; temperature 0)")
    parser.add_argument("--paraphrase-out", default=None, metavar="FILE",
                        help="write the paraphrase to FILE (.json: both templates; else the one template as text) "
                             "and stop; edit it and pass it back with --variant paraphrase=FILE")
    parser.add_argument("--protocol", default="pairwise", choices=PROTOCOLS)
    parser.add_argument("--reps", type=int, default=3,
                        help="k: verdicts per pair (must be odd: 1, 3, 5 …; paper 000 uses 3), each in a seeded "
                             "random presentation order; also scores per candidate for direct")
    parser.add_argument("--likert-protocol", default="single", choices=("single", "mean"),
                        help="direct scores: ŷ = one score per candidate (single, paper 000; default) or the "
                             "mean of the k scores (mean)")
    parser.add_argument("--prompt", default="score-only", choices=("score-only", "geval"),
                        help="direct scores: paper 000's score-only prompt (default) or a G-Eval form (criterion, "
                             "evaluation steps, reasoning, then 'Score: N'; paper 001)")
    parser.add_argument("--scale", type=int, default=5, metavar="K",
                        help="direct scores on 1..K (default 5; 2-10; paper 000's conformal sets need 5)")
    parser.add_argument("--inputs", type=int, default=None)
    parser.add_argument("--candidates", type=int, default=None)
    parser.add_argument("--alpha", type=float, default=0.10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=60.0, metavar="S",
                        help="per-request timeout in seconds, for every judge (default 60, as certify)")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="per answer (default 16; 400 with --prompt geval, which reasons before scoring)")
    parser.add_argument("--top-logprobs", type=int, default=0, help="ask for per-token log-probs (K alternatives)")
    parser.add_argument("--no-store", action="store_true", help="do not keep the audit in the data dir")
    parser.add_argument("--no-cache", action="store_true", help="do not use the request cache")
    parser.add_argument("--scores", default=None, metavar="FILE",
                        help="analyse a judge scores file (JSONL/CSV) instead of asking: zero model calls")
    parser.add_argument("--json", default=None, help="write the result JSON here ('-' = stdout)")
    parser.add_argument("--markdown", default=None, help="write a Markdown report here")


def parse_paraphraser(spec: str | None, first: Judge) -> Judge:
    """``--paraphraser model=NAME[,endpoint=URL][,key_env=VAR][,temperature=T]``; None = the first judge's endpoint,
    model and key variable (at temperature 0)."""
    if not spec:
        return para.paraphraser(first.endpoint, first.model, first.api_key_env)
    fields: dict[str, str] = {}
    for part in spec.split(","):
        key, sep, value = part.partition("=")
        key = {"api_key_env": "key_env"}.get(key.strip(), key.strip())
        if not sep or key not in ("model", "endpoint", "key_env", "temperature"):
            raise UserError(f"--paraphraser: expected model=NAME[,endpoint=URL,key_env=VAR,temperature=T], got {spec!r}")
        fields[key] = value.strip()
    if not fields.get("model"):
        raise UserError(f"--paraphraser {spec!r}: needs model=NAME")
    try:
        return para.paraphraser(fields.get("endpoint") or first.endpoint, fields["model"],
                                fields.get("key_env") or None, float(fields.get("temperature", 0.0)))
    except ValueError as exc:
        raise UserError(f"--paraphraser {spec!r}: {exc}") from None


def _variants(args: argparse.Namespace, first: Judge) -> tuple[tuple[PromptVariant, ...], Judge | None]:
    """``--perturb`` (typo, newline, paraphrase: a pending one, written before the audit) then ``--variant`` files;
    a ``--variant paraphrase=FILE`` replaces the model's paraphrase and is checked like one."""
    kinds = [k.strip() for k in (args.perturb or "").split(",") if k.strip()]
    files = [load_variant(v) for v in args.variant]
    from relgate_tui.engine.judging import geval

    prompt, scale = getattr(args, "prompt", geval.DEFAULT_PROMPT), getattr(args, "scale", geval.DEFAULT_SCALE)
    if para.NAME in kinds and not para.writes_for(args.protocol, prompt, scale):
        raise UserError(f"--perturb paraphrase rewrites paper 000's score-only 1-5 prompt, not --prompt {prompt} "
                        f"--scale {scale}: give your paraphrase of that prompt as --variant NAME=FILE")
    for v in files:
        if v.name == para.NAME:
            for kind in ("pairwise", "direct"):
                text = getattr(v, kind)
                why = para.problem(kind, text) if text is not None else None
                if why:
                    raise UserError(f"--variant {para.NAME}: the {kind} paraphrase {why}")
    judge = None
    out: list[PromptVariant] = []
    for kind in kinds:
        if kind == para.NAME:
            if all(v.name != para.NAME for v in files):
                judge = parse_paraphraser(getattr(args, "paraphraser", None), first)
                out.append(para.pending(judge, args.seed))
        elif kind in ("typo", "newline"):  # of the audit's direct prompt (--prompt, --scale)
            out += perturbed_variants([kind], seed=args.seed, criterion=args.criterion or "",
                                      direct=geval.direct_template(prompt, scale))
        else:
            raise UserError(f"--perturb: unknown perturbation {kind!r} (choose from typo, newline, paraphrase)")
    if getattr(args, "paraphraser", None) and para.NAME not in kinds:
        raise UserError("--paraphraser needs --perturb …,paraphrase")
    if getattr(args, "paraphrase_out", None) and judge is None:
        raise UserError("--paraphrase-out needs --perturb …,paraphrase (and no --variant paraphrase=FILE)")
    return (*out, *files), judge


def _config(args: argparse.Namespace) -> JudgeAuditConfig:
    if not args.data or not args.criterion:
        raise UserError("judge-audit needs --data and --criterion (or --scores FILE)")
    from relgate_tui.engine.judging import geval

    prompt, scale = getattr(args, "prompt", geval.DEFAULT_PROMPT), getattr(args, "scale", geval.DEFAULT_SCALE)
    geval.check(prompt, scale)
    if args.max_tokens is None:
        args = argparse.Namespace(**{**vars(args), "max_tokens": 400 if prompt == geval.GEVAL else 16})
    more = [parse_judge(s, args.endpoint, args) for s in args.judge]
    endpoint, model = args.endpoint, args.model
    if not model:
        if not more:
            raise UserError("judge-audit needs --model (with --endpoint) or at least one --judge")
        first, more = more[0], more[1:]
        endpoint, model = first.endpoint, first.model
    if not endpoint:
        raise UserError("judge-audit needs --endpoint URL")
    data = str(Path(args.data).resolve()) if Path(args.data).is_file() else args.data  # reopenable from anywhere
    first = Judge(endpoint, model, args.api_key_env, args.temperature, args.max_tokens, args.top_logprobs)
    variants, paraphraser = _variants(args, first)
    return JudgeAuditConfig(
        data=data, criterion=args.criterion, endpoint=endpoint, model=model, api_key_env=args.api_key_env,
        protocol=args.protocol, reps=args.reps, inputs=args.inputs, candidates=args.candidates, alpha=args.alpha,
        seed=args.seed, concurrency=args.concurrency, temperature=args.temperature, max_tokens=args.max_tokens,
        top_logprobs=args.top_logprobs, more_judges=tuple(more), variants=variants, store=not args.no_store,
        use_cache=not args.no_cache, likert_protocol=getattr(args, "likert_protocol", "single"),
        paraphraser=paraphraser, prompt=prompt, scale=scale, timeout_s=_timeout(args),
    )


def _timeout(args: argparse.Namespace) -> float:
    value = float(getattr(args, "timeout", 60.0))
    if not (value > 0 and value <= 3600):
        raise UserError(f"--timeout must be in (0, 3600] seconds, got {value:g}")
    return value


def _progress_printer() -> Callable[[Any], None]:
    last: dict[str, int] = {}

    def progress(event: Any) -> None:
        if isinstance(event, JudgeProgress):
            step = event.done // 100
            if step > last.get(event.judge, 0) or (event.done == event.total and last.get(event.judge) != -1):
                last[event.judge] = -1 if event.done == event.total else step
                print(f"relgate: {event.judge}: {event.done}/{event.total} judge answers", file=sys.stderr, flush=True)
        elif isinstance(event, AuditNote):
            print(f"relgate: {event.judge}: {event.message.splitlines()[0] if event.message else ''}",
                  file=sys.stderr, flush=True)
        elif isinstance(event, para.Paraphrased):
            for line in event.lines():
                print(f"relgate: {line}", file=sys.stderr, flush=True)

    return progress


def judge_audit_main(args: argparse.Namespace) -> int:
    """``relgate judge-audit``: 0 done, 2 error (one line on stderr)."""
    from relgate_tui.engine.runs.outputs import check_outputs, echo, write_display, write_output

    inputs = (args.scores, args.data)
    try:
        check_outputs((args.json, args.markdown, getattr(args, "paraphrase_out", None)), inputs)
        if args.scores:
            from relgate_tui.engine.judging import audit_from_scores
            from relgate_tui.engine.judging.scores_file import load_scores

            result = audit_from_scores(load_scores(args.scores), criterion=args.criterion, alpha=args.alpha,
                                       seed=args.seed)
        elif getattr(args, "paraphrase_out", None):
            done = paraphrase_to_file(_config(args), args.paraphrase_out)
            printer = _progress_printer()
            printer(done)
            print(f"relgate: wrote the paraphrase to {args.paraphrase_out}; edit it and pass it back with "
                  f"--variant paraphrase={args.paraphrase_out}", file=sys.stderr)
            return 0
        else:
            result = audit_result(_config(args), _progress_printer())
    except RelgateError as exc:
        print(f"relgate: error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"relgate: error: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:  # the JSON text is built only when asked for (for a million-row scores file it is the largest object)
        if args.json == "-":
            print(audit_json(result), end="")
        elif args.json:
            write_output(args.json, audit_json(result), inputs=inputs)
        if args.markdown:
            write_display(args.markdown, markdown_report(result), inputs=inputs)
    except RelgateError as exc:
        print(f"relgate: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    for line in summary_lines(result):
        echo(line, file=sys.stderr if args.json == "-" else sys.stdout)
    return 0
