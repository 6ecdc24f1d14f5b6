"""A function of two non-negative integers kept as a table (pure numpy): batch decisions — the stopping rules'
simulations and exact dynamic programmes — ask for the same few thousand integer points (a, b) over and over, and
a lookup gives exactly the numbers the elementwise function gives there (the table is filled by that function on
those points)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["IntegerGrid"]


class IntegerGrid:
    """``fn(a, b)`` at integers 0 ≤ a < rows, 0 ≤ b < columns, computed once per size: the table grows by doubling
    (at least 64 × 64) up to ``limit`` (beyond it, callers evaluate ``fn`` directly). ``fn`` must be elementwise on
    float arrays (the same function on the same points: a lookup is bit for bit a direct call)."""

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], np.ndarray | float], limit: tuple[int, int]) -> None:
        self.fn = fn
        self.limit = limit
        self._table = np.zeros((0, 0))

    def covers(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether ``a`` and ``b`` are non-empty arrays of non-negative integers with ``a ≤ limit[0]`` and
        ``b < limit[1]``: the table may answer ``(a − 1, b)`` and ``(a, b)`` for them."""
        if a.dtype.kind not in "iu" or b.dtype.kind not in "iu" or a.size == 0:
            return False
        return (int(a.min()) >= 0 and int(b.min()) >= 0 and int(a.max()) <= self.limit[0]
                and int(b.max()) < self.limit[1])

    def table(self, rows: int, columns: int) -> np.ndarray:
        """A read-only table T with T[a, b] = fn(a, b) for every a < ``rows``, b < ``columns`` at least."""
        table = self._table
        if table.shape[0] >= rows and table.shape[1] >= columns:
            return table
        size = [max(64, table.shape[i], 1 << max(0, int(n) - 1).bit_length()) for i, n in enumerate((rows, columns))]
        a, b = np.meshgrid(np.arange(size[0], dtype=float), np.arange(size[1], dtype=float), indexing="ij")
        table = np.asarray(self.fn(a, b))
        table.setflags(write=False)
        self._table = table
        return table
