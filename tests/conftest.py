"""Session-wide test setup, and the ``incli`` fixture (relgate's CLI in the test's process).

hypothesis is imported here, at start-up, while the main thread is the only thread. Its pytest plugin otherwise
imports it lazily at session end (terminal summary) when a run collected no hypothesis test, and pytest's assertion
rewriting then calls ``ast.parse`` while demo-server and worker threads may still be compiling code: CPython 3.11's
AST recursion counter is shared between threads (cpython#106905), which fails the run with "SystemError: AST
constructor recursion depth mismatch" although every test passed.

The cyclic garbage collector is tuned for a test run (the same work, less collector time; no test's outcome depends on
when the collector runs, and the tests that measure memory call ``gc.collect()`` themselves): its first threshold is
10,000 allocations instead of 700, and once the tests are collected every object alive then (the imported modules,
the test functions, their parameters) is moved out of its sight with ``gc.freeze()`` — relgate's own ``certify`` does
the same — so a full collection no longer walks them again. On tests/tui/test_setup.py that is 25.4 → 20.7 s CPU
(collector time 5.3 → 1.7 s), 12% more peak memory.

OpenMP's worker threads (scikit-learn's gradient boosting and SVD in the jury tests) wait for work by spinning under
GNU libgomp's default ``OMP_WAIT_POLICY``; the test workers share two cores, so a spinning thread takes the CPU of
another worker's test (small fits burned 9-16 s of CPU spinning, 3.3-3.6 s with ``PASSIVE``; the same results). The
policy is set here, before anything loads the OpenMP runtime, for the workers and every process they start, unless the
environment sets one.
"""

from __future__ import annotations

import gc
import logging
import os
import subprocess
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import hypothesis  # noqa: F401
import pytest

InProcessCli = Callable[..., "subprocess.CompletedProcess[str]"]

gc.set_threshold(10_000, 20, 20)  # module docstring
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # module docstring


def pytest_collection_finish(session: pytest.Session) -> None:
    """What is alive once the tests are collected stays alive for the run: out of the collector's sight (docstring)."""
    gc.collect()
    gc.freeze()

# A fresh interpreter's warning filters (CPython without -W or PYTHONWARNINGS), in order
_INTERPRETER_FILTERS = (("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, ""),
                        ("ignore", PendingDeprecationWarning, ""), ("ignore", ImportWarning, ""),
                        ("ignore", ResourceWarning, ""))


@pytest.fixture(scope="session", autouse=True)
def _session_relgate_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The run's ``RELGATE_HOME`` (each worker's own), under every module- or session-scoped fixture: no test reads or
    writes the user's data and cache dirs."""
    home = str(tmp_path_factory.mktemp("relgate-home"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RELGATE_HOME", home)
        yield home


@pytest.fixture(autouse=True)
def _own_relgate_home(_session_relgate_home: str, tmp_path_factory: pytest.TempPathFactory,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test has a ``RELGATE_HOME`` of its own unless a module- or session-scoped fixture set one for its tests
    (a test may set another): no test answers from another's sample cache (two loopback servers a test apart can be
    given the same port, so the same endpoint URL)."""
    if os.environ.get("RELGATE_HOME") == _session_relgate_home:
        monkeypatch.setenv("RELGATE_HOME", str(tmp_path_factory.mktemp("relgate-home")))


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every retry is asked at once (no jittered backoff, :meth:`RetryPolicy.delay` is 0), for tests of what a failure
    counts as, not of how long a retry waits (the backoff's own law is tested in tests/engine/transport)."""
    from relgate_tui.engine.transport.jobs import RetryPolicy

    monkeypatch.setattr(RetryPolicy, "delay", lambda self, attempt, retry_after, rng: 0.0)


@pytest.fixture
def incli(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> InProcessCli:
    """``incli(home, *argv, cwd=None, env=None)``: ``relgate *argv`` run in this process through ``cli.main`` — the
    code ``python -m relgate_tui.cli`` runs — with ``RELGATE_HOME=home``, no other ``RELGATE_*`` variable, ``env``
    added and ``cwd`` (default ``home``) as the working directory; its exit code and everything written to file
    descriptors 1 and 2 (``capfd``) come back as a ``CompletedProcess``. What pytest would otherwise intercept reaches
    stderr as in a process of its own: warnings under a fresh interpreter's filters, and log records through
    logging's last-resort handler (the root logger without pytest's handlers).

    For tests about what a command does and prints, not about the process (signals, kill -9, interpreter start-up):
    a new interpreter per command costs a second or more of imports."""
    from relgate_tui import cli

    def run(home: Path, *argv: str, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        root = logging.getLogger()
        handlers = root.handlers[:]
        with monkeypatch.context() as m, warnings.catch_warnings(record=True) as caught:
            for key in [k for k in os.environ if k.startswith("RELGATE_")]:
                m.delenv(key)
            m.setenv("RELGATE_HOME", str(home))
            for key, value in (env or {}).items():
                m.setenv(key, value)
            m.chdir(cwd or home)
            warnings.resetwarnings()
            for action, category, module in _INTERPRETER_FILTERS:
                warnings.filterwarnings(action, category=category, module=module, append=True)
            capfd.readouterr()  # what the test printed before is not this command's output
            root.handlers = []
            try:
                code = cli.main(list(argv))
            finally:
                root.handlers = handlers
            out = capfd.readouterr()
        shown = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line) for w in caught)
        return subprocess.CompletedProcess(["relgate", *argv], code, out.out, out.err + shown)

    return run
