"""The fixed cost of one direct ``relgate certify`` run over plain http: what it imports and how many atomic
writes (each a file and a directory fsync) it makes, counted in a process of its own against the demo server over
loopback — counts, never timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from relgate_tui.demo import DemoServer

RUNNER = """
import collections, json, sys
from relgate_tui.engine.runs import files
writes = collections.Counter()
real = files.write_file
def counted(path, data, *a, **k):
    writes[path.name] += 1
    return real(path, data, *a, **k)
files.write_file = counted
from relgate_tui.cli import main
rc = main(sys.argv[1:])
heavy = ["httpcore", "relgate_tui.engine.judging.verify_judge", "relgate_tui.engine.judging.certify_judge",
         "relgate_tui.engine.judging.ask"]
print(json.dumps({"writes": writes, "loaded": [m for m in heavy if m in sys.modules]}), file=sys.stderr)
sys.exit(rc)
"""


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    home: Path = tmp_path_factory.mktemp("home")
    with DemoServer() as server:
        args = ["certify", "--task", "bigbench-3digit-addition", "--endpoint", server.base_url, "--model", "sim-mid",
                "--limit", "20", "--k-max", "3", "--stopping", "none", "--seed", "1", "--json", str(home / "r.json")]
        proc = subprocess.run([sys.executable, "-c", RUNNER, *args], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "RELGATE_HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_a_run_without_a_judge_imports_no_judge_module_and_no_httpcore(counted) -> None:
    assert counted["loaded"] == []


def test_a_new_run_writes_its_manifest_four_times(counted) -> None:
    # created (with its info), sampling, sampled, and the results with the final status in one write
    assert counted["writes"]["manifest.json"] == 4
    assert counted["writes"]["results.json"] == 1 and counted["writes"]["items.jsonl"] == 1
