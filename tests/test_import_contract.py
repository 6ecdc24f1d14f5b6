"""The import contract (issue 9 item 7, issue 19 §5), read statically from every import statement — function-local
and ``TYPE_CHECKING`` ones too:

- ``core`` imports neither ``engine``, ``tui``, ``demo``, ``commands`` nor ``cli``; ``engine`` imports neither ``tui``
  nor ``demo``; ``tui`` imports neither ``commands`` nor ``cli``, and ``commands`` no ``tui`` (the front ends apart);
- ``engine.transport`` imports neither ``engine.runs`` nor ``engine.certification``; ``engine.runs`` imports no
  ``engine.transport``;
- no module imports a private name (``_x``) from another package — so ``judging`` and ``certification`` meet only
  through public names, and ``tui`` imports no private engine name;
- no import cycle between any two files of ``relgate_tui``;
- ``engine/`` keeps at most 8 top-level entries (its ``__init__`` aside) and no module is over 600 lines;
- every package ``ARCHITECTURE.md`` names exists, and every package's ``__init__`` docstring names its modules.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import networkx as nx

PKG = Path(__file__).resolve().parents[1] / "relgate_tui"
ARCHITECTURE = PKG.parent / "ARCHITECTURE.md"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_of(path: Path) -> str:
    here = _module_name(path)
    return here if path.name == "__init__.py" else here.rpartition(".")[0]


def _import_nodes(source: str, package: str) -> list[tuple[str, list[str]]]:
    """``(module, [imported names])`` for every import statement; ``package`` is where relative imports start."""
    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((mod, [alias.name for alias in node.names]))
    return out


def _imports_of(source: str, package: str) -> set[str]:
    """Every module name an import statement names (``from a import b`` counts ``a`` and ``a.b``)."""
    return _named(_import_nodes(source, package))


def _named(nodes: list[tuple[str, list[str]]]) -> set[str]:
    found: set[str] = set()
    for mod, names in nodes:
        found.add(mod)
        found.update(f"{mod}.{n}" for n in names)
    return found


def _files() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


@cache
def _sources() -> dict[Path, str]:
    """Every source file, read once per test process (the tests only read them)."""
    return {p: p.read_text(encoding="utf-8") for p in _files()}


@cache
def _nodes() -> dict[Path, list[tuple[str, list[str]]]]:
    """Every file's import statements, parsed once per test process."""
    return {p: _import_nodes(src, _package_of(p)) for p, src in _sources().items()}


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _named(nodes) for p, nodes in _nodes().items()}


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _forbidden(src: str, targets: tuple[str, ...]) -> dict[str, list[str]]:
    bad = {m: sorted(i for i in imps if any(_under(i, t) for t in targets))
           for m, imps in _graph().items() if _under(m, src)}
    return {m: v for m, v in bad.items() if v}


def test_core_imports_nothing_above_it():
    assert not _forbidden("relgate_tui.core", tuple(f"relgate_tui.{p}" for p in
                                                    ("engine", "tui", "demo", "commands", "cli")))


def test_engine_never_imports_tui():
    assert not _forbidden("relgate_tui.engine", ("relgate_tui.tui",))


def test_the_front_ends_stand_apart():
    """The TUI and the command line share the engine, never each other's modules (issue 28 §4)."""
    assert not _forbidden("relgate_tui.tui", ("relgate_tui.commands", "relgate_tui.cli"))
    assert not _forbidden("relgate_tui.commands", ("relgate_tui.tui",))


def test_engine_never_imports_the_demo():
    """The simulated models' names reach the engine as arguments (``looks_simulated``); the embedded demo is started
    by the TUI (``tui/demo_endpoint.py``)."""
    assert not _forbidden("relgate_tui.engine", ("relgate_tui.demo",))


def test_the_checker_catches_a_front_end_leaning_on_the_other(monkeypatch):
    """The rules above can fail: a TUI module importing a command, and an engine module importing the demo."""
    fake = {"relgate_tui.tui.x": {"relgate_tui.commands.jury"}, "relgate_tui.engine.y": {"relgate_tui.demo.simulate"},
            "relgate_tui.commands.z": {"relgate_tui.tui.app"}}
    monkeypatch.setitem(globals(), "_graph", lambda: fake)
    assert _forbidden("relgate_tui.tui", ("relgate_tui.commands",)) == {"relgate_tui.tui.x": ["relgate_tui.commands.jury"]}
    assert _forbidden("relgate_tui.engine", ("relgate_tui.demo",))
    assert _forbidden("relgate_tui.commands", ("relgate_tui.tui",))


def test_transport_imports_neither_runs_nor_certification():
    assert not _forbidden("relgate_tui.engine.transport",
                          ("relgate_tui.engine.runs", "relgate_tui.engine.certification"))


def test_runs_imports_no_transport():
    assert not _forbidden("relgate_tui.engine.runs", ("relgate_tui.engine.transport",))


def _owner(module: str) -> str:
    """The package a module belongs to, at the depth the contract cares about: ``relgate_tui.engine.runs``,
    ``relgate_tui.core.certification``, ``relgate_tui.tui.studies``, or the module itself at the top."""
    parts = module.split(".")
    return ".".join(parts[:3]) if len(parts) > 3 else ".".join(parts[:-1]) or module


def _private_imports() -> list[str]:
    modules = {_module_name(p) for p in _sources()}
    found = []
    for path, nodes in _nodes().items():
        here = _module_name(path)
        for mod, names in nodes:
            if not _under(mod, "relgate_tui"):
                continue
            for name in names:
                target = f"{mod}.{name}" if f"{mod}.{name}" in modules else mod
                private = name.startswith("_") or any(p.startswith("_") and p != "__init__"
                                                      for p in target.split("."))
                if private and _owner(target) != _owner(here) and not _under(here, _owner(target)):
                    found.append(f"{here} imports {mod}:{name}")
    return found


def test_no_private_name_crosses_a_package():
    assert not _private_imports()


def test_no_import_cycle_between_files():
    graph = _graph()
    g = nx.DiGraph()
    g.add_nodes_from(graph)
    for m, imps in graph.items():
        for i in imps:
            if i in graph and i != m and not _under(m, i) and not _under(i, m):
                g.add_edge(m, i)  # a module importing its own package, or a package its own module, is no cycle
    cycles = list(nx.simple_cycles(g))
    assert not cycles, f"import cycles: {cycles[:5]}"


def test_engine_has_at_most_eight_top_level_entries_and_modules_stay_small():
    entries = [p.name for p in (PKG / "engine").iterdir() if p.name not in ("__pycache__", "__init__.py")]
    assert len(entries) <= 8, sorted(entries)
    big = {str(p.relative_to(PKG)): n for p, src in _sources().items() if (n := len(src.splitlines())) > 600}
    assert not big, big


def test_architecture_names_only_packages_that_exist():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    named = set(re.findall(r"`(relgate_tui(?:/[a-z_]+)+/?)`", text))
    assert len(named) >= 10, "ARCHITECTURE.md names the packages as `relgate_tui/…/`"
    missing = [n for n in sorted(named) if not (PKG.parent / n.rstrip("/")).exists()
               and not (PKG.parent / (n.rstrip("/") + ".py")).exists()]
    assert not missing, missing
    for pkg in ("core/certification", "engine/transport", "engine/runs", "engine/certification", "engine/judging",
                "engine/importers", "tui"):
        assert f"`relgate_tui/{pkg}/`" in text, pkg


def _unnamed_modules(init: Path, doc: str) -> list[str]:
    """The public modules and subpackages of ``init``'s package its docstring does not name (as a word)."""
    d = init.parent
    mods = {p.stem for p in d.glob("*.py") if not p.stem.startswith("_")}
    mods |= {p.name for p in d.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    return sorted(m for m in mods if not re.search(rf"(?<!\w){re.escape(m)}(?!\w)", doc))


def test_every_package_names_its_modules():
    """Each package's ``__init__`` docstring says what it holds: every public module and subpackage by name
    (issue 28 §7), so a newcomer finds a module from its package."""
    missing = {}
    for path, src in _sources().items():
        if path.name == "__init__.py":
            doc = ast.get_docstring(ast.parse(src)) or ""
            if gaps := _unnamed_modules(path, doc):
                missing[str(path.relative_to(PKG.parent))] = gaps
    assert not missing, missing


def test_the_package_check_sees_an_unnamed_module(tmp_path):
    (tmp_path / "__init__.py").write_text('"""Holds :mod:`.a`."""\n')
    for name in ("a.py", "b.py", "_private.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    assert _unnamed_modules(tmp_path / "__init__.py", "Holds :mod:`.a`.") == ["b", "sub"]


def test_the_checker_sees_function_local_and_relative_imports():
    src = "def f():\n    from relgate_tui.engine import transport\n    from . import x\n"
    imps = _imports_of(src, "relgate_tui.core")
    assert {"relgate_tui.engine", "relgate_tui.engine.transport", "relgate_tui.core.x"} <= imps


def test_the_checker_knows_each_module_s_package():
    assert _owner("relgate_tui.engine.runs.files") == "relgate_tui.engine.runs"
    assert _owner("relgate_tui.tui.app") == "relgate_tui.tui"
    assert _owner("relgate_tui.cli") == "relgate_tui"


def test_a_run_ends_in_one_place():
    """Issue 28 §1: the result document is built only by ``engine/certification/finish.py`` (``build_document(`` is
    found only at its definition and there), and the gate rule lives in core (no engine copy)."""
    calls = []
    for path in sorted(PKG.rglob("*.py")):
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "build_document(" in line:
                calls.append((path.relative_to(PKG).as_posix(), line.strip().startswith("def ")))
    assert sorted(calls) == [("engine/certification/certify.py", True), ("engine/certification/finish.py", False)]
    for path in sorted(PKG.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "apply_assisted_gate" not in text and "gate_basis=" not in text, path
