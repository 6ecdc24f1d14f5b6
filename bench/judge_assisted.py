"""Judge-assisted certification (issue 22): validity and label savings of relgate_tui.core.ppi, by simulation.

    PYTHONPATH=$PWD python bench/judge_assisted.py [--runs 10000] [--quick]

Every simulated certification has N = 2,000 judged items drawn i.i.d. from a task whose true reliability is
θ = 0.90; the humans label them in a random order (so the first n items are the labelled ones) and the verification
judge's verdict f is drawn from the judge model below. Only the count of judge "yes" among the other items is
needed, drawn as Binomial(N − n, P(f = 1)).

Validity: the share of runs whose bound exceeds θ after n ∈ {30, 60, 120} labels, and for a reviewer who stops the
moment the live bound clears a gate set at the true θ (the worst case) — must be ≤ δ = 0.05 plus the Monte-Carlo
error (2 standard errors). ppi-python's ppi_mean_ci (the asymptotic PPI++ interval, one-sided) on the same data
is shown beside it for reference; it is not anytime-valid and not finite-sample.

Labels to clear a gate of 0.80 at θ = 0.90: the median first n at which the bound reaches 0.80, against the exact
Clopper–Pearson bound watched after every label (what the issue compares with; not valid under that watching) and
against today's anytime-valid human-only live bound (core.intervals.confidence_sequence).

The limit (core.label_limits, exact): the fewest labels with which *any* valid bound — one told the true judge and
reliability in advance, looking once — clears the gate with probability ≥ ½; no valid bound's median is below it.
``--limits`` prints only that table (seconds).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import betaincinv
from scipy.stats import binom

from relgate_tui.core import label_limits, ppi
from relgate_tui.core.certification.intervals import confidence_sequence_end

N_ITEMS = 2000
THETA = 0.90
GATE = 0.80
CONFIDENCE = 0.95
DELTA = 1.0 - CONFIDENCE
NS = (30, 60, 120)
HARD_SHARE, HARD_OK = 0.15, 0.40


@dataclass(frozen=True)
class Judge:
    name: str
    draw: Callable[[np.random.Generator, np.ndarray], np.ndarray]  # f given Y (and the item's hardness)
    cells: tuple[float, float, float, float]  # the joint law of (f, Y): (1, 1), (1, 0), (0, 1), (0, 0)

    @property
    def p_yes(self) -> float:
        """P(f = 1) on an item from the task."""
        return self.cells[0] + self.cells[1]


def _flip(agree: float) -> Callable[[np.random.Generator, np.ndarray], np.ndarray]:
    return lambda rng, y: np.where(rng.random(y.shape) < agree, y, 1.0 - y)


def _biased(rng: np.random.Generator, y: np.ndarray) -> np.ndarray:
    return np.where(y == 1.0, 1.0, (rng.random(y.shape) < 0.3).astype(np.float64))


_EASY_OK = (THETA - HARD_SHARE * HARD_OK) / (1 - HARD_SHARE)
_HARD_CELLS = ((1 - HARD_SHARE) * _EASY_OK, HARD_SHARE * (1 - HARD_OK), HARD_SHARE * HARD_OK,
               (1 - HARD_SHARE) * (1 - _EASY_OK))


def _cells(agree_if_right: float, agree_if_wrong: float) -> tuple[float, float, float, float]:
    a, b, c, d = label_limits.cells_of(THETA, agree_if_right, agree_if_wrong)
    return float(a), float(b), float(c), float(d)


JUDGES = (
    Judge("accurate 98%", _flip(0.98), _cells(0.98, 0.98)),
    Judge("accurate 95%", _flip(0.95), _cells(0.95, 0.95)),
    Judge("biased: accepts 30% of wrong", _biased, _cells(1.0, 0.7)),
    Judge("wrong exactly on hard items", lambda rng, y: y, _HARD_CELLS),  # drawn in _draw (the judge inverts hard items)
    Judge("coin flip", lambda rng, y: (rng.random(y.shape) < 0.5).astype(np.float64), _cells(0.5, 0.5)),
    Judge('always "yes"', lambda rng, y: np.ones_like(y), _cells(1.0, 0.0)),
)


def _draw(judge: Judge, runs: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Y, f) on the first n (labelled) items of each run, and each run's total judge "yes" over its N items."""
    rng = np.random.default_rng(seed)
    if judge.name.startswith("wrong exactly"):
        hard = rng.random((runs, n)) < HARD_SHARE
        y = (rng.random((runs, n)) < np.where(hard, HARD_OK, _EASY_OK)).astype(np.float64)
        f = np.where(hard, 1.0 - y, y)
    else:
        y = (rng.random((runs, n)) < THETA).astype(np.float64)
        f = judge.draw(rng, y)
    rest = rng.binomial(N_ITEMS - n, judge.p_yes, size=runs)
    return y, f, f.sum(1) + rest


def _cp_path(y: np.ndarray) -> np.ndarray:
    s = y.cumsum(1)
    t = np.arange(1, y.shape[1] + 1)[None, :]
    return np.where(s > 0, betaincinv(np.maximum(s, 1), t - s + 1, DELTA), 0.0)


def _cs_path(y: np.ndarray, confidence: float = CONFIDENCE) -> np.ndarray:
    s = y.cumsum(1)
    t = np.broadcast_to(np.arange(1, y.shape[1] + 1)[None, :], s.shape)
    return np.asarray(confidence_sequence_end(s, t, confidence, end="lower"))


def _best_path(y: np.ndarray, f: np.ndarray, yes: np.ndarray) -> np.ndarray:
    """The live form of the default gate with a verification judge: the better of today's anytime human-only
    bound and the assisted bound, each at half the error (valid by the union bound)."""
    half = 1.0 - DELTA / 2.0
    return np.maximum(_cs_path(y, half), ppi.bound_paths(yes, N_ITEMS, f, y, half, floor=0.5))


def _ppi_lower(y: np.ndarray, f: np.ndarray, yes: np.ndarray, n: int, runs: int) -> np.ndarray:
    from ppi_py import ppi_mean_ci  # bench/test dependency only

    out = np.empty(runs)
    for r in range(runs):
        rest_yes = int(yes[r] - f[r, :n].sum())
        unlabelled = np.r_[np.ones(rest_yes), np.zeros(N_ITEMS - n - rest_yes)]
        lo, _ = ppi_mean_ci(y[r, :n], f[r, :n], unlabelled, alpha=DELTA, alternative="larger")
        out[r] = float(np.ravel(lo)[0])
    return out


def _median(first: np.ndarray, horizon: int) -> str:
    m = float(np.median(first))
    return f">{horizon}" if m > horizon else f"{m:.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10_000, help="simulated certifications per case (validity)")
    ap.add_argument("--label-runs", type=int, default=2_000, help="runs per judge for the labels-to-clear medians")
    ap.add_argument("--ppi-runs", type=int, default=2_000, help="runs per case given to ppi_mean_ci (slow, loop)")
    ap.add_argument("--horizon", type=int, default=300, help="labels simulated for the labels-to-clear medians")
    ap.add_argument("--quick", action="store_true", help="1,000 runs, 500 for the rest (a smoke run)")
    ap.add_argument("--limits", action="store_true", help="print only the fewest labels any valid bound needs")
    args = ap.parse_args()
    if args.limits:
        _print_limits()
        return
    if args.quick:
        args.runs, args.label_runs, args.ppi_runs = 1000, 500, 300
    t0 = time.perf_counter()
    mc = 2 * math.sqrt(DELTA * (1 - DELTA) / args.runs)
    print(f"Validity: share of runs whose {CONFIDENCE:.0%} lower bound exceeds the true reliability θ = {THETA} "
          f"(target ≤ δ + 2 MC s.e. = {DELTA + mc:.4f}); N = {N_ITEMS}, {args.runs} runs per case")
    head = " | ".join(f"n={n:<3d} assisted  ppi_mean_ci" for n in NS)
    print(f"{'judge':30s} | {head} | stop at first clearing (gate = θ, ≤ {max(NS)} labels): assisted, best-of")
    worst = 0.0
    for i, judge in enumerate(JUDGES):
        y, f, yes = _draw(judge, args.runs, max(NS), seed=1000 + i)
        path = ppi.bound_paths(yes, N_ITEMS, f, y, CONFIDENCE, floor=0.5)
        cells = []
        for n in NS:
            share = float((path[:, n - 1] > THETA).mean())
            worst = max(worst, share)
            ppi_share = float((_ppi_lower(y, f, yes, n, args.ppi_runs) > THETA).mean())
            cells.append(f"{'':5s} {share:.4f}    {ppi_share:.4f}    ")
        stop = float((path >= THETA).any(1).mean())
        stop_best = float((_best_path(y, f, yes) >= THETA).any(1).mean())
        worst = max(worst, stop, stop_best)
        print(f"{judge.name:30s} | {' | '.join(cells)} | {stop:.4f}  {stop_best:.4f}")
    print(f"worst share {worst:.4f} vs target {DELTA + mc:.4f}: {'OK' if worst <= DELTA + mc else 'FAILED'}")

    print(f"\nLabels to clear a gate of {GATE} at θ = {THETA} ({CONFIDENCE:.0%}; median first n over "
          f"{args.label_runs} runs, at most {args.horizon} labels)")
    print(f"{'judge':30s} | assisted | best-of | Clopper–Pearson (watched) | assisted/CP | human-only live CS | "
          "assisted/CS | best-of/CS | ppi_mean_ci (watched)")
    for i, judge in enumerate(JUDGES):
        y, f, yes = _draw(judge, args.label_runs, args.horizon, seed=2000 + i)
        assisted = ppi.labels_to_clear(ppi.bound_paths(yes, N_ITEMS, f, y, CONFIDENCE, floor=0.5), GATE)
        cp = ppi.labels_to_clear(_cp_path(y), GATE)
        cs = ppi.labels_to_clear(_cs_path(y), GATE)
        best = ppi.labels_to_clear(_best_path(y, f, yes), GATE)
        m_a, m_cp, m_cs, m_b = (float(np.median(x)) for x in (assisted, cp, cs, best))
        ppi_first = np.full(min(args.ppi_runs, 200), args.horizon + 1)
        for r in range(ppi_first.size):  # ppi_mean_ci watched from label 10 on, on 200 runs (a Python loop)
            for n in range(10, args.horizon + 1):
                if _ppi_lower(y[r:r + 1], f[r:r + 1], yes[r:r + 1], n, 1)[0] >= GATE:
                    ppi_first[r] = n
                    break
        print(f"{judge.name:30s} | {_median(assisted, args.horizon):>8s} | {_median(best, args.horizon):>7s} | "
              f"{_median(cp, args.horizon):>25s} | {m_a / m_cp:11.0%} | {_median(cs, args.horizon):>18s} | "
              f"{m_a / m_cs:11.0%} | {m_b / m_cs:10.0%} | {_median(ppi_first, args.horizon):>8s}")
    fewest = ppi.fewest_labels_possible(THETA, GATE, CONFIDENCE)
    print(f"A bound on the judge–human differences (as relgate's) cannot clear {GATE} with fewer than "
          f"{math.ceil(fewest)} labels even with a judge that is never wrong (ppi.fewest_labels_possible).")
    _print_limits()
    print(f"\n{time.perf_counter() - t0:.0f} s")


def _cp_fixed_n(theta: float) -> int:
    """The fewest labels n, fixed in advance, at which Clopper–Pearson clears the gate with probability ≥ ½."""
    for n in range(1, 1000):
        k = np.arange(1, n + 1)
        clears = betaincinv(k, n - k + 1.0, DELTA) >= GATE
        if clears.any() and binom.sf(int(k[clears][0]) - 1, n, theta) >= 0.5:
            return n
    raise RuntimeError("no n up to 1000")


def _print_limits() -> None:
    """The fewest labels any valid bound can clear the gate with (core.label_limits), beside the issue's targets."""
    cp = label_limits.watched_cp_median(THETA, GATE, CONFIDENCE)
    fixed = _cp_fixed_n(THETA)
    targets = {"accurate 98%": 0.60, "accurate 95%": 0.90, "coin flip": 1.10}
    print(f"\nThe limit: the fewest labels with which ANY valid bound — even one told the true law in advance, looking "
          f"once — clears {GATE} at θ = {THETA} with probability ≥ ½ (core.label_limits, exact linear programme).\n"
          f"Clopper–Pearson watched after every label: median {cp} (clears at θ = {GATE} in "
          f"{label_limits.watched_cp_clearing(GATE, GATE, CONFIDENCE)[-1]:.0%} of runs: not valid watched); "
          f"Clopper–Pearson at a fixed n: {fixed}.")
    print(f"{'judge':30s} | limit | P(clear) at limit − 1, limit | limit/CP watched | issue target (of {cp}) | "
          "limit/CP fixed n")
    for judge in JUDGES:
        law = np.array(judge.cells)
        lim = label_limits.fewest_labels_any_bound(law, GATE, CONFIDENCE, start=max(1, cp // 2))
        share = targets.get(judge.name)
        target = f"≤ {share:.0%} = {share * cp:.1f}" if share else "—"
        print(f"{judge.name:30s} | {lim.labels:5d} | {lim.power_before:.3f}, {lim.power:.3f}{'':15s} | "
              f"{lim.labels / cp:16.0%} | {target:>22s} | {lim.labels / fixed:15.0%}")
    better = 0.95
    quick = label_limits.watched_cp_median(better, GATE, CONFIDENCE)
    one = label_limits.fewest_labels_any_bound(label_limits.cells_of(better, 0.5, 0.5), GATE, CONFIDENCE).labels
    n2 = math.floor(1.10 * cp)
    row = [(n1, label_limits.two_look_limit(THETA, better, GATE, n1, n2, CONFIDENCE)) for n1 in (20, 24, 28)]
    print(f"Human-only information (a coin-flip judge adds none): a valid bound that clears by {n2} labels half the time "
          f"at θ = {THETA} (the coin-flip target) and also by n1 half the time at θ = {better} (single look: {one}, "
          f"Clopper–Pearson watched: {quick}) clears by {n2} at θ = {THETA} with probability at most "
          + ", ".join(f"{p:.3f} (n1 = {n1})" for n1, p in row) + ".")


if __name__ == "__main__":
    main()
