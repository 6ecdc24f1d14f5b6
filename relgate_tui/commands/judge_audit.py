"""``relgate judge audit`` (issue 4, paper 000; issue 9): the command line over the judging platform — its options,
their parsing into a :class:`~relgate_tui.engine.judging.audit_run.JudgeAuditConfig`, progress and summary printing,
and exit codes (0 done, 2 error: one line on stderr).

The audit itself (asking, the studies, stored audits, the blocking runner and the paraphrase file) is
:mod:`relgate_tui.engine.judging.audit_run`, which the TUI drives too.

The paraphrase variant (``--perturb …,paraphrase``) is written by a paraphraser model before the audit:
``--paraphraser model=NAME[,endpoint=URL,key_env=VAR]`` (default: the first judge's endpoint and model), printed to
stderr, stored in the audit's manifest and read back from there when the audit is resumed (never asked again).
``--paraphrase-out FILE`` writes it to a file and stops, so it can be edited and passed back with
``--variant paraphrase=FILE`` (a file variant named ``paraphrase`` must keep the placeholders and the scale of the
original, like a model-written one).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgate_tui.errors import RelgateError, UserError

if TYPE_CHECKING:
    from relgate_tui.engine.judging import Judge, PromptVariant
    from relgate_tui.engine.judging.audit_run import JudgeAuditConfig

NAME = "judge-audit"

PROTOCOLS = ("pairwise", "direct", "both")  # engine.judging.audit.PROTOCOLS, not imported so registering stays cheap


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        NAME, help="audit an LLM judge: preference cycles, MFAS rankings, position bias, Likert sets",
        description="Audit an LLM judge on a data set with human scores (paper 000).",
    )
    add_arguments(p)


def run(args: argparse.Namespace) -> int:
    return judge_audit_main(args)


def parse_judge(spec: str, default_endpoint: str | None, defaults: argparse.Namespace) -> Judge:
    """``--judge model=NAME[,endpoint=URL][,name=LABEL][,temperature=T][,top_logprobs=K][,api_key_env=VAR]``."""
    from relgate_tui.engine.judging import Judge

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
    """The options of ``relgate judge audit``."""
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
    from relgate_tui.engine.judging import paraphrase as para

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
    from relgate_tui.engine.judging import load_variant, perturbed_variants
    from relgate_tui.engine.judging import paraphrase as para

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
    from relgate_tui.engine.judging import Judge
    from relgate_tui.engine.judging.audit_run import JudgeAuditConfig

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
    from relgate_tui.engine.judging import AuditNote, JudgeProgress
    from relgate_tui.engine.judging import paraphrase as para

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
    """``relgate judge audit``: 0 done, 2 error (one line on stderr)."""
    from relgate_tui.engine.judging import audit_json, markdown_report, summary_lines
    from relgate_tui.engine.judging.audit_run import audit_result, paraphrase_to_file
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
