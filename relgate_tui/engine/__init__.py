"""IO over the pure ``relgate_tui.core``: everything that talks to a server, a file or the clock.

Packages, each with one job (``ARCHITECTURE.md`` draws the flows):

* :mod:`.transport` — talking to model servers: HTTP, endpoints, discovery, log-probs, embeddings, the request cache
  and the fault-tolerant sampler;
* :mod:`.runs` — what is stored on disk for a run: the run store, its files, labels, sample index, lock and paths;
* :mod:`.certification` — a certification from task to results: setup, pipeline, analysis, views, session, report;
* :mod:`.judging` — the judging platform: one way to ask judges, audits, studies' inputs, stored audits;
* :mod:`.importers` — other tools' logs (lm-eval, Inspect, samples JSONL) as runs.

Two modules every package may use: :mod:`.records` (the task item and the completed sample every stage passes
along) and :mod:`.assets` (``assets_dir``: where the bundled tasks and audit sets live). Rules (``tests/test_import_contract.py``): transport imports neither runs nor certification; runs imports no
transport; judging and certification meet only through public names; no module imports a private name from another
package; no import cycle between files.

* :mod:`.review` — team review: the review store (SQLite or PostgreSQL), the reviewer's journal, publish, status, pull.
"""

from relgate_tui.engine.transport.httpx_import import install as _install_httpx_import

_install_httpx_import()  # before any engine module imports httpx: without httpx's own CLI (transport/httpx_import.py)
