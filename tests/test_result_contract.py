"""Issue 37 §1: a run's ``results.json`` is read back as its type, once — read statically from the sources.

- only ``engine/certification/result.py`` calls the run store's ``read_results`` / ``write_results`` (the run store
  itself aside, and the judge-audit store, a different store with methods of the same names);
- no module under ``tui/`` or ``commands/`` indexes a mapping read from a run's file: no subscript and no ``.get`` on
  a run's document (``….document``, ``….to_json()``, ``read_results()`` or a name bound to one of them);
- the typed summary's old parsers are gone (``summary_of``, ``CertifySummary``, ``Finished``) and nothing rebuilds a
  count from a rounded level (``round(level * (n + 1))``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "relgate_tui"
RESULT = PKG / "engine" / "certification" / "result.py"
# the run store defines them; the judge-audit store (engine/judging/store.py, written by judging/audit.py) is another
STORES = {PKG / "engine" / "runs" / "store.py", PKG / "engine" / "judging" / "store.py",
          PKG / "engine" / "judging" / "audit.py"}
RUN_STORE_IO = {"read_results", "write_results"}


def _calls(tree: ast.AST, names: set[str]) -> list[int]:
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in names]


def _is_document(node: ast.AST, bound: set[str]) -> bool:
    """``x.document``, ``x.to_json()``, ``x.read_results()`` or a name bound to one of them."""
    if isinstance(node, ast.Attribute) and node.attr == "document":
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "to_json", "read_results", "document"):
        return True
    return isinstance(node, ast.Name) and node.id in bound


def document_indexing(source: str) -> list[int]:
    """Lines of ``source`` that index a run's document (module docstring)."""
    tree = ast.parse(source)
    bound: set[str] = set()
    for node in ast.walk(tree):  # names bound to a document, anywhere in the module (flow-insensitive: strict)
        if isinstance(node, ast.Assign) and _is_document(node.value, set()):
            bound.update(t.id for t in node.targets if isinstance(t, ast.Name))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_document(node.value, bound):
            bad.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and _is_document(node.func.value, bound)):
            bad.append(node.lineno)
    return bad


def test_only_result_py_reads_or_writes_a_runs_results_file():
    offenders = {}
    for path in sorted(PKG.rglob("*.py")):
        if path == RESULT or path in STORES:
            continue
        lines = _calls(ast.parse(path.read_text(encoding="utf-8")), RUN_STORE_IO)
        if lines:
            offenders[str(path.relative_to(PKG))] = lines
    assert offenders == {}


# keys only a run's result document has; read by key anywhere in a front end, they mean a document indexed
RESULT_KEYS = {"reliability_level", "reliability_lower_bound", "reliability_n", "reliability_watch", "m_star",
               "passed", "min_reliability", "gate_on", "judge_assisted", "pairwise_judge", "imported_from",
               "worst_case", "prediction_sets", "sampling_complete", "calibration_message", "n_incomplete", "usage",
               "review", "n_cal", "n_skipped"}
SETTINGS_FILE = PKG / "tui" / "settings_file.py"  # the user's settings file has a gate_on key of its own


def result_keys_read(source: str) -> list[int]:
    """Lines of ``source`` that read one of :data:`RESULT_KEYS` by subscript or ``.get``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and node.args and isinstance(node.args[0], ast.Constant)):
            key = node.args[0].value
        if key in RESULT_KEYS:
            out.append(node.lineno)
    return out


def test_no_front_end_indexes_a_runs_document():
    offenders = {}
    for sub in ("tui", "commands"):
        for path in sorted((PKG / sub).rglob("*.py")):
            src = path.read_text(encoding="utf-8")
            lines = sorted(set(document_indexing(src) + ([] if path == SETTINGS_FILE else result_keys_read(src))))
            if lines:
                offenders[str(path.relative_to(PKG))] = lines
    assert offenders == {}


def test_the_checker_sees_indexing_by_name_and_by_expression():
    assert document_indexing("doc = outcome.document\nx = doc['passed']\n") == [2]
    assert document_indexing("x = store.read_results().get('m_star')\n") == [1]
    assert document_indexing("x = r.to_json()['items']\n") == [1]
    assert document_indexing("r = read_result(store)\nx = r.passed\n") == []
    assert result_keys_read("path, n, doc = pull()\nx = doc.get('reliability_level')\n") == [2]


def test_the_old_parsers_and_the_rounded_count_are_gone():
    text = {p: p.read_text(encoding="utf-8") for p in PKG.rglob("*.py")}
    for word in ("def summary_of", "class CertifySummary", "class Finished", "class JudgeSummary"):
        assert [str(p) for p, src in text.items() if word in src] == [], word
    rounded = re.compile(r"round\(\s*float\(level\)\s*\*\s*\(n \+ 1\)\)|round\(level \* \(n \+ 1\)\)")
    assert [str(p) for p, src in text.items() if rounded.search(src)] == []
    assert [str(p) for p, src in text.items() if "def _printable" in src] == []
    assert [str(p) for p, src in text.items() if "class RankingSummary" in src] == [
        str(PKG / "engine" / "certification" / "judge_section.py")]


def test_the_arrows_named_by_the_issue_point_down():
    """``runs/listing.py`` imports nothing of ``certification``; ``certification/{certify,report}.py`` nothing of
    ``review`` (its summary is handed in as ``RunResult.review``)."""
    def imports(path: Path) -> set[str]:
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                out.add(node.module)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
        return out

    assert not {m for m in imports(PKG / "engine" / "runs" / "listing.py") if ".certification" in m}
    for name in ("certify.py", "report.py", "finish.py"):
        assert not {m for m in imports(PKG / "engine" / "certification" / name) if ".engine.review" in m}, name
