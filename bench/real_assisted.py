"""Opt-in (issue 22): judge-assisted certification with a REAL llama.cpp verification judge on a bundled task.

Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, llama.cpp's server, one slot) answers the first ``--items`` (30) questions of a
bundled task with the references held back, K ≤ ``--k-max`` samples each; the same server, asked as the verification
judge (``--verify-judge-model``), checks every item's top answer. A "human" who knows the references then labels
the calibration items, in the spot-check's order, through ``certify --labels``: first the first ``--labels`` of them
(a spot-check stopped early), then all of them. Printed: the judge's agreement with the references on every judged
item, and for each number of labels the human-only Clopper–Pearson bound beside the judge-assisted bound (95%).

Run: ``python bench/real_assisted.py [--task bigbench-3digit-addition] [--items 30] [--labels 8]`` (see
bench/llama_server.py for what it needs; ``LLAMA_PYTHON``, ``GGUF``). ``--smoke``: 6 items, 2 labels, K ≤ 2, or exit 77
("skipped") when the model or llama-cpp-python is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.llama_server import LlamaServer, ensure_model, smoke_skip  # noqa: E402


def _label_file(doc: dict[str, Any], truth: dict[str, str], limit: int | None, path: Path) -> int:
    """Labels from the references, for the calibration items in the document's (spot-check) order."""
    from relgate_tui.core.canon import get_canonicalizer

    canon = get_canonicalizer("numeric")
    rows = []
    for it in doc["items"]:
        if it["role"] != "calibration" or not it["classes"]:
            continue
        if limit is not None and len(rows) >= limit:
            break
        right = canon(truth[it["id"]], ())
        classes = [c["answer"] for c in it["classes"]]
        rows.append({"id": it["id"], "rank": classes.index(right) + 1} if right in classes
                    else {"id": it["id"], "none": True})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)


def held_back_task(name: str, n: int, home: Path) -> tuple[list[dict], dict[str, str], Path]:
    """The first ``n`` items of bundled task ``name`` written to ``home/noref.jsonl`` with the references held back:
    (the items, their references by id — what the "human" labels from —, the file)."""
    items = [json.loads(line) for line in (ROOT / "assets" / "tasks" / f"{name}.jsonl").read_text().splitlines()][:n]
    task = home / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n" for it in items))
    return items, {it["id"]: str(it["answer"]) for it in items}, task


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="bigbench-3digit-addition")
    ap.add_argument("--items", type=int, default=30)
    ap.add_argument("--k-max", type=int, default=3)
    ap.add_argument("--labels", type=int, default=8, help="labels of the early-stopped spot-check")
    ap.add_argument("--gate", type=float, default=0.5)
    ap.add_argument("--smoke", action="store_true", help="the smallest size, or exit 77 without a real model")
    args = ap.parse_args()
    if args.smoke:
        if (skipped := smoke_skip("qwen0.5b")) is not None:
            return skipped
        args.items, args.labels, args.k_max = 6, 2, 2
    home = Path(tempfile.mkdtemp(prefix="relgate-real-assisted-"))
    os.environ["RELGATE_HOME"] = str(home)
    from relgate_tui.cli import main as relgate

    items, truth, task = held_back_task(args.task, args.items, home)
    t0 = time.perf_counter()
    with LlamaServer(ensure_model("qwen0.5b")) as srv:
        model = srv.model_id()
        base = ["certify", "--task", str(task), "--endpoint", srv.base_url, "--model", model, "--canon", "numeric",
                "--k-max", str(args.k_max), "--max-tokens", "64", "--concurrency", "1", "--seed", "1", "--quiet",
                "--verify-judge-model", model, "--min-reliability", str(args.gate)]
        relgate([*base, "--json", str(home / "unlabelled.json")])
        first = json.loads((home / "unlabelled.json").read_text())
        runs = {}
        for name, limit in (("early", args.labels), ("all", None)):
            n = _label_file(first, truth, limit, home / f"labels-{name}.jsonl")
            relgate([*base, "--labels", str(home / f"labels-{name}.jsonl"), "--json", str(home / f"{name}.json")])
            runs[name] = (n, json.loads((home / f"{name}.json").read_text()))
    wall = time.perf_counter() - t0
    from relgate_tui.core.canon import get_canonicalizer

    canon = get_canonicalizer("numeric")
    doc = runs["all"][1]
    block = doc["judge_assisted"]
    top = {it["id"]: (it["classes"][0]["answer"] if it["classes"] else None) for it in doc["items"]}
    agree = tp = fp = fn = tn = 0
    for row in block["verdicts"]:
        right = top[row["id"]] is not None and top[row["id"]] == canon(truth[row["id"]], ())
        j = bool(row["judge"])
        agree += j == right
        tp += j and right
        fp += j and not right
        fn += (not j) and right
        tn += (not j) and not right
    n_j = len(block["verdicts"])
    print(f"\nreal judge: {model} on llama.cpp (one slot) verifying the same model's top answers; task {args.task}, "
          f"{len(items)} items, K ≤ {args.k_max}; wall {wall:.0f} s, judge calls {block.get('calls')}\n")
    print("| judge vs reference (every judged item) | judge yes | judge no |")
    print("|---|---|---|")
    print(f"| top answer right | {tp} | {fn} |")
    print(f"| top answer wrong | {fp} | {tn} |")
    print(f"\nagreement {agree}/{n_j} = {agree / max(n_j, 1):.2f}; share right (references) "
          f"{(tp + fn) / max(n_j, 1):.2f}; judge yes share {block.get('judge_yes_share')}\n")
    print(f"| labels | human-only Clopper–Pearson 95% bound | judge-assisted 95% bound | estimate | gate {args.gate} "
          "(gate-on best) |")
    print("|---|---|---|---|---|")
    for name, (n, d) in runs.items():
        b = d["judge_assisted"]
        cp = d.get("reliability_lower_bound_fixed_n", d["reliability_lower_bound"])  # labelled: the anytime bound is the run's
        print(f"| {n} ({name}) | {cp:.3f} | {b['lower_bound']:.3f} | {b['estimate']:.3f} | "
              f"{'PASS' if d['gate'].get('passed') else 'FAIL'} |")
    print(f"\nrun files: {home}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
