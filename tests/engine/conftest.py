"""Fixtures of the engine tests."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

InProcessCli = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def incli(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> InProcessCli:
    """``incli(home, *argv, cwd=None, env=None)``: ``relgate *argv`` run in this process through ``cli.main`` — the
    code ``python -m relgate_tui.cli`` runs — with ``RELGATE_HOME=home``, no other ``RELGATE_*`` variable, ``env``
    added and ``cwd`` (default ``home``) as the working directory; its exit code and everything written to file
    descriptors 1 and 2 (``capfd``) come back as a ``CompletedProcess``. For tests about what a command does and
    prints, not about the process (signals, kill -9, interpreter start-up): a new interpreter per command costs a
    second or more of imports."""
    from relgate_tui.cli import main

    def run(home: Path, *argv: str, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        with monkeypatch.context() as m:
            for key in [k for k in os.environ if k.startswith("RELGATE_")]:
                m.delenv(key)
            m.setenv("RELGATE_HOME", str(home))
            for key, value in (env or {}).items():
                m.setenv(key, value)
            m.chdir(cwd or home)
            capfd.readouterr()  # what the test printed before is not this command's output
            code = main(list(argv))
            out = capfd.readouterr()
        return subprocess.CompletedProcess(["relgate", *argv], code, out.out, out.err)

    return run
