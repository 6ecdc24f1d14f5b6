"""The embedded demo as the TUI offers it: started in-process on loopback (:func:`start_demo`), listed as an endpoint
choice (:func:`demo_endpoint`), and the simulated model names (:data:`SIMULATED_MODELS`) the front ends pass to
:func:`~relgate_tui.engine.runs.listing.looks_simulated` — the engine never imports the demo."""

from __future__ import annotations

from typing import Any

from relgate_tui.demo.simulate import SIM_MODELS
from relgate_tui.engine.certification.setup import EndpointChoice

__all__ = ["DEMO_PREFERRED_PORT", "SIMULATED_MODELS", "demo_endpoint", "start_demo"]

SIMULATED_MODELS: frozenset[str] = frozenset(SIM_MODELS)
"""The demo's model names: a loopback run of one of them is marked "simulated" on every screen and report."""

DEMO_PREFERRED_PORT = 47820
"""The embedded demo listens here when the port is free (else on any free port): runs against the demo keep the
same endpoint URL — hence the same run id and cache keys — from one app start to the next."""


def start_demo(latency_ms: float = 0.0, port: int = DEMO_PREFERRED_PORT) -> Any:
    """Start the built-in simulated endpoint in-process on loopback (``port``, else a free port)."""
    from relgate_tui.demo.server import DemoServer

    if port:
        try:
            return DemoServer(port=port, latency_ms=latency_ms).start()
        except OSError:
            pass
    return DemoServer(port=0, latency_ms=latency_ms).start()


def demo_endpoint(base_url: str) -> EndpointChoice:
    """The embedded demo as an endpoint choice (its answer models; its simulated judge only as the judge)."""
    from relgate_tui.demo.simulate import ANSWER_MODELS, JUDGE_MODEL

    return EndpointChoice("relgate demo · simulated models (built in)", base_url, tuple(ANSWER_MODELS),
                          simulated=True, judge_models=(JUDGE_MODEL,))
