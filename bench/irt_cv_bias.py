"""How biased is C_V (paper 002, Eqs. 2–3) at small n? (issue 24 §7)

A *steady* judge — one graded response model under every prompt variant (a = 1.8, thresholds −1.5, −0.5, 0.5, 1.5;
three variants), so its true prompt consistency is perfect — is simulated with ``simulate_grm`` (seeded) and fitted
by ``run_irt_study`` at several n. Reported: mean and sd of C_V over the seeds and the share of fits that fail the
paper's C_V ≤ 0.10 mark. The caveat ``relgate judge irt`` prints below ``IRT_STABLE_N`` items quotes these figures.

Run: ``python bench/irt_cv_bias.py [--seeds 10]`` (``--smoke``: 2 seeds at n = 100).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n", type=int, nargs="+", default=[150, 400, 1600])
    ap.add_argument("--smoke", action="store_true", help="the smallest size (seconds): 2 seeds at n = 100")
    args = ap.parse_args()
    if args.smoke:
        args.seeds, args.n = 2, [100]

    from relgate_tui.core.irt.grm import simulate_grm
    from relgate_tui.core.irt.study import run_irt_study

    variants = ("original", "typo", "newline")
    a, b = [1.8] * 3, [[-1.5, -0.5, 0.5, 1.5]] * 3
    print(f"steady judge: one GRM under {len(variants)} variants, {args.seeds} seeds; target C_V = 0 "
          "(the paper's mark: C_V ≤ 0.10)")
    print(f"{'n':>6} {'mean C_V':>9} {'sd':>7} {'fails C_V ≤ 0.10':>18}")
    for n in args.n:
        cvs = []
        for seed in range(args.seeds):
            y, _ = simulate_grm(a, b, n, seed)
            per = {"steady": {f"i{i}": {v: float(y[i, p]) for p, v in enumerate(variants)} for i in range(n)}}
            cvs.append(run_irt_study("c", per).judges[0].c_v)
        cv = np.array(cvs, dtype=float)
        print(f"{n:>6} {cv.mean():>9.3f} {cv.std():>7.3f} {np.mean(cv > 0.10):>18.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
