#!/usr/bin/env bash
# Opt-in: papers 001-003 on real local judges (the runs quoted in bench/REAL_JUDGES.md).
# Needs the three llama.cpp servers of bench/real_judges.sh and shared/data beside the checkout.
#   bash bench/real_judges.sh bash bench/real_studies.sh [CONTEXTS]
# 1. judge-audit data files from Topical-Chat USR (evaluation use only, never bundled): 20 contexts x 6 responses
#    for the jury pool and the perturbation study, CONTEXTS (default 60, i.e. 360 responses) for paper 001;
# 2. paper 001: the 0.5B and the 1.5B judge on CONTEXTS x 6 responses with log-probs (one audit each);
#    paper 002: the 0.5B judge under typo / newline / paraphrase, the paraphrase written by the 1.5B model;
#    paper 003: a pool audit of the three judges on 20 contexts;
# 3. judge-intervals, judge-irt and jury on the stored audits (zero model calls).
# The answers are cached in $RELGATE_HOME: a rerun asks the servers nothing it asked before.
set -euo pipefail
cd "$(dirname "$0")/.."
CONTEXTS="${1:-60}"
WORK="${RELGATE_REAL_WORK:-${TMPDIR:-/tmp}/relgate-real-studies}"
mkdir -p "$WORK"
export RELGATE_HOME="$WORK/home"
U05=http://127.0.0.1:8013/v1; U15=http://127.0.0.1:8014/v1; U135=http://127.0.0.1:8012/v1
python bench/topicalchat_audit.py "$WORK/tc20.jsonl" --contexts 20
python bench/topicalchat_audit.py "$WORK/tc$CONTEXTS.jsonl" --contexts "$CONTEXTS"
COMMON=(--criterion overall --protocol direct --reps 1 --temperature 0 --max-tokens 4 --top-logprobs 10
        --concurrency 1 --candidates 6)
newest() { ls -td "$RELGATE_HOME"/audits/$1 | head -1; }

# paper 001: one audit per judge on CONTEXTS x 6 responses
relgate judge audit "${COMMON[@]}" --data "$WORK/tc$CONTEXTS.jsonl" --inputs "$CONTEXTS" \
  --endpoint "$U05" --model qwen2.5-coder-0.5b --json "$WORK/p001-0.5b.json"
relgate judge audit "${COMMON[@]}" --data "$WORK/tc$CONTEXTS.jsonl" --inputs "$CONTEXTS" \
  --endpoint "$U15" --model qwen2.5-coder-1.5b --json "$WORK/p001-1.5b.json"
for judge in 0.5b 1.5b; do
  relgate judge intervals --audit "$(newest "audit-tc$CONTEXTS.jsonl-overall-qwen2.5_coder_$judge-*")" \
    --criterion overall --seeds 30 --workers 2 --json "$WORK/intervals-$judge.json" \
    --markdown "$WORK/intervals-$judge.md" > /dev/null
done

# paper 002: four prompt variants; the paraphrase written by the 1.5B model (retried at another seed when a reply
# loses a placeholder), printed to stderr and stored with the audit
relgate judge audit "${COMMON[@]}" --data "$WORK/tc20.jsonl" --inputs 20 --endpoint "$U05" --model qwen2.5-coder-0.5b \
  --perturb typo,newline,paraphrase --paraphraser model=qwen2.5-coder-1.5b,endpoint="$U15" --json "$WORK/irt-audit.json"
IRT="$(newest "audit-tc20.jsonl-overall-qwen2.5_coder_0.5b-*")"
relgate judge irt --audit "$IRT" --criterion overall --prior mml --json "$WORK/irt-mml.json" || true
relgate judge irt --audit "$IRT" --criterion overall --prior map --json "$WORK/irt-map.json"

# paper 003: the three judges as a pool on 20 contexts
relgate judge audit "${COMMON[@]}" --data "$WORK/tc20.jsonl" --inputs 20 --endpoint "$U05" --model qwen2.5-coder-0.5b \
  --judge model=smollm2-135m,endpoint="$U135" --judge model=qwen2.5-coder-1.5b,endpoint="$U15" --json "$WORK/pool.json"
POOL="$(newest "audit-tc20.jsonl-overall-*")"
relgate judge jury --audit "$POOL" --criterion overall --splits 10 --workers 2 --json "$WORK/jury.json" \
  || echo "(a judge without any parseable score cannot sit on a jury: see bench/REAL_JUDGES.md)"
echo "results in $WORK"
