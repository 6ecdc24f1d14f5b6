"""Issue 29, still there from the round before: a run compared with itself says so; malformed inputs are one line
naming file, line and field (never "unexpected RecursionError / OverflowError / TypeError" nor a library's text)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from relgate_tui.cli import main
from tests.engine.test_compare_cli import _import


def _err(capsys) -> list[str]:
    return capsys.readouterr().err.strip().splitlines()


def test_a_run_compared_with_itself_says_so(tmp_path: Path, capsys) -> None:
    a = _import(tmp_path, "a", "model-a", 40)
    out = tmp_path / "cmp.json"
    capsys.readouterr()
    assert main(["compare", a, a, "--run-dir", str(tmp_path / "runs"), "--json", str(out)]) in (0, 3)
    err = capsys.readouterr().err
    assert "same run" in err
    assert "same run" in json.loads(out.read_text())["note"]
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "runs" / a, copy)  # a backup copy: the same run id in another folder
    assert main(["compare", a, str(copy), "--run-dir", str(tmp_path / "runs"), "--json", str(out)]) in (0, 3)
    assert "same run id" in capsys.readouterr().err
    b = _import(tmp_path, "b", "model-b", 40)
    assert main(["compare", a, b, "--run-dir", str(tmp_path / "runs"), "--json", str(out)]) in (0, 3)
    assert "note" not in json.loads(out.read_text()) and "same run" not in capsys.readouterr().err
