# Sourced by the test scripts: shards of Multi30k's val split (1,014 pairs) with a 400-piece
# vocabulary, used as both train and valid: enough for a tiny model to train in seconds. With
# TRAIN_PAIRS, only the first that many pairs are the train split (valid stays all 1,014).
# make_tiny_shards NMT_PREPROCESS DATA_DIR OUT_DIR [TRAIN_PAIRS]
make_tiny_shards() {
  local train=("$2/val.en.gz" "$2/val.de.gz")
  if [[ -n "${4:-}" ]]; then
    mkdir -p "$3.train"
    for lang in en de; do
      (zcat "$2/val.$lang.gz" || true) | head -"$4" | gzip > "$3.train/train.$lang.gz"
    done
    train=("$3.train/train.en.gz" "$3.train/train.de.gz")
  fi
  "$1" --out "$3" --vocab-size 400 --log-level warn \
    --train "${train[@]}" --valid "$2/val.en.gz" "$2/val.de.gz" > /dev/null
}

# A one-layer model of d_model 32 with 64 source positions, trained on tiny shards for a few
# steps: enough to translate (badly) in seconds. Extra arguments go to nmt-train (--set ...).
# train_tiny_model NMT_TRAIN SHARDS RUN_DIR [NMT_TRAIN_ARGS...]
train_tiny_model() {
  local train=$1 shards=$2 run=$3
  shift 3
  "$train" --data "$shards" --run-dir "$run" --log-level warn "${tiny_model_settings[@]}" \
    --set train.max_steps=2 --set train.validate_every=0 --set train.threads=1 "$@" > /dev/null
}

# The tiny model's nmt-train settings (one layer, d_model 32, 64 positions, 400-token batches, fp32:
# the tests compare runs and decodings, and precision auto can resolve differently in two runs on a
# CPU where it times bf16 against fp32), for the tests that run nmt-train themselves.
tiny_model_settings=(
  --set model.layers=1 --set model.d_model=32 --set model.d_ff=64 --set model.heads=2
  --set model.d_k=16 --set model.d_v=16 --set model.max_positions=64 --set data.max_length=64
  --set data.max_src_tokens=400 --set data.max_tgt_tokens=400 --set train.precision=fp32)

# The start of a test of nmt-translate on the tiny model: sets build, data, bin and work (removed
# at exit) and defines fail; skips (77) without Multi30k; makes tiny shards in $work/shards and
# trains the tiny model for 2 steps in $work/run.
# tiny_translation_test_init BUILD_DIR DATA_DIR
tiny_translation_test_init() {
  build=$1 data=$2
  bin=$build/apps
  [[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  fail() { echo "FAIL: $*"; exit 1; }
  make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
  train_tiny_model "$bin/nmt-train" "$work/shards" "$work/run"
}

# The start of a test of the tools against a local nmt-trackerd: sets build (absolute), python,
# data, bin and work, defines fail, skips (77) without Multi30k, and leaves no daemon named by the
# environment; at exit, stops the daemon start_local_tracker started, kills what the test left in
# the background (stopped processes included) and removes work.
# tracked_test_init BUILD_DIR PYTHON DATA_DIR
tracked_test_init() {
  build=$(cd "$1" && pwd) python=$2 data=$3
  bin=$build/apps
  [[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
  work=$(mktemp -d)
  tracker_pid=
  trap tracked_test_cleanup EXIT
  fail() { echo "FAIL: $*"; exit 1; }
  unset NMT_TRACKER_URL NMT_TRACKER_TOKEN_FILE NMT_TRACKER_CA_FILE
}
tracked_test_cleanup() {
  stop_local_tracker
  local -a pids
  read -ra pids <<< "$(jobs -p | tr '\n' ' ')"
  if ((${#pids[@]} > 0)); then
    kill -CONT "${pids[@]}" 2> /dev/null || true
    kill -KILL "${pids[@]}" 2> /dev/null || true
    wait "${pids[@]}" 2> /dev/null || true
  fi
  rm -rf "$work"
}

# The base config of the 3-row micro sweeps: the tiny model with dropout, 8 steps, on the tiny
# shards in $work/shards. write_micro_sweep_base FILE BATCH_TOKENS CHECKPOINT_EVERY
write_micro_sweep_base() {
  cat > "$1" <<YAML
model: {layers: 1, d_model: 32, d_ff: 64, heads: 2, d_k: 16, d_v: 16, dropout: 0.1, vocab_size: 400}
data: {dir: $work/shards, max_src_tokens: $2, max_tgt_tokens: $2}
train: {max_steps: 8, warmup_steps: 4, validate_every: 0, log_every: 4, threads: 1}
checkpoint: {every_steps: $3, keep_last: 3}
YAML
}

# checkpoint_of STEP: step STEP's checkpoint, relative to its run directory.
checkpoint_of() { printf 'checkpoints/step-%08d.h5' "$1"; }

# wait_for_checkpoint RUN_DIR PID TENTHS: returns once RUN_DIR holds a checkpoint, PID has exited,
# or TENTHS tenths of a second have passed.
wait_for_checkpoint() {
  for _ in $(seq 1 "$3"); do
    compgen -G "$1/checkpoints/step-*.h5" > /dev/null && break
    kill -0 "$2" 2> /dev/null || break
    sleep 0.1
  done
}

# wait_while_running PID SECONDS COMMAND...: polls COMMAND every 0.1 s; returns 0 once it succeeds,
# 1 once PID has ended without it or SECONDS have passed. The end of the process is what cuts a
# wait for its work short; SECONDS only stops a hung one, so it can be generous. Call it with `||`.
wait_while_running() {
  local pid=$1 deadline=$((SECONDS + $2))
  shift 2
  until "$@"; do
    if ! kill -0 "$pid" 2> /dev/null; then
      "$@" && return 0  # it may have got there just before it ended
      return 1
    fi
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# stop_local_tracker: for the caller's cleanup, stops and reaps the daemon that
# start_local_tracker started, if any.
stop_local_tracker() {
  if [[ -n "${tracker_pid:-}" ]]; then
    kill "$tracker_pid" 2> /dev/null || true
    wait "$tracker_pid" 2> /dev/null || true
  fi
}

# start_local_tracker NMT_TRACKERD DB PORT_FILE [FLAGS...]: nmt-trackerd on 127.0.0.1 over database
# DB (created when missing), on a free port written to PORT_FILE, with FLAGS; its output in
# PORT_FILE.out. Sets
# tracker_pid (the daemon itself, for the caller's cleanup) and returns once the port file is
# there; fails when the daemon ends first, or hangs for 120 s.
start_local_tracker() {
  "$1" --db "$2" --port 0 --port-file "$3" --log-level warn "${@:4}" > "$3.out" 2>&1 &
  tracker_pid=$!
  wait_while_running "$tracker_pid" 120 test -s "$3" && return 0
  echo "FAIL: nmt-trackerd wrote no port file (it ended, or hung for 120 s): $(cat "$3.out")"
  return 1
}
