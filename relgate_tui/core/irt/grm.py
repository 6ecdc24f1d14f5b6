"""Samejima's graded response model (paper 002, Eq. 1), fitted by marginal maximum likelihood.

Model. Person j (an evaluated sample) has a latent quality θ_j ~ N(0, 1); item p (a prompt variant, or a human rater)
has a discrimination α_p > 0 and ordered thresholds β_p1 < … < β_p,K_p−1 over the K_p categories it *used*
(paper §3.2: "fitting GRM requires at least one sample for each rating value", so a variant that used {3, 4, 5} has two
thresholds). With the categories of item p in increasing order c_0 < c_1 < … < c_{K_p−1},

    P(Y_pj ≥ c_k | θ_j) = 1 / (1 + exp(−α_p (θ_j − β_pk)))          (Eq. 1),  k = 1 … K_p − 1,
    P(Y_pj = c_k | θ_j) = P(Y_pj ≥ c_k | θ_j) − P(Y_pj ≥ c_{k+1} | θ_j)   (P(Y ≥ c_0) = 1, P(Y ≥ c_{K_p}) = 0).

With two categories this is the 2PL the paper uses for binary scales (one threshold, no ordering needed).

Estimation. The paper samples the posterior with NUTS (minutes per cell). Here the item parameters maximise the
marginal likelihood  Σ_j log ∫ Π_p P(Y_pj | θ) φ(θ) dθ,  with the integral on a fixed Gauss–Legendre grid (default
61 nodes on [−6, 6]; the Gauss–Hermite and equally spaced rules of R's ltm and mirt are options) — Bock & Aitkin's
MML. Instead of alternating E and M steps, the marginal log-likelihood is maximised directly by L-BFGS: its exact
gradient is the expected complete-data gradient under the current posterior weights (Fisher's identity), i.e. the EM
gradient, so the fixed point is the same and it is reached in far fewer passes. ``prior="map"`` adds the paper's
priors (App. A.1) as a penalty: α_p ~ LogNormal(0, 0.5) (σ = 0.5 on the log scale, PyMC's reading) and β_pk ~ N(0, 1)
restricted to the ordered region (the mode is taken in the original parameter space, so no Jacobian term enters).
θ̂_j is the posterior mean (EAP) and σ_j² the posterior variance, both over the same grid: these replace the paper's
NUTS posterior mean and variance in the metrics (Eq. 4).

Reference checks (tests/core/test_irt_reference.py): on public GRM and 2PL data sets the estimates, log-likelihood
and EAP abilities match R's ltm (an independent MML program: Gauss–Hermite quadrature, BFGS) to 3 decimals, mirt's
published estimates to their printed digits, and an EM written in the test. girth's ``grm_mml`` is *not* an exact MML
maximiser (it solves the thresholds from integral equations with prior-weighted proportions), so it agrees only to
~0.02 and reaches a lower marginal likelihood; its ``twopl_mml`` agrees to 3 decimals.

A fit that did not converge (optimiser failure, or a discrimination at its bound — ratings nearly deterministic in θ,
where the MML estimate runs off to infinity) is returned with ``converged=False`` and the reason; the study refuses
to report metrics from it.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize
from scipy.special import expit

from relgate_tui.errors import DataError

LOG_A_BOUNDS = (math.log(0.02), math.log(40.0))
MIN_PERSONS = 10


class IRTInputError(DataError):
    """Ratings the model cannot be fitted to (one line saying why)."""


@dataclass(frozen=True)
class GRMFit:
    """A fitted graded response model.

    ``categories[p]`` are the category values item p used, increasing; ``b[p]`` its K_p − 1 thresholds (``b[p][k-1]``
    is the θ at which P(Y ≥ categories[p][k]) = ½). ``theta``/``theta_var`` are the EAP abilities and posterior
    variances per person; ``loglik`` the marginal log-likelihood (plus the log prior under MAP); ``trace`` the
    objective after each optimiser iteration.
    """

    items: tuple[str, ...]
    categories: tuple[tuple[float, ...], ...]
    a: tuple[float, ...]
    b: tuple[tuple[float, ...], ...]
    theta: np.ndarray
    theta_var: np.ndarray
    loglik: float
    trace: tuple[float, ...]
    iterations: int
    converged: bool
    message: str
    prior: str
    n_persons: int

    def thresholds_on_scale(self, p: int, scale: Sequence[float]) -> list[float | None]:
        """Item p's thresholds indexed by ``scale[1:]``: the entry for value v is the θ where P(Y ≥ v) = ½, ``None``
        where v was not used by the item or is its lowest used value (no threshold is identifiable there)."""
        lookup = {c: self.b[p][k - 1] for k, c in enumerate(self.categories[p]) if k > 0}
        return [lookup.get(float(v)) for v in list(scale)[1:]]


QUADRATURE_RULES = ("legendre", "hermite", "rectangle")


def _quadrature(n: int, lo: float, hi: float, rule: str = "legendre") -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights (summing to 1) for ∫ f(θ) φ(θ) dθ.

    ``legendre``: Gauss–Legendre on [lo, hi] times the N(0, 1) density (the default). ``hermite``: Gauss–Hermite for
    the N(0, 1) weight (lo, hi unused) — the rule of R's ltm (21 nodes by default). ``rectangle``: n equally spaced
    nodes on [lo, hi] weighted by the normalised density — the rule of R's mirt (61 nodes on [−6, 6]).
    """
    if rule == "hermite":
        nodes, w = np.polynomial.hermite_e.hermegauss(n)
        return nodes, w / w.sum()
    if rule == "rectangle":
        nodes = np.linspace(lo, hi, n)
        weights = np.exp(-0.5 * nodes**2)
        return nodes, weights / weights.sum()
    if rule != "legendre":
        raise IRTInputError(f"unknown quadrature rule {rule!r} ({', '.join(QUADRATURE_RULES)})")
    x, w = np.polynomial.legendre.leggauss(n)
    nodes = (hi - lo) / 2.0 * x + (hi + lo) / 2.0
    weights = w * (hi - lo) / 2.0 * np.exp(-0.5 * nodes**2) / math.sqrt(2 * math.pi)
    return nodes, weights / weights.sum()


def _encode(responses: np.ndarray, items: Sequence[str]) -> tuple[list[np.ndarray], list[tuple[float, ...]]]:
    """Per item: a one-hot (n × K_p) matrix over the categories it used (missing → all zeros), and those categories."""
    onehots, cats = [], []
    for p in range(responses.shape[1]):
        col = responses[:, p]
        seen = np.unique(col[~np.isnan(col)])
        if seen.size == 0:
            raise IRTInputError(f"'{items[p]}' has no ratings")
        if seen.size == 1:
            raise IRTInputError(f"'{items[p]}' used one category only ({_fmt(seen[0])}): its thresholds cannot be "
                                "estimated (a GRM needs at least two rating values per variant)")
        index = np.searchsorted(seen, col)
        oh = np.zeros((col.size, seen.size))
        ok = ~np.isnan(col)
        oh[np.flatnonzero(ok), index[ok]] = 1.0
        onehots.append(oh)
        cats.append(tuple(float(v) for v in seen))
    return onehots, cats


_BLAS_LOCK = threading.Lock()
_blas_users: list[Any] = []  # the limiter in force while any fit runs (several fits may run in threads at once)


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Limit BLAS to one thread during the fit. L-BFGS-B's tiny 20 × 20 BLAS/LAPACK calls otherwise wake OpenBLAS's
    thread pool at every iteration, which on a busy 2-core machine costs milliseconds each (a 10× slowdown of the
    whole fit, bench/irt.py). The limit is process-wide, so it is set by the first of concurrent fits and restored by
    the last. threadpoolctl comes with scikit-learn; without it the fit runs unchanged."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn (a dependency) brings it
        yield
        return
    with _BLAS_LOCK:
        _blas_users.append(threadpool_limits(limits=1, user_api="blas") if not _blas_users else _blas_users[0])
    try:
        yield
    finally:
        with _BLAS_LOCK:
            limiter = _blas_users.pop()
            if not _blas_users:
                limiter.restore_original_limits()


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


class _Model:
    """The marginal log-likelihood and its gradient in the unconstrained parameters
    (log α_p, β_p1, log(β_p2 − β_p1), …), over persons (or distinct response patterns weighted by ``freq``).

    The one-hot matrices are only read here: the hot loop gathers log-probability rows by category code and sums the
    posterior by category segments, so it makes no BLAS matrix products (whose thread pools spin and stall on a busy
    2-core machine)."""

    def __init__(self, onehots: list[np.ndarray], nodes: np.ndarray, weights: np.ndarray, prior: str,
                 freq: np.ndarray | None = None) -> None:
        self.nodes = nodes
        self.log_w = np.log(weights)
        self.prior = prior
        self.sizes = [oh.shape[1] for oh in onehots]
        self.offsets = np.cumsum([0] + self.sizes)  # each item has K_p parameters: log a and K_p − 1 for β
        self.n_rows = onehots[0].shape[0]
        self.freq = np.ones(self.n_rows) if freq is None else np.asarray(freq, dtype=float)
        # per item: category code per row (−1 = missing, which picks the zero row appended to the log-probabilities),
        # and the rows sorted by code with the start of each category's segment
        self.codes, self.orders, self.starts = [], [], []
        for oh in onehots:
            code = np.where(oh.any(axis=1), oh.argmax(axis=1), -1)
            order = np.argsort(code, kind="stable")
            starts = np.searchsorted(code[order], np.arange(oh.shape[1]))
            if np.any(np.bincount(code[code >= 0], minlength=oh.shape[1]) == 0):
                raise IRTInputError("an item has a category no sample used")  # _encode never builds one
            self.codes.append(code)
            self.orders.append(order)
            self.starts.append(starts)
        self.last: tuple[np.ndarray, float] | None = None  # the last point evaluated and its objective

    def value_at(self, x: np.ndarray) -> float:
        """The objective at x, reusing the last evaluation when it was at x (the optimiser's callback point)."""
        if self.last is not None and np.array_equal(self.last[0], x):
            return self.last[1]
        return self.objective(x)[0]

    def unpack(self, x: np.ndarray) -> tuple[list[float], list[np.ndarray]]:
        a_s, b_s = [], []
        for p, k in enumerate(self.sizes):
            seg = x[self.offsets[p]: self.offsets[p + 1]]
            a_s.append(math.exp(seg[0]))
            b = np.empty(k - 1)
            b[0] = seg[1]
            if k > 2:
                b[1:] = seg[1] + np.cumsum(np.exp(seg[2:]))
            b_s.append(b)
        return a_s, b_s

    def _item_probs(self, a: float, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s = expit(a * (self.nodes[:, None] - b[None, :]))  # Q × (K−1): P(Y ≥ c_k)
        q = self.nodes.size
        pstar = np.hstack([np.ones((q, 1)), s, np.zeros((q, 1))])
        probs = np.maximum(pstar[:, :-1] - pstar[:, 1:], 1e-300)
        return s, probs

    def posterior(self, x: np.ndarray) -> tuple[float, np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """Σ_j freq_j log ∫ Π_p P(Y_pj | θ) φ(θ) dθ, the posterior weights over the nodes per row, and per item
        (P(Y ≥ c_k), P(Y = c_k)) on the nodes."""
        a_s, b_s = self.unpack(x)
        ll_nodes = np.zeros((self.n_rows, self.nodes.size))
        cache = []
        for code, a, b in zip(self.codes, a_s, b_s, strict=True):
            s, probs = self._item_probs(a, b)
            table = np.vstack([np.log(probs).T, np.zeros(self.nodes.size)])  # row −1: a missing rating
            ll_nodes += table[code]
            cache.append((s, probs))
        joint = ll_nodes + self.log_w[None, :]
        top = joint.max(axis=1, keepdims=True)
        post = np.exp(joint - top)
        total = post.sum(axis=1, keepdims=True)
        post /= total
        marg = (top + np.log(total)).ravel()
        return float(np.sum(self.freq * marg)), post, cache

    def objective(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        total, post, cache = self.posterior(x)
        a_s, b_s = self.unpack(x)
        grad = np.zeros_like(x)
        theta = self.nodes[:, None]
        wpost = post * self.freq[:, None]
        for p, (s, probs) in enumerate(cache):
            a, b = a_s[p], b_s[p]
            counts = np.add.reduceat(wpost[self.orders[p]], self.starts[p], axis=0).T  # Q × K expected counts
            ratio = counts / probs  # Q × K: expected count / probability
            ds = s * (1.0 - s)  # Q × (K−1)
            d_a_star = ds * (theta - b[None, :])
            q = self.nodes.size
            d_a_full = np.hstack([np.zeros((q, 1)), d_a_star, np.zeros((q, 1))])
            g_a = float(np.sum(ratio * (d_a_full[:, :-1] - d_a_full[:, 1:])))
            g_b = np.sum(a * ds * (ratio[:, :-1] - ratio[:, 1:]), axis=0)  # d/dβ_m, m = 1 … K−1
            if self.prior == "map":
                g_a += -1.0 / a - math.log(a) / (0.25 * a)  # d/da log LogNormal(a | 0, 0.5)
                g_b = g_b - b
            seg = slice(self.offsets[p], self.offsets[p + 1])
            g = np.empty(self.sizes[p])
            g[0] = a * g_a
            tail = np.cumsum(g_b[::-1])[::-1]  # Σ_{m ≥ l} dℓ/dβ_m
            g[1] = tail[0]
            if self.sizes[p] > 2:
                g[2:] = np.exp(x[seg][2:]) * tail[1:]
            grad[seg] = g
        if self.prior == "map":
            total += self._log_prior(a_s, b_s)
        self.last = (x.copy(), -total)
        return -total, -grad

    @staticmethod
    def _log_prior(a_s: list[float], b_s: list[np.ndarray]) -> float:
        lp = 0.0
        for a, b in zip(a_s, b_s, strict=True):
            la = math.log(a)
            lp += -la - la * la / (2 * 0.25) - 0.5 * float(b @ b)
        return lp


def _start(onehots: list[np.ndarray], freq: np.ndarray) -> np.ndarray:
    parts = []
    for oh in onehots:
        counts = freq @ oh + 0.5
        tail = np.cumsum(counts[::-1])[::-1] / counts.sum()  # P(Y ≥ c_k), k = 0 … K−1
        b = -np.log(tail[1:] / (1.0 - tail[1:])) * 1.7  # a logit on the N(0, 1) scale, roughly (a = 1)
        b = np.maximum.accumulate(b + np.arange(b.size) * 1e-3)
        seg = [0.0, b[0]] + [math.log(max(d, 1e-3)) for d in np.diff(b)]
        parts.extend(seg)
    return np.asarray(parts, dtype=float)


def fit_grm(
    responses: np.ndarray | Sequence[Sequence[float]],
    items: Sequence[str] | None = None,
    *,
    prior: str = "mml",
    quadrature: tuple[int, float, float] = (61, -6.0, 6.0),
    rule: str = "legendre",
    max_iter: int = 2000,
    gtol: float = 1e-6,
    equal_discrimination: bool = False,
) -> GRMFit:
    """Fit the GRM to an n_persons × n_items matrix of ratings (NaN = missing).

    Raises :class:`IRTInputError` (one line) for fewer than ``MIN_PERSONS`` persons, an item that used one category
    only, or a person with no rating at all. ``prior`` is ``"mml"`` (marginal maximum likelihood) or ``"map"``.
    ``quadrature`` is (nodes, lo, hi) and ``rule`` one of :data:`QUADRATURE_RULES` (see :func:`_quadrature`); the
    estimates are the maximiser of the marginal likelihood *under that rule*, so a comparison with another program
    uses its rule (ltm: ``rule="hermite"``, 21 nodes; mirt: ``rule="rectangle"``, 61 nodes on [−6, 6]).
    ``equal_discrimination`` ties every item's α to one value (exchangeable raters: the model that identifies the
    human fit of issue 33 §5 with two raters, where the free (α₁, α₂) lie on a ridge of the likelihood).
    """
    y = np.asarray(responses, dtype=float)
    if y.ndim != 2 or y.shape[1] == 0:
        raise IRTInputError("ratings must form a persons × items table with at least one item")
    names = tuple(items) if items is not None else tuple(f"item{p}" for p in range(y.shape[1]))
    if len(names) != y.shape[1]:
        raise IRTInputError(f"{len(names)} item names for {y.shape[1]} items")
    if prior not in ("mml", "map"):
        raise IRTInputError(f"unknown prior {prior!r} (mml or map)")
    if y.shape[0] < MIN_PERSONS:
        raise IRTInputError(f"{y.shape[0]} samples: an IRT fit needs at least {MIN_PERSONS}")
    empty = np.flatnonzero(np.all(np.isnan(y), axis=1))
    if empty.size:
        raise IRTInputError(f"sample #{int(empty[0])} has no rating under any variant")
    _, cats = _encode(y, names)  # validates every item
    # the likelihood depends on a person only through the response pattern: fit on the distinct patterns, weighted
    patterns, inverse, freq = np.unique(np.nan_to_num(y, nan=-np.inf), axis=0, return_inverse=True,
                                        return_counts=True)
    patterns[np.isneginf(patterns)] = np.nan
    onehots, _ = _encode(patterns, names)
    nodes, weights = _quadrature(*quadrature, rule=rule)
    model = _Model(onehots, nodes, weights, prior, freq=freq.astype(float))
    x0 = _start(onehots, model.freq)
    bounds: list[tuple[float | None, float | None]] = []
    for k in model.sizes:
        bounds.append(LOG_A_BOUNDS)
        bounds.extend([(-15.0, 15.0)] + [(-12.0, 4.0)] * (k - 2))
    trace: list[float] = []
    slots = model.offsets[:-1]
    free = np.ones(x0.size, dtype=bool)
    if equal_discrimination:
        free[slots[1:]] = False  # every α is the first item's

    def expand(z: np.ndarray) -> np.ndarray:
        x = x0.copy()
        x[free] = z
        x[slots] = x[slots[0]] if equal_discrimination else x[slots]
        return x

    def objective(z: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = model.objective(expand(z))
        if equal_discrimination:
            grad = grad.copy()
            grad[slots[0]] = grad[slots].sum()
        return value, grad[free]

    with _one_blas_thread():
        res = optimize.minimize(objective, x0[free], jac=True, method="L-BFGS-B",
                                bounds=[b for b, f in zip(bounds, free, strict=True) if f],
                                callback=lambda zk: trace.append(-model.value_at(expand(zk))),
                                options={"maxiter": max_iter, "gtol": gtol, "ftol": 1e-12})
    res.x = expand(res.x)
    a_s, b_s = model.unpack(res.x)
    converged, message = bool(res.success), str(res.message)
    at_bound = [names[p] for p in range(len(names)) if abs(res.x[model.offsets[p]] - LOG_A_BOUNDS[1]) < 1e-6]
    if at_bound:
        converged = False
        message = (f"the discrimination of {', '.join(map(repr, at_bound))} ran to its bound "
                   f"({math.exp(LOG_A_BOUNDS[1]):g}): its ratings are nearly deterministic in θ, so the maximum-"
                   "likelihood estimate does not exist; fit with the paper's priors (prior='map')")
    elif not converged:
        message = f"the optimiser stopped without converging: {message}"
    loglik, post, _ = model.posterior(res.x)
    if prior == "map":
        loglik += model._log_prior(a_s, b_s)
    rows = inverse.reshape(-1)
    theta = np.sum(post * nodes, axis=1)[rows]
    theta_var = np.maximum(np.sum(post * nodes**2, axis=1)[rows] - theta**2, 0.0)
    return GRMFit(items=names, categories=tuple(cats), a=tuple(a_s), b=tuple(tuple(float(v) for v in b) for b in b_s),
                  theta=theta, theta_var=theta_var, loglik=float(loglik), trace=tuple(trace),
                  iterations=int(res.nit), converged=converged, message=message if not converged else "converged",
                  prior=prior, n_persons=int(y.shape[0]))


def simulate_grm(a: Sequence[float], b: Sequence[Sequence[float]], n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Ratings 1 … K_p drawn from the GRM for n persons with θ ~ N(0, 1) (for tests and benchmarks):
    returns (ratings n × items, θ)."""
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(n)
    out = np.empty((n, len(a)))
    for p, (ap, bp) in enumerate(zip(a, b, strict=True)):
        ge = expit(ap * (theta[:, None] - np.asarray(bp)[None, :]))  # P(Y ≥ k+1), k = 1 … K−1
        u = rng.random(n)
        out[:, p] = 1 + np.sum(u[:, None] < ge, axis=1)
    return out, theta
