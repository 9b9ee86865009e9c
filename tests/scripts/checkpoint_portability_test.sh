#!/usr/bin/env bash
# Checkpoints are portable between the two LibTorch lines (Debian's 1.13 and the current CUDA
# LibTorch): a checkpoint trained by each build loads in the other, scores the same validation
# perplexity, and gives the same greedy translations of Multi30k's validation set (1,014 lines).
# Both directions: each line writes a checkpoint that both lines then read.
# Two different BLAS libraries round differently, so a greedy choice between two tokens whose
# scores tie within float32 rounding may go either way: up to 1% of the lines may differ, each
# printed. A broken load (wrong weights, transposed matrices, another vocabulary) changes nearly
# every line and the perplexity; the translations must also be varied, or equality proves nothing.
# Usage: checkpoint_portability_test.sh BUILD_A BUILD_B DATA_DIR
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 BUILD_A BUILD_B DATA_DIR" >&2; exit 2; }
builds=("$(realpath "$1")" "$(realpath "$2")")
data=$3
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
for build in "${builds[@]}"; do
  for tool in nmt-preprocess nmt-train nmt-translate nmt-evaluate nmt-sysinfo; do
    [[ -x "$build/apps/$tool" ]] || { echo "missing $build/apps/$tool: build both lines first"; exit 1; }
  done
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
libtorch() { "$1/apps/nmt-sysinfo" --json --matmul-size 0 --log-level warn |
  sed -n 's/.*"libtorch": "\(.*\)".*/\1/p'; }

# Trained on the first 400 validation pairs (memorised in a few hundred steps, so those lines come
# out as real sentences), validated and translated on all 1,014.
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
make_tiny_shards "${builds[0]}/apps/nmt-preprocess" "$data" "$work/shards" 400
# fp32 throughout: auto would pick bf16 on CPUs with AMX or AVX512-BF16, and the two lines' oneDNN
# bf16 kernels round differently enough to change more greedy outputs than the bound below allows.
args=(--data "$work/shards" --log-level warn --threads 1 --precision fp32
  --set model.layers=2 --set model.d_model=64 --set model.d_ff=256 --set model.heads=4
  --set model.d_k=16 --set model.d_v=16 --set model.dropout=0.0
  --set data.max_src_tokens=1200 --set data.max_tgt_tokens=1200
  --set train.max_steps=400 --set train.warmup_steps=60 --set train.lr_factor=0.5
  --set train.validate_every=0 --set checkpoint.every_steps=400 --set checkpoint.keep_last=1)

lines=$(zcat "$data/val.en.gz" | wc -l)
allowed=$((lines / 100))
for writer in 0 1; do
  wb=${builds[$writer]}
  echo "== checkpoint written by LibTorch $(libtorch "$wb") ($wb)"
  "$wb/apps/nmt-train" "${args[@]}" --run-dir "$work/train$writer" > /dev/null
  checkpoint=$(ls "$work/train$writer"/checkpoints/step-*.h5 | tail -1)
  for reader in 0 1; do
    rb=${builds[$reader]}
    "$rb/apps/nmt-translate" --checkpoint "$checkpoint" --data "$work/shards" --split valid \
      --greedy --threads 1 --precision fp32 --log-level warn --output "$work/hyp.$writer.$reader"
    "$rb/apps/nmt-evaluate" --checkpoint "$checkpoint" --data "$work/shards" --split valid \
      --beam 1 --sentences 1 --threads 1 --precision fp32 --json --log-level warn \
      > "$work/eval.$writer.$reader"
  done
  a=$work/hyp.$writer.0 b=$work/hyp.$writer.1
  [[ $(wc -l < "$a") -eq $lines && $(wc -l < "$b") -eq $lines ]] ||
    fail "expected $lines translations, got $(wc -l < "$a") and $(wc -l < "$b")"
  distinct=$(sort -u "$a" | wc -l)
  ((distinct >= lines / 4)) || fail "only $distinct distinct translations: the model did not train"
  differing=$(paste -d '\t' "$a" "$b" | awk -F'\t' '$1 != $2' | wc -l)
  echo "greedy translations: $((lines - differing)) of $lines identical ($distinct distinct)"
  if ((differing > 0)); then
    paste -d '\n' "$a" "$b" /dev/null | awk 'NR % 3 == 1 { a = $0 } NR % 3 == 2 && $0 != a {
      printf "line %d\n  %s\n  %s\n", (NR + 1) / 3, a, $0 }' | head -40
  fi
  ((differing <= allowed)) || fail "$differing lines differ (at most $allowed allowed)"
  python3 - "$work/eval.$writer.0" "$work/eval.$writer.1" <<'PY' || fail "validation perplexity"
import json, sys
a, b = (json.load(open(path))["perplexity"] for path in sys.argv[1:])
print(f"validation perplexity: {a:.6f} and {b:.6f}")
sys.exit(0 if abs(a - b) <= 1e-4 * a else 1)
PY
done
echo "checkpoints load across both lines"
