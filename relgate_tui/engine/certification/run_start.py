"""Before a run's first request (engine/certification/pipeline.py): whether it needs the network at all, whether the
endpoint answers, the server's parallelism asked meanwhile, and the end of the run's modules imported while it
samples. Each of these is part of every run's fixed cost (bench/throughput.py ``--numeric``: a quick run of 1,200
calls is ~2 s, of which start-up is a quarter)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from typing import TYPE_CHECKING, Any

from relgate_tui.engine.records import canonical_prefix
from relgate_tui.errors import CertifyError

if TYPE_CHECKING:
    from relgate_tui.engine.certification.certify import Prepared
    from relgate_tui.engine.certification.options import CertifyConfig
    from relgate_tui.engine.transport.sampler import Sampler, SamplingJob

__all__ = ["END_OF_RUN_MODULES", "check_reachable", "needs_network", "prefetch", "reachable_and_slots"]


def needs_network(prepared: Prepared, job: SamplingJob, cache: Any) -> bool:
    """True when some item of ``job`` still needs a sample that neither the run store nor the cache holds."""
    from relgate_tui.engine.transport.endpoints import request_fingerprint, sample_seed
    from relgate_tui.engine.transport.prompts import item_messages

    cfg = prepared.config
    endpoint = cfg.endpoint_config()
    stored = [job.existing.get(item.id, ()) for item in job.items]
    prefixes = [canonical_prefix(s) for s in stored]
    if any(prefixes):  # the stopping rule replayed on what is stored (a new run has nothing: none is complete)
        from relgate_tui.engine.certification.analysis import used_sample_counts

        replayed = used_sample_counts(prefixes, prepared.rule, cfg.k_max, [getattr(s, "stats", None) for s in stored])
    else:
        replayed = [(0, False)] * len(prefixes)
    for item, canon, (_, complete) in zip(job.items, prefixes, replayed, strict=True):
        if complete:
            continue
        index = len(canon)
        fp = request_fingerprint(endpoint, item_messages(item), index, sample_seed(cfg.seed, item.id, index))
        if cache is None or cache.get(fp) is None:
            return True
    return False


async def check_reachable(cfg: CertifyConfig, attempts: int = 3) -> None:
    """Fail fast (one line) when nothing answers HTTP at the endpoint: ``GET <base>/models`` up to ``attempts``
    times with a short backoff. Any HTTP status counts as reachable (the sampler handles the rest). A plain
    ``http://`` endpoint is asked through the sampler's lean transport (engine/transport/http11.py): httpcore is
    never imported on such a run (~0.03-0.2 s of every run's start-up)."""
    import httpx

    from relgate_tui.core.redact import public_url
    from relgate_tui.engine.transport.http11 import LeanHTTPTransport
    from relgate_tui.engine.transport.httpread import status_of
    from relgate_tui.engine.transport.tls import verify_for

    url = cfg.endpoint.rstrip("/") + "/models"
    endpoint = cfg.endpoint_config()
    timeout_s = min(10.0, cfg.timeout_s)
    last = ""
    for attempt in range(attempts):
        lean = LeanHTTPTransport() if url.startswith("http://") else None
        try:
            async with httpx.AsyncClient(trust_env=False, timeout=timeout_s, verify=verify_for(url),
                                         transport=lean) as client:
                await status_of(client, url, endpoint.headers(), timeout_s)
            return
        except httpx.TimeoutException:
            last = "timed out"
        except httpx.HTTPError as exc:
            last = f"{type(exc).__name__}"
        if attempt + 1 < attempts:
            await asyncio.sleep(0.25 * 2**attempt)
    raise CertifyError(f"cannot reach the endpoint {public_url(cfg.endpoint)} ({last} after {attempts} attempts); is the server "
                       "running?")


END_OF_RUN_MODULES = ("relgate_tui.engine.certification.finish", "numpy.ma", "numpy.random",
                      "relgate_tui.core.jsonsafe", "relgate_tui.engine.certification.report",
                      "relgate_tui.engine.runs.listing")
"""What the end of a run imports that sampling does not: the result's writer (``finish``: the result document, the
judge-assisted section, and through them the statistics — numpy, the analysis, the core's certification — which a
run with the ``none`` rule samples without: :mod:`.prepared`) and numpy's masked arrays (``np.quantile`` in the
analysis imports them), numpy's generators (the split), and what the end of a ``relgate certify`` run imports to
write and report its result (``jsonsafe``, ``report``, ``listing``)."""


def prefetch(modules: tuple[str, ...]) -> threading.Thread | None:
    """Import ``modules`` on a background thread while the run waits for answers (the reachability check, then
    sampling): with the ``none`` rule numpy and the statistics (~0.1–0.15 s of a run's start) and the end of the
    run's modules load there instead of before the first request (bench/throughput.py ``--numeric``). A module the
    event loop needs meanwhile is imported by whichever thread asks first; the other waits for it (Python's
    per-module import lock; relgate's files import one another without cycles, tests/test_import_contract.py, so
    the two threads cannot wait on each other). The caller joins the thread before the end of the run; a failed
    import is left for the end of the run to raise where it is used."""
    missing = [name for name in modules if name not in sys.modules]
    if not missing:
        return None

    def load() -> None:
        import importlib

        for name in missing:
            with contextlib.suppress(Exception):
                importlib.import_module(name)

    thread = threading.Thread(target=load, name="relgate-prefetch", daemon=True)
    thread.start()
    return thread


async def reachable_and_slots(cfg: CertifyConfig, sampler: Sampler, job: SamplingJob) -> None:
    """:func:`check_reachable`, and meanwhile the direct sampler's question for the server's parallelism
    (:meth:`~relgate_tui.engine.transport.sampler.Sampler.discover_slots_now`): two round trips waited for together
    before the first request, not one after the other. An unreachable endpoint is the check's one line (the slot
    question is cancelled)."""
    slots = asyncio.ensure_future(sampler.discover_slots_now(job))
    try:
        await check_reachable(cfg)
    except BaseException:
        slots.cancel()
        await asyncio.gather(slots, return_exceptions=True)
        raise
    await slots
