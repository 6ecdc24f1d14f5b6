"""The gate's names, without the gate: which number it compares (:data:`GateOn`), how the human-only bound is watched
(:data:`WATCH`), and their checks. :mod:`relgate_tui.core.certification.gate` re-exports every name; they live here,
importing neither numpy nor the interval code, so that reading a run's options (``relgate certify --help``, the
flags of any command that builds a run's configuration) does not load numpy.
"""

from __future__ import annotations

from typing import Literal, get_args

GateOn = Literal["bound", "level", "assisted"]
GATE_ON_CHOICES: tuple[GateOn, ...] = get_args(GateOn)
"""User-facing names (``relgate certify --gate-on``, JSON ``gate_on``, Setup): "bound" is the default."""
OLD_GATE_ON: dict[str, GateOn] = {"best": "assisted"}
"""Names of earlier versions, read from old configs and results as the gate they now decide alike."""
HUMAN_GATES: tuple[GateOn, ...] = ("bound", "level")
ASSISTED_GATES: tuple[GateOn, ...] = ("assisted",)
"""``gate_on`` values that need a verification judge."""
Watch = Literal["once", "anytime", "one-look"]
WATCH: tuple[Watch, ...] = get_args(Watch)
"""How the human-only bound is looked at (module docstring)."""
NO_VERIFIED_ITEMS = "no verified items yet"
ASSISTED_UNUSABLE_NOTE = ("the assisted gate needs every item judged and none with a reference answer; decided on the "
                          "human-only bound")


def check_gate_on(gate_on: str) -> GateOn:
    """``gate_on`` as a :data:`GateOn` (an old name of :data:`OLD_GATE_ON` as the gate it is now), else ValueError."""
    for choice in GATE_ON_CHOICES:
        if gate_on == choice:
            return choice
    if gate_on in OLD_GATE_ON:
        return OLD_GATE_ON[gate_on]
    raise ValueError(f"gate_on must be one of {', '.join(GATE_ON_CHOICES)}, got {gate_on!r}")


def check_watch(watch: str) -> Watch:
    """``watch`` as a :data:`Watch`, else ValueError."""
    for choice in WATCH:
        if watch == choice:
            return choice
    raise ValueError(f"watch must be one of {', '.join(WATCH)}, got {watch!r}")
