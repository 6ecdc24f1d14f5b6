"""One verified TLS context for every HTTP client of the process.

httpx builds a new ``ssl.create_default_context()`` for each client it creates (``verify=True``): loading the CA
bundle costs about 30 ms every time, and relgate opens a client per sampler, probe, discovery and judge pass. The
context is the same default (certificates and host names verified) and may be shared by any number of connections.
"""

from __future__ import annotations

import functools
import ssl

__all__ = ["tls_context", "verify_for"]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's verified TLS context (``ssl.create_default_context()``), made once."""
    return ssl.create_default_context()


def verify_for(url: str) -> ssl.SSLContext | bool:
    """httpx's ``verify`` for a client that talks only to ``url``: the verified context for ``https://``; for plain
    ``http://`` no TLS happens at all, so no certificates are loaded (``False`` only spares the ~30 ms CA bundle of a
    context nothing would use; a plain-http client never follows a redirect here)."""
    return tls_context() if url.lower().startswith("https:") else False
