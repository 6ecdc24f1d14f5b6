"""Paper 003: the whole jury-on-demand protocol (10 splits, predictor search, K and tolerance tuning, baselines,
statistics) on 2,000 items × 9 simulated judges (issue 14 acceptance: ≤ 60 s on 2 cores).

    python bench/jury.py [N_ITEMS] [N_JUDGES] [--smoke]   (--smoke: 80 items × 2 judges, 2 splits, no target)

The pool is `relgate_tui.core.jury.simulate.simulate_pool`: each judge is an expert on one kind of item.
"""

from __future__ import annotations

import argparse
import time

from relgate_tui.core.jury.simulate import simulate_pool
from relgate_tui.core.jury.study import run_jury_study

TARGET_S = 60.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("n_items", nargs="?", type=int, default=2000)
    parser.add_argument("n_judges", nargs="?", type=int, default=9)
    parser.add_argument("--smoke", action="store_true", help="the smallest size (seconds), no target checked")
    args = parser.parse_args()
    n, judges, splits = (80, 2, 2) if args.smoke else (args.n_items, args.n_judges, 10)
    data, texts = simulate_pool(n, judges, seed=0)
    t0 = time.perf_counter()
    study = run_jury_study(data, texts=texts, splits=splits, seed=0, n_search=1 if args.smoke else 3,
                           workers=1 if args.smoke else 2)
    wall = time.perf_counter() - t0
    print(f"{'protocol':<44}{'wall s':>8}{'target s':>10}  verdict")
    label = f"{n:,} items × {judges} judges, {splits} splits" + ("" if args.smoke else ", 2 processes")
    verdict = "smoke" if args.smoke else "PASS" if wall <= TARGET_S else "FAIL"
    print(f"{label:<44}{wall:>8.1f}{TARGET_S:>10.0f}  {verdict}")
    print()
    print(f"{'method':<26}{'Kendall τ':>10}{'sd':>7}{'p corrected':>12}{'p Wilcoxon':>12}")
    comp = {c.baseline: c for c in study.comparisons}
    for name, m in sorted(study.methods.items(), key=lambda kv: -kv[1].tau_mean):
        p = (f"{comp[name].p_corrected:>12.3f}{comp[name].p_value:>12.3f}" if name in comp else f"{'':>24}")
        print(f"{name:<26}{m.tau_mean:>10.3f}{m.tau_sd:>7.3f}{p}")
    print(f"claims improvement: {study.claims_improvement}; K per split: {list(study.k_per_split)}")


if __name__ == "__main__":
    main()
