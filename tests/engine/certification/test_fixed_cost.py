"""The fixed cost of one direct ``relgate certify --quiet`` run over plain http: what it imports, how many atomic
writes it makes and how many of them sync their directory, counted in a process of its own against the demo server
over loopback — counts, never timings."""

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
from relgate_tui.engine.runs import files, outputs
writes, dir_syncs = collections.Counter(), collections.Counter()
real, real_dir = files.write_file, outputs._fsync_dir
def counted(path, data, *a, **k):
    writes[path.name] += 1
    return real(path, data, *a, **k)
def counted_dir(path):
    dir_syncs[path.name] += 1
    return real_dir(path)
files.write_file, outputs._fsync_dir = counted, counted_dir
from relgate_tui.cli import main
rc = main(sys.argv[1:])
heavy = ["httpcore", "relgate_tui.engine.judging.verify_judge", "relgate_tui.engine.judging.certify_judge",
         "relgate_tui.engine.judging.ask", "click", "pygments", "rich", "relgate_tui.core.canon.mcq",
         "relgate_tui.core.canon.freetext", "relgate_tui.commands.jury", "relgate_tui.commands.judge_audit", "platformdirs"]
print(json.dumps({"writes": writes, "dir_syncs": dir_syncs, "loaded": [m for m in heavy if m in sys.modules]}),
      file=sys.stderr)
sys.exit(rc)
"""


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    home: Path = tmp_path_factory.mktemp("home")
    with DemoServer() as server:
        args = ["certify", "--task", "bigbench-3digit-addition", "--endpoint", server.base_url, "--model", "sim-mid",
                "--limit", "20", "--k-max", "3", "--stopping", "none", "--seed", "1", "--json", str(home / "r.json"),
                "--quiet"]
        proc = subprocess.run([sys.executable, "-c", RUNNER, *args], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "RELGATE_HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_a_quiet_numeric_run_imports_no_judge_module_httpcore_rich_or_other_canonicalizer(counted) -> None:
    # rich, click and pygments came with httpx's command-line client (engine/transport/httpx_import.py); platformdirs is
    # not needed with RELGATE_HOME set; of the commands, only certify's module
    assert counted["loaded"] == []


def test_a_new_run_writes_its_manifest_four_times(counted) -> None:
    # created (with its info), sampling, sampled, and the results with the final status in one write
    assert counted["writes"]["manifest.json"] == 4
    assert counted["writes"]["results.json"] == 1 and counted["writes"]["items.jsonl"] == 1


def test_a_new_run_syncs_its_directory_twice_and_the_json_folder_once(counted) -> None:
    # the run directory at creation, then once for results.json and the final manifest together; the status changes
    # and the items copy sync their content, not the directory (engine/runs/store.py: durability) — 7 before
    syncs = counted["dir_syncs"]
    runs = [name for name in syncs if name.startswith("bigbench-3digit-addition-")]
    assert len(runs) == 1 and syncs[runs[0]] == 2
    assert sum(syncs.values()) == 3
