#!/usr/bin/env bash
# Opt-in: papers 001-003 on real local judges (this session's run; results in bench/REAL_JUDGES.md).
# Needs the three llama.cpp servers of bench/real_judges.sh and shared/data beside the checkout.
#   bash bench/real_judges.sh bash bench/real_studies.sh [CONTEXTS]
# 1. a judge-audit data file from Topical-Chat USR (CONTEXTS x 6 responses; evaluation use only, never bundled);
# 2. a direct audit with the three judges (log-probs) and one of the 0.5B judge under typo/newline perturbations;
# 3. judge-intervals, judge-irt and jury on the stored audits (zero model calls).
set -euo pipefail
cd "$(dirname "$0")/.."
CONTEXTS="${1:-20}"
WORK="${RELGATE_REAL_WORK:-${TMPDIR:-/tmp}/relgate-real-studies}"
mkdir -p "$WORK"
export RELGATE_HOME="$WORK/home"
DATA="$WORK/tc.jsonl"
python bench/topicalchat_audit.py "$DATA" --contexts "$CONTEXTS"
COMMON=(--data "$DATA" --criterion overall --protocol direct --reps 1 --temperature 0 --max-tokens 4 --top-logprobs 10
        --concurrency 1 --inputs "$CONTEXTS" --candidates 6)
relgate judge-audit "${COMMON[@]}" --endpoint http://127.0.0.1:8013/v1 --model qwen2.5-coder-0.5b \
  --judge model=smollm2-135m,endpoint=http://127.0.0.1:8012/v1 \
  --judge model=qwen2.5-coder-1.5b,endpoint=http://127.0.0.1:8014/v1 --json "$WORK/pool.json"
relgate judge-audit "${COMMON[@]}" --endpoint http://127.0.0.1:8013/v1 --model qwen2.5-coder-0.5b \
  --perturb typo,newline --json "$WORK/irt-audit.json"
mapfile -t AUDITS < <(ls -tr "$RELGATE_HOME/audits")  # oldest first: the pool audit, then the perturbation audit
POOL="${AUDITS[0]}"
IRT="${AUDITS[1]}"
for judge in qwen2.5-coder-0.5b qwen2.5-coder-1.5b smollm2-135m; do
  relgate judge-intervals --audit "$POOL" --judge "$judge" --criterion overall --seeds 30 --workers 2 \
    --json "$WORK/intervals-$judge.json" --markdown "$WORK/intervals-$judge.md" > /dev/null
done
relgate judge-irt --audit "$IRT" --criterion overall --prior mml --json "$WORK/irt-mml.json" || true
relgate judge-irt --audit "$IRT" --criterion overall --prior map --json "$WORK/irt-map.json"
relgate jury --audit "$POOL" --criterion overall --splits 10 --workers 2 --json "$WORK/jury.json" \
  || echo "(a judge without any parseable score cannot sit on a jury: see bench/REAL_JUDGES.md)"
echo "results in $WORK"
