"""Opt-in: a judge cascade of two REAL llama.cpp verification judges — Qwen2.5-Coder-0.5B first (cheap), 1.5B next —
on the demo's reference-less task, certified by ``relgate judge certify --from-run A --from-run B``.

What it does, with the public commands only:

1. Qwen2.5-Coder-0.5B (the cheap server) answers the first ``--items`` (100) questions of the bundled
   ``arithmetic-unreferenced`` task ("Compute a plus b.", no references), K ≤ ``--k-max`` (3) samples each, every item a
   calibration item, and the same 0.5B server is asked as the verification judge (``--verify-judge-model``): yes/no
   with log-probs on every item's top answer. Run A.
2. A "human" who can do arithmetic labels every item's top answer (the labels file of ``certify --labels``: the
   rank of the right answer among the item's answer classes, or none).
3. The same run with the 1.5B server as the verification judge (``--verify-judge-endpoint``): the answers come from
   the sample cache (no sampling call), the 1.5B judge checks the same top answers. Run B, the same labels.
4. ``relgate judge certify --run A`` and ``--run B`` (each judge alone) and ``--from-run A --from-run B`` (the
   cascade, cheapest first), all at agreement ``--agreement`` (0.80), confidence 95%.

Printed: each judge's agreement with the labels and its yes share, each certificate's verdict and coverage, and the
cascade's stages (threshold, items decided, share, agreement with its exact lower bound), its pooled bound, the strong
judge's calls it avoided and the labels left to people — beside the strong judge alone.

Servers: ``--cheap URL --strong URL`` (OpenAI-compatible base URLs ending in /v1, model ids ``--cheap-model`` /
``--strong-model``), or the second and third of ``$RELGATE_JUDGE_URLS`` — which ``bench/real_judges.sh`` sets::

    EMBED=none THREADS=2 bash bench/real_judges.sh python bench/real_judge_cascade.py

``--smoke``: 30 items, K ≤ 1; exits 77 ("skipped") when no server answers. Never run by the test suite with a model.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.llama_server import SKIPPED  # noqa: E402
from relgate_tui.engine.runs.outputs import write_output  # noqa: E402

TASK = "arithmetic-unreferenced"
_OPS = {"plus": lambda a, b: a + b, "minus": lambda a, b: a - b, "times": lambda a, b: a * b}


def truth_of(question: str) -> str:
    """The right answer of one of the task's questions ("Compute 61 times 29." → "1769")."""
    m = re.fullmatch(r"Compute (-?\d+) (plus|minus|times) (-?\d+)\.", question.strip())
    if m is None:
        raise ValueError(f"not an arithmetic question: {question!r}")
    return str(_OPS[m.group(2)](int(m.group(1)), int(m.group(3))))


def _items(n: int) -> list[dict[str, Any]]:
    lines = (ROOT / "assets" / "tasks" / f"{TASK}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[:n]]


def _label_file(doc: dict[str, Any], truth: dict[str, str], path: Path) -> int:
    """Labels for every item, in the run's order, as a person at the spot-check would give them: the rank of the
    right answer among its classes, or none (no class is right, or the model gave no usable answer). Every item is
    labelled: the judge certificate uses the labels before the first unlabelled item only."""
    from relgate_tui.core.canon import get_canonicalizer

    canon = get_canonicalizer("numeric")
    rows = []
    for it in doc["items"]:
        right = canon(truth[it["id"]], ())
        classes = [c["answer"] for c in it["classes"]]
        rows.append({"id": it["id"], "rank": classes.index(right) + 1} if right in classes
                    else {"id": it["id"], "none": True})
    write_output(path, "".join(json.dumps(r) + "\n" for r in rows))  # relgate's output guard, as for --json
    return len(rows)


def _alive(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url.rstrip("/") + "/models", timeout=3).status_code == 200
    except httpx.HTTPError:
        return False


def _relgate(*argv: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RELGATE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "relgate_tui.cli", *argv], capture_output=True, text=True, env=env)


def _judge_table(doc: dict[str, Any], truth: dict[str, str]) -> tuple[int, int, int]:
    """(labelled verdicts, agreeing with the labels, judge yes) over the run's judge-assisted verdicts."""
    rows = [r for r in doc["judge_assisted"]["verdicts"] if r.get("human") is not None and r.get("judge") is not None]
    return len(rows), sum(int(r["judge"]) == int(r["human"]) for r in rows), sum(int(r["judge"]) for r in rows)


def _value(v: Any) -> Any:
    """A figure that is a number in the cascade's document and ``{value, lower, upper}`` in a single judge's."""
    return v.get("value") if isinstance(v, dict) else v


def _f(v: Any, fmt: str = ".3f") -> str:
    return "—" if v is None else format(v, fmt)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    urls = (os.environ.get("RELGATE_JUDGE_URLS") or "").split()
    ap.add_argument("--cheap", default=urls[1] if len(urls) > 1 else "http://127.0.0.1:8013/v1")
    ap.add_argument("--strong", default=urls[2] if len(urls) > 2 else "http://127.0.0.1:8014/v1")
    ap.add_argument("--cheap-model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--strong-model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--k-max", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--agreement", type=float, default=0.80)
    ap.add_argument("--smoke", action="store_true", help="30 items, K ≤ 1; exit 77 when no server answers")
    ap.add_argument("--home", type=Path, help="relgate's data dir for the runs (default: a new temporary one); an "
                    "earlier run's (its last line) answers every request from its caches")
    args = ap.parse_args()
    if args.home is not None and (not args.home.is_dir() or args.home.is_symlink()):
        ap.error(f"--home {args.home}: not a directory (give the folder an earlier run printed, or leave it out)")
    if not (_alive(args.cheap) and _alive(args.strong)):
        if args.smoke:
            print(f"skipped: no real judges answer at {args.cheap} and {args.strong} (bench/real_judges.sh starts them)")
            return SKIPPED
        print(f"no server answers at {args.cheap} and {args.strong}: start them with bench/real_judges.sh",
              file=sys.stderr)
        return 2
    if args.smoke:
        args.items, args.k_max = 30, 1
    home = args.home or Path(tempfile.mkdtemp(prefix="relgate-real-cascade-"))
    items = _items(args.items)
    truth = {it["id"]: truth_of(it["question"]) for it in items}
    task = home / "task.jsonl"
    write_output(task, "".join(json.dumps(it) + "\n" for it in items))
    base = ["certify", "--task", str(task), "--endpoint", args.cheap, "--model", args.cheap_model, "--canon",
            "numeric", "--k-max", str(args.k_max), "--max-tokens", str(args.max_tokens), "--concurrency", "1",
            "--seed", "1", "--n-cal", str(args.items), "--quiet"]
    judges = {"A": ["--verify-judge-model", args.cheap_model],
              "B": ["--verify-judge-model", args.strong_model, "--verify-judge-endpoint", args.strong]}
    docs: dict[str, dict[str, Any]] = {}
    times: dict[str, float] = {}
    labels = home / "labels.jsonl"
    t_all = time.perf_counter()
    for name, judge in judges.items():
        t0 = time.perf_counter()
        if name == "A":
            p = _relgate(*base, *judge, "--json", str(home / "A0.json"), home=home)
            if not (home / "A0.json").exists():
                print(p.stdout, p.stderr, sep="\n")
                return 2
            n_labels = _label_file(json.loads((home / "A0.json").read_text()), truth, labels)
        p = _relgate(*base, *judge, "--labels", str(labels), "--json", str(home / f"{name}.json"), home=home)
        times[name] = time.perf_counter() - t0
        if not (home / f"{name}.json").exists():
            print(p.stdout, p.stderr, sep="\n")
            return 2
        docs[name] = json.loads((home / f"{name}.json").read_text())
    certs: dict[str, tuple[int, dict[str, Any]]] = {}
    for name, sel in (("A", ["--run", docs["A"]["run_id"]]), ("B", ["--run", docs["B"]["run_id"]]),
                      ("cascade", ["--from-run", docs["A"]["run_id"], "--from-run", docs["B"]["run_id"]])):
        p = _relgate("judge", "certify", *sel, "--agreement", str(args.agreement), "--json", "-", home=home)
        try:
            certs[name] = (p.returncode, json.loads(p.stdout))
        except json.JSONDecodeError:
            print(p.stdout, p.stderr, sep="\n")
            return 2
    wall = time.perf_counter() - t_all

    calls = docs["A"]["calls"]
    right = sum(1 for it in docs["A"]["items"] if it["classes"]
                and it["classes"][0]["answer"] == truth[it["id"]])
    print(f"\ntask {TASK}: {len(items)} items, answers by {args.cheap_model} (K ≤ {args.k_max}, {calls['made']} calls, "
          f"top answer right on {right} of {n_labels} labelled); target agreement {args.agreement:g}, 95%; wall "
          f"{wall:.0f} s (run A {times['A']:.0f} s, run B {times['B']:.0f} s)\n")
    print("| judge | labelled | agrees with the labels | says yes | certificate alone (exit) | coverage |")
    print("|---|---|---|---|---|---|")
    for name, model in (("A", args.cheap_model), ("B", args.strong_model)):
        n, agree, yes = _judge_table(docs[name], truth)
        code, c = certs[name]
        cov = _value((c.get("selective") or {}).get("coverage"))
        print(f"| {model} | {n} | {agree} ({agree / max(n, 1):.0%}) | {yes} ({yes / max(n, 1):.0%}) | "
              f"{c.get('verdict')} ({code}) | {_f(cov, '.2f')} |")
    code, c = certs["cascade"]
    print(f"\n`relgate judge certify --from-run A --from-run B --agreement {args.agreement:g}` exit {code}:\n")
    print(f"> {c.get('sentence')}\n")
    print("| stage | judge | threshold | reached | decided | share of items | agreement (lower bound) |")
    print("|---|---|---|---|---|---|---|")
    for k, s in enumerate(c.get("cascade") or [], start=1):
        print(f"| {k} | {s['judge']} | {_f(s['threshold'])} | {s['reached']} | {s['decided']} | "
              f"{_f(s['decided_share'], '.2f')} | {_f(s['agreement'], '.2f')} ({_f(s['agreement_lower'])}) |")
    sel = c.get("selective") or {}
    saved = c.get("calls_saved") or {}
    print(f"\ncascade: coverage {_f(sel.get('coverage'), '.2f')} ({_f(sel.get('coverage_lower'), '.2f')}–"
          f"{_f(sel.get('coverage_upper'), '.2f')}), pooled agreement bound {_f(sel.get('agreement_lower'))}; "
          f"strong judge alone: coverage {_f(_value((certs['B'][1].get('selective') or {}).get('coverage')), '.2f')}")
    if sel.get("route") == "none":
        print("  no judge is certified: every item goes to people, no judge's calls are saved")
    for j in saved.get("judges") if sel.get("route") != "none" else ():
        print(f"  {j['judge']}: {j['calls']} calls, {j['avoided']} avoided ({_f(j['avoided_share'], '.2f')})")
    print(f"  left to people: {saved.get('people')}")
    print("warnings:", "; ".join(c.get("warnings") or []) or "none")
    print(f"\nrun files: {home}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
