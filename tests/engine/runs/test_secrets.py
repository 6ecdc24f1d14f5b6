"""The API key never appears in the run directory, the cache, the JSON, exports or the output (SPEC §7).

A canary key is put in an environment variable named by ``--api-key-env``. A recording TCP relay sits between
relgate and the demo endpoint, so the test can also prove the key WAS sent (Authorization header) — otherwise
"zero hits" could pass merely because the key was never read.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import uuid
from pathlib import Path

from relgate_tui.demo import DemoServer
from tests.conftest import InProcessCli


class RecordingRelay:
    """Forwards 127.0.0.1:<port> to a target port, keeping every byte the client sent."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.sent = bytearray()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, record: bool) -> None:
        try:
            while data := src.recv(65536):
                if record:
                    with self._lock:
                        self.sent += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self._stop = True
        self._listener.close()


def _hits(root: Path, needle: bytes) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and needle in path.read_bytes():
            found.append(str(path))
    return found


def test_api_key_never_written_anywhere(tmp_path: Path, incli: InProcessCli) -> None:
    canary = f"sk-relgate-canary-{uuid.uuid4().hex}"
    home = tmp_path / "home"
    outputs: list[str] = []

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        proc = incli(home, *args, cwd=tmp_path, env={"RELGATE_TEST_API_KEY": canary})
        outputs.extend([proc.stdout, proc.stderr])
        return proc

    with DemoServer() as server:
        relay = RecordingRelay(server.port)
        try:
            endpoint = f"http://127.0.0.1:{relay.port}/v1"
            out = tmp_path / "result.json"
            certify = ["certify", "--task", "mmlu", "--limit", "12", "--endpoint", endpoint, "--model", "sim-mid",
                       "--api-key-env", "RELGATE_TEST_API_KEY", "--k-max", "4", "--json", str(out)]
            proc = run(*certify)
            assert proc.returncode == 0, proc.stderr
            assert run(*certify, "--json", "-").returncode == 0  # a rerun (all cached) with JSON on stdout
            run_id = json.loads(out.read_text())["run_id"]
            for fmt in ("md", "csv", "json"):
                assert run("report", run_id, "--format", fmt).returncode == 0
                assert run("report", run_id, "--format", fmt, "--output", str(tmp_path / f"export.{fmt}")).returncode == 0
            assert run("runs").returncode == 0 and run("runs", "--json").returncode == 0
            # an error path: the endpoint goes away mid-configuration (the key is set; the message must not carry it)
            proc = run("certify", "--task", "mmlu", "--limit", "3", "--endpoint", "http://127.0.0.1:9/v1",
                       "--model", "sim-mid", "--api-key-env", "RELGATE_TEST_API_KEY", "--k-max", "2",
                       "--seed", "99")  # samples not in the cache (simulated models share it across ports)
            assert proc.returncode == 2
        finally:
            relay.close()

    needle = canary.encode()
    # the key really went to the server, as a bearer token (so the checks below can fail)
    assert f"Authorization: Bearer {canary}".lower().encode() in bytes(relay.sent).lower()
    assert (home / "runs").is_dir() and (home / "cache").is_dir()
    assert _hits(home, needle) == []  # run directories, manifests, samples, labels, results, diskcache
    assert _hits(tmp_path, needle) == []  # JSON result and exports
    assert not any(canary in text for text in outputs)
    manifest = json.loads(next((home / "runs").glob("*/manifest.json")).read_text())
    assert manifest["config"]["api_key_env"] == "RELGATE_TEST_API_KEY"  # only the variable's NAME is kept
