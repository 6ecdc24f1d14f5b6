"""The one-way import rule of SPEC §2: core <- engine <- tui/cli."""

import subprocess
import sys

import pytest


def _modules_after_import(module: str) -> set[str]:
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return set(out.split())


def _submodules(package: str) -> list[str]:
    import importlib
    import pkgutil

    pkg = importlib.import_module(package)
    return [package] + [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}.")]


@pytest.mark.parametrize("module", _submodules("relgate_tui.core"))
def test_core_loads_neither_textual_nor_httpx(module: str) -> None:
    loaded = _modules_after_import(module)
    forbidden = {"textual", "httpx", "diskcache", "platformdirs", "relgate_tui.engine", "relgate_tui.tui"}
    assert not (loaded & forbidden), f"{module} imported {sorted(loaded & forbidden)}"


@pytest.mark.parametrize("module", _submodules("relgate_tui.engine"))
def test_engine_does_not_load_textual(module: str) -> None:
    loaded = _modules_after_import(module)
    assert "textual" not in loaded and "relgate_tui.tui" not in loaded, module


@pytest.mark.parametrize("module", _submodules("relgate_tui.demo"))
def test_demo_loads_neither_textual_nor_tui(module: str) -> None:
    loaded = _modules_after_import(module)
    assert "textual" not in loaded and "relgate_tui.tui" not in loaded, module
