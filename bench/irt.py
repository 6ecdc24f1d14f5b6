"""Paper 002: time to fit the graded response model (issue 13 acceptance: 1,600 samples × 4 variants × 5 categories
in ≤ 2 s on 2 cores, median of 5; the paper's NUTS fits take minutes per cell).

    python bench/irt.py [--smoke]   (--smoke: 200 samples, one fit per prior, no target checked)

Also prints the recovery error of the fit on the same simulated data (discriminations, thresholds, EAP correlation).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from relgate_tui.core.irt.grm import fit_grm, simulate_grm

TARGET_S = 2.0
A = [1.6, 1.2, 2.0, 0.9]
B = [[-1.5, -0.5, 0.5, 1.5], [-1.0, 0.0, 1.0, 2.0], [-2.0, -1.0, 0.0, 1.0], [-1.2, -0.3, 0.6, 1.4]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="the smallest size (seconds), no target checked")
    smoke = parser.parse_args().smoke
    n, repeats = (200, 1) if smoke else (1600, 5)
    y, theta = simulate_grm(A, B, n, seed=0)
    print(f"{'fit':<34}{'median s':>10}{'min s':>8}{'max s':>8}{'target s':>10}  verdict")
    for prior in ("mml", "map"):
        times, fit = [], None
        for _ in range(repeats):
            t0 = time.perf_counter()
            fit = fit_grm(y, prior=prior)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        label = f"GRM {prior.upper()} {n:,} × 4 × 5 cat."
        print(f"{label:<34}{med:>10.3f}{min(times):>8.3f}{max(times):>8.3f}{TARGET_S:>10.1f}  "
              f"{'smoke' if smoke else 'PASS' if med <= TARGET_S else 'FAIL'}")
        assert fit is not None
        print(f"    converged={fit.converged} iterations={fit.iterations} "
              f"max|Δa|={np.max(np.abs(np.array(fit.a) - A)):.3f} "
              f"max|Δb|={np.max(np.abs(np.array(fit.b) - np.array(B))):.3f} "
              f"corr(θ̂, θ)={np.corrcoef(fit.theta, theta)[0, 1]:.3f}")


if __name__ == "__main__":
    main()
