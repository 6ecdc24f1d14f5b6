"""Where relgate keeps its files (SPEC §4.4–4.5).

* **Data dir** (runs live in ``<data dir>/runs/<run_id>/``): ``$RELGATE_HOME`` when that environment variable is set,
  else the platformdirs user data dir for "relgate".
* **Cache dir** (the diskcache of completed samples): ``$RELGATE_HOME/cache`` when ``RELGATE_HOME`` is set, else the
  platformdirs user cache dir for "relgate".
* ``--run-dir DIR`` (CLI) replaces ``<data dir>/runs``: runs are then ``DIR/<run_id>/`` and ``relgate runs --run-dir
  DIR`` lists them. It does not move the cache.

Nothing is created here; callers create the directories they write to. platformdirs is imported only when
``RELGATE_HOME`` is not set (its import is a few ms of every run's start-up).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["HOME_ENV", "APP_NAME", "data_dir", "cache_dir", "runs_dir"]

HOME_ENV = "RELGATE_HOME"
APP_NAME = "relgate"


def _home() -> Path | None:
    value = os.environ.get(HOME_ENV, "").strip()
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    """The data root: ``$RELGATE_HOME`` or the platformdirs user data dir."""
    home = _home()
    if home is not None:
        return home
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """The sample cache directory: ``$RELGATE_HOME/cache`` or the platformdirs user cache dir."""
    home = _home()
    if home is not None:
        return home / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def runs_dir(run_dir: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding one sub-directory per run: ``run_dir`` when given (``--run-dir``), else
    ``<data dir>/runs``."""
    if run_dir is not None and str(run_dir).strip():
        return Path(run_dir).expanduser()
    return data_dir() / "runs"
