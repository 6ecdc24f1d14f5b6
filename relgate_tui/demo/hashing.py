"""Stable hashing helpers of the simulation: every simulated quantity is a pure function of these (never Python's
salted ``hash``), so the same inputs give the same answers in every process."""

from __future__ import annotations

import hashlib
import math
from random import Random

__all__ = ["gauss", "h64", "request_rng", "unit", "units"]


def h64(*parts: object) -> int:
    """A stable 64-bit hash of the parts."""
    data = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def units(count: int, *parts: object) -> tuple[float, ...]:
    """``count`` (≤ 8) stable uniform numbers in [0, 1) from one hash of the parts."""
    data = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    digest = hashlib.blake2b(data, digest_size=8 * count).digest()
    return tuple(int.from_bytes(digest[8 * k : 8 * k + 8], "big") / 2.0**64 for k in range(count))


def unit(*parts: object) -> float:
    """A stable uniform number in [0, 1) from the parts."""
    return h64(*parts) / 2.0**64


def gauss(*parts: object) -> float:
    """A stable standard normal draw from the parts (Box–Muller on two hash uniforms)."""
    u1 = max(unit(*parts, "g1"), 1e-300)
    u2 = unit(*parts, "g2")
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def request_rng(model: str, content: str, seed: object, index: int, counter: int) -> Random:
    """The RNG for choice ``index`` of a request: from (model, content, seed) or, without a seed, a server counter."""
    if seed is None:
        return Random(h64(model, content, "counter", counter, index))
    return Random(h64(model, content, "seed", repr(seed), index))
