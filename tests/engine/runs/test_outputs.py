"""Issue 23 §1: writes never destroy anything — one output write and one output guard for every writer.

Real files, real device nodes (``os.mknod``, as root), real FIFOs and the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from relgate_tui.engine.runs.outputs import check_output_path, write_file, write_output
from relgate_tui.errors import UserError

ROOT = Path(__file__).resolve().parents[3]
needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="os.mknod needs root")


def _cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {"RELGATE_HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "relgate_tui.cli", *argv], capture_output=True, text=True, env=env,
                          cwd=str(home), timeout=300)


def scores_file(path: Path, n: int = 40) -> Path:
    records = []
    for i in range(n):
        human = 1 + i % 5
        for judge, shift in (("j1", 0), ("j2", 1)):
            score = min(5, human + shift * (i % 2))
            lps = {str(v): (-0.2 if v == score else -3.0) for v in range(1, 6)}
            records.append({"id": f"d{i}", "judge": judge, "criterion": "coherence", "human": human,
                            "score": score, "logprobs": lps})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _null_device(path: Path) -> Path:
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the same device as /dev/null
    return path


@needs_root
def test_a_json_output_to_a_character_device_leaves_it_a_character_device(tmp_path: Path) -> None:
    dev = _null_device(tmp_path / "null")
    scores = scores_file(tmp_path / "scores.jsonl")
    r = _cli(tmp_path, "judge-irt", "--ratings", str(scores), "--json", str(dev), "--markdown", str(dev), "--quiet")
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.lstat(dev).st_mode)
    r = _cli(tmp_path, "judge-audit", "--scores", str(scores), "--json", str(dev), "--markdown", str(dev))
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.lstat(dev).st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left behind


@needs_root
def test_the_stores_own_atomic_write_never_renames_over_a_device(tmp_path: Path) -> None:
    from relgate_tui.engine.runs.files import atomic_write_bytes

    dev = _null_device(tmp_path / "manifest.json")
    atomic_write_bytes(dev, b"{}\n")
    assert stat.S_ISCHR(os.lstat(dev).st_mode)


def test_a_fifo_is_written_in_place_and_a_fifo_without_reader_is_refused(tmp_path: Path) -> None:
    """The bytes reach a reader that holds the FIFO open (a rename over the path would leave that reader with
    nothing), the path stays a FIFO, nothing is left beside it; with no reader the write is refused at once (a
    blocking open would wait forever: it runs in a thread so that such a regression fails instead of hanging)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the reader is there before the write: no race, no wait
    try:
        write_file(fifo, b"hello\n")
        assert os.read(reader, 100) == b"hello\n"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]  # no temporary file renamed or left beside it
    raised: list[BaseException] = []

    def write_without_reader() -> None:
        try:
            write_file(fifo, b"x")
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            raised.append(exc)

    t = threading.Thread(target=write_without_reader, daemon=True)
    t.start()
    t.join(30)  # a safety net only: the refusal is immediate
    if t.is_alive():  # blocked in open(): release it so the test fails instead of hanging
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    assert not t.is_alive() and len(raised) == 1 and isinstance(raised[0], UserError), raised
    assert "no reader" in str(raised[0])
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_directory_or_socket_is_refused_not_replaced(tmp_path: Path) -> None:
    import socket

    d = tmp_path / "dir"
    d.mkdir()
    with pytest.raises(UserError, match="directory"):
        write_file(d, b"x")
    sock_path = tmp_path / "s.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock_path))
    try:
        with pytest.raises(UserError, match="not a regular file"):
            write_file(sock_path, b"x")
        assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    finally:
        s.close()


def test_a_symlink_planted_next_to_a_scores_file_is_refused(tmp_path: Path) -> None:
    scores = scores_file(tmp_path / "scores.jsonl")
    before = scores.read_bytes()
    (tmp_path / "out.json").symlink_to("scores.jsonl")
    (tmp_path / "other.json").write_text("{}")
    (tmp_path / "report.md").symlink_to("other.json")
    for argv in (("judge", "audit", "--scores", "scores.jsonl", "--json", "out.json"),
                 ("judge", "audit", "--scores", "scores.jsonl", "--markdown", "out.json"),
                 ("judge-irt", "--ratings", "scores.jsonl", "--json", "out.json", "--quiet"),
                 ("judge-irt", "--ratings", "scores.jsonl", "--markdown", "report.md", "--quiet")):
        r = _cli(tmp_path, *argv)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (argv, r.stderr)
        assert "refusing" in r.stderr
    assert scores.read_bytes() == before and (tmp_path / "other.json").read_text() == "{}"


def test_reopening_an_audit_refuses_to_write_over_its_own_answers(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from relgate_tui.engine.judging import list_audits
    from relgate_tui.engine.judging.audit_run import JudgeAuditConfig, audit_result
    from tests.engine.logprob_server import LogprobJudge

    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with LogprobJudge() as server:
        audit_result(JudgeAuditConfig(data="hanna", criterion="Coherence", endpoint=server.base_url,
                                      model="lp-judge", protocol="direct", reps=1, inputs=2, candidates=2,
                                      store=True))
    (audit,) = list_audits()
    answers = Path(audit.path) / "answers.jsonl"
    before = answers.read_bytes()
    for flag in ("--json", "--markdown"):
        for target in (answers, Path(audit.path) / "report.md"):
            r = _cli(tmp_path, "audits", audit.id, flag, str(target))
            assert r.returncode == 2 and "refusing to write inside the audit directory" in r.stderr, r.stderr
    assert answers.read_bytes() == before and not (Path(audit.path) / "report.md").exists()
    r = _cli(tmp_path, "audits", audit.id, "--json", str(tmp_path / "ok.json"))
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "ok.json").read_text())["criterion"] == "Coherence"


def test_the_guard_keeps_run_exports_and_refuses_the_rest_of_a_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"run_id": "r", "identity": {}}))
    write_output(run / "exports" / "a.md", "ok", mkdir=True)
    with pytest.raises(UserError, match="run directory"):
        check_output_path(run / "samples.jsonl")
    fifo = run / "fifo"
    os.mkfifo(fifo)  # the guard never opens anything that could block
    with pytest.raises(UserError, match="run directory"):
        check_output_path(fifo)
