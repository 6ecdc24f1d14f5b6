"""Judge scores file loading speed (issue 9 acceptance: a 1,000-row file loads in under 1 s).

    python bench/scores_file.py [--smoke]   (--smoke: 100 rows, one load each, no target checked)

Writes a 1,000-row JSONL file (5-point log-probabilities, texts) and a 1,000-row CSV file to a temporary folder,
loads each 5 times and prints the median beside the target.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from relgate_tui.engine.judging.scores_file import load_scores

TARGET_S = 1.0


def _write(folder: Path, n: int = 1000) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    jsonl, csv = folder / "scores.jsonl", folder / "scores.csv"
    lines, rows = [], ["id,judge,criterion,human,score,lp_1,lp_2,lp_3,lp_4,lp_5,output"]
    for i in range(n):
        lp = np.log(rng.dirichlet(np.ones(5)))
        rec = {"id": f"item{i // 4}", "judge": f"judge{i % 4}", "criterion": "coherence",
               "human": float(rng.integers(1, 6)), "score": int(np.argmax(lp)) + 1,
               "logprobs": {str(k + 1): float(v) for k, v in enumerate(lp)}, "input": "source text " * 40,
               "output": "judged text " * 20}
        lines.append(json.dumps(rec))
        rows.append(",".join([rec["id"], rec["judge"], "coherence", str(rec["human"]), str(rec["score"]),
                              *(f"{v:.6f}" for v in lp), "judged text"]))
    jsonl.write_text("\n".join(lines) + "\n")
    csv.write_text("\n".join(rows) + "\n")
    return jsonl, csv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="the smallest size (seconds), no target checked")
    smoke = parser.parse_args().smoke
    with tempfile.TemporaryDirectory() as d:
        files = _write(Path(d), 100 if smoke else 1000)
        print(f"{'file':<22}{'rows':>6}{'median s':>11}{'target s':>11}  verdict")
        for path in files:
            times = []
            for _ in range(1 if smoke else 5):
                t0 = time.perf_counter()
                table = load_scores(path)
                times.append(time.perf_counter() - t0)
            med = statistics.median(times)
            print(f"{path.name:<22}{len(table):>6}{med:>11.4f}{TARGET_S:>11.1f}  {'smoke' if smoke else 'PASS' if med < TARGET_S else 'FAIL'}")


if __name__ == "__main__":
    main()
