"""Issue 23 §8: an import killed mid-way leaves no hidden work directory behind for good (the next import removes
it), and two imports of one log racing each other end with one run and a clean line, not a rename error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from relgate_tui.engine.importers import load_log
from relgate_tui.engine.importers.run import ImportOptions, import_log
from relgate_tui.engine.runs.listing import list_runs

ROOT = Path(__file__).resolve().parents[3]
LM = next((ROOT / "tests" / "fixtures" / "imports" / "lm_eval" / "addition").glob("samples_*.jsonl"))


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_killed_imports_work_directory_is_removed_by_the_next_import(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    stale = runs / f".import-{_dead_pid()}-x1y2"
    (stale / "task").mkdir(parents=True)
    (stale / "task" / "t.jsonl").write_text("{}\n")
    alive = runs / f".import-{os.getppid()}-live"  # a running process's work directory is left alone
    alive.mkdir()
    import_log(load_log("lm-eval", LM), ImportOptions(run_dir=str(runs)))
    assert not stale.exists() and alive.exists()
    assert [p.name for p in runs.iterdir() if p.name.startswith(".import-")] == [alive.name]


def test_a_real_kill_9_leaves_nothing_after_the_next_import(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "RELGATE_HOME": str(tmp_path)}
    code = ("import os, signal\n"
            "from relgate_tui.engine.importers import load_log\n"
            "from relgate_tui.engine.importers.run import ImportOptions, import_log\n"
            f"import_log(load_log('lm-eval', {str(LM)!r}), ImportOptions(run_dir={str(runs)!r}),\n"
            "           on_phase=lambda phase: os.kill(os.getpid(), signal.SIGKILL))\n")
    p = subprocess.run([sys.executable, "-c", code], env=env, timeout=120)
    assert p.returncode == -9
    assert [d for d in runs.iterdir() if d.name.startswith(".import-")]  # the killed import's leftovers
    import_log(load_log("lm-eval", LM), ImportOptions(run_dir=str(runs)))
    assert not [d for d in runs.iterdir() if d.name.startswith(".import-")]
    assert len(list_runs(runs)) == 1


def test_two_imports_of_one_log_racing_end_with_one_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    log = load_log("lm-eval", LM)
    other: list = []

    def meanwhile(phase: str) -> None:  # another import of the same log finishes while this one certifies
        if phase == "certifying" and not other:
            other.append(import_log(log, ImportOptions(run_dir=str(runs))))

    first = import_log(log, ImportOptions(run_dir=str(runs)), on_phase=meanwhile)
    assert other and not other[0].reused and first.reused and first.run_path == other[0].run_path
    assert first.document["reliability_level"] == other[0].document["reliability_level"]
    assert len(list_runs(runs)) == 1 and not [d for d in runs.iterdir() if d.name.startswith(".")]
