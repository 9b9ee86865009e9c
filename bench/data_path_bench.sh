#!/usr/bin/env bash
# The training data path at corpus scale, side by side in one run: 2 ranks of nmt-train (1 thread
# each, bf16 where the CPU has it) train the paper's base model with its update (configs/base.yaml:
# 8 micro-batches of 3,125 source + 3,125 target tokens) for STEPS updates from each shard
# directory given. Per directory it prints, per rank, the peak resident memory (VmHWM) split into
# anonymous memory (RssAnon: the process's own) and file-backed pages (RssFile: the binary, its
# libraries and the mapped shards, all shared through the page cache), each rank's peak beyond the
# model and optimizer state (parameters, gradients and Adam's two moments, 16 bytes a parameter),
# the time from launch to the first update, and tokens/s over the updates after the first, with
# its ratio to the first directory's.
#   bench/data_path_bench.sh BUILD_DIR LABEL=SHARD_DIR [LABEL=SHARD_DIR ...]   (env STEPS, default 25)
# Compressed shards (nmt-preprocess --set shards.compression=1) are read into memory, contiguous
# ones memory-mapped: give one of each to compare the two paths.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?BUILD_DIR}
shift
steps=${STEPS:-25}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ $EUID -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# configs/base.yaml without a validation split (the synthetic corpora have none).
sed 's/^data:$/data:\n  valid_split: ""/' "$root/configs/base.yaml" >"$work/base.yaml"

# Polls every rank's /proc/PID/status until the run ends; writes "pid hwm_kb anon_kb file_kb" peaks.
sample() {  # run_dir out_file
  local dir=$1 out=$2 pid
  declare -A hwm anon file
  while pgrep -f -- "--run-dir $dir" >/dev/null; do
    for pid in $(pgrep -x nmt-train); do
      grep -qF -- "$dir" "/proc/$pid/cmdline" 2>/dev/null || continue
      read -r h a f < <(awk '/^VmHWM/{h=$2} /^RssAnon/{a=$2} /^RssFile/{f=$2} END{print h+0, a+0, f+0}' \
        "/proc/$pid/status" 2>/dev/null || echo "0 0 0")
      ((h > ${hwm[$pid]:-0})) && hwm[$pid]=$h
      ((a > ${anon[$pid]:-0})) && anon[$pid]=$a
      ((f > ${file[$pid]:-0})) && file[$pid]=$f
    done
    sleep 0.2
  done
  for pid in "${!hwm[@]}"; do echo "$pid ${hwm[$pid]} ${anon[$pid]} ${file[$pid]}"; done >"$out"
}

printf '%-14s %10s %6s %9s %9s %9s %12s %12s %9s %7s\n' data pairs rank "peak MB" "anon MB" \
  "file MB" "beyond MB" "1st update s" tokens/s ratio
first_rate=""
for spec in "$@"; do
  label=${spec%%=*}
  shards=${spec#*=}
  pairs=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(sum(s['pairs'] for s in m['splits']['train']['shards']))" "$shards/manifest.json")
  dir=$work/$label
  start=$(date +%s.%N)
  mpirun -np 2 --bind-to none "$build/apps/nmt-train" --config "$work/base.yaml" \
    --data "$shards" --run-dir "$dir" --threads 1 --device cpu --set train.validate_every=0 --set "train.max_steps=$steps" --set train.log_every=1 \
    --set checkpoint.every_minutes=0 --set checkpoint.every_steps=0 >"$work/$label.log" 2>&1 &
  launcher=$!
  sleep 0.5
  sample "$dir" "$work/$label.mem" &
  sampler=$!
  wait "$launcher" || { tail -20 "$work/$label.log"; exit 1; }
  wait "$sampler"
  params=$(sed -n 's/.*model: \([0-9]*\) parameters.*/\1/p' "$work/$label.log" | head -1)
  state_mb=$(( params * 16 / 1048576 ))
  first=$(sed -n 's/^\[\([^]]*\)\] \[nmt-train:0\] \[info\] step 1: .*/\1/p' "$work/$label.log")
  first_s=$(python3 -c "import datetime,sys; t=datetime.datetime.strptime(sys.argv[1],'%Y-%m-%d %H:%M:%S.%f').timestamp(); print(f'{t-float(sys.argv[2]):.1f}')" "$first" "$start")
  rate=$(sed -n 's/.*\] step \([0-9]*\): .*, \([0-9]*\) tokens\/s.*/\1 \2/p' "$work/$label.log" |
    awk '$1 > 1 {s += $2; n++} END {printf "%.0f", n ? s / n : 0}')
  [[ -z $first_rate ]] && first_rate=$rate
  rank=0
  while read -r _ hwm anon file; do
    printf '%-14s %10s %6s %9d %9d %9d %12d %12s %9s %7.3f\n' "$label" "$pairs" "$rank" \
      $((hwm / 1024)) $((anon / 1024)) $((file / 1024)) $((hwm / 1024 - state_mb)) "$first_s" \
      "$rate" "$(python3 -c "print($rate / $first_rate)")"
    rank=$((rank + 1))
  done <"$work/$label.mem"
done
echo "model and optimizer state: $state_mb MB a rank ($params parameters x 16 bytes); $steps updates each"
