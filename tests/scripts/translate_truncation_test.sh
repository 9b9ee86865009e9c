#!/usr/bin/env bash
# nmt-translate on an input line longer than the model's source positions: the line is still
# translated (its first positions) and a warning names the line, its length and the limit.
# Usage: translate_truncation_test.sh BUILD_DIR DATA_DIR
set -euo pipefail
build=$1 data=$2
bin=$build/apps
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
"$bin/nmt-train" --data "$work/shards" --run-dir "$work/run" --log-level warn \
  --set model.layers=1 --set model.d_model=32 --set model.d_ff=64 --set model.heads=2 \
  --set model.d_k=16 --set model.d_v=16 --set model.max_positions=64 \
  --set data.max_length=64 --set data.max_src_tokens=400 --set data.max_tgt_tokens=400 \
  --set train.max_steps=2 --set train.validate_every=0 --set train.threads=1 > /dev/null
{
  echo "A man is riding a bike."
  for _ in $(seq 1 200); do printf 'dog '; done
  echo
  echo "Two women walk."
} > "$work/in.txt"
"$bin/nmt-translate" --checkpoint "$work/run/checkpoints/step-00000002.h5" --data "$work/shards" \
  --input "$work/in.txt" --greedy --threads 1 > "$work/out.txt" 2> "$work/err.txt"
[[ $(wc -l < "$work/out.txt") -eq 3 ]] || fail "expected 3 output lines: $(cat "$work/out.txt")"
grep -q 'input line 2: [0-9]* word pieces, more than the model.s 64 source positions hold: only the first 63 are translated' \
  "$work/err.txt" || fail "no truncation warning naming line 2: $(cat "$work/err.txt")"
grep -q 'input line [13]:' "$work/err.txt" && fail "a warning for a line that fits"
grep -q '1 input line(s) truncated' "$work/err.txt" || fail "no summary: $(cat "$work/err.txt")"
echo ok
