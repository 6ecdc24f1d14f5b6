"""One verified TLS context for every HTTP client of the process.

httpx builds a new ``ssl.create_default_context()`` for each client it creates (``verify=True``): loading the CA
bundle costs about 30 ms every time, and relgate opens a client per sampler, probe, discovery and judge pass. The
context is the same default (certificates and host names verified) and may be shared by any number of connections.
"""

from __future__ import annotations

import functools
import ssl

__all__ = ["tls_context"]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's verified TLS context (``ssl.create_default_context()``), made once."""
    return ssl.create_default_context()
