"""Per-judge reliability predictors (paper 003, §3.3 and App. G).

For judge j and tolerance τ, the label of item x is y = 1[|ŝ_j(x) − ĥ(x)| ≤ τ] on min–max normalised scores (the
paper does not say ≤ or <; ≤ makes τ = 0 mean "exactly the human score", as its App. H.2 describes). The classifier
is scikit-learn's ``HistGradientBoostingClassifier`` (the paper uses XGBoost; both are gradient-boosted trees), tuned
by a bounded random search over depth, learning rate and number of trees, each configuration scored by ROC-AUC on
the validation split (the paper leaves the search objective open; a classification metric keeps the search per model,
while the jury's size and tolerances are then chosen by the jury's validation Kendall τ, as §3.5 says). The predicted
probability of "reliable" is the judge's reliability r_j(x) ∈ [0, 1].
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

SEARCH_SPACE = {"max_depth": (2, 3, 4, 5), "learning_rate": (0.05, 0.1, 0.2), "max_iter": (30, 60, 100)}


@dataclass(frozen=True)
class Predictor:
    """A fitted reliability model of one judge at one tolerance (``model`` is None when training had one class;
    ``val_auc``, what the search compared, is None too when there was one configuration to choose from)."""

    judge: int
    tolerance: float
    model: object | None
    constant: float
    val_auc: float | None

    def predict(self, x: np.ndarray) -> np.ndarray:
        if self.model is None:
            return np.full(x.shape[0], self.constant)
        with _one_thread():
            return self.model.predict_proba(x)[:, 1]  # type: ignore[attr-defined]


def _one_thread():  # type: ignore[no-untyped-def]
    """Small fits run fastest on one thread (OpenMP and BLAS): several threads busy-wait on tiny trees, and on a
    loaded machine that costs up to 30×."""
    from relgate_tui.core.judge_intervals.base import single_thread

    return single_thread()


def reliability_labels(judge_norm: np.ndarray, human_norm: np.ndarray, tolerance: float) -> np.ndarray:
    """y = 1[|ŝ − ĥ| ≤ τ] (NaN where the judge gave no score)."""
    y = (np.abs(judge_norm - human_norm) <= tolerance + 1e-9).astype(float)
    y[np.isnan(judge_norm)] = np.nan
    return y


def roc_auc(y: np.ndarray, p: np.ndarray) -> float | None:
    """ROC-AUC (None when y has one class)."""
    from sklearn.metrics import roc_auc_score

    ok = ~np.isnan(y)
    if ok.sum() < 2 or np.unique(y[ok]).size < 2:
        return None
    return float(roc_auc_score(y[ok], p[ok]))


def fit_predictor(judge: int, tolerance: float, x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray,
                  y_val: np.ndarray, *, n_search: int, seed: int, bins: BinCache | None = None) -> Predictor:
    """The best of ``n_search`` random configurations by validation ROC-AUC (rows with a NaN label are left out).
    ``bins`` shares the binning of equal training matrices between fits (:class:`BinCache`)."""
    ok = ~np.isnan(y_train)
    xt, yt = x_train[ok], y_train[ok]
    if yt.size == 0:
        return Predictor(judge, tolerance, None, 0.0, None)
    if np.unique(yt).size < 2:
        return Predictor(judge, tolerance, None, float(yt[0]), None)
    rng = np.random.default_rng(seed)
    best: Predictor | None = None
    for _ in range(n_search):
        params = {k: v[int(rng.integers(len(v)))] for k, v in SEARCH_SPACE.items()}
        model = _classifier(bins, random_state=int(rng.integers(2**31)), **params)
        with warnings.catch_warnings(), _one_thread():
            warnings.simplefilter("ignore")
            model.fit(xt, yt)
            auc = roc_auc(y_val, model.predict_proba(x_val)[:, 1]) if n_search > 1 else None
        cand = Predictor(judge, tolerance, model, float(yt.mean()), auc)
        if best is None or (auc is not None and (best.val_auc is None or auc > best.val_auc)):
            best = cand
    assert best is not None
    return best


class BinCache:
    """The binned training matrices of one split, shared by the fits on it.

    ``HistGradientBoostingClassifier.fit`` first bins every feature of X (up to 255 quantile bins: about a third of a
    small fit's time), and all the fits of one split (every judge, every tolerance) train on the same matrix. The
    binning is a function of X alone (it subsamples only above 200,000 rows), so it is done once per distinct matrix;
    the models, and so every result, are the same. It hooks scikit-learn's private binning step, and only when that
    step has the expected signature; otherwise every fit bins as usual."""

    def __init__(self) -> None:
        self._bins: dict[bytes, tuple[Any, np.ndarray]] = {}

    def binned(self, model: Any, x: np.ndarray, bin_data: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``x`` binned, and ``model._bin_mapper`` fitted (by ``bin_data`` the first time, else the cached one)."""
        import hashlib

        key = hashlib.blake2b(repr((x.shape, x.dtype.str, model.max_bins)).encode() + x.tobytes(order="C")).digest()
        hit = self._bins.get(key)
        if hit is None:
            binned = bin_data(x)
            self._bins[key] = hit = (model._bin_mapper, binned)
        else:
            model._bin_mapper = hit[0]
        return hit[1].copy(order="F")  # the cached array stays as it was binned


def _classifier(bins: BinCache | None, **params: Any) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    cls = _cached_bins_class()
    if bins is None or cls is None:
        return HistGradientBoostingClassifier(**params)
    model = cls(**params)
    model.relgate_bins = bins
    return model


@functools.cache
def _cached_bins_class() -> Any:
    """``HistGradientBoostingClassifier`` whose training-data binning goes through ``relgate_bins`` (a
    :class:`BinCache`), or None when scikit-learn's binning step is not the one this was written against."""
    import inspect

    from sklearn.ensemble import HistGradientBoostingClassifier

    bin_data = getattr(HistGradientBoostingClassifier, "_bin_data", None)
    if bin_data is None or list(inspect.signature(bin_data).parameters) != ["self", "X", "sample_weight",
                                                                             "is_training_data"]:
        return None

    class CachedBinsClassifier(HistGradientBoostingClassifier):
        relgate_bins: BinCache | None = None

        def _bin_data(self, X: np.ndarray, sample_weight: Any, is_training_data: bool) -> np.ndarray:
            if not is_training_data or sample_weight is not None or self.relgate_bins is None:
                return super()._bin_data(X, sample_weight, is_training_data)
            return self.relgate_bins.binned(self, X, lambda x: super(CachedBinsClassifier, self)._bin_data(x, None,
                                                                                                           True))

    return CachedBinsClassifier
