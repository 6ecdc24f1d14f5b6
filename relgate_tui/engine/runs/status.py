"""The phase of a run as its manifest stores it (:class:`RunStatus`; the run store, :mod:`.store`, writes it)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["RunStatus"]


class RunStatus(StrEnum):
    """The phase of a run, as stored in its manifest (the one list; the pipeline and the TUI set it)."""

    CREATED = "created"
    SAMPLING = "sampling"
    SAMPLED = "sampled"  # a sampling pass finished every item (to its stop or K_max)
    INCOMPLETE = "incomplete"  # a pass ended with items not sampled to their stop (failed requests): rerun
    JUDGING = "judging"
    LABELLING = "labelling"  # sampled; calibration items still wait for a human verdict
    COMPLETE = "complete"

    @property
    def sampling_done(self) -> bool:
        """True once sampling (and the judge pass) finished every item."""
        return self in (RunStatus.SAMPLED, RunStatus.LABELLING, RunStatus.COMPLETE)

    @classmethod
    def parse(cls, value: object) -> RunStatus | None:
        """The status named by ``value``, or None for an unknown one (a newer relgate, a hand edit)."""
        try:
            return cls(str(value))
        except ValueError:
            return None
