"""A judge scores file with REAL human ratings and a SIMULATED judge's log-probs (paper 001 workflow, issue 12 item 5).

The human ratings are DialSummEval's (Gao & Wan 2022; 100 SAMSum dialogues × 14 summaries, 3 annotators, Likert
1–5, 4 criteria) from ``../shared/data/dialsummeval``; that data set is non-commercial and not redistributable, so
the file is built on the fly into a path you give and never bundled. The judge is **simulated**
(``core/judge_intervals/simulate.py``): it sees the 3-rater mean with noise and emits log-probs over 1–5. The judge
name says so. The real-judge run (a local model's log-probs) comes later, on the judging platform.

    python bench/intervals_data.py OUT.jsonl [--criterion consistency] [--seed 0]
    python bench/intervals_data.py --smoke    # one criterion into a temporary file; exit 77 (skipped) without the data
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from relgate_tui.core.judge_intervals.simulate import simulate  # noqa: E402

SKIPPED = 77  # --smoke without the data: the exit code of a skipped check (tests/test_bench_smoke.py)
DATA = ROOT.parent.parent / "shared" / "data" / "dialsummeval" / "human_judgment.jsonl"
if not DATA.exists():
    DATA = Path("/work/shared/data/dialsummeval/human_judgment.jsonl")
JUDGE = "simulated-judge (not a real model)"
CRITERIA = ("coherence", "consistency", "fluency", "relevance")


def build_dialsummeval_scores(dst: Path, *, criteria: tuple[str, ...] = ("consistency",), seed: int = 0,
                              src: Path = DATA, limit: int | None = None) -> int:
    """Write ``dst`` (JSONL scores file); returns the number of rows. Needs ``src`` (DialSummEval) present."""
    rows = []
    with open(src, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            rows.append(rec)
            if limit is not None and len(rows) >= limit:
                break
    out = 0
    with open(dst, "w", encoding="utf-8") as fh:
        for c_i, crit in enumerate(criteria):
            humans = np.array([[a[crit] for a in r["annotations"]] for r in rows], dtype=float)
            z, _, raw = simulate(len(rows), seed=seed + c_i, quality=humans.mean(axis=1))
            for r, h, zz, s in zip(rows, humans, z, raw, strict=True):
                fh.write(json.dumps({
                    "id": f"{r['id']}-{r['model_id']}", "judge": JUDGE, "criterion": crit,
                    "humans": [int(v) for v in h], "score": float(s),
                    "logprobs": {str(k + 1): round(float(v), 4) for k, v in enumerate(zz)},
                    "source": "dialsummeval",
                }) + "\n")
                out += 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--smoke", action="store_true", help="one criterion into a temporary file (seconds)")
    ap.add_argument("--criterion", action="append", choices=CRITERIA)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if not DATA.exists():
        print(f"DialSummEval not found at {DATA}", file=sys.stderr)
        if a.smoke:
            print(f"skipped: DialSummEval not found at {DATA}")
            return SKIPPED
        return 2
    if a.smoke:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            n = build_dialsummeval_scores(Path(tmp) / "dse.jsonl", criteria=("consistency",), seed=a.seed)
        print(f"smoke: built {n} rows (human ratings: DialSummEval; judge log-probs: SIMULATED)")
        return 0
    if a.out is None:
        ap.error("OUT is required (or --smoke)")
    n = build_dialsummeval_scores(Path(a.out), criteria=tuple(a.criterion or ("consistency",)), seed=a.seed)
    print(f"wrote {n} rows to {a.out} (human ratings: DialSummEval; judge log-probs: SIMULATED)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
