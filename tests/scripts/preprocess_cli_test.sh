#!/usr/bin/env bash
# nmt-preprocess through its command line, as scripts use it: Multi30k splits in, shards out,
# read back with h5py; then bad input: non-zero exit, a message naming the files, no output.
# Usage: preprocess_cli_test.sh NMT_PREPROCESS PYTHON DATA_DIR
set -euo pipefail
tool=$1 python=$2 data=$3
here=$(cd "$(dirname "$0")" && pwd)
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$tool" --out "$work/m30k" --vocab-size 1000 --threads 2 \
  --train "$data/val.en.gz" "$data/val.de.gz" \
  --valid "$data/val.en.gz" "$data/val.de.gz" \
  --test "$data/test_2016_flickr.en.gz" "$data/test_2016_flickr.de.gz" | tee "$work/summary.txt"
grep -q "^test .* 1,000 " "$work/summary.txt"
"$python" "$here/check_shards_h5py.py" "$work/m30k"

# A TSV corpus given as one file, columns swapped, with the vocabulary reused.
paste <(zcat "$data/val.de.gz" | head -50) <(zcat "$data/val.en.gz" | head -50) > "$work/c.tsv"
"$tool" --out "$work/tsv" --spm-model "$work/m30k/spm.model" --test "$work/c.tsv" --tsv-columns 1,0
"$python" "$here/check_shards_h5py.py" "$work/tsv"

# Unequal line counts: fails, names both files and counts, leaves nothing behind.
(zcat "$data/val.de.gz" || true) | head -1000 > "$work/short.de"
if "$tool" --out "$work/bad" --vocab-size 100 --train "$data/val.en.gz" "$work/short.de" 2> "$work/err.txt"; then
  echo "expected failure on unequal line counts"; exit 1
fi
grep -q "short.de" "$work/err.txt" && grep -q "1014" "$work/err.txt" && grep -q "1000" "$work/err.txt"
if ls "$work" | grep -q "^bad"; then echo "partial output left behind"; ls "$work"; exit 1; fi

# A TSV row with a missing field: file and line number in the message.
printf 'a\tb\nc\n' > "$work/broken.tsv"
if "$tool" --out "$work/bad2" --spm-model "$work/m30k/spm.model" --test "$work/broken.tsv" 2> "$work/err2.txt"; then
  echo "expected failure on a broken TSV row"; exit 1
fi
grep -q "broken.tsv:2" "$work/err2.txt"
echo "preprocess CLI: all checks passed"
