"""The one-way import rule of SPEC §2: core <- engine <- tui/cli.

Each module is imported in a process of its own that has imported nothing of relgate_tui and none of the forbidden
packages: one helper interpreter per test module (:func:`importer`) pre-imports only the heavy third-party libraries
the modules share (numpy, scipy, sqlalchemy, what httpx loads besides itself — checked there to load nothing
forbidden) and then ``fork()``s a fresh
child per module, so a module's import costs its own code, not a new interpreter plus numpy and scipy each time.
A pre-imported library that is not forbidden and loads nothing forbidden cannot hide a forbidden import: the module
would have loaded the same library, with the same imports, in a bare interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

FORBIDDEN_ANYWHERE = ("textual", "httpx", "diskcache", "platformdirs", "relgate_tui")
PRELOAD = ("numpy", "numpy.typing", "scipy.special", "scipy.stats", "scipy.optimize", "sqlalchemy",
           # what importing httpx loads besides httpx (its command line's click, rich and pygments; idna, certifi,
           # zstandard) and the standard library's larger modules that many relgate modules load
           "click", "rich.console", "rich.markup", "rich.progress", "rich.syntax", "rich.table", "pygments.lexers",
           "pygments.util", "idna", "certifi", "zstandard", "email.message", "http.client", "http.cookiejar",
           "urllib.request", "mimetypes", "ssl", "sqlite3", "statistics", "fractions")

# The helper: pre-imports PRELOAD, proves it loaded nothing forbidden, then for each module name read on stdin forks
# a child that imports it and sends back its sys.modules (or the traceback) as one JSON line.
_SERVER = r"""
import gc, json, os, sys, traceback
forbidden, preload = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for name in preload:
    __import__(name)
bad = sorted(m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in forbidden))
gc.collect()
gc.freeze()  # the pre-imported objects out of the children's collector: their collections walk only what they import
print(json.dumps({"preload_loaded": bad}), flush=True)
for line in sys.stdin:
    module = line.strip()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            __import__(module)
            out = {"modules": sorted(sys.modules)}
        except BaseException:
            out = {"error": traceback.format_exc()}
        with os.fdopen(w, "w") as f:
            f.write(json.dumps(out))
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    print(data or json.dumps({"error": "the child died without an answer"}), flush=True)
"""


class Importer:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVER, json.dumps(FORBIDDEN_ANYWHERE),
                                      json.dumps(PRELOAD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        header = json.loads(self.proc.stdout.readline())
        assert header["preload_loaded"] == [], f"the pre-imported libraries load {header['preload_loaded']}"

    def modules_after_import(self, module: str) -> set[str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(module + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        assert "error" not in answer, f"import {module} failed:\n{answer['error']}"
        return set(answer["modules"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@pytest.fixture(scope="module")
def importer() -> Iterator[Importer]:
    imp = Importer()
    try:
        yield imp
    finally:
        imp.close()


def _submodules(package: str) -> list[str]:
    import importlib
    import pkgutil

    pkg = importlib.import_module(package)
    return [package] + [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}.")]


@pytest.mark.parametrize("module", _submodules("relgate_tui.core"))
def test_core_loads_neither_textual_nor_httpx(module: str, importer: Importer) -> None:
    loaded = importer.modules_after_import(module)
    forbidden = {"textual", "httpx", "diskcache", "platformdirs", "relgate_tui.engine", "relgate_tui.tui"}
    assert not (loaded & forbidden), f"{module} imported {sorted(loaded & forbidden)}"


@pytest.mark.parametrize("module", _submodules("relgate_tui.engine"))
def test_engine_does_not_load_textual(module: str, importer: Importer) -> None:
    loaded = importer.modules_after_import(module)
    assert "textual" not in loaded and "relgate_tui.tui" not in loaded, module


@pytest.mark.parametrize("module", _submodules("relgate_tui.demo"))
def test_demo_loads_neither_textual_nor_tui(module: str, importer: Importer) -> None:
    loaded = importer.modules_after_import(module)
    assert "textual" not in loaded and "relgate_tui.tui" not in loaded, module


def test_the_importer_sees_a_forbidden_import(importer: Importer) -> None:
    """The helper's children start clean: a module that loads textual is seen loading it, and the next child
    does not inherit it."""
    assert "textual" in importer.modules_after_import("relgate_tui.tui.app")
    assert "textual" not in importer.modules_after_import("relgate_tui.core.redact")
