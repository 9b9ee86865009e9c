#!/usr/bin/env bash
# Data-parallel throughput on this machine, measured side by side in one run:
#   1 rank x 1 thread, 2 ranks x 1 thread with overlap (all-reduce started from the backward
#   hooks), 2 ranks x 1 thread without overlap (all-reduce after the backward pass).
# Same model and per-rank batch everywhere (weak scaling: train.update_batches=0, so 2 ranks
# process twice the tokens per update). Prints tokens/s, the 2-rank/1-rank ratio (ideal 2.00) and the fraction of step time
# each rank spends waiting on the gradient all-reduce.
# Usage: bench/dist_scaling.sh [BUILD_DIR] [SHARD_DIR]   (env STEPS, default 40; CONFIG)
# With --nodes N first (needs root): N nodes of the simulated cluster (tests/cluster/cluster.sh,
# started and stopped here), one rank of one thread each, their links shaped by tc's tbf to 1 and
# to 10 Gbit/s, overlap on and off, against 1 rank on one node; each 2-node figure is printed
# beside the prediction of docs/scaling.md's model (bench/scaling_model.py check) for the measured
# step time, the model's gradient bytes and the link's bandwidth.
#   bench/dist_scaling.sh --nodes 2 [BUILD_DIR] [SHARD_DIR]   (env RATES, default "1gbit 10gbit")
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nodes=0
if [[ ${1:-} == --nodes ]]; then
  nodes=${2:?--nodes N}
  shift 2
fi
build=${1:-$root/build}
shards=${2:-$root/runs/data/multi30k-bpe8000}
steps=${STEPS:-40}
config=${CONFIG:-$root/configs/multi30k.yaml}
skip=$(( steps / 4 ))  # warm-up steps left out of the averages
[[ -f "$shards/manifest.json" ]] || { echo "no shards at $shards (run jobs/quickstart.sh first)"; exit 1; }
# The nodes' /tmp are their own: with --nodes the cluster and the runs live under runs/.
if ((nodes > 0)); then
  mkdir -p "$root/runs"
  work=$(mktemp -d "$root/runs/dist-scaling.XXXXXX")
else
  work=$(mktemp -d)
fi
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

if ((nodes > 0)); then
  cluster=$work/cluster
  "$root/tests/cluster/cluster.sh" start "$cluster" "$nodes" > /dev/null
  trap '"$root/tests/cluster/cluster.sh" stop "$cluster" > /dev/null; rm -rf "$work"' EXIT
  trap 'exit 130' INT TERM
  source "$cluster/env"
  on() { "$root/tests/cluster/cluster.sh" exec "$cluster" "$@"; }
  port() { awk -v n="$1" '$1 == n { print $5 }' "$cluster/nodes"; }
  netns() { awk -v n="$1" '$1 == n { print $3 }' "$cluster/nodes"; }
  shape() {  # RATE: every node's link, both directions
    local i
    for i in $(seq 1 "$nodes"); do
      ip netns exec "$(netns "node$i")" tc qdisc replace dev eth0 root tbf rate "$1" burst 1mb latency 50ms
      ip netns exec "$(netns login)" tc qdisc replace dev "$(port "node$i")" root tbf rate "$1" \
        burst 1mb latency 50ms
    done
  }
  for i in $(seq 1 "$nodes"); do echo "node$i slots=1"; done > "$work/hosts"
  run_nodes() {  # name ranks overlap: mpirun on node1, one rank a node through the launch agent
    on node1 mpirun -np "$2" --hostfile "$work/hosts" --bind-to none \
      --mca plm_rsh_agent "$root/tests/cluster/launch_agent.sh" "$build/apps/nmt-train" \
      --config "$config" --data "$shards" --run-dir "$work/$1" --threads 1 --log-level warn \
      --set "train.max_steps=$steps" --set train.validate_every=0 --set checkpoint.every_steps=0 \
      --set train.log_every=1 --set "dist.overlap=$3" --set train.update_batches=0 > "$work/$1.out"
  }
  params=$(on node1 "$build/apps/nmt-train" --config "$config" --data "$shards" --count-params \
    --log-level warn | tail -1 | tr -dc 0-9)
  echo "config $config, $steps steps (first $skip left out), $nodes nodes x 1 rank x 1 thread," \
    "$params parameters ($((params * 4 / 1000000)) MB of fp32 gradients)"
  on node1 "$build/apps/nmt-train" --config "$config" --data "$shards" --run-dir "$work/one" \
    --threads 1 --log-level warn --set "train.max_steps=$steps" --set train.validate_every=0 \
    --set checkpoint.every_steps=0 --set train.log_every=1 --set train.update_batches=0 > "$work/one.out"
  read -r tok1 _ <<< "$(summarise one 1)"
  step_s=$(python3 - "$work/one/metrics.jsonl" "$skip" <<'PY'
import json, sys
n = [json.loads(l) for l in open(sys.argv[1])]
t = [m["value"] for m in n if m["key"] == "train/ms_per_step" and m["step"] > int(sys.argv[2])]
print(sum(t) / len(t) / 1000)
PY
)
  printf '%-40s%10s%9s%11s%18s\n' layout tokens/s "vs 1x1" predicted "all-reduce wait"
  printf '%-40s%10.0f%9.2f%11s%18s\n' "1 node x 1 rank" "$tok1" 1 - -
  for rate in ${RATES:-1gbit 10gbit}; do
    shape "$rate"
    for overlap in true false; do
      run_nodes "r$rate$overlap" "$nodes" "$overlap"
      read -r tok frac <<< "$(summarise "r$rate$overlap" "$nodes")"
      gbit=${rate%gbit}
      predicted=$(python3 "$root/bench/scaling_model.py" check --ranks "$nodes" --params "$params" \
        --gbit "$gbit" --overlap "$overlap" \
        --step-s "$step_s")
      printf '%-40s%10.0f%9.2f%11s%17.1f%%\n' "$nodes nodes x 1 rank, $rate, overlap $overlap" \
        "$tok" "$(python3 -c "print($tok / $tok1)")" "$predicted" "$(python3 -c "print(100 * $frac)")"
    done
  done
  exit 0
fi

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
