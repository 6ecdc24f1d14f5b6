"""``relgate batch write`` / ``relgate batch read`` (issue 32 §3): a run's rounds as Batch JSONL, answered by a
``vllm run-batch`` stand-in (tests/engine/vllm_run_batch.py, the demo server over a real socket), read back until the
run is complete; then ``relgate certify --config`` writes the same result as a direct run without a call."""

from __future__ import annotations

import json
import re
from pathlib import Path

from relgate_tui.demo import DemoServer
from tests.conftest import InProcessCli
from tests.engine.vllm_run_batch import run_batch


def test_offline_rounds_until_complete(incli: InProcessCli, tmp_path: Path) -> None:
    with DemoServer() as server:
        home = tmp_path / "home"
        home.mkdir()
        config = home / "run.toml"
        config.write_text(f'task = "gsm8k"\nlimit = 30\nendpoint = "{server.base_url}"\nmodel = "sim-mid"\n')
        direct_home = tmp_path / "direct"
        direct_home.mkdir()
        direct = incli(direct_home, "certify", "--config", str(config), "--json", str(direct_home / "r.json"),
                       "--quiet")
        assert direct.returncode == 0, direct.stderr
        direct_doc = json.loads((direct_home / "r.json").read_text())
        server.clear_requests()

        requests, results = home / "requests.jsonl", home / "results.jsonl"
        rounds, asked, run_id = 0, 0, None
        for rounds in range(1, 12):
            wrote = incli(home, "batch", "write", "--config", str(config), "--out", str(requests))
            assert wrote.returncode == 0, wrote.stderr
            if "complete" in wrote.stderr:
                break
            found = re.search(r"run (\S+) round (\d+): (\d+) requests", wrote.stderr)
            assert found, wrote.stderr
            run_id, asked = found.group(1), asked + int(found.group(3))
            lines = [json.loads(x) for x in requests.read_text().splitlines()]
            assert all(set(x) == {"custom_id", "method", "url", "body"} and x["url"] == "/v1/chat/completions"
                       for x in lines)
            run_batch(requests, results, server.base_url)
            if rounds == 1:  # one torn line: a counted failure, its request asked again next round
                with results.open("a") as f:
                    f.write('{"id": "vllm-x", "custom_id": \n')
            read = incli(home, "batch", "read", run_id, str(results))
            assert read.returncode in (0, 3), read.stderr
            if rounds == 1:
                assert "1 failed or unreadable" in read.stderr
        assert run_id is not None and "complete" in wrote.stderr
        assert rounds - 1 <= 8
        assert asked <= 1.25 * direct_doc["calls"]["made"] + 1
        assert len(server.chat_requests) == asked

        final = incli(home, "certify", "--config", str(config), "--json", str(home / "r.json"), "--quiet")
        assert final.returncode == 0, final.stderr
        doc = json.loads((home / "r.json").read_text())
        assert doc["calls"]["made"] == 0  # every sample came from the results files
        assert doc["reliability_level"] == direct_doc["reliability_level"]
        assert doc["samples_used"] == direct_doc["samples_used"]


def test_batch_write_refuses_to_write_over_its_own_config(incli, tmp_path) -> None:
    """`batch write --out` goes through the one output guard (never over an input: here the run's own config)."""
    config = tmp_path / "run.toml"
    config.write_text('task = "gsm8k"\nendpoint = "http://127.0.0.1:9/v1"\nmodel = "sim-mid"\n')
    before = config.read_bytes()
    result = incli(tmp_path, "batch", "write", "--config", str(config), "--out", str(config))
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert config.read_bytes() == before
