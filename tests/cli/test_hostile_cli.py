"""The CLI against the hostile server (issue 10 §2, §4): a 401 that echoes the ``Authorization`` header, answers that
repeat it and an endpoint URL with credentials leave no secret in the output, the run directory or the cache (the CLI
in the test's process: ``incli``); Ctrl-C prints one line and no CancelledError traceback (a process of its own)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from relgate_tui.core.redact import public_url, redact
from tests.conftest import InProcessCli
from tests.engine.hostile import ECHO_AUTH, HANG, HostileServer, chat

CLI = [sys.executable, "-m", "relgate_tui.cli"]


def _env(tmp_path: Path, key: str) -> dict[str, str]:
    return {**os.environ, "RELGATE_HOME": str(tmp_path / "home"), "RELGATE_TEST_KEY": key,
            "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


def _hits(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _echo_in_answer(head: bytes) -> bytes:
    auth = next((line.split(b":", 1)[1].strip().decode("latin-1") for line in head.split(b"\r\n")
                 if line.lower().startswith(b"authorization:")), "")
    return chat(f"you sent Authorization: {auth} -- the answer is 42")


def test_an_echoed_api_key_is_never_printed_or_stored(tmp_path: Path, incli: InProcessCli) -> None:
    key = f"sk-canary-{uuid.uuid4().hex}"
    outputs = []
    with HostileServer(default=ECHO_AUTH) as server:
        proc = incli(tmp_path / "home", "certify", "--task", "bigbench-3digit-addition", "--limit", "3", "--k-max",
                     "2", "--endpoint", server.base_url, "--model", "m", "--api-key-env", "RELGATE_TEST_KEY", "--seed",
                     "1", cwd=tmp_path, env={"RELGATE_TEST_KEY": key})
        outputs += [proc.stdout, proc.stderr]
        assert any(key in h.decode("latin-1") for h in server.heads)  # the key really was sent (and echoed)
    assert "request rejected (HTTP 401)" in proc.stderr and "[redacted]" in proc.stderr
    with HostileServer(default=_echo_in_answer) as server:
        userinfo_url = server.base_url.replace("http://", "http://alice:hunter2pw@")
        proc = incli(tmp_path / "home", "certify", "--task", "bigbench-3digit-addition", "--limit", "3", "--k-max",
                     "2", "--endpoint", userinfo_url, "--model", "m", "--api-key-env", "RELGATE_TEST_KEY", "--seed",
                     "2", "--json", str(tmp_path / "out.json"), cwd=tmp_path, env={"RELGATE_TEST_KEY": key})
        outputs += [proc.stdout, proc.stderr]
    assert proc.returncode in (0, 1), proc.stderr
    assert not any(key in text or "hunter2pw" in text for text in outputs)
    assert _hits(tmp_path, key.encode()) == [] and _hits(tmp_path, b"hunter2pw") == []
    samples = "".join(p.read_text() for p in (tmp_path / "home").rglob("samples.jsonl"))
    assert "the answer is 42" in samples and "[redacted]" in samples  # stored, redacted
    manifests = [json.loads(p.read_text()) for p in (tmp_path / "home").rglob("manifest.json")]
    assert server.base_url in [m["endpoint"] for m in manifests]  # the URL kept, without its userinfo
    assert json.loads((tmp_path / "out.json").read_text())["endpoint"] == server.base_url


def test_url_and_text_redaction_rules() -> None:
    assert public_url("https://u:p@api.example:8443/v1?api_key=S1&model=x&sig=S2#f") == \
        "https://api.example:8443/v1?api_key=[redacted]&model=x&sig=[redacted]"
    assert public_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"
    assert redact('{"Authorization": "Bearer sk-abc12345"}') == '{"Authorization": "[redacted]"}'
    assert redact("x-api-key: abcd1234, next") == "x-api-key: [redacted], next"
    assert redact("token bearer bonds are a basic key idea") == "token bearer bonds are a basic key idea"
    assert redact("the key is sk-zz-99", ("sk-zz-99",)) == "the key is [redacted]"


def _posts(heads: list[bytes]) -> int:
    return sum(head.startswith(b"POST ") for head in heads)


def _get_answered_post_hangs(head: bytes) -> bytes | str:
    """Every GET (the reachability check, the slot question, in either order) is answered; every sample hangs."""
    return HANG if head.startswith(b"POST ") else b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"


def test_ctrl_c_prints_one_line_and_no_traceback(tmp_path: Path) -> None:
    with HostileServer(default=_get_answered_post_hangs) as server:
        proc = subprocess.Popen([*CLI, "certify", "--task", "bigbench-3digit-addition", "--limit", "8",
                                 "--endpoint", server.base_url, "--model", "m", "--concurrency", "4"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path, "k"),
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        assert server.wait_for(lambda heads: _posts(heads) >= 4, 120), server.heads  # four samples in flight
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "interrupted" in stderr
    assert "Traceback" not in stderr and "CancelledError" not in stderr and "never retrieved" not in stderr
