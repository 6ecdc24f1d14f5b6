"""Opt-in (issue 30 §5, issue 31 item 8): a judge certificate for a REAL llama.cpp verification judge, and the
pre-flight estimate against the real run.

Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, llama.cpp's server, one slot; ``--model-name smollm2`` for SmolLM2-135M)
answers the first ``--items`` (50) questions of a bundled task with the references held back, K ≤ ``--k-max`` (3)
samples each, ``--n-cal`` (40) of them calibration items; the same server, asked as the verification judge
(``--verify-judge-model``), says yes/no (with log-probs) to every item's top answer. A "human" who knows the
references labels the calibration items (a labels file through ``certify --labels``, as bench/real_assisted.py), and
``relgate judge certify --run RUN --json -`` certifies the judge at agreement ``--agreement`` (0.90), 95%. Printed:
the verdict sentence, coverage, the agreement bound, TPR/TNR bounds, κ, the constant-judge warning, the exit code;
and, before the run, the Setup screen's pre-flight (``probe_latency`` at the run's concurrency, then ``preflight``)
beside the calls the run made and its wall time.

Expected with the 0.5B model: a useless judge (it says "no" to nearly everything) — FAIL, with the constant-judge
warning.

``--smoke``: 32 items (30 calibration), K ≤ 1; exit 77 ("skipped") without the model, unless ``--endpoint``.

Run: ``python bench/real_judge_certificate.py [--task bigbench-3digit-addition] [--items 50] [--n-cal 40]
[--k-max 3] [--model-name qwen0.5b|smollm2]``; ``--endpoint URL --model NAME`` uses a server already up (e.g. one
of bench/real_judges.sh's) instead of starting one. See bench/llama_server.py for what it needs (``LLAMA_PYTHON``,
``GGUF``). Never run by the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.llama_server import LlamaServer, ensure_model, smoke_skip  # noqa: E402
from bench.real_assisted import _label_file, held_back_task  # noqa: E402


@contextlib.contextmanager
def _server(args: argparse.Namespace) -> Iterator[tuple[str, str, Path | None]]:
    """(base URL, model id, server log): the given endpoint, or a llama.cpp server started for the run."""
    if args.endpoint:
        yield args.endpoint, args.model, None
        return
    with LlamaServer(ensure_model(args.model_name), threads=args.threads) as srv:
        yield srv.base_url, srv.model_id(), srv.log


_PERF = re.compile(r"llama_perf_context_print:\s+total time =\s+([0-9.]+) ms /\s+([0-9]+) tokens")


def _server_times(log: Path | None) -> list[tuple[float, int]]:
    """(ms, tokens) of every completion the llama.cpp server has logged so far, in order (one per request)."""
    if log is None:
        return []
    return [(float(m.group(1)), int(m.group(2))) for m in _PERF.finditer(log.read_text(errors="replace"))]


def _mean(rows: list[tuple[float, int]]) -> str:
    if not rows:
        return "—"
    return (f"{sum(r[0] for r in rows) / len(rows) / 1000:.2f} s/call, {sum(r[1] for r in rows) / len(rows):.0f} "
            f"tokens/call ({len(rows)} calls)")


def _preflight(base_url: str, model: str, judge: str, task: Path, args: argparse.Namespace) -> Any:
    """The Setup screen's pre-flight for this run: the latency probed at concurrency 1, then the estimate."""
    from relgate_tui.engine.certification.setup import RunSetup, inspect_task, preflight, probe_latency

    setup = RunSetup(base_url=base_url, model=model, task=str(task), canon="numeric", k_max=args.k_max,
                     max_tokens=args.max_tokens, concurrency=1, n_cal=args.n_cal, seed=1, verify_judge_model=judge)
    t0 = time.perf_counter()
    latency = asyncio.run(probe_latency(setup))
    probe_s = time.perf_counter() - t0
    return preflight(setup, inspect_task(str(task)), latency), probe_s, latency


def _count(rows: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[str(r.get("status"))] = out.get(str(r.get("status")), 0) + 1
    return out


def _f(v: Any, fmt: str = ".3f") -> str:
    return "—" if v is None else format(v, fmt)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="bigbench-3digit-addition")
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--n-cal", type=int, default=40, help="calibration (labelled) items; the certificate needs ≥ 30")
    ap.add_argument("--k-max", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--agreement", type=float, default=0.90)
    ap.add_argument("--model-name", default="qwen0.5b", help="bench/llama_server.py MODELS key (or set $GGUF)")
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp threads (default 2)")
    ap.add_argument("--endpoint", help="use this OpenAI-compatible server instead of starting one")
    ap.add_argument("--model", help="with --endpoint: the model id")
    ap.add_argument("--judge-model", help="the verification judge's model id (default: the answering model)")
    ap.add_argument("--smoke", action="store_true", help="32 items (30 calibration), K ≤ 1; exit 77 without a real "
                    "model (unless --endpoint)")
    args = ap.parse_args()
    if args.endpoint and not args.model:
        ap.error("--endpoint needs --model")
    if args.smoke:
        if not args.endpoint and (skipped := smoke_skip(args.model_name)) is not None:
            return skipped
        args.items, args.n_cal, args.k_max = 32, 30, 1
    home = Path(tempfile.mkdtemp(prefix="relgate-real-judge-cert-"))
    os.environ["RELGATE_HOME"] = str(home)
    from relgate_tui.cli import main as relgate

    items, truth, task = held_back_task(args.task, args.items, home)
    t_all = time.perf_counter()
    with _server(args) as (base_url, model, log):
        judge = args.judge_model or model
        pf, probe_s, latency = _preflight(base_url, model, judge, task, args)
        before = len(_server_times(log))
        base = ["certify", "--task", str(task), "--endpoint", base_url, "--model", model, "--canon", "numeric",
                "--k-max", str(args.k_max), "--max-tokens", str(args.max_tokens), "--concurrency", "1", "--seed", "1",
                "--n-cal", str(args.n_cal), "--quiet", "--verify-judge-model", judge]
        t0 = time.perf_counter()
        relgate([*base, "--json", str(home / "unlabelled.json")])
        run_s = time.perf_counter() - t0
        first = json.loads((home / "unlabelled.json").read_text())
        per_call = _server_times(log)
        probe_calls, run_calls = per_call[:before], per_call[before:]
        n_labels = _label_file(first, truth, None, home / "labels.jsonl")
        relgate([*base, "--labels", str(home / "labels.jsonl"), "--json", str(home / "labelled.json")])
    doc = json.loads((home / "labelled.json").read_text())
    cert = subprocess.run([sys.executable, "-m", "relgate_tui.cli", "judge", "certify", "--run", str(doc["run_id"]),
                           "--agreement", str(args.agreement), "--json", "-"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - t_all
    try:
        c = json.loads(cert.stdout)
    except json.JSONDecodeError:
        print(cert.stdout, cert.stderr, sep="\n")
        return 2

    block = first["judge_assisted"]
    samp_calls, judge_calls = first["calls"], block.get("calls") or {}
    made = samp_calls["made"] + judge_calls.get("made", 0)
    print(f"\njudge {Path(judge).name} verifying {Path(model).name}'s top answers at {base_url}; task {args.task}, "
          f"{len(items)} items ({args.n_cal} calibration, {n_labels} labelled from the references), K ≤ "
          f"{args.k_max}; total wall {wall:.0f} s\n")
    print("pre-flight (issue 31 item 8) vs the run (the first, unlabelled certify: sampling + verification judge):\n")
    print("| | calls (sampling) | calls (judge) | time s |")
    print("|---|---|---|---|")
    span = pf.seconds_range
    print(f"| pre-flight expected | {pf.expected_calls} (range {pf.calls_range[0]}–{pf.calls_range[1]}, worst "
          f"{pf.worst_calls}) | {pf.judge_calls} | {_f(pf.seconds, '.0f')} (range "
          f"{'—' if span is None else f'{span[0]:.0f}–{span[1]:.0f}'}; {_f(pf.latency_s, '.2f')} s/answer and "
          f"{_f(latency.judge_seconds, '.2f')} s/verdict probed in {probe_s:.0f} s) |")
    print(f"| real run | {samp_calls['made']} made, {samp_calls['cached']} cached, {samp_calls['failed']} failed | "
          f"{judge_calls.get('made')} made, {judge_calls.get('failed')} failed | {run_s:.0f} |")
    if pf.seconds:
        print(f"\nestimate / measured time: {pf.seconds / run_s:.2f}; calls expected / made: "
              f"{(pf.expected_calls + pf.judge_calls) / max(made, 1):.2f}; measured s/call {run_s / max(made, 1):.2f}")

    if log is not None:
        n_s = samp_calls["made"]
        print(f"\nllama.cpp's own time per call (its log): probe (incl. the warm-up) {_mean(probe_calls)}; sampling "
              f"{_mean(run_calls[:n_s])}; verification judge {_mean(run_calls[n_s:])}")
    print(f"\n`relgate judge certify --run {doc['run_id']} --agreement {args.agreement:g} --json -` "
          f"exit {cert.returncode}:\n")
    from relgate_tui.engine.judging.certificate_doc import CertificateDoc

    cd = CertificateDoc.from_json(c).certificate  # the certificate's JSON read back as its type
    sel = cd.selective
    print(f"> {cd.sentence}\n")
    print("| verdict | labelled / items | coverage (95% CI) | agreement bound on decided | accuracy (lower) | "
          "TPR (lower, n) | TNR (lower, n) | κ [CI] | judge yes share | base rate (refs) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    acc, tpr, tnr = cd.accuracy, cd.tpr, cd.tnr
    print(f"| {cd.verdict} | {cd.n_labelled} / {cd.n_items} | {_f(sel.coverage.value, '.2f')} "
          f"({_f(sel.coverage.lower, '.2f')}–{_f(sel.coverage.upper, '.2f')}) | "
          f"{_f(sel.agreement_lower)} (threshold {_f(sel.threshold)}) | {_f(acc.value, '.2f')} "
          f"({_f(acc.lower)}) | {_f(tpr.value, '.2f')} ({_f(tpr.lower)}, {tpr.n}) | "
          f"{_f(tnr.value, '.2f')} ({_f(tnr.lower)}, {tnr.n}) | {_f(cd.kappa, '.2f')} "
          f"[{_f(cd.kappa_lower, '.2f')}, {_f(cd.kappa_upper, '.2f')}] | {_f(cd.judge_yes_share, '.2f')} | "
          f"{_f(cd.base_rate.value, '.2f')} |")
    print("\nwarnings:", "; ".join(cd.warnings) or "none")
    print("tested sequence (threshold, n, agree, p, passed):",
          "; ".join(f"{r.threshold:.3f}, {r.n_above}, {r.n_agree}, {r.p_value:.3g}, {r.passed}" for r in sel.steps)
          or "—")
    rows = [r for r in doc["judge_assisted"]["verdicts"] if r.get("human") is not None]
    tab = {(j, h): sum(1 for r in rows if int(r["judge"]) == j and int(r["human"]) == h) for j in (0, 1) for h in (0, 1)}
    p_yes = sorted(float(r["p_yes"]) for r in doc["judge_assisted"]["verdicts"] if r.get("p_yes") is not None)
    print(f"\n| labelled items | judge yes | judge no |\n|---|---|---|\n| top answer right (reference) | {tab[1, 1]} | "
          f"{tab[0, 1]} |\n| top answer wrong (reference) | {tab[1, 0]} | {tab[0, 0]} |")
    if p_yes:
        print(f"\njudge p_yes over {len(p_yes)} items: min {p_yes[0]:.3f}, median {p_yes[len(p_yes) // 2]:.3f}, "
              f"max {p_yes[-1]:.3f}; statuses: "
              + ", ".join(f"{k} {v}" for k, v in sorted(_count(doc["judge_assisted"]["verdicts"]).items())))
    print(f"\nrun files: {home}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
