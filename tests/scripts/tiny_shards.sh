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
  "$train" --data "$shards" --run-dir "$run" --log-level warn \
    --set model.layers=1 --set model.d_model=32 --set model.d_ff=64 --set model.heads=2 \
    --set model.d_k=16 --set model.d_v=16 --set model.max_positions=64 \
    --set data.max_length=64 --set data.max_src_tokens=400 --set data.max_tgt_tokens=400 \
    --set train.max_steps=2 --set train.validate_every=0 --set train.threads=1 "$@" > /dev/null
}
