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
            found = re.search(r"run (\S+) round (\d+): (\d+) requests?", wrote.stderr)
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


CONTEXT = ("This model's maximum context length is 2048 tokens. However, you requested 3012 tokens (2500 in the "
           "messages, 512 in the completion). Please reduce the length of the messages or completion.")


def test_an_item_vllm_always_rejects_ends_recorded_as_failed_and_certify_makes_no_call(incli: InProcessCli,
                                                                                      tmp_path: Path) -> None:
    """vLLM rejects one item's every request (400, over the context length: no body, the reason in ``error``). Its
    failure is recorded in the run with vLLM's reason; `batch read` says complete only once every request is answered
    or recorded as failed; `batch write` then asks nothing; `certify --config` makes no call, counts the offline
    rounds, requests and failures, and exits 3 (the failed item leaves the run undecided)."""
    from relgate_tui.engine.certification.batch_rounds import parse_custom_id

    with DemoServer() as server:
        home = tmp_path / "home"
        home.mkdir()
        config = home / "run.toml"
        config.write_text(f'task = "gsm8k"\nlimit = 8\nendpoint = "{server.base_url}"\nmodel = "sim-mid"\n'
                          'k-max = 6\nstopping = "none"\n')
        requests, results = home / "requests.jsonl", home / "results.jsonl"
        victim: str | None = None
        asked = 0
        for _ in range(1, 12):
            wrote = incli(home, "batch", "write", "--config", str(config), "--out", str(requests))
            assert wrote.returncode == 0, wrote.stderr
            if "no request left" in wrote.stderr:
                break
            lines = [json.loads(x) for x in requests.read_text().splitlines()]
            asked += len(lines)
            run_id = (parse_custom_id(lines[0]["custom_id"]) or ("", "", 0))[0]
            victim = victim or (parse_custom_id(lines[0]["custom_id"]) or ("", "", 0))[1]
            if asked > len(lines):  # a later round: the rejected item's failure is recorded, it is not asked again
                assert not any(f"/{victim}/" in x["custom_id"] for x in lines), "the rejected item was asked again"
            run_batch(requests, results, server.base_url,
                      reject=lambda line: CONTEXT if f"/{victim}/" in line["custom_id"] else None)
            read = incli(home, "batch", "read", run_id, str(results))
            assert read.returncode in (0, 3), read.stderr
            assert "maximum context length is 2048 tokens" in read.stderr or read.returncode == 0, read.stderr
        assert "complete" in read.stderr and read.returncode == 0, read.stderr
        assert "1 item failed for good" in read.stderr and "maximum context length" in read.stderr, read.stderr
        chats = len(server.chat_requests)

        final = incli(home, "certify", "--config", str(config), "--json", str(home / "r.json"), "--quiet")
        assert final.returncode == 3, final.stderr
        assert len(server.chat_requests) == chats  # no call: every request was answered or recorded as failed
        doc = json.loads((home / "r.json").read_text())
        calls = doc["calls"]
        assert calls["made"] == 0 and calls["failed"] >= 1, calls
        assert calls["batch_rounds"] >= 1 and calls["batched"] == asked, calls
        assert any("maximum context length" in reason for reason in calls["failure_reasons"]), calls
        assert not doc["sampling_complete"]
        retry = incli(home, "batch", "write", "--config", str(config), "--out", str(requests), "--retry-failed")
        assert retry.returncode == 0 and "for 1 item written" in retry.stderr, retry.stderr
        assert {(parse_custom_id(json.loads(x)["custom_id"]) or ("", "", 0))[1]
                for x in requests.read_text().splitlines()} == {victim}


def test_a_read_that_stores_nothing_burns_no_round(incli: InProcessCli, tmp_path: Path) -> None:
    """Results of another run, replayed or garbage store nothing: each read says so and counts no round (after ten
    such reads the run still asks its round 1, not its last)."""
    with DemoServer() as server:
        home = tmp_path / "home"
        home.mkdir()
        config = home / "run.toml"
        config.write_text(f'task = "gsm8k"\nlimit = 4\nendpoint = "{server.base_url}"\nmodel = "sim-mid"\n')
        requests, results, garbage = home / "requests.jsonl", home / "results.jsonl", home / "garbage.jsonl"
        wrote = incli(home, "batch", "write", "--config", str(config), "--out", str(requests))
        found = re.search(r"run (\S+) round 1: (\d+) requests?", wrote.stderr)
        assert found, wrote.stderr
        run_id = found.group(1)
        run_batch(requests, results, server.base_url)
        other = results.read_text().replace(f'"{run_id}/', '"someone-else/')
        garbage.write_text(other + "not json\n")
        for _ in range(10):
            read = incli(home, "batch", "read", run_id, str(garbage))
            assert read.returncode == 3 and "no round is counted" in read.stderr, read.stderr
        again = incli(home, "batch", "write", "--config", str(config), "--out", str(requests))
        assert f"run {run_id} round 1: {found.group(2)} requests" in again.stderr, again.stderr
        read = incli(home, "batch", "read", run_id, str(results))
        assert f"run {run_id} round 1:" in read.stderr and read.returncode in (0, 3), read.stderr


def test_batch_read_says_why_an_answer_read_was_not_stored(incli: InProcessCli, tmp_path: Path) -> None:
    """"N answers read, M samples stored" names the reason for every answer not stored: here a gap (the results lost
    one item's sample 0: its later answers wait in the cache, samples being stored in index order); the next read
    that fills the gap says the extra samples came from the answers the earlier read kept."""
    from relgate_tui.engine.certification.batch_rounds import UNSTORED_GAP, parse_custom_id

    with DemoServer() as server:
        home = tmp_path / "home"
        home.mkdir()
        config = home / "run.toml"
        config.write_text(f'task = "gsm8k"\nlimit = 6\nendpoint = "{server.base_url}"\nmodel = "sim-mid"\n')
        requests, results = home / "requests.jsonl", home / "results.jsonl"
        wrote = incli(home, "batch", "write", "--config", str(config), "--out", str(requests))
        assert wrote.returncode == 0, wrote.stderr
        run_batch(requests, results, server.base_url)
        lines = results.read_text().splitlines()
        keys = [parse_custom_id(json.loads(x)["custom_id"]) for x in lines]
        run_id, victim, _ = next(k for k in keys if k is not None and k[2] == 0)
        later = sum(1 for k in keys if k is not None and k[1] == victim and k[2] > 0)
        assert later >= 1
        results.write_text("".join(x + "\n" for x, k in zip(lines, keys, strict=True)
                                   if k is None or (k[1], k[2]) != (victim, 0)))
        read = incli(home, "batch", "read", run_id, str(results))
        assert read.returncode == 3, read.stderr
        n = len(lines) - 1
        assert (f"{n} answers read, {n - later} samples stored ({later} answer{'s' if later != 1 else ''} not "
                f"stored: {UNSTORED_GAP})") in " ".join(read.stderr.split()), read.stderr

        wrote = incli(home, "batch", "write", "--config", str(config), "--out", str(requests))
        assert wrote.returncode == 0, wrote.stderr
        run_batch(requests, results, server.base_url)
        read = incli(home, "batch", "read", run_id, str(results))
        assert f"({later} from answers an earlier read kept)" in read.stderr, read.stderr
