"""Headless sub-commands, one module each (discovered, so adding a command never edits ``cli.py``).

A command module defines ``NAME`` (the sub-command word), ``register(subparsers)`` (adds its argparse parser; cheap:
no heavy imports at module level) and ``run(args) -> int`` (the exit code). ``cli.py`` finds every module in this
package with :func:`modules`.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def modules() -> list[ModuleType]:
    """Every command module of this package, in name order."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "register") and hasattr(mod, "run"):
            found.append(mod)
    return found
