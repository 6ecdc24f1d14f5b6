"""Only the prefix counts (issue 33 §2, relgate_tui.core.label_prefix): a reviewer who leaves hard items unlabelled
no longer drives the judge-assisted bound above the truth."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from relgate_tui.core import ppi
from relgate_tui.core.label_prefix import labelled_prefix, prefix_arrays

N, THETA, HARD, HARD_OK, RUNS, SEEN = 1000, 0.9, 0.15, 0.40, 300, 120
EASY_OK = (THETA - HARD * HARD_OK) / (1 - HARD)


def _world(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[int | None]]:
    """The judge is wrong exactly on the hard items; the reviewer goes through the first SEEN items of the seeded
    order and leaves every hard one unlabelled."""
    hard = rng.random(N) < HARD
    y = (rng.random(N) < np.where(hard, HARD_OK, EASY_OK)).astype(np.int64)
    f = np.where(hard, 1 - y, y)
    human: list[int | None] = [None if h else int(v) for h, v in zip(hard[:SEEN], y[:SEEN], strict=True)]
    return f, y, human + [None] * (N - SEEN)


def _last_bounds(f_all: list[np.ndarray], f_lab: list[np.ndarray], y_lab: list[np.ndarray]) -> np.ndarray:
    """``ppi.reliability_bound(f_all[r], f_lab[r], y_lab[r]).lower`` for every run r, in one vectorised
    ``ppi.bound_paths`` call (what reliability_bound computes, one run at a time): the runs' labels are padded to one
    length, and the bound after a run's own n_r labels is entry n_r − 1 of its path (the path is causal: entry t
    depends on the first t + 1 labels only), 0 with no label."""
    n = np.array([len(v) for v in y_lab])
    width = max(1, int(n.max()))
    f2, y2 = np.zeros((len(n), width)), np.zeros((len(n), width))
    for r, (fv, yv) in enumerate(zip(f_lab, y_lab, strict=True)):
        f2[r, : n[r]], y2[r, : n[r]] = fv, yv
    path = ppi.bound_paths(np.array([v.sum() for v in f_all]), N, f2, y2)
    return np.where(n > 0, path[np.arange(len(n)), np.maximum(n - 1, 0)], 0.0)


def test_leaving_hard_items_unlabelled_drove_the_bound_above_the_truth_and_the_prefix_does_not() -> None:
    """RUNS worlds drawn one after another from one seeded generator, as before; each world's bound from every label
    (gaps ignored) and from the labelled prefix is ``ppi.reliability_bound``'s, computed for all worlds at once
    (:func:`_last_bounds`; the first worlds are checked against reliability_bound itself)."""
    rng = np.random.default_rng(29)
    worlds = [_world(rng) for _ in range(RUNS)]
    every: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
    head: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
    for f, y, human in worlds:
        labelled = [i for i, h in enumerate(human) if h is not None]
        f_all, f_lab, y_lab, prefix = prefix_arrays(f.tolist(), human)
        for into, arrays in ((every, (f, f[labelled], y[labelled])), (head, (f_all, f_lab, y_lab))):
            for lst, a in zip(into, arrays, strict=True):
                lst.append(a)
        assert prefix.used + prefix.left_out == len(labelled)
    old_bounds, new_bounds = _last_bounds(*every), _last_bounds(*head)
    for r in range(3):
        assert old_bounds[r] == ppi.reliability_bound(every[0][r], every[1][r], every[2][r]).lower
        assert new_bounds[r] == ppi.reliability_bound(head[0][r], head[1][r], head[2][r]).lower
    old, new = int((old_bounds > THETA).sum()), int((new_bounds > THETA).sum())
    assert old / RUNS > 0.297  # the case: far above δ = 0.05
    assert new / RUNS <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / RUNS)


def test_the_note_says_how_many_labels_were_left_out_and_why() -> None:
    prefix = labelled_prefix([True, True, False, True, True, False])
    assert (prefix.used, prefix.left_out, prefix.first_gap) == (2, 2, 2)
    assert prefix.note is not None and prefix.note.startswith("2 later labels left out: item 3 of the seeded order")
    assert labelled_prefix([True, True, False, False]).note is None  # nothing after the gap: nothing left out


def test_a_skip_is_a_label_and_does_not_stop_the_prefix() -> None:
    f_all, f_lab, y_lab, prefix = prefix_arrays([1, 1, 0, 1], [1, 0, 0, None])
    assert prefix.used == 3 and prefix.left_out == 0
    assert f_lab.tolist() == [1, 1, 0] and y_lab.tolist() == [1, 0, 0] and f_all.tolist() == [1, 1, 0, 1]


@given(st.lists(st.booleans(), max_size=60))
def test_the_prefix_is_the_labelled_head_of_the_order(flags: list[bool]) -> None:
    prefix = labelled_prefix(flags)
    assert all(flags[: prefix.used])
    assert prefix.used == len(flags) or not flags[prefix.used]
    assert prefix.used + prefix.left_out == sum(flags)
