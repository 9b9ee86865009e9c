# Sourced by the test scripts: shards of Multi30k's val split (1,014 pairs) with a 400-piece
# vocabulary, used as both train and valid: enough for a tiny model to train in seconds.
# make_tiny_shards NMT_PREPROCESS DATA_DIR OUT_DIR
make_tiny_shards() {
  "$1" --out "$3" --vocab-size 400 --log-level warn \
    --train "$2/val.en.gz" "$2/val.de.gz" --valid "$2/val.en.gz" "$2/val.de.gz" > /dev/null
}
