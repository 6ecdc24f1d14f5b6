"""relgate: how far can this language model be trusted on this task?

Packages, by layer (``ARCHITECTURE.md``): :mod:`.core` (pure statistics) ← :mod:`.engine` (IO) ← the two front ends,
:mod:`.tui` (the terminal UI) and :mod:`.cli` with :mod:`.commands` (the ``relgate`` command line); :mod:`.demo`
(the simulated models and their server); :mod:`.errors` (the one root error type).
"""

__version__ = "0.1.0"
