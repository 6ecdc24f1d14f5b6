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

Conventions shared by every rule: ``counts`` are the sample counts of the distinct non-INVALID classes seen so far
(any order, zeros allowed); ``n_samples`` is the number of samples drawn so far *including* INVALID ones. A class is
"seen" when its count is positive. "True mode" means the unique most probable non-INVALID class; when several classes
tie for the maximum probability there is no true mode and every early stop counts as wrong.

Every rule also offers ``should_stop_batch(leader, runner_up, n_seen, n_samples)`` over numpy arrays (all four rules
depend on the counts only through the leader's count, the runner-up's count and the number of classes seen); it is
used by :func:`simulate_stopping`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = [
    "STOPPING_RULES",
    "AnytimeRule",
    "NoStopping",
    "PaperRule",
    "StoppingRule",
    "StoppingStats",
    "TrustGateRule",
    "anytime_log_evidence",
    "get_stopping_rule",
    "simulate_stopping",
]

STOPPING_RULES: tuple[str, ...] = ("anytime", "paper", "none")
"""User-facing rule names; the first is the default. ``"trustgate"`` exists for benchmarking only."""

_ALL_RULES: tuple[str, ...] = (*STOPPING_RULES, "trustgate")


@runtime_checkable
class StoppingRule(Protocol):
    """A sequential stopping rule: ``should_stop`` is True when the current leader is certified as the mode."""

    name: str
    delta: float

    def should_stop(self, counts: Sequence[int], n_samples: int) -> bool: ...


# ----------------------------------------------------------------------------------------------------------------
# input checks and count summaries


def _check_delta(delta: float) -> float:
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return value


def _summarise_counts(counts: Sequence[int], n_samples: int) -> tuple[int, int, int]:
    """(leader count, runner-up count, number of classes seen) after validating the inputs."""
    values = [int(c) for c in counts]
    if any(c < 0 for c in values):
        raise ValueError(f"class counts must be non-negative, got {list(counts)!r}")
    n_samples = int(n_samples)
    if n_samples < sum(values):
        raise ValueError(f"n_samples ({n_samples}) is smaller than the sum of the class counts ({sum(values)})")
    seen = sorted((c for c in values if c > 0), reverse=True)
    leader = seen[0] if seen else 0
    runner_up = seen[1] if len(seen) > 1 else 0
    return leader, runner_up, len(seen)


@dataclass(frozen=True)
class _BatchRule:
    """What every rule shares: the level ``delta`` (checked) and ``should_stop`` on one item's counts, which
    summarises them and asks the rule's vectorised ``should_stop_batch``."""

    delta: float = 0.05

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", _check_delta(self.delta))

    def should_stop(self, counts: Sequence[int], n_samples: int) -> bool:
        leader, runner_up, n_seen = _summarise_counts(counts, n_samples)
        return bool(self.should_stop_batch(np.array([leader]), np.array([runner_up]), np.array([n_seen]), n_samples)[0])

    def should_stop_batch(
        self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray, n_samples: np.ndarray | int
    ) -> np.ndarray:
        raise NotImplementedError


# ----------------------------------------------------------------------------------------------------------------
# anytime


_PRIOR_ALPHA = 8.0
"""Mixture prior on theta: density proportional to theta**(ALPHA - 1) on [1/2, 1] (a truncated Beta(8, 1))."""

_LOG_PRIOR_MASS = math.log((1.0 - 2.0 ** (-_PRIOR_ALPHA)) / _PRIOR_ALPHA)
"""log of the prior's normalising constant: integral of theta**7 over [1/2, 1] = (1 - 2**-8) / 8."""

_ZETA2 = math.pi**2 / 6.0


def anytime_log_evidence(wins: np.ndarray | int, losses: np.ndarray | int) -> np.ndarray | float:
    r"""log M(a, b) of the mixture likelihood ratio used by :class:`AnytimeRule` (vectorised).

    .. math:: M(a, b) = \int_{1/2}^{1} (2\theta)^a \, (2(1-\theta))^b \, \pi(d\theta), \qquad
              \pi(d\theta) = \frac{\theta^{7}\, d\theta}{\int_{1/2}^1 u^{7}\, du},

    i.e. the Bayes factor of Bernoulli(theta), theta ~ pi, against Bernoulli(1/2) after ``a`` "wins" and ``b``
    "losses". Closed form: ``2**(a+b) * B(a+8, b+1) * I_{1/2}(b+1, a+8) / ((1 - 2**-8) / 8)`` where
    ``B(a+8, b+1) I_{1/2}(b+1, a+8)`` is the upper incomplete beta integral over [1/2, 1]. Non-decreasing in ``a``
    and non-increasing in ``b`` (the integrand is, pointwise, because 2 theta >= 1 >= 2 (1 - theta)).
    """
    from scipy.special import betainc, betaln  # deferred: importing scipy.special costs ~0.3 s at start-up

    a = np.asarray(wins, dtype=float)
    b = np.asarray(losses, dtype=float)
    with np.errstate(divide="ignore"):
        upper_tail = np.log(betainc(b + 1.0, a + _PRIOR_ALPHA, 0.5))
    result = (a + b) * math.log(2.0) + betaln(a + _PRIOR_ALPHA, b + 1.0) + upper_tail - _LOG_PRIOR_MASS
    return float(result) if result.ndim == 0 else result


def _log_inverse_level(delta: float, n_seen: np.ndarray | int) -> np.ndarray | float:
    """log(1 / (delta * w_r)) with w_r = 6 / (pi**2 r**2), evaluated at r = n_seen."""
    r = np.asarray(n_seen, dtype=float)
    result = -math.log(delta) + math.log(_ZETA2) + 2.0 * np.log(np.maximum(r, 1.0))
    return float(result) if result.ndim == 0 else result


@dataclass(frozen=True)
class AnytimeRule(_BatchRule):
    r"""Anytime-valid mode certification by pairwise mixture martingales (the default rule).

    **Rule.** Let ``a`` be the leader's count, ``b`` the runner-up's count (0 if only one class has been seen) and
    ``C`` the number of distinct non-INVALID classes seen so far. Stop iff ``a > b`` and

    .. math:: M(a - 1,\ b) \;\ge\; \frac{1}{\delta\, w_C}, \qquad w_r = \frac{6}{\pi^2 r^2}\ (\textstyle\sum_r w_r = 1),

    with ``M`` the mixture likelihood ratio of :func:`anytime_log_evidence` (prior density ∝ θ⁷ on [½, 1]).
    INVALID samples are ignored (they only count towards ``n_samples``, which this rule does not use). At
    ``delta = 0.05``: a unanimous item stops at k = 7; the leader needs 13 samples against a runner-up with 1
    (two classes seen), 15 against 1 with three classes seen, 16 against 2 with two seen.

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
    4. *Stopping implies some E_r.* Suppose the rule stops at time n with a wrong leader L = C_r. Since L has been
       seen, r <= C (classes seen at n), so w_C <= w_r (w is decreasing) and the rule's threshold 1/(delta w_C) is
       >= 1/eps_r. The count of L after T_r is a - 1 (a = its count, one of which is its first occurrence). The
       count of m(L) after T_r is at most m(L)'s total count, which is at most b: the runner-up has the largest
       count among classes other than L, and an unseen m(L) has count 0 <= b. M is non-increasing in its second
       argument, so N_r(n) = M(a - 1, #m(L) after T_r) >= M(a - 1, b) >= 1/(delta w_C) >= 1/eps_r: E_r occurred.
       (It is therefore enough to test the leader against the runner-up: it is the hardest opponent, including
       against never-seen classes.)
    5. *Union.* P(stop with a wrong leader) <= sum_r P(E_r, C_r wrong) <= delta sum_r w_r = delta. QED.

    Consequences: with an exact tie for the mode every class is wrong, so P(ever stop) <= delta; the rule never
    stops when the top two counts tie, since then M(a - 1, b) <= ∫ (4 theta (1 - theta))^(a-1) 2 (1 - theta) d pi
    <= 1 < 1/(delta w_C).

    **Tuning.** Every prior on [1/2, 1] and every decreasing weight sequence summing to <= 1 is valid; the choices
    here (truncated Beta(8, 1), w_r ∝ 1/r²) were picked by exact dynamic-programming evaluation of the expected
    number of samples on SPEC §8's reference workload at K_max = 20 and 10, while keeping enough prior mass on
    moderate theta for large budgets (e.g. p = (0.7, 0.3) stops after ~80 samples on average at K_max = 200).
    Concentrating the prior further (a point mass near 0.9) saves almost nothing more at K_max = 20 and never
    certifies pairs with q = p_c / (p_c + p_d) below ~0.73.

    Variant not used: indexing the level by the leader's order of first appearance instead of ``C`` (the proof
    holds as is) would save a little more, but needs the caller to pass counts in first-appearance order.
    """

    name: str = field(default="anytime", init=False)

    def should_stop_batch(
        self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray, n_samples: np.ndarray | int
    ) -> np.ndarray:
        leader, runner_up, n_seen = np.broadcast_arrays(np.asarray(leader), np.asarray(runner_up), np.asarray(n_seen))
        if leader.size > 64:  # many trials share a few (a, b, C) triples: evaluate each triple once
            base = int(max(leader.max(), n_seen.max())) + 1
            keys = (leader.astype(np.int64).ravel() * base + runner_up.ravel()) * base + n_seen.ravel()
            unique, inverse = np.unique(keys, return_inverse=True)
            decided = self._decide(unique // (base * base), (unique // base) % base, unique % base)
            return decided[inverse.ravel()].reshape(leader.shape)
        return self._decide(leader, runner_up, n_seen)

    def _decide(self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray) -> np.ndarray:
        candidate = leader > runner_up
        evidence = anytime_log_evidence(np.maximum(leader - 1, 0), runner_up)
        return candidate & (evidence >= _log_inverse_level(self.delta, n_seen))


# ----------------------------------------------------------------------------------------------------------------
# paper eq. 9.1


_PAPER_K0 = 1


@dataclass(frozen=True)
class PaperRule(_BatchRule):
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
        self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray, n_samples: np.ndarray | int
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
class TrustGateRule(_BatchRule):
    r"""TrustGate 0.3.9's rule, for benchmarking only: stop when p̂ - sqrt(ln(2/delta) / (2k)) > 1/2.

    p̂ = leader count / k, k = ``n_samples``. Unsound as a sequential rule: the Hoeffding bound holds at one fixed k,
    but it is checked at every k with no union over time, and it ignores multiplicity. At delta = 0.05 a unanimous
    item stops at k = 8 (2 ln 40 = 7.38 < k).
    """

    name: str = field(default="trustgate", init=False)

    def should_stop_batch(
        self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray, n_samples: np.ndarray | int
    ) -> np.ndarray:
        k = np.maximum(np.asarray(n_samples, dtype=float), 1.0)
        share = np.asarray(leader) / k
        return (np.asarray(n_samples) > 0) & (share - np.sqrt(math.log(2.0 / self.delta) / (2.0 * k)) > 0.5)


@dataclass(frozen=True)
class NoStopping(_BatchRule):
    """Never stops early: every item uses the full budget K_max."""

    name: str = field(default="none", init=False)

    def should_stop(self, counts: Sequence[int], n_samples: int) -> bool:
        _summarise_counts(counts, n_samples)
        return False

    def should_stop_batch(
        self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray, n_samples: np.ndarray | int
    ) -> np.ndarray:
        return np.zeros(np.shape(leader), dtype=bool)


_RULE_CLASSES = {"anytime": AnytimeRule, "paper": PaperRule, "none": NoStopping, "trustgate": TrustGateRule}


def get_stopping_rule(name: str, delta: float = 0.05) -> StoppingRule:
    """The stopping rule called ``name`` ("anytime", "paper", "none"; "trustgate" for benchmarks) at level delta."""
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


def _batch_decision(rule: StoppingRule, counts: np.ndarray, leader, runner_up, n_seen, k: int) -> np.ndarray:
    batch = getattr(rule, "should_stop_batch", None)
    if batch is not None:
        return np.asarray(batch(leader, runner_up, n_seen, k), dtype=bool)
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
    asked after each sample k = 1, ..., k_max - 1 (at k_max the caller stops anyway, so that is not an early stop).
    All samples are drawn up front as one (n_trials, k_max) matrix, so two rules simulated with generators in the
    same state see the same sample streams (common random numbers). Vectorised over trials for the built-in rules;
    other :class:`StoppingRule` objects are asked trial by trial.
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
    for k in range(1, k_max):
        counts[rows, outcomes[:, k - 1]] += 1
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        valid = counts[idx, :n_classes]
        if n_classes >= 2:
            top_two = -np.partition(-valid, 1, axis=1)[:, :2]
            leader, runner_up = top_two[:, 0], top_two[:, 1]
        else:
            leader, runner_up = valid[:, 0], np.zeros(idx.size, dtype=np.int64)
        n_seen = np.count_nonzero(valid, axis=1)
        stopped = _batch_decision(rule, valid, leader, runner_up, n_seen, k)
        if not stopped.any():
            continue
        hit = idx[stopped]
        stop_k[hit] = k
        active[hit] = False
        if mode is None:
            wrong[hit] = True
        else:
            hit_valid = valid[stopped]
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
