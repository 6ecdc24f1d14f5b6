"""Paper 001 speed (issue 12): time per run of each interval method on 1,600 items beside the paper's Table 6.

Run: ``python bench/intervals.py [--skip-full] [--workers 2]``. Data: a SIMULATED judge's log-probs over 1–5 and
3-rater mean labels (``core/judge_intervals/simulate.py``), 1,600 items = SummEval's size. One run = one seeded
50/50 split (800 test, 800 calibration: 400 fit + 400 conformal for learned methods), fit + calibrate + predict.

* per method, the median of 5 runs (after one warm-up) — target: at least 5× faster than the paper's figure
  (CQR 0.83 s, asym CQR 0.82 s, CHR 9.54 s, LVD 93.67 s, boosted CQR 91.43 s, boosted LCP 87.27 s, R2CCP 9.25 s,
  ordinal APS 0.01 s, ordinal RC 0.03 s);
* all nine methods × 30 seeds (the whole ``relgate judge-intervals`` study, with its calibration-size curve) in
  ``--workers`` processes — target ≤ 10 minutes.

BLAS is pinned to one thread (the matrices are small; oversubscribed BLAS threads on a shared 2-core machine made LVD
ten times slower). Prints a table and exits with status 1 if a target is missed.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from relgate_tui.core.judge_intervals.methods import METHOD_NAMES, METHODS  # noqa: E402
from relgate_tui.core.judge_intervals.simulate import simulate  # noqa: E402
from relgate_tui.core.judge_intervals.study import prepare, run_study, split_data, split_indices  # noqa: E402

N_ITEMS = 1600
PAPER = {"cqr": 0.83, "asym-cqr": 0.82, "chr": 9.54, "lvd": 93.67, "boosted-cqr": 91.43, "boosted-lcp": 87.27,
         "r2ccp": 9.25, "ordinal-aps": 0.01, "ordinal-rc": 0.03}
SPEEDUP = 5.0
FULL_TARGET_S = 600.0


def main() -> int:
    ap = argparse.ArgumentParser(description="paper 001 interval methods: speed beside the paper's Table 6")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-full", action="store_true", help="skip the 9 methods × 30 seeds study")
    a = ap.parse_args()
    z, y, raw = simulate(N_ITEMS, seed=2024)
    inp = prepare([f"s{i}" for i in range(N_ITEMS)], [dict(zip(range(1, 6), r, strict=True)) for r in z], list(y),
                  list(raw))
    test, cal = split_indices(inp.n, 1)
    d = split_data(inp, cal, inp.z[test])
    ok = True
    print(f"{N_ITEMS} simulated items (grid {inp.grid.name}); one run = fit {len(d.y_fit)}, conformal "
          f"{len(d.y_cal)}, test {len(test)}; median of {a.repeats} runs; BLAS threads = 1")
    print(f"{'method':13s} {'ours (s)':>9s} {'paper (s)':>10s} {'target (s)':>11s} {'speed-up':>9s}  ok")
    for name in METHOD_NAMES:
        fn = METHODS[name]
        fn(d, 0.1, 1)   # warm-up (imports, caches)
        times = []
        for r in range(a.repeats):
            t0 = time.perf_counter()
            fn(d, 0.1, 1 + r)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        target = PAPER[name] / SPEEDUP
        hit = med <= target
        ok &= hit
        print(f"{name:13s} {med:9.4f} {PAPER[name]:10.2f} {target:11.4f} {PAPER[name] / med:8.1f}×  "
              f"{'yes' if hit else 'NO'}")
    if not a.skip_full:
        t0 = time.perf_counter()
        study = run_study(inp, methods=METHOD_NAMES, seeds=range(1, 31), workers=a.workers)
        wall = time.perf_counter() - t0
        hit = wall <= FULL_TARGET_S
        ok &= hit
        print(f"\nall 9 methods × 30 seeds on {N_ITEMS} items (+ R2CCP calibration-size curve), {a.workers} "
              f"worker(s): {wall:.1f} s (target ≤ {FULL_TARGET_S:.0f} s) {'yes' if hit else 'NO'}")
        print(f"{'method':13s} {'coverage':>9s} {'width':>7s} {'adj. cov':>9s} {'adj. width':>10s}")
        for m in study.methods:
            print(f"{m.name:13s} {m.raw.coverage_mean:9.4f} {m.raw.width_mean:7.3f} {m.adjusted.coverage_mean:9.4f} "
                  f"{m.adjusted.width_mean:10.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
