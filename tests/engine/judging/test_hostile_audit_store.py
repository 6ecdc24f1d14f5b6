"""Issue 23 §3, §7, §8 on the stored audits: a FIFO or a /dev/zero link planted as an audit's answers.jsonl or
manifest.json is refused at once (never a hang, never unbounded memory); a reopened audit whose data file changed
says so; a corrupt middle line is repaired by `relgate audits --repair`. Real files, the real CLI: in a process of its
own where a planted file could hang it or fill its memory, else ``cli.main`` in the test's process (``incli``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import InProcessCli
from tests.engine.stored_audit import stored_audit

ROOT = Path(__file__).resolve().parents[3]


def _cli(home: Path, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {"RELGATE_HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "relgate_tui.cli", *argv], capture_output=True, text=True, env=env,
                          cwd=str(home), timeout=timeout)


@pytest.fixture(scope="module")
def audit_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return stored_audit(tmp_path_factory.mktemp("template"))


def _copy(template: Path, home: Path) -> Path:
    dest = home / "audits" / template.name
    shutil.copytree(template, dest, ignore=shutil.ignore_patterns("audit.lock"))
    return dest


@pytest.mark.parametrize("name", ["answers.jsonl", "manifest.json", "results.json", "calls.json"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_special_file_planted_in_an_audit_is_refused_not_read(audit_template: Path, tmp_path: Path, name: str,
                                                                kind: str) -> None:
    audit = _copy(audit_template, tmp_path)
    (audit / name).unlink()
    if kind == "fifo":
        os.mkfifo(audit / name)
    else:
        (audit / name).symlink_to("/dev/zero")
    listing = _cli(tmp_path, "judge", "list", timeout=30)  # a hang is a TimeoutExpired: the test fails
    assert listing.returncode == 0, listing.stderr
    reopened = _cli(tmp_path, "judge", "list", audit.name, "--json", "-", timeout=30)
    if name in ("answers.jsonl", "manifest.json"):
        assert reopened.returncode == 2 and len(reopened.stderr.strip().splitlines()) == 1, reopened.stderr
        assert "not a regular file" in reopened.stderr or "not a stored audit" in reopened.stderr
    else:  # results and calls are optional: a planted one is ignored
        assert reopened.returncode == 0, reopened.stderr


def test_a_reopened_audit_whose_data_changed_says_so(tmp_path: Path, incli: InProcessCli) -> None:
    data = tmp_path / "set.jsonl"
    rows = []
    for p in range(3):
        rows.append({"id": f"p{p}", "input": f"in {p}", "criteria": {"Coherence": "is it coherent"},
                     "candidates": [{"id": f"c{c}", "text": f"text {p} {c}", "human": {"Coherence": 1 + (p + c) % 5}}
                                    for c in range(2)]})
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    audit = stored_audit(tmp_path, data=str(data))
    assert incli(tmp_path, "judge", "list", audit.name, "--json", "-").returncode == 0
    rows[0]["candidates"][0]["human"]["Coherence"] = 5 if rows[0]["candidates"][0]["human"]["Coherence"] != 5 else 1
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = incli(tmp_path, "judge", "list", audit.name, "--json", "-")
    assert r.returncode == 2 and "has changed since the audit" in r.stderr and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_corrupt_middle_line_is_repaired_by_audits_repair(audit_template: Path, tmp_path: Path,
                                                            incli: InProcessCli) -> None:
    audit = _copy(audit_template, tmp_path)
    answers = audit / "answers.jsonl"
    lines = answers.read_bytes().splitlines(keepends=True)
    good = incli(tmp_path, "judge", "list", audit.name, "--json", "-")
    assert good.returncode == 0
    broken = [*lines[:1], b'{"judge": "lp-judge", "key": [1, \n', *lines[1:]]
    answers.write_bytes(b"".join(broken))
    r = incli(tmp_path, "judge", "list", audit.name, "--json", "-")
    assert r.returncode == 2 and "answers.jsonl:2" in r.stderr and "--repair" in r.stderr
    r = incli(tmp_path, "judge", "list", audit.name, "--repair")
    assert r.returncode == 0 and "moved 1 corrupt line" in r.stderr, r.stderr
    assert (audit / "answers.jsonl.quarantine").read_bytes() == b'{"judge": "lp-judge", "key": [1, \n'
    again = incli(tmp_path, "judge", "list", audit.name, "--json", "-")
    assert again.returncode == 0 and json.loads(again.stdout) == json.loads(good.stdout)
