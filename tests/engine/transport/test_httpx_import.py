"""``import httpx`` through relgate's engine leaves httpx's own command-line client unloaded, and nothing else."""

from __future__ import annotations

import subprocess
import sys

import pytest

_CHECK = """
import sys
import relgate_tui.engine.transport.sampler  # imports httpx
import httpx
print('httpx._main' in sys.modules, any(m == 'click' or m.startswith('click.') for m in sys.modules),
      'rich.progress' in sys.modules, 'pygments.lexers' in sys.modules)
httpx.Client(trust_env=False).close()  # httpx itself works
import importlib.util
if importlib.util.find_spec('click') is not None:  # with the CLI's extras installed, asked for, it still imports
    import httpx._main
    print(callable(httpx._main.main))
else:
    print(True)
"""


def test_httpx_is_imported_without_its_cli_and_the_cli_still_imports_when_asked() -> None:
    out = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "False", "False", "True"]


def test_the_finder_refuses_only_httpx_main_while_httpx_initialises() -> None:
    import httpx

    from relgate_tui.engine.transport.httpx_import import _SkipHttpxCli

    finder = _SkipHttpxCli()
    assert finder.find_spec("click") is None and finder.find_spec("httpx._models") is None
    assert finder.find_spec("httpx._main") is None  # httpx is loaded here (not initialising): no opinion

    class _Initialising:
        class __spec__:  # noqa: N801 - the attribute the import system sets while a module runs
            _initializing = True

    sys.modules["httpx"] = _Initialising()  # type: ignore[assignment]
    try:
        with pytest.raises(ModuleNotFoundError):
            finder.find_spec("httpx._main")
        assert finder.find_spec("httpx._models") is None
    finally:
        sys.modules["httpx"] = httpx
