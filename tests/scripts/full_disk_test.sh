#!/usr/bin/env bash
# The tools on a full disk, on a real small tmpfs (as root; skipped, 77, where mounting
# is not allowed): nmt-preprocess, nmt-train (a checkpoint that no longer fits), nmt-average and
# nmt-translate --output each exit 1 (never a crash) with an error naming the cause, leave nothing
# half-written under a final or temporary name, and the last good checkpoint still loads.
# A run whose metrics.jsonl can no longer be written stops with a checkpoint (exit 74).
# Usage: full_disk_test.sh BUILD_DIR DATA_DIR [PYTHON]
set -euo pipefail
build=$1 data=$2 python=${3:-python3}
bin=$build/apps
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
small=$work/small
mkdir -p "$small"
cleanup() {
  mountpoint -q "$small" && umount "$small"
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
if ! mount -t tmpfs -o size=2m nmt-full-disk-test "$small" 2> /dev/null; then
  echo "cannot mount a tmpfs here (needs root)"
  exit 77
fi
# Fills what is left of the tmpfs (dd stops at ENOSPC) but KB kilobytes: fill NAME KB.
fill() {
  dd if=/dev/zero of="$small/reserve" bs=1k count="$2" 2> /dev/null
  dd if=/dev/zero of="$small/filler-$1" bs=4k 2> /dev/null || true
  rm "$small/reserve"
}
# expect_full NAME COMMAND...: exit status 1 and "No space left" in its errors.
expect_full() {
  local name=$1 rc=0
  shift
  "$@" > "$work/$name.out" 2> "$work/$name.err" || rc=$?
  ((rc == 1)) || fail "$name: exit $rc on a full disk, expected 1: $(tail -5 "$work/$name.err")"
  grep -q 'No space left' "$work/$name.err" || fail "$name: the error names no cause: $(tail -5 "$work/$name.err")"
}

# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
base=("$bin/nmt-train" --data "$work/shards" --log-level warn "${tiny_model_settings[@]}"
  --set train.validate_every=0 --set checkpoint.every_steps=1 --set train.threads=1)
train=("${base[@]}" --run-dir "$small/run")

# nmt-train: step 1's checkpoint fits, then the disk is full but for 64 KB (run.json and the log
# fit, a checkpoint does not); resuming to step 3 fails at the save of step 2.
"${train[@]}" --set train.max_steps=1 > /dev/null || fail "the first checkpoint did not fit"
good=$small/run/checkpoints/step-00000001.h5
[[ -s "$good" ]] || fail "no first checkpoint"
fill train 64
expect_full train "${train[@]}" --set train.max_steps=3 --resume
grep -q 'step-00000002.h5' "$work/train.err" || fail "train: the error names no file: $(tail -3 "$work/train.err")"
ls "$small/run/checkpoints" | grep -v '^step-00000001.h5$' && fail "train: a partial checkpoint was left"
fill rest 0

# nmt-train whose metrics.jsonl lies on the full disk (a symbolic link into it) and its checkpoints
# elsewhere: the run stops with a checkpoint (exit 74) instead of training on without a record,
# the error names the file and the cause, no line is cut, and once space is back --resume trains
# to the end.
rm -f "$small"/filler-*
metrics_run=$work/metrics-run
mkdir -p "$metrics_run"
ln -s "$small/metrics.jsonl" "$metrics_run/metrics.jsonl"
fill metrics 4
rc=0
"${base[@]}" --run-dir "$metrics_run" --set train.max_steps=400 --set train.log_every=1 \
  --set checkpoint.every_steps=1000 > /dev/null 2> "$work/metrics.err" || rc=$?
((rc == 74)) || fail "metrics: exit $rc when metrics.jsonl cannot be written, expected 74: $(tail -3 "$work/metrics.err")"
grep -q 'metrics.jsonl: cannot append .*No space left' "$work/metrics.err" ||
  fail "metrics: the error names no file or cause: $(tail -3 "$work/metrics.err")"
stopped=$(ls "$metrics_run/checkpoints")
[[ $(wc -l <<< "$stopped") == 1 ]] || fail "metrics: checkpoints $stopped"
"$python" - "$small/metrics.jsonl" "$metrics_run/checkpoints/$stopped" <<'PY' || fail "metrics: see above"
import json, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n"), "a line was cut"
steps = [json.loads(line)["step"] for line in text.splitlines()]
stop = int(sys.argv[2].split("step-")[1].split(".")[0])
assert steps and stop < 400, f"stopped at step {stop}"
assert stop <= max(steps) + 2, f"trained from step {max(steps)} to {stop} without a record"
print(f"metrics recorded to step {max(steps)}, stopped with a checkpoint at step {stop}")
PY
rm -f "$small"/filler-*
"${base[@]}" --run-dir "$metrics_run" --set train.max_steps=400 --set train.log_every=1 \
  --set checkpoint.every_steps=1000 --resume > /dev/null 2> "$work/metrics2.err" ||
  fail "metrics: the resume with space back failed: $(tail -3 "$work/metrics2.err")"
[[ -f "$metrics_run/checkpoints/step-00000400.h5" ]] || fail "metrics: the resume did not finish"
fill rest 0

echo 'A man is riding a bike.' > "$work/in.txt"
"$bin/nmt-translate" --checkpoint "$good" --input "$work/in.txt" --greedy --threads 1 \
  --log-level warn > "$work/translated.txt" || fail "the last good checkpoint does not load"

# nmt-average onto the full disk.
mkdir -p "$work/run2/checkpoints"
cp "$good" "$work/run2/checkpoints/step-00000001.h5"
cp "$good" "$work/run2/checkpoints/step-00000002.h5"
expect_full average "$bin/nmt-average" --run-dir "$work/run2" --last 2 --output "$small/averaged.h5"
ls "$small" | grep -q 'averaged' && fail "average: a file was left: $(ls "$small")"

# nmt-translate --output onto the full disk.
expect_full translate "$bin/nmt-translate" --checkpoint "$good" --input "$work/in.txt" --greedy \
  --threads 1 --output "$small/out.txt"
ls "$small" | grep -q 'out.txt' && fail "translate: a file was left: $(ls "$small")"

# nmt-preprocess onto the full disk: nothing left, neither OUT nor its temporary folder.
expect_full preprocess "$bin/nmt-preprocess" --out "$small/shards" --vocab-size 400 --log-level warn \
  --train "$data/val.en.gz" "$data/val.de.gz" --valid "$data/val.en.gz" "$data/val.de.gz"
ls "$small" | grep -q 'shards' && fail "preprocess: left $(ls "$small")"
echo ok
