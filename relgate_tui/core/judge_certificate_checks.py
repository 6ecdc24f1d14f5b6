"""What the judge certificate's guarantee assumes about the labelled items, checked.

**Independent units** (:func:`one_per_group`). The exact binomial test needs independent labelled items. Items that
share a prompt — the pairs of one input of a pairwise audit, any verdicts-file rows with one ``group`` — are not:
with a per-input spread of agreement (sd 0.15, 10 pairs per input) the item-level certificate errs in ≈ 8% of runs
against δ = 5%. With groups the unit is the group: from each group one labelled item is drawn uniformly at random
(seeded, :data:`GROUP_SEED`, before any agreement is read), and the fixed sequence runs on those items only. Distinct
groups are independent, so the drawn items are i.i.d. draws of "a labelled item of a random group" and the test is
exact for the agreement on such items (every item counts equally when groups have equal sizes). The undrawn items
still count for coverage (the share of all items with c ≥ t̂).

**A random sample** (:func:`sample_warnings`). The certificate is about the task's items only if the labelled items
are a random sample of them. Two checks, each at level :data:`ALPHA` (so a random sample raises one in < 0.5% of
certificates):

* order — Kendall's τ (with ties, ``scipy.stats.kendalltau``) between a labelled row's position in the file and its
  judge confidence, its agreement with the human, and its human verdict: a file labelled easy-first, or sorted by
  verdict, shows a trend;
* labelled against unlabelled — Mann–Whitney U (two-sided) of the judge confidences of the labelled and the
  unlabelled items: the first lines of a sorted file are not like the rest.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import kendalltau, mannwhitneyu

__all__ = ["ALPHA", "GROUP_SEED", "NOT_RANDOM", "one_per_group", "sample_warnings"]

ALPHA = 0.001
GROUP_SEED = 0
NOT_RANDOM = "the labelled items do not look like a random sample"


def one_per_group(groups: ArrayLike, labelled: ArrayLike, seed: int = GROUP_SEED) -> np.ndarray:
    """Indices of one labelled item per group (uniform within the group, drawn with ``seed``), in input order."""
    g = np.asarray(groups)
    lab = np.asarray(labelled, dtype=bool)
    if g.shape != lab.shape or g.ndim != 1:
        raise ValueError("groups and labelled must be one value per item")
    idx = np.flatnonzero(lab)
    if not idx.size:
        return idx
    keys = np.random.default_rng(seed).random(g.size)[idx]  # one uniform key per item, fixed before any label
    _, inverse = np.unique(g[idx], return_inverse=True)
    order = np.lexsort((keys, inverse))  # by group, then key
    first = np.r_[True, inverse[order][1:] != inverse[order][:-1]]
    return np.sort(idx[order[first]])


def _p(x: float) -> str:
    return f"{x:.0e}" if x < 1e-3 else f"{x:.3f}"


def sample_warnings(c_labelled: ArrayLike, agree: ArrayLike, human: ArrayLike, c_unlabelled: ArrayLike,
                    alpha: float = ALPHA) -> tuple[str, ...]:
    """The findings of the module docstring's checks, one phrase each ("their confidence falls along the file (Kendall
    τ = −0.42, p = 1e-12)"); empty when nothing is found. Arrays of the labelled items in file order."""
    c = np.asarray(c_labelled, dtype=np.float64)
    found: list[str] = []
    if c.size >= 20:
        pos = np.arange(c.size)
        for name, values in (("confidence", c), ("agreement with the humans", np.asarray(agree, dtype=np.float64)),
                             ("human verdict", np.asarray(human, dtype=np.float64))):
            if np.ptp(values) == 0:
                continue
            tau, p = kendalltau(pos, values)
            if np.isfinite(p) and p < alpha:
                way = "rises" if tau > 0 else "falls"
                found.append(f"their {name} {way} along the file (Kendall τ = {tau:+.2f}, p = {_p(float(p))})")
    u = np.asarray(c_unlabelled, dtype=np.float64)
    if c.size >= 20 and u.size >= 20 and np.ptp(np.r_[c, u]) > 0:
        p = float(mannwhitneyu(c, u, alternative="two-sided").pvalue)
        if p < alpha:
            way = "higher" if np.median(c) >= np.median(u) else "lower"
            found.append(f"their judge confidence is {way} than the unlabelled items' (Mann–Whitney p = {_p(p)})")
    return tuple(found)
