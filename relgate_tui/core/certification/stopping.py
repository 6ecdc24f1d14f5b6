r"""Sequential stopping rules for self-consistency sampling (SPEC §3.7, paper 004 §9).

An item is sampled one answer at a time. After each sample the caller asks a :class:`StoppingRule` whether the
current *leader* (the most frequent non-INVALID canonical class) is certified as the item's mode; if so, sampling of
that item stops early. The caller separately enforces the budget ``K_max``. Conformal validity is unaffected by any
rule that looks only at the samples (paper Prop. 9.3), so the rules below only trade calls against the chance of
certifying a wrong mode.

Rules (``get_stopping_rule(name, delta)``):

* ``"anytime"`` (default, :class:`AnytimeRule`): a mixture-martingale test with Ville's inequality, provably
  P(stop with a leader that is not the true mode) <= delta for every class distribution and every stopping time.
  The proof is in the class docstring.
* ``"paper"`` (:class:`PaperRule`): paper eq. 9.1 exactly as written. It cannot stop before k = 21 at delta = 0.05.
* ``"none"`` (:class:`NoStopping`): never stops early (always ``K_max`` samples).
* ``"trustgate"`` (:class:`TrustGateRule`): TrustGate 0.3.9's unsound rule; for benchmarking only, deliberately not in
  :data:`STOPPING_RULES`.

Conventions shared by every rule: ``counts`` are the sample counts of the distinct non-INVALID classes seen so far,
**in their order of first appearance** (zeros allowed and ignored; the engine builds them with a ``Counter`` over the
samples in sample order) — only ``anytime`` reads that order; ``n_samples`` is the number of samples drawn so far
*including* INVALID ones. A class is "seen" when its count is positive. "True mode" means the unique most probable
non-INVALID class; when several classes tie for the maximum probability there is no true mode and every early stop
counts as wrong. :func:`unanimous_floor` gives the earliest k at which any valid label-symmetric rule may stop.

Every rule also offers ``should_stop_batch(leader, runner_up, n_seen, n_samples, leader_order=None)`` over numpy
arrays (every rule depends on the counts only through the leader's count, the runner-up's count, the number of
classes seen and the leader's order of first appearance); it is used by :func:`simulate_stopping`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from relgate_tui.core.certification.grids import IntegerGrid
from relgate_tui.core.certification.stopping_base import (
    BatchRule,
    NoStopping,
    StoppingRule,
    check_delta,
    summarise_counts,
)

__all__ = [
    "STOPPING_RULES",
    "AnytimeRule",
    "NoStopping",
    "PaperRule",
    "StoppingRule",
    "StoppingStats",
    "TrustGateRule",
    "PreviousAnytimeRule",
    "anytime_log_evidence",
    "anytime_weight",
    "get_stopping_rule",
    "leader_order",
    "unanimous_floor",
    "simulate_stopping",
]

STOPPING_RULES: tuple[str, ...] = ("anytime", "paper", "none")
"""User-facing rule names; the first is the default. ``"trustgate"`` exists for benchmarking only."""

_ALL_RULES: tuple[str, ...] = (*STOPPING_RULES, "trustgate", "anytime-v1")


# ----------------------------------------------------------------------------------------------------------------
# anytime


_PRIOR_ALPHA = 16.0
"""Mixture prior on theta: density proportional to theta**(ALPHA - 1) on [1/2, 1] (a truncated Beta(16, 1))."""

_LOG_PRIOR_MASS = math.log((1.0 - 2.0 ** (-_PRIOR_ALPHA)) / _PRIOR_ALPHA)
"""log of the prior's normalising constant: integral of theta**15 over [1/2, 1] = (1 - 2**-16) / 16."""

_ZETA2 = math.pi**2 / 6.0
_FIRST_WEIGHT = 0.9
"""w_1: the share of delta spent on the first class to appear (the eventual leader on almost every real item)."""


def anytime_log_evidence(wins: np.ndarray | int, losses: np.ndarray | int) -> np.ndarray | float:
    r"""log M(a, b) of the mixture likelihood ratio used by :class:`AnytimeRule` (vectorised).

    .. math:: M(a, b) = \int_{1/2}^{1} (2\theta)^a \, (2(1-\theta))^b \, \pi(d\theta), \qquad
              \pi(d\theta) = \frac{\theta^{15}\, d\theta}{\int_{1/2}^1 u^{15}\, du},

    i.e. the Bayes factor of Bernoulli(theta), theta ~ pi, against Bernoulli(1/2) after ``a`` "wins" and ``b``
    "losses". Closed form: ``2**(a+b) * B(a+16, b+1) * I_{1/2}(b+1, a+16) / ((1 - 2**-16) / 16)`` where
    ``B(a+16, b+1) I_{1/2}(b+1, a+16)`` is the upper incomplete beta integral over [1/2, 1]. Non-decreasing in
    ``a`` and non-increasing in ``b`` (the integrand is, pointwise, because 2 theta >= 1 >= 2 (1 - theta)).
    """
    from scipy.special import betainc, betaln  # deferred: importing scipy.special costs ~0.3 s at start-up

    a = np.asarray(wins, dtype=float)
    b = np.asarray(losses, dtype=float)
    with np.errstate(divide="ignore"):
        upper_tail = np.log(betainc(b + 1.0, a + _PRIOR_ALPHA, 0.5))
    result = (a + b) * math.log(2.0) + betaln(a + _PRIOR_ALPHA, b + 1.0) + upper_tail - _LOG_PRIOR_MASS
    return float(result) if result.ndim == 0 else result


def anytime_weight(order: np.ndarray | int) -> np.ndarray | float:
    r"""w_r, the share of delta given to the class that appeared r-th (vectorised):

    .. math:: w_1 = 0.9, \qquad w_r = 0.1 \cdot \frac{6}{\pi^2 (r-1)^2} \quad (r \ge 2), \qquad \sum_r w_r = 1.

    Decreasing in r, so a caller that knows only the number of classes seen C >= r may use w_C (smaller, valid).
    """
    r = np.maximum(np.asarray(order, dtype=float), 1.0)
    tail = (1.0 - _FIRST_WEIGHT) / (_ZETA2 * np.maximum(r - 1.0, 1.0) ** 2)
    result = np.where(r <= 1.0, _FIRST_WEIGHT, tail)
    return float(result) if result.ndim == 0 else result


_EVIDENCE = IntegerGrid(anytime_log_evidence, (2048, 1024))
"""anytime_log_evidence(a, b) on the integer points batch decisions ask for (core/certification/grids.py)."""


def _log_inverse_level(delta: float, order: np.ndarray | int) -> np.ndarray | float:
    """log(1 / (delta * w_r)) at r = ``order`` (the leader's order of first appearance)."""
    result = -math.log(delta) - np.log(anytime_weight(order))
    return float(result) if np.ndim(result) == 0 else result


def unanimous_floor(delta: float) -> int:
    r"""The smallest k at which *any* label-symmetric rule with P(wrong stop) <= delta may stop a unanimous item.

    A rule is label-symmetric when renaming the classes does not change its decision (every rule here is: it sees
    counts, not labels). Take the exact tie p = (1/2, 1/2): there is no true mode, so every stop is wrong. If the
    rule stops after k unanimous samples, it stops on "k times A" and, by symmetry, on "k times B", an event of
    probability 2 * 2^{-k} = 2^{1-k}. Validity needs 2^{1-k} <= delta, i.e. k >= 1 + log2(1/delta): k >= 6 at
    delta = 0.05 (2^{-4} = 6.25% > 5% >= 2^{-5} = 3.1%). Ties between more classes give the weaker bound
    m^{1-k}, so the two-class tie is the binding case. :class:`AnytimeRule` stops a unanimous item at exactly this
    floor for delta = 0.05 (k = 6), and within one sample of it for delta in [0.01, 0.2] (a test).
    """
    delta = check_delta(delta)
    return max(1, math.ceil(1.0 + math.log2(1.0 / delta) - 1e-12))


def leader_order(counts: Sequence[int]) -> int:
    """The leader's order of first appearance: 1 + the number of seen classes listed before the first class with
    the largest count. ``counts`` must list the classes in the order they first appeared (zeros are ignored)."""
    values = [int(c) for c in counts]
    if not values or max(values) <= 0:
        return 1
    top = max(values)
    position = values.index(top)
    return 1 + sum(1 for c in values[:position] if c > 0)


@dataclass(frozen=True)
class AnytimeRule(BatchRule):
    r"""Anytime-valid mode certification by pairwise mixture martingales (the default rule).

    **Rule.** ``counts`` list the non-INVALID classes in their order of first appearance (every caller builds them
    with a ``Counter``/``dict`` over the samples in sample order). Let ``a`` be the leader's count, ``b`` the
    runner-up's count (0 if only one class has been seen) and ``r`` the leader's order of first appearance (1 for
    the first class to appear). Stop iff ``a > b`` and

    .. math:: M(a - 1,\ b) \;\ge\; \frac{1}{\delta\, w_r}, \qquad w_1 = 0.9,\quad
              w_r = \frac{0.1 \cdot 6}{\pi^2 (r-1)^2}\ (r \ge 2) \quad (\textstyle\sum_r w_r = 1),

    with ``M`` the mixture likelihood ratio of :func:`anytime_log_evidence` (prior density ∝ θ¹⁵ on [½, 1], a
    truncated Beta(16, 1)). INVALID samples are ignored (they only count towards ``n_samples``, which this rule
    does not use). At ``delta = 0.05``: a unanimous item stops at k = 6 — the floor no label-symmetric valid rule
    can beat (:func:`unanimous_floor`); a first-appearing leader needs a count of 10 against a runner-up with 1,
    14 against 2, 16 against 3.

    **Theorem.** For every distribution ``p`` of the samples over the (finitely or countably many) non-INVALID
    classes plus INVALID, P(the rule ever stops while its leader is not the unique true mode) <= delta. As this
    bounds the probability of the union over all times, it holds at any (data-dependent) stopping time, in
    particular for any budget ``K_max`` and for a caller that stops at whichever comes first.

    **Proof.** Samples X_1, X_2, ... are i.i.d. ~ p; F_n is the sigma-field of X_1..X_n. Call a class ``c`` *wrong*
    if it is not the unique mode, i.e. p_c <= p_{m(c)} where m(c) is a fixed most probable class other than c.

    1. *Pair supermartingale.* Fix classes c != d with p_c <= p_d and theta in [1/2, 1]. Put f(x) = 2 theta if
       x = c, 2 (1 - theta) if x = d, 1 otherwise (INVALID and all other classes). Then
       E f(X) = 1 + p_c (2 theta - 1) + p_d (1 - 2 theta) = 1 + (2 theta - 1)(p_c - p_d) <= 1,
       so for any stopping time T the product N_theta(n) = prod_{T < s <= n} f(X_s) is, given F_T, a non-negative
       supermartingale started at 1 (on {T < inf}, X_{T+1}, X_{T+2}, ... are i.i.d. ~ p and independent of F_T).
       By Tonelli the mixture N(n) = ∫ N_theta(n) pi(d theta) is one too, and N(n) = M(a_c', b_d') where a_c',
       b_d' count the samples of c and d after T.
    2. *Ville.* P(sup_{n >= T} N(n) >= 1/eps | F_T) <= eps for every eps in (0, 1].
    3. *Data-dependent enumeration.* Let T_r be the time of the first sample of the r-th distinct non-INVALID class
       to appear, and C_r that class; T_r is a stopping time and C_r is F_{T_r}-measurable (it is the class of
       X_{T_r}). The sample at T_r is selection-biased (it *is* the first occurrence of C_r), so the test of C_r
       starts after it: on {T_r < inf, C_r wrong} apply 1-2 with T = T_r, c = C_r, d = m(C_r),
       eps = eps_r := delta w_r. Event E_r = {sup_{n >= T_r} N_r(n) >= 1/eps_r} has P(E_r | F_{T_r}) <= eps_r on
       that event, hence P(E_r, C_r wrong) <= eps_r.
    4. *Stopping implies some E_r.* Suppose the rule stops at time n with a wrong leader L. L has been seen, so
       L = C_r for exactly one r — its order of first appearance, which is what the rule reads off the counts'
       order — and the rule's threshold is 1/(delta w_r) = 1/eps_r. The count of L after T_r is a - 1 (a = its
       count, one of which is its first occurrence). The count of m(L) after T_r is at most m(L)'s total count,
       which is at most b: the runner-up has the largest count among classes other than L, and an unseen m(L) has
       count 0 <= b. M is non-increasing in its second argument, so
       N_r(n) = M(a - 1, #m(L) after T_r) >= M(a - 1, b) >= 1/eps_r: E_r occurred. (It is therefore enough to test
       the leader against the runner-up: it is the hardest opponent, including against never-seen classes.)
    5. *Union.* P(stop with a wrong leader) <= sum_r P(E_r, C_r wrong) <= delta sum_r w_r = delta. QED.

    The weights need not be decreasing for the proof; they are, so a caller that only knows the number C of classes
    seen may use w_C <= w_r (``should_stop_batch`` without ``leader_order`` does this: valid, slightly less frugal).

    Consequences: with an exact tie for the mode every class is wrong, so P(ever stop) <= delta; the rule never
    stops when the top two counts tie, since then M(a - 1, b) <= ∫ (4 theta (1 - theta))^(a-1) 2 (1 - theta) d pi
    <= 1 < 1/(delta w_r).

    **Tuning.** Every prior on [1/2, 1] and every weight sequence summing to <= 1 is valid. The leader is the first
    class to appear on almost every item a budget-bound user samples (a mode with p = 0.97 appears first 97% of the
    time), so w_1 = 0.9 spends nearly all of delta where it is used; the truncated Beta(16, 1) prior puts its mass
    near theta = 1, which is where the consensus items that dominate real workloads live. Chosen on SPEC §8's
    reference workload at K_max = 20 and 10 (``bench/stopping.py``: 43.6% / 21.8% of calls saved, vs 37.0% / 15.5%
    for the previous Beta(8, 1), w_r ∝ 1/C² tuning), still valid: the worst case, the exact two-class tie, stops
    (always wrongly) with probability 4.02% at delta = 5% (exact dynamic programming, K_max = 200 and 1,000). The price is at moderate margins: p = (0.7, 0.3) needs ~84 samples on average at K_max = 200
    (Beta(8, 1): ~80), while p = (0.8, 0.2) needs ~27 (~29).
    """

    name: str = field(default="anytime", init=False)

    def should_stop(self, counts: Sequence[int], n_samples: int) -> bool:
        leader, runner_up, n_seen = summarise_counts(counts, n_samples)
        order = np.array([leader_order(counts)])
        return bool(
            self.should_stop_batch(np.array([leader]), np.array([runner_up]), np.array([n_seen]), n_samples,
                                   leader_order=order)[0]
        )

    def should_stop_batch(
        self,
        leader: np.ndarray,
        runner_up: np.ndarray,
        n_seen: np.ndarray,
        n_samples: np.ndarray | int,
        leader_order: np.ndarray | None = None,
    ) -> np.ndarray:
        """Vectorised decision; ``leader_order`` (r) defaults to ``n_seen`` (C >= r: valid, less frugal)."""
        order = n_seen if leader_order is None else leader_order
        leader, runner_up, order = np.broadcast_arrays(np.asarray(leader), np.asarray(runner_up), np.asarray(order))
        if leader.size > 64 and _EVIDENCE.covers(leader, runner_up):  # M(a - 1, b) from a table of its values
            table = _EVIDENCE.table(int(leader.max()), int(runner_up.max()) + 1)
            evidence = table[np.maximum(leader - 1, 0), runner_up]
            return (leader > runner_up) & (evidence >= _log_inverse_level(self.delta, order))
        if leader.size > 64:  # many trials share a few (a, b, r) triples: evaluate each triple once
            base = int(max(leader.max(), order.max())) + 1
            keys = (leader.astype(np.int64).ravel() * base + runner_up.ravel()) * base + order.ravel()
            unique, inverse = np.unique(keys, return_inverse=True)
            decided = self._decide(unique // (base * base), (unique // base) % base, unique % base)
            return decided[inverse.ravel()].reshape(leader.shape)
        return self._decide(leader, runner_up, order)

    def _decide(self, leader: np.ndarray, runner_up: np.ndarray, order: np.ndarray) -> np.ndarray:
        candidate = leader > runner_up
        evidence = anytime_log_evidence(np.maximum(leader - 1, 0), runner_up)
        return candidate & (evidence >= _log_inverse_level(self.delta, order))


@dataclass(frozen=True)
class PreviousAnytimeRule(BatchRule):
    """The ``anytime`` rule before issue 11 (Beta(8, 1) prior, w_C ∝ 1/C² at C = classes seen), same proof; kept
    for ``bench/stopping.py`` to show the retuning's effect. Not offered to users."""

    name: str = field(default="anytime-v1", init=False)

    def should_stop_batch(
        self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray, n_samples: np.ndarray | int,
        leader_order: np.ndarray | None = None,
    ) -> np.ndarray:
        from scipy.special import betainc, betaln

        a = np.maximum(np.asarray(leader, dtype=float) - 1.0, 0.0)
        b = np.asarray(runner_up, dtype=float)
        with np.errstate(divide="ignore"):
            tail = np.log(betainc(b + 1.0, a + 8.0, 0.5))
        log_m = (a + b) * math.log(2.0) + betaln(a + 8.0, b + 1.0) + tail - math.log((1.0 - 2.0**-8) / 8.0)
        r = np.maximum(np.asarray(n_seen, dtype=float), 1.0)
        level = -math.log(self.delta) + math.log(_ZETA2) + 2.0 * np.log(r)
        return (np.asarray(leader) > b) & (log_m >= level)


# ----------------------------------------------------------------------------------------------------------------
# paper eq. 9.1


_PAPER_K0 = 1


@dataclass(frozen=True)
class PaperRule(BatchRule):
    r"""Paper 004 eq. 9.1, exactly as written.

    .. math:: \tau_\delta = \min\Big\{k \ge k_0 : \Delta_k > \sqrt{2 \ln(2 |C| k^2 / \delta) / k}\Big\},

    where k = ``n_samples`` (all samples drawn, INVALID included), Delta_k = (top count - second count) / k is the
    difference of the top two empirical shares, and |C| = max(2, number of non-INVALID classes seen so far).

    k0: the paper never defines k0. It is immaterial: the right-hand side is >= 1 >= Delta_k for every k <= 13, every
    delta in (0, 1) and every |C| >= 2 (at k = 13, delta -> 1, |C| = 2 it is sqrt(2 ln 676 / 13) = 1.0012), so any
    k0 <= 13 defines the same rule; we use k0 = 1.

    It cannot stop before k = 21 at delta = 0.05 (checked, and a test): with |C| = 2 the bound at k = 20 is
    sqrt(2 ln 32000 / 20) = 1.018 > 1 >= Delta_20, while at k = 21 it is sqrt(2 ln 35280 / 21) = 0.9986, so a
    unanimous item stops at exactly k = 21 (more classes only raise the bound). With K_max = 20 it therefore saves
    nothing, and the 45-52 % savings of the paper's Table 6 cannot come from it.

    Remarks on the paper's proof (kept for fidelity, not relied upon): its per-k union gives sum_k delta / k^2 =
    1.645 delta, not delta ("sum 1/k^2 < 2"), and the union is over the classes *seen*, which is data-dependent and
    omits unseen classes. The rule is nevertheless so conservative that it is valid in our simulations.
    """

    k0: int = _PAPER_K0
    name: str = field(default="paper", init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if int(self.k0) < 1:
            raise ValueError(f"k0 must be a positive integer, got {self.k0!r}")

    def should_stop_batch(
        self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray, n_samples: np.ndarray | int,
        leader_order: np.ndarray | None = None,
    ) -> np.ndarray:
        k = np.asarray(n_samples, dtype=float)
        k_safe = np.maximum(k, 1.0)
        margin = (np.asarray(leader) - np.asarray(runner_up)) / k_safe
        n_classes = np.maximum(np.asarray(n_seen, dtype=float), 2.0)
        bound = np.sqrt(2.0 * np.log(2.0 * n_classes * k_safe**2 / self.delta) / k_safe)
        return (k >= self.k0) & (margin > bound)


# ----------------------------------------------------------------------------------------------------------------
# TrustGate and none


@dataclass(frozen=True)
class TrustGateRule(BatchRule):
    r"""TrustGate 0.3.9's rule, for benchmarking only: stop when p̂ - sqrt(ln(2/delta) / (2k)) > 1/2.

    p̂ = leader count / k, k = ``n_samples``. Unsound as a sequential rule: the Hoeffding bound holds at one fixed k,
    but it is checked at every k with no union over time, and it ignores multiplicity. At delta = 0.05 a unanimous
    item stops at k = 8 (2 ln 40 = 7.38 < k).
    """

    name: str = field(default="trustgate", init=False)

    def should_stop_batch(
        self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray, n_samples: np.ndarray | int,
        leader_order: np.ndarray | None = None,
    ) -> np.ndarray:
        k = np.maximum(np.asarray(n_samples, dtype=float), 1.0)
        share = np.asarray(leader) / k
        return (np.asarray(n_samples) > 0) & (share - np.sqrt(math.log(2.0 / self.delta) / (2.0 * k)) > 0.5)


_RULE_CLASSES = {
    "anytime": AnytimeRule,
    "paper": PaperRule,
    "none": NoStopping,
    "trustgate": TrustGateRule,
    "anytime-v1": PreviousAnytimeRule,
}


def get_stopping_rule(name: str, delta: float = 0.05) -> StoppingRule:
    """The stopping rule called ``name`` ("anytime", "paper", "none"; "trustgate" and "anytime-v1", the rule before
    issue 11's retuning, for benchmarks) at level delta."""
    if name not in _RULE_CLASSES:
        raise ValueError(f"unknown stopping rule {name!r}; choose one of: {', '.join(_ALL_RULES)}")
    return _RULE_CLASSES[name](delta=delta)


# ----------------------------------------------------------------------------------------------------------------
# simulation


@dataclass(frozen=True)
class StoppingStats:
    """Monte-Carlo summary of a stopping rule on one item distribution (see :func:`simulate_stopping`).

    ``wrong_stops`` counts trials that stopped early (before K_max) while the true mode did not have strictly the
    largest count (always the case when there is no unique true mode); ``wrong_stop_rate`` = wrong_stops / n_trials.
    ``mean_stop_k`` is the mean number of samples among early-stopped trials (nan when none stopped early).
    """

    rule: str
    delta: float
    k_max: int
    n_trials: int
    mean_samples: float
    saved_fraction: float
    early_stop_rate: float
    wrong_stops: int
    wrong_stop_rate: float
    mean_stop_k: float


def _check_distribution(probs: Sequence[float], invalid_prob: float) -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    if p.ndim != 1 or p.size == 0:
        raise ValueError("probs must be a non-empty sequence of class probabilities")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or not 0.0 <= invalid_prob <= 1.0:
        raise ValueError("probabilities must be finite and non-negative")
    if abs(p.sum() + invalid_prob - 1.0) > 1e-9:
        raise ValueError(f"probs ({p.sum():.6g}) and invalid_prob ({invalid_prob:.6g}) must sum to 1")
    return p


def _true_mode(p: np.ndarray) -> int | None:
    top = int(np.argmax(p))
    if p[top] <= 0 or np.sum(p == p[top]) > 1:
        return None
    return top


def _batch_decision(rule: StoppingRule, counts: np.ndarray, leader, runner_up, n_seen, order, k: int) -> np.ndarray:
    batch = getattr(rule, "should_stop_batch", None)
    if batch is not None:
        return np.asarray(batch(leader, runner_up, n_seen, k, leader_order=order), dtype=bool)
    return np.fromiter((rule.should_stop(row.tolist(), k) for row in counts), dtype=bool, count=len(counts))


def simulate_stopping(
    rule: StoppingRule,
    probs: Sequence[float],
    k_max: int,
    n_trials: int,
    rng: np.random.Generator,
    invalid_prob: float = 0.0,
) -> StoppingStats:
    """Simulate ``n_trials`` items whose samples are i.i.d. over the classes ``probs`` plus INVALID (``invalid_prob``).

    ``probs`` are the probabilities of the non-INVALID classes; ``sum(probs) + invalid_prob`` must be 1. The rule is
    asked after each sample k = 1, ..., k_max - 1 (at k_max the caller stops anyway, so that is not an early stop),
    with the counts in order of first appearance, as the engine passes them. All samples are drawn up front as one
    (n_trials, k_max) matrix, so two rules simulated with generators in the same state see the same sample streams
    (common random numbers). Vectorised over trials for the built-in rules; other :class:`StoppingRule` objects are
    asked trial by trial.
    """
    p = _check_distribution(probs, float(invalid_prob))
    k_max, n_trials = int(k_max), int(n_trials)
    if k_max < 1 or n_trials < 1:
        raise ValueError("k_max and n_trials must be positive integers")
    n_classes = p.size
    outcomes = rng.choice(n_classes + 1, size=(n_trials, k_max), p=np.append(p, invalid_prob) / (p.sum() + invalid_prob))
    mode = _true_mode(p)

    counts = np.zeros((n_trials, n_classes + 1), dtype=np.int64)  # last column: INVALID
    rows = np.arange(n_trials)
    stop_k = np.full(n_trials, k_max, dtype=np.int64)
    wrong = np.zeros(n_trials, dtype=bool)
    active = np.ones(n_trials, dtype=bool)
    scalar = getattr(rule, "should_stop_batch", None) is None
    # What the rules read, kept up to date sample by sample (one class count grows by one per sample): the top two
    # counts, a class holding the top count, the number of classes seen and each class's order of first appearance.
    # A count going from v to v + 1 makes the top two (v + 1, second) when v was the top count (tied or not),
    # (top, v + 1) when v was the second count, and changes neither otherwise.
    top = np.zeros(n_trials, dtype=np.int64)
    second = np.zeros(n_trials, dtype=np.int64)
    lead = np.zeros(n_trials, dtype=np.int64)
    seen = np.zeros(n_trials, dtype=np.int64)
    rank = np.zeros((n_trials, n_classes), dtype=np.int64)  # order of first appearance; 0 = not seen yet
    first_seen = np.full((n_trials, n_classes), k_max + 1, dtype=np.int64)  # the Protocol path: sample order
    for k in range(1, k_max):
        drawn = outcomes[:, k - 1]
        before = counts[rows, drawn]
        counts[rows, drawn] += 1
        is_class = drawn < n_classes
        fresh = is_class & (before == 0)
        seen += fresh
        rank[rows[fresh], drawn[fresh]] = seen[fresh]
        if scalar:
            first_seen[rows[fresh], drawn[fresh]] = k
        was_top = is_class & (before == top)
        second += is_class & ~was_top & (before == second)
        top += was_top
        lead = np.where(was_top, drawn, lead)
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        leader, runner_up, n_seen = top[idx], second[idx], seen[idx]
        # the leader's order of first appearance (with a tied top count no rule stops, so any top class will do;
        # before any class is seen, 1)
        order = np.maximum(rank[idx, lead[idx]], 1)
        valid = counts  # read by the Protocol path only, which gets the counts in first-appearance order
        if scalar:
            valid = np.take_along_axis(counts[idx, :n_classes], np.argsort(first_seen[idx], axis=1, kind="stable"),
                                       axis=1)
        stopped = _batch_decision(rule, valid, leader, runner_up, n_seen, order, k)
        if not stopped.any():
            continue
        hit = idx[stopped]
        stop_k[hit] = k
        active[hit] = False
        if mode is None:
            wrong[hit] = True
        else:
            hit_valid = counts[hit, :n_classes]
            others = np.delete(hit_valid, mode, axis=1)
            best_other = others.max(axis=1) if others.shape[1] else np.zeros(hit.size, dtype=np.int64)
            wrong[hit] = hit_valid[:, mode] <= best_other

    early = stop_k < k_max
    mean_samples = float(stop_k.mean())
    return StoppingStats(
        rule=rule.name,
        delta=float(rule.delta),
        k_max=k_max,
        n_trials=n_trials,
        mean_samples=mean_samples,
        saved_fraction=1.0 - mean_samples / k_max,
        early_stop_rate=float(early.mean()),
        wrong_stops=int(wrong.sum()),
        wrong_stop_rate=float(wrong.mean()),
        mean_stop_k=float(stop_k[early].mean()) if early.any() else math.nan,
    )
