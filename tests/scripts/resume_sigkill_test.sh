#!/usr/bin/env bash
# nmt-train killed with SIGKILL mid-run and resumed with --resume ends with parameters
# bit-identical to an uninterrupted run of the same steps (CPU). Compared with h5py.
# Usage: resume_sigkill_test.sh NMT_PREPROCESS NMT_TRAIN PYTHON DATA_DIR
set -euo pipefail
preprocess=$1 train=$2 python=$3 data=$4
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
make_tiny_shards "$preprocess" "$data" "$work/shards"
args=(--data "$work/shards" --log-level warn
  --set model.layers=2 --set model.d_model=64 --set model.d_ff=128 --set model.heads=4
  --set model.d_k=16 --set model.d_v=16 --set model.dropout=0.1
  --set data.max_src_tokens=1200 --set data.max_tgt_tokens=1200
  --set train.max_steps=120 --set train.warmup_steps=20 --set train.validate_every=40
  --set checkpoint.every_steps=10 --set checkpoint.keep_last=20 --set train.threads=1
  --set train.precision=fp32)  # auto may resolve differently in two runs (a timed probe)

start=$SECONDS
"$train" "${args[@]}" --run-dir "$work/straight" > /dev/null
straight=$((SECONDS - start))

"$train" "${args[@]}" --run-dir "$work/killed" > /dev/null &
pid=$!
# The straight run's time (all 120 steps) predicts this one's 30 on this machine, loaded or not:
# the wait's bound is 60 s more than 3 times it.
bound=$((60 + 3 * straight))
wait_while_running "$pid" "$bound" test -f "$work/killed/checkpoints/step-00000030.h5" || true
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
if [[ -f "$work/killed/checkpoints/step-00000120.h5" ]]; then
  echo "the run finished before it could be killed: the test proved nothing"; exit 1
fi
[[ -f "$work/killed/checkpoints/step-00000030.h5" ]] ||
  { echo "FAIL: the run wrote no step-30 checkpoint (ended, or slower than $bound s)"; exit 1; }
last=$(ls "$work/killed/checkpoints" | grep '^step-' | tail -1)
echo "killed after $last"
"$train" "${args[@]}" --run-dir "$work/killed" --resume > /dev/null

"$python" - "$work/straight/checkpoints/step-00000120.h5" "$work/killed/checkpoints/step-00000120.h5" <<'PY'
import sys
import h5py
import numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a["model"].visit(lambda n: names.append(n) if isinstance(a["model"][n], h5py.Dataset) else None)
assert names, "no parameters"
for n in names:
    x, y = a["model"][n][()], b["model"][n][()]
    assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), "differs: " + n
for n in names[:3]:
    assert np.array_equal(a["optimizer"][n]["exp_avg_sq"][()], b["optimizer"][n]["exp_avg_sq"][()])
assert int(a.attrs["step"]) == int(b.attrs["step"]) == 120
print("bit-identical: %d parameter tensors" % len(names))
PY
