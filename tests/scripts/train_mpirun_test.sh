#!/usr/bin/env bash
# jobs/train_mpirun.sh as the README uses it: 2 ranks train a tiny model; rank 0 alone writes the
# run directory (one metrics.jsonl, checkpoints), and both ranks' tokens/s are in the metrics.
# Usage: train_mpirun_test.sh BUILD_DIR DATA_DIR
set -euo pipefail
build=$1 data=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
make_tiny_shards "$build/apps/nmt-preprocess" "$data" "$work/shards"
NMT_BUILD_DIR=$build "$root/jobs/train_mpirun.sh" 2 --data "$work/shards" --run-dir "$work/run" \
  --set model.layers=1 --set model.d_model=32 --set model.d_ff=64 --set model.heads=2 \
  --set model.d_k=16 --set model.d_v=16 --set data.max_src_tokens=400 --set data.max_tgt_tokens=400 \
  --set train.max_steps=6 --set train.log_every=3 --set train.validate_every=3 \
  --set checkpoint.every_steps=3 --log-level warn | tee "$work/out.txt"

grep -q "2 rank(s)" "$work/out.txt" || { echo "FAIL: not a 2-rank run"; exit 1; }
[[ $(grep -c "trained 6 steps" "$work/out.txt") -eq 1 ]] || { echo "FAIL: summary not from rank 0 alone"; exit 1; }
ls "$work/run/checkpoints/step-00000006.h5" > /dev/null
for key in train/rank0/tokens_per_s train/rank1/tokens_per_s valid/ppl train/loss; do
  grep -q "\"key\": \"$key\"" "$work/run/metrics.jsonl" || { echo "FAIL: no $key in metrics"; exit 1; }
done
# Written once, by rank 0: each step's loss appears once.
[[ $(grep -c '"key": "train/loss"' "$work/run/metrics.jsonl") -eq 2 ]] || { echo "FAIL: duplicated metrics"; exit 1; }
echo ok
