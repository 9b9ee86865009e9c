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
