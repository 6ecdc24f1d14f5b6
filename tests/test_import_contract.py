"""The import contract (issue 9 item 7), read statically from every import statement — function-local ones too:

- ``core`` imports neither ``engine``, ``tui``, ``demo``, ``commands`` nor ``cli``;
- ``engine`` never imports ``tui``;
- no import cycle between ``engine`` modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PKG = Path(__file__).resolve().parents[1] / "relgate_tui"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    here = _module_name(path)
    return _imports_of(path.read_text(encoding="utf-8"), here if path.name == "__init__.py" else here.rpartition(".")[0])


def _imports_of(source: str, package: str) -> set[str]:
    """Every module name an import statement names (``from a import b`` counts ``a`` and ``a.b``); ``package`` is
    the package relative imports start from."""
    tree = ast.parse(source)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PKG.rglob("*.py")}


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_core_imports_nothing_above_it():
    bad = {m: sorted(i for i in imps if any(_under(i, f"relgate_tui.{p}")
                                            for p in ("engine", "tui", "demo", "commands", "cli")))
           for m, imps in _graph().items() if _under(m, "relgate_tui.core")}
    assert not {m: v for m, v in bad.items() if v}


def test_engine_never_imports_tui():
    bad = {m: sorted(i for i in imps if _under(i, "relgate_tui.tui"))
           for m, imps in _graph().items() if _under(m, "relgate_tui.engine")}
    assert not {m: v for m, v in bad.items() if v}


def test_no_import_cycle_between_engine_modules():
    graph = _graph()
    engine = {m for m in graph if _under(m, "relgate_tui.engine")}
    g = nx.DiGraph()
    g.add_nodes_from(engine)
    for m in engine:
        for i in graph[m]:
            if i in engine and i != m and not _under(m, i):  # a module importing its own package is not a cycle
                g.add_edge(m, i)
    cycles = [c for c in nx.simple_cycles(g) if not all(_under(x, c[0]) or _under(c[0], x) for x in c)]
    assert not cycles, f"import cycles: {cycles[:5]}"


def test_the_checker_sees_function_local_and_relative_imports():
    src = "def f():\n    from relgate_tui.engine import sampler\n    from . import x\n"
    imps = _imports_of(src, "relgate_tui.core")
    assert {"relgate_tui.engine", "relgate_tui.engine.sampler", "relgate_tui.core.x"} <= imps
