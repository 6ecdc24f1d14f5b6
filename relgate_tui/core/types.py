"""Plain types shared across the core.

Conventions (SPEC §3):

* Canonical answer classes are ``str``. Parse failures map to :data:`INVALID`, which is never acceptable and is
  excluded from candidate ranking and prediction sets (identically at calibration and deployment).
* Nonconformity *rank* scores are ``float``: ``1.0, 2.0, ...`` or ``math.inf`` (no observed class acceptable,
  including a human "none"). Arrays of scores are ``numpy.float64`` with ``np.inf``.
* ``M*`` is a ``float`` as well: a positive integer value or ``math.inf`` (the trivial set: every class).
"""

from __future__ import annotations

import math

INVALID = "\u2205INVALID"
"""The dedicated class for unparseable answers. Chosen so that no canonicalizer can produce it from real text."""

INF = math.inf
