"""Judge-assisted certification (issues 22 and 33): validity and label savings of relgate_tui.core.ppi, by simulation.

    PYTHONPATH=$PWD python bench/judge_assisted.py [--runs 10000] [--quick] [--smoke]

Every simulated certification has N judged items (N = 2,000 and 20,000) drawn i.i.d. from a task whose true
reliability is θ = 0.90; the humans label them in a random order (so the first n items are the labelled ones) and the
verification judge's verdict f is drawn from the judge model below. Only the count of judge "yes" among the other
items is needed, drawn as Binomial(N − n, P(f = 1)).

Validity (95%): the share of runs whose bound reaches θ at some label up to the horizon — a reviewer who stops the
moment the live bound clears a gate set at the true θ (the worst case for every gate) — must be ≤ δ = 0.05 plus the
Monte-Carlo error (2 standard errors). Rows: the assisted bound (ppi.bound_paths: one e-process, a wealth-weighted
mixture over the judge's weight λ, λ = 0 included), which is also the new ``best`` gate (it already holds the
human-only bet); the ``best`` gate as shipped before issue 33 (the fixed-n Clopper–Pearson bound at δ/2 or the
assisted bound at δ/2) re-decided after every label, through its Clopper–Pearson half alone (the gate passes at
least that often: NOT valid watched); and a reviewer who leaves the hard items unlabelled, with
the judge wrong exactly on them — the bound from every label given (gaps ignored: not valid) and from the labelled
prefix only (core.label_prefix). ppi-python's ppi_mean_ci (the asymptotic PPI++ interval, one-sided: its λ is tuned
first, since the default lam=None path drops ``alternative`` and returns the two-sided interval) at a fixed n = 30
is shown for reference; it is neither anytime-valid nor finite-sample.

Labels to clear gates of 0.80 and 0.85 at θ = 0.90: the median first n at which the SHIPPED gate passes —
``decide_gate`` (``best``, anytime) re-decided after every label on the bound every front end computes (the full
grid; the first 500 runs per judge) — beside the bench's ``floor`` = 0.75 shortcut (and the share of runs whose first
crossing it gets wrong), against the valid baselines only — the anytime human-only confidence sequence (core.intervals.confidence_sequence) and the
one-look Clopper–Pearson test at the fewest labels fixed in advance that clear with probability ≥ ½ (44 at 0.80, 126
at 0.85). Clopper–Pearson watched after every label is not valid and is not a baseline.

The limit (core.label_limits, exact): the fewest labels with which *any* valid bound — one told the true judge and
reliability in advance, looking once — clears the gate with probability ≥ ½; no valid bound's median is below it,
and no valid anytime bound reaches it. ``--limits`` prints only that table (seconds).
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
SIZES = (2000, 20000)
THETA = 0.90
GATE = 0.80
GATES = (0.80, 0.85)
CONFIDENCE = 0.95
DELTA = 1.0 - CONFIDENCE
NS = (30, 60, 120)
TARGET_98 = {(2000, 0.80): 49, (2000, 0.85): 150}
COIN_TARGET = 1.25
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


def _draw(judge: Judge, runs: int, n: int, seed: int, big_n: int = N_ITEMS,
          hard_out: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(Y, f) on the first n (labelled) items of each run, each run's total judge "yes" over its N items, and which
    of the n items are hard (all False outside the hard-items world)."""
    rng = np.random.default_rng(seed)
    hard = np.zeros((runs, n), dtype=bool)
    if judge.name.startswith("wrong exactly"):
        hard = rng.random((runs, n)) < HARD_SHARE
        y = (rng.random((runs, n)) < np.where(hard, HARD_OK, _EASY_OK)).astype(np.float64)
        f = np.where(hard, 1.0 - y, y)
    else:
        y = (rng.random((runs, n)) < THETA).astype(np.float64)
        f = judge.draw(rng, y)
    rest = rng.binomial(big_n - n, judge.p_yes, size=runs)
    return y, f, f.sum(1) + rest, hard


def _cp_path(y: np.ndarray, delta: float = DELTA) -> np.ndarray:
    s = y.cumsum(1)
    t = np.arange(1, y.shape[1] + 1)[None, :]
    return np.where(s > 0, betaincinv(np.maximum(s, 1), t - s + 1, delta), 0.0)


def _cs_path(y: np.ndarray, confidence: float = CONFIDENCE) -> np.ndarray:
    s = y.cumsum(1)
    t = np.broadcast_to(np.arange(1, y.shape[1] + 1)[None, :], s.shape)
    return np.asarray(confidence_sequence_end(s, t, confidence, end="lower"))


FLOOR = 0.75
"""Candidate reliabilities below it are not tested (bound_paths' ``floor``: bounds below it read 0, which changes no
first crossing of a gate ≥ 0.80 or of θ; 2.7× faster than the full grid)."""


def _assisted(y: np.ndarray, f: np.ndarray, yes: np.ndarray, big_n: int, confidence: float = CONFIDENCE) -> np.ndarray:
    return ppi.bound_paths(yes, big_n, f, y, confidence, floor=FLOOR)


def _best_cs(y: np.ndarray, assisted_half: np.ndarray) -> np.ndarray:
    """A valid watched best-of: the human-only confidence sequence and the assisted bound, each at half the error."""
    return np.maximum(_cs_path(y, 1.0 - DELTA / 2.0), assisted_half)


def _gaps_ignored(y: np.ndarray, f: np.ndarray, hard: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The labels a reviewer who leaves every hard item unlabelled gives, in order, gaps closed up (the bound
    computed from every label given), and the length of the labelled prefix (up to the first hard item)."""
    order = np.argsort(hard, axis=1, kind="stable")  # the easy items first, each run in its seeded order
    keep = int((~hard).sum(1).min())
    prefix = np.where(hard.any(1), np.argmax(hard, axis=1), hard.shape[1])
    return (np.take_along_axis(y, order, 1)[:, :keep], np.take_along_axis(f, order, 1)[:, :keep], prefix)


def _ppi_lower(y: np.ndarray, f: np.ndarray, yes: np.ndarray, n: int, runs: int, big_n: int = N_ITEMS) -> np.ndarray:
    """ppi_mean_ci's one-sided ("larger") lower bound at n labels. Its default lam=None path re-calls itself without
    ``alternative`` (two-sided), so λ is tuned here first, exactly as that path does, then passed in."""
    from ppi_py import ppi_mean_ci  # bench/test dependency only
    from ppi_py.ppi import _calc_lam_glm, ppi_mean_pointestimate
    from ppi_py.utils import reshape_to_2d

    out = np.empty(runs)
    for r in range(runs):
        rest_yes = int(yes[r] - f[r, :n].sum())
        unlabelled = np.r_[np.ones(rest_yes), np.zeros(big_n - n - rest_yes)]
        yy, ff, uu = reshape_to_2d(y[r, :n]), reshape_to_2d(f[r, :n]), reshape_to_2d(unlabelled)
        point = ppi_mean_pointestimate(yy, ff, uu, lam=1)
        lam = _calc_lam_glm(yy - point, ff - point, uu - point, np.eye(1), coord=None, clip=True,
                            optim_mode="overall")
        lo, _ = ppi_mean_ci(y[r, :n], f[r, :n], unlabelled, alpha=DELTA, alternative="larger", lam=lam)
        out[r] = float(np.ravel(lo)[0])
    return out


def _median(first: np.ndarray, horizon: int) -> str:
    m = float(np.median(first))
    return f">{horizon}" if m > horizon else f"{m:.0f}"


def _share(path: np.ndarray) -> float:
    return float((path >= THETA).any(1).mean())


def _shipped_share(y: np.ndarray, path: np.ndarray, cap: int) -> float:
    """The SHIPPED gate, as every front end decides it: :func:`relgate_tui.core.certification.gate.decide_gate` with
    ``gate_on="best"`` and a person's labels (``watch="anytime"``), re-decided after every label of the first ``cap``
    runs at the threshold θ; the assisted bound it is given is the run's ``ppi.bound_paths`` entry. The share of runs
    where it says PASS at some label."""
    from relgate_tui.core.certification.gate import decide_gate

    passed = 0
    runs = min(cap, y.shape[0])
    for r in range(runs):
        succ = np.cumsum(y[r]).astype(int)
        for m in range(1, y.shape[1] + 1):
            at = float(path[r, m - 1])
            if at < THETA:  # below θ the shipped rule cannot pass (its value is this bound): skip the call
                continue
            d = decide_gate(THETA, successes=int(succ[m - 1]), n=m, confidence=CONFIDENCE, gate_on="best",
                            assisted=lambda c, at=at: at, watch="anytime")
            if d.passed:
                passed += 1
                break
    return passed / runs


def _shipped_first(y: np.ndarray, f: np.ndarray, yes: np.ndarray, big_n: int, gate: float, cap: int) -> np.ndarray:
    """Labels to clear ``gate`` on the SHIPPED path, per run of the first ``cap``: the bound every front end computes
    (``ppi.bound_paths`` over the full grid, no ``floor`` — what ``reliability_bound`` gives after each label) handed
    to :func:`relgate_tui.core.certification.gate.decide_gate` (``gate_on="best"``, ``watch="anytime"``),
    re-decided after every label; the first n it says PASS (horizon + 1 when never)."""
    from relgate_tui.core.certification.gate import decide_gate

    runs = min(cap, y.shape[0])
    path = ppi.bound_paths(yes[:runs], big_n, f[:runs], y[:runs], CONFIDENCE)
    first = np.full(runs, y.shape[1] + 1)
    for r in range(runs):
        succ = np.cumsum(y[r]).astype(int)
        for m in np.flatnonzero(path[r] >= gate) + 1:  # below the gate the shipped rule cannot pass: no call
            at = float(path[r, m - 1])
            d = decide_gate(gate, successes=int(succ[m - 1]), n=int(m), confidence=CONFIDENCE, gate_on="best",
                            assisted=lambda c, at=at: at, watch="anytime")
            if d.passed:
                first[r] = m
                break
    return first


SHIPPED_LABEL_RUNS = 500
"""Runs per judge given to the shipped-path labels (:func:`_shipped_first`: the full grid, one decide_gate call per
label at or above the gate)."""

SHIPPED_RUNS = 2_000
"""Runs per case given to the shipped-gate loop (:func:`_shipped_share`, one decide_gate call per label)."""


def _validity(runs: int, ppi_runs: int, horizon: int) -> None:
    mc = 2 * math.sqrt(DELTA * (1 - DELTA) / runs)
    target = DELTA + mc
    print(f"Validity: share of runs whose {CONFIDENCE:.0%} bound reaches the true reliability θ = {THETA} at some "
          f"label ≤ {horizon} (a reviewer stopping at the first clearing of a gate at θ; target ≤ δ + 2 MC s.e. = "
          f"{target:.4f}); {runs} runs per case")
    worst = 0.0
    for big_n in SIZES:
        print(f"N = {big_n}")
        print(f"{'judge':30s} | assisted bound | shipped gate: decide_gate best, re-decided every label (first "
              f"{min(runs, SHIPPED_RUNS)} runs) | former best: its Clopper–Pearson δ/2 half alone (NOT valid "
              "watched) | ppi_mean_ci one-sided, fixed n = 30 (reference)")
        for i, judge in enumerate(JUDGES):
            y, f, yes, _ = _draw(judge, runs, horizon, 1000 + i, big_n)
            apath = _assisted(y, f, yes, big_n)
            full = _share(apath)
            shipped = _shipped_share(y, apath, SHIPPED_RUNS)
            old = _share(_cp_path(y, DELTA / 2.0))
            worst = max(worst, full, shipped)
            ref = "—"
            if big_n == SIZES[0]:
                ref = f"{float((_ppi_lower(y, f, yes, NS[0], ppi_runs, big_n) > THETA).mean()):.4f}"
            print(f"{judge.name:30s} | {full:14.4f} | {shipped:78.4f} | {old:57.4f} | {ref}")
        hard_judge = next(j for j in JUDGES if j.name.startswith("wrong exactly"))
        y, f, yes, hard = _draw(hard_judge, runs, 2 * horizon, 3000, big_n)
        yg, fg, prefix = _gaps_ignored(y, f, hard)
        ignored = _share(_assisted(yg, fg, yes, big_n))
        path = _assisted(y[:, :horizon], f[:, :horizon], yes, big_n)
        at_prefix = np.where(prefix[:, None] > np.arange(horizon)[None, :], path, 0.0)  # frozen at the first gap
        prefixed = _share(at_prefix)
        worst = max(worst, prefixed)
        print(f"{'reviewer leaves hard items':30s} | gaps ignored (before issue 33, NOT valid): {ignored:.4f} | "
              f"labelled prefix only: {prefixed:.4f} (median prefix {np.median(prefix):.0f} labels)")
    print(f"worst share of the valid rules {worst:.4f} vs target {target:.4f}: {'OK' if worst <= target else 'FAILED'}")


def _labels(label_runs: int, horizon: int) -> None:
    print(f"\nLabels to clear a gate at θ = {THETA} ({CONFIDENCE:.0%}; median first n over {label_runs} runs, at most "
          f"{horizon} labels). Baselines (valid): the anytime human-only confidence sequence (CS) and one-look "
          f"Clopper–Pearson at a fixed n (CP1: {', '.join(f'{_cp_fixed_n(THETA, g)} at {g}' for g in GATES)}).")
    verdicts = []
    for big_n in SIZES:
        print(f"N = {big_n}")
        print(f"{'judge':30s} | gate | shipped gate | floor {FLOOR} shortcut (differs) | CS δ/2 ∨ assisted δ/2 | "
              "human-only CS | CP1 | shipped/CS | shipped/CP1 | target (shipped)")
        for i, judge in enumerate(JUDGES):
            y, f, yes, _ = _draw(judge, label_runs, horizon, 2000 + i, big_n)
            assisted = _assisted(y, f, yes, big_n)
            both = _best_cs(y, _assisted(y, f, yes, big_n, 1.0 - DELTA / 2.0))
            cs = _cs_path(y)
            for gate in GATES:
                a, b, c = (ppi.labels_to_clear(p, gate) for p in (assisted, both, cs))
                shipped = _shipped_first(y, f, yes, big_n, gate, SHIPPED_LABEL_RUNS)
                differs = float((shipped != a[: shipped.size]).mean())
                m_a, m_c = float(np.median(shipped)), float(np.median(c))
                one = _cp_fixed_n(THETA, gate)
                target = "—"
                if judge.name == "accurate 98%" and (big_n, gate) in TARGET_98:
                    ok = m_a <= TARGET_98[(big_n, gate)]
                    target = f"≤ {TARGET_98[(big_n, gate)]}: {'OK' if ok else 'FAILED'}"
                    verdicts.append(ok)
                elif judge.name == "coin flip" and gate == GATES[0]:
                    ok = m_a <= COIN_TARGET * m_c
                    target = f"≤ {COIN_TARGET} × CS = {COIN_TARGET * m_c:.1f}: {'OK' if ok else 'FAILED'}"
                    verdicts.append(ok)
                print(f"{judge.name:30s} | {gate:.2f} | {_median(shipped, horizon):>12s} | "
                      f"{_median(a, horizon):>19s} ({differs:4.0%}) | {_median(b, horizon):>21s} | "
                      f"{_median(c, horizon):>13s} | {one:3d} | {m_a / m_c:10.0%} | {m_a / one:11.0%} | {target}")
    print(f"label targets: {'all OK' if all(verdicts) else 'FAILED'} ({sum(verdicts)}/{len(verdicts)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10_000, help="simulated certifications per case (validity)")
    ap.add_argument("--label-runs", type=int, default=2_000, help="runs per judge for the labels-to-clear medians")
    ap.add_argument("--ppi-runs", type=int, default=2_000, help="runs per case given to ppi_mean_ci (slow, loop)")
    ap.add_argument("--horizon", type=int, default=300, help="labels watched for validity")
    ap.add_argument("--label-horizon", type=int, default=600, help="labels simulated for the labels-to-clear medians")
    ap.add_argument("--quick", action="store_true", help="1,000 runs, 500 for the rest")
    ap.add_argument("--smoke", action="store_true", help="the smallest sizes (seconds), no targets meaningful")
    ap.add_argument("--limits", action="store_true", help="print only the fewest labels any valid bound needs")
    ap.add_argument("--only", choices=("validity", "labels"), help="print only one of the two simulations")
    args = ap.parse_args()
    if args.limits:
        _print_limits()
        return
    if args.quick:
        args.runs, args.label_runs, args.ppi_runs = 1000, 500, 300
    if args.smoke:
        global SHIPPED_RUNS, SHIPPED_LABEL_RUNS
        args.runs, args.label_runs, args.ppi_runs, args.horizon, args.label_horizon = 20, 8, 5, 40, 60
        SHIPPED_RUNS, SHIPPED_LABEL_RUNS = 10, 5
    t0 = time.perf_counter()
    if args.only != "labels":
        _validity(args.runs, args.ppi_runs, args.horizon)
    if args.only != "validity":
        _labels(args.label_runs, args.label_horizon)
        fewest = ppi.fewest_labels_possible(THETA, GATE, CONFIDENCE)
        print(f"A bound on the judge–human differences alone cannot clear {GATE} with fewer than {math.ceil(fewest)} "
              "labels even with a judge that is never wrong (ppi.fewest_labels_possible).")
    if args.only is None and not args.smoke:
        _print_limits()
    print(f"\n{time.perf_counter() - t0:.0f} s")


def _cp_fixed_n(theta: float, gate: float = GATE) -> int:
    """The fewest labels n, fixed in advance, at which Clopper–Pearson clears the gate with probability ≥ ½."""
    for n in range(1, 1000):
        k = np.arange(1, n + 1)
        clears = betaincinv(k, n - k + 1.0, DELTA) >= gate
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
