"""Issue 23 §3 inside the data directory: a FIFO, or a symlink to ``/dev/zero``, planted in a run directory (as its
manifest, samples, labels, results or sample index) is a one-line error naming the file — never a hang (a FIFO with
no writer blocks ``open`` forever) nor an unbounded read (``/dev/zero`` never ends). Every read of the run store's own
files goes through the one bounded regular-file read (engine/runs/inputs.py).

Real FIFOs and links, the real CLI (``relgate runs``, ``relgate report``) or ``Session.open`` (what the TUI does to
open a run) in a child process under an address-space limit; the timeout is only a safety net, the assertions are
about the error line."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 1 << 30  # 1 GiB of address space: plenty for opening a small run, far below an unbounded read

PLANT: dict[str, Callable[[Path], None]] = {
    "fifo": os.mkfifo,
    "dev-zero": lambda p: p.symlink_to("/dev/zero"),
}
KIND_WORDS = {"fifo": "a FIFO", "dev-zero": "a device"}

OPEN = ("import sys\n"
        "from relgate_tui.engine.certification.session import Session\n"
        "from relgate_tui.engine.runs.store import RunStoreError\n"
        "try:\n"
        "    Session.open(sys.argv[1]).close()\n"
        "except RunStoreError as exc:\n"
        "    print(exc, file=sys.stderr)\n"
        "    sys.exit(2)\n")


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tui.runfixtures import stored_run

    path = stored_run(tmp_path_factory.mktemp("base") / "runs", limit=8, n_cal=4, k_max=3)
    store_labels(path)
    return path


def store_labels(run: Path) -> None:
    from relgate_tui.engine.runs.store import Label, RunStore

    store = RunStore(run)
    try:
        item = next(iter(store.samples_by_item()))
        store.append_label(Label(item, 1, False, False, "human", 1.0))
    finally:
        store.close()


def planted(tmp_path: Path, base_run: Path, name: str, kind: str) -> Path:
    """A copy of the base run under ``tmp_path/runs`` with ``name`` replaced by a FIFO or a /dev/zero link."""
    run = tmp_path / "runs" / base_run.name
    shutil.copytree(base_run, run)
    (run / name).unlink(missing_ok=True)
    PLANT[kind](run / name)
    return run


def child(home: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {"RELGATE_HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, cwd=str(home),
                          timeout=120, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT)))


def one_line_error(r: subprocess.CompletedProcess[str], *words: str) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr[-2000:]
    assert "MemoryError" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_the_base_run_opens_and_lists(tmp_path: Path, base_run: Path) -> None:
    """The control: the same run without a planted file lists as readable and opens."""
    run = tmp_path / "runs" / base_run.name
    shutil.copytree(base_run, run)
    r = child(tmp_path, ["-m", "relgate_tui.cli", "runs", "--run-dir", str(tmp_path / "runs"), "--json"])
    assert r.returncode == 0, r.stderr
    [row] = json.loads(r.stdout)
    assert not row["status"].startswith("unreadable") and row["n_labels"] == 1
    r = child(tmp_path, ["-c", OPEN, str(run)])
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("kind", sorted(PLANT))
@pytest.mark.parametrize("name", ["manifest.json", "samples.jsonl"])
def test_relgate_runs_shows_a_planted_special_file_as_one_unreadable_row(tmp_path: Path, base_run: Path,
                                                                         name: str, kind: str) -> None:
    planted(tmp_path, base_run, name, kind)
    r = child(tmp_path, ["-m", "relgate_tui.cli", "runs", "--run-dir", str(tmp_path / "runs"), "--json"])
    assert r.returncode == 0, r.stderr
    [row] = json.loads(r.stdout)
    status = row["status"]
    assert status.startswith("unreadable: ") and "\n" not in status, status
    for w in (name, "not a regular file", KIND_WORDS[kind]):
        assert w in status, (w, status)


@pytest.mark.parametrize("kind", sorted(PLANT))
@pytest.mark.parametrize("name", ["samples.jsonl", "labels.jsonl"])
def test_opening_a_run_with_a_planted_special_file_is_one_line(tmp_path: Path, base_run: Path, name: str,
                                                               kind: str) -> None:
    run = planted(tmp_path, base_run, name, kind)
    r = child(tmp_path, ["-c", OPEN, str(run)])
    one_line_error(r, name, "not a regular file", KIND_WORDS[kind])


@pytest.mark.parametrize("kind", sorted(PLANT))
def test_relgate_report_of_a_planted_results_file_is_one_line(tmp_path: Path, base_run: Path, kind: str) -> None:
    run = planted(tmp_path, base_run, "results.json", kind)
    r = child(tmp_path, ["-m", "relgate_tui.cli", "report", str(run)])
    one_line_error(r, "results.json", "not a regular file", KIND_WORDS[kind])


def test_a_fifo_planted_as_the_sample_index_is_no_index(tmp_path: Path, base_run: Path) -> None:
    """The index is derived: a FIFO in its place is ignored (the samples file is parsed) instead of blocking."""
    run = planted(tmp_path, base_run, "samples.index.npz", "fifo")
    r = child(tmp_path, ["-c", OPEN, str(run)])
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
