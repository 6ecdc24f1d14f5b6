"""The records every stage of the engine passes along: a task's question (:class:`TaskItem`), a completed sample
(:class:`StoredSample`, a line of a run's ``samples.jsonl``) and the classes of an item's contiguous sample prefix.

Shared by ``transport`` (the sampler makes samples from items), ``runs`` (stores them) and ``certification``
(analyses them), so none of those packages has to import another for its data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TaskItem", "StoredSample", "canonical_prefix"]


@dataclass(frozen=True)
class TaskItem:
    """One question. ``answers`` holds every acceptable reference answer (raw, not canonicalized); empty = none."""

    id: str
    question: str
    answers: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    messages: tuple[dict, ...] = ()  # chat messages ({"role", "content"}); empty = build from ``question``
    weight: float | None = None  # likelihood ratio p_test(x)/p_cal(x) (weighted conformal); None = not given



@dataclass(frozen=True)
class StoredSample:
    """One completed sample: the ``index``-th answer (0-based) of item ``item``, its raw ``text``, its canonical
    class (``canonical``; the INVALID marker for parse failures), token ``usage`` and the request ``fingerprint``."""

    item: str
    index: int
    text: str
    canonical: str
    usage: Mapping[str, int] = field(default_factory=dict)
    fingerprint: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "index": self.index,
            "text": self.text,
            "canonical": self.canonical,
            "usage": dict(self.usage),
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def trusted(cls, item: str, index: int, text: str, canonical: str, usage: Mapping[str, int],
                fingerprint: str) -> StoredSample:
        """The same sample as the constructor, built without the frozen dataclass's per-field ``__setattr__``
        (the sampler makes one per call)."""
        obj = object.__new__(cls)
        obj.__dict__.update(item=item, index=index, text=text, canonical=canonical, usage=usage,
                            fingerprint=fingerprint)
        return obj

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> StoredSample:
        item, index, text, canonical = d.get("item"), d.get("index"), d.get("text", ""), d.get("canonical", "")
        usage, fp = d.get("usage") or {}, d.get("fingerprint", "")
        if (type(item) is str and type(index) is int and index >= 0 and type(text) is str  # noqa: E721 - fast path
                and type(canonical) is str and type(usage) is dict and type(fp) is str):
            obj = object.__new__(cls)  # as trusted(), inline: once per stored line
            obj.__dict__.update(item=item, index=index, text=text, canonical=canonical, usage=usage,
                                fingerprint=fp)
            return obj
        item, index = d.get("item"), d.get("index")
        if not isinstance(item, str) or isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValueError("a sample needs a string 'item' and a non-negative integer 'index'")
        text, canonical = d.get("text", ""), d.get("canonical", "")
        if not isinstance(text, str) or not isinstance(canonical, str):
            raise ValueError("a sample's 'text' and 'canonical' must be strings")
        usage = d.get("usage") or {}
        if not isinstance(usage, Mapping):
            raise ValueError("a sample's 'usage' must be an object")
        return cls(item, index, text, canonical, dict(usage), str(d.get("fingerprint", "")))



def canonical_prefix(stored: Sequence[StoredSample]) -> list[str]:
    """Canonical classes of the contiguous prefix of indices 0, 1, 2, … of one item's stored samples, taken in index
    order up to the first gap or repeated index — the samples a run uses (a gap left by a crash is asked again; the
    run store never gives a repeated index)."""
    known = getattr(stored, "canonicals", None)
    if known is not None:  # a run's ItemSamples (runs.sampleindex) carries its prefix classes
        return list(known)
    prefix: list[str] = []
    ordered = stored
    prev = -1
    for s in stored:
        if s.index <= prev:
            ordered = sorted(stored, key=lambda x: x.index)
            break
        prev = s.index
    for s in ordered:
        if s.index != len(prefix):
            break
        prefix.append(s.canonical)
    return prefix
