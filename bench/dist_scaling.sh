#!/usr/bin/env bash
# Data-parallel throughput on this machine, measured side by side in one run:
#   1 rank x 1 thread, 2 ranks x 1 thread with overlap (all-reduce started from the backward
#   hooks), 2 ranks x 1 thread without overlap (all-reduce after the backward pass).
# Same model and per-rank batch everywhere (weak scaling: train.update_batches=0, so 2 ranks
# process twice the tokens per update). Prints tokens/s, the 2-rank/1-rank ratio (ideal 2.00) and the fraction of step time
# each rank spends waiting on the gradient all-reduce.
# Usage: bench/dist_scaling.sh [BUILD_DIR] [SHARD_DIR]   (env STEPS, default 40; CONFIG)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
shards=${2:-$root/runs/data/multi30k-bpe8000}
steps=${STEPS:-40}
config=${CONFIG:-$root/configs/multi30k.yaml}
skip=$(( steps / 4 ))  # warm-up steps left out of the averages
[[ -f "$shards/manifest.json" ]] || { echo "no shards at $shards (run jobs/quickstart.sh first)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ $EUID -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() {  # name ranks overlap
  mpirun -np "$2" --bind-to core "$build/apps/nmt-train" --config "$config" --data "$shards" \
    --run-dir "$work/$1" --threads 1 --log-level warn --set "train.max_steps=$steps" \
    --set train.validate_every=0 --set checkpoint.every_steps=0 --set train.log_every=1 \
    --set "dist.overlap=$3" --set train.update_batches=0 > "$work/$1.out"
}

summarise() {  # name ranks -> "tokens/s fraction"
  python3 - "$work/$1/metrics.jsonl" "$skip" "$2" <<'PY'
import json, sys
path, skip, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tok, frac = [], []
for line in open(path):
    m = json.loads(line)
    if m["step"] <= skip:
        continue
    if m["key"] == "train/tokens_per_s":
        tok.append(m["value"])
    elif m["key"].endswith("/allreduce_fraction"):
        frac.append(m["value"])
print(f"{sum(tok) / len(tok):.0f} {sum(frac) / len(frac) if frac else 0.0:.4f}")
PY
}

echo "config $config, $steps steps (first $skip left out), 1 thread per rank, $(nproc) cores"
run one 1 true
read -r tok1 _ <<< "$(summarise one 1)"
run overlap 2 true
read -r tok2 frac2 <<< "$(summarise overlap 2)"
run serial 2 false
read -r tok3 frac3 <<< "$(summarise serial 2)"
python3 - "$tok1" "$tok2" "$frac2" "$tok3" "$frac3" <<'PY'
import sys
t1, t2, f2, t3, f3 = map(float, sys.argv[1:])
print(f"{'layout':<34}{'tokens/s':>10}{'vs 1x1':>8}{'all-reduce wait':>18}")
print(f"{'1 rank x 1 thread':<34}{t1:>10.0f}{1.0:>8.2f}{'-':>18}")
print(f"{'2 ranks x 1 thread, overlap':<34}{t2:>10.0f}{t2 / t1:>8.2f}{100 * f2:>17.1f}%")
print(f"{'2 ranks x 1 thread, no overlap':<34}{t3:>10.0f}{t3 / t1:>8.2f}{100 * f3:>17.1f}%")
print(f"scaling efficiency (2 ranks): overlap {t2 / t1 / 2:.0%}, no overlap {t3 / t1 / 2:.0%}")
PY
