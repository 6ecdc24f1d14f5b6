"""One request cache for relgate's simulated models on any port (issue 31 item 10): the TUI's embedded demo (port
47820) and ``relgate demo-server --port 0`` answer the same samples, so the second pays nothing; a real server keeps
its URL in the key."""

from __future__ import annotations

import json
from pathlib import Path

from relgate_tui.demo.responses import OWNED_BY
from relgate_tui.demo.server import DemoServer
from relgate_tui.demo.simulate import SIM_MODELS
from relgate_tui.engine.transport.endpoints import SIMULATED_SERVER, EndpointConfig, cache_server, request_fingerprint


def test_the_key_is_the_simulated_server_for_sim_models_on_loopback_only() -> None:
    assert OWNED_BY == SIMULATED_SERVER and all(m.startswith("sim-") for m in SIM_MODELS)
    msgs = [{"role": "user", "content": "What is 2 plus 2?"}]
    a = EndpointConfig(base_url="http://127.0.0.1:47820/v1", model="sim-mid")
    b = EndpointConfig(base_url="http://localhost:39123/v1", model="sim-mid")
    assert cache_server(a) == cache_server(b) == SIMULATED_SERVER
    assert request_fingerprint(a, msgs, 0, 7) == request_fingerprint(b, msgs, 0, 7)
    real_a = EndpointConfig(base_url="http://127.0.0.1:8080/v1", model="qwen")
    real_b = EndpointConfig(base_url="http://127.0.0.1:8081/v1", model="qwen")
    assert request_fingerprint(real_a, msgs, 0, 7) != request_fingerprint(real_b, msgs, 0, 7)
    remote = EndpointConfig(base_url="https://api.example.com/v1", model="sim-mid")  # not ours: its URL
    assert cache_server(remote) == remote.url


def test_a_demo_on_another_port_answers_from_the_cache(incli, tmp_path: Path) -> None:
    args = ("certify", "--task", "bigbench-3digit-addition", "--limit", "8", "--k-max", "4", "--model", "sim-mid",
            "--quiet")
    docs = []
    # both servers up at once: two ports (one after the other, the system may hand the freed port out again)
    with DemoServer(port=0) as one, DemoServer(port=0) as other:
        for name, server in (("first", one), ("second", other)):
            out = tmp_path / f"{name}.json"
            result = incli(tmp_path, *args, "--endpoint", server.base_url, "--json", str(out))
            assert result.returncode in (0, 1, 3), result.stderr
            docs.append(json.loads(out.read_text()))
    first, second = docs
    assert first["endpoint"] != second["endpoint"]
    assert first["calls"]["made"] > 0
    assert second["calls"]["made"] == 0 and second["calls"]["cached"] == first["calls"]["made"]
    assert second["reliability_level"] == first["reliability_level"]
