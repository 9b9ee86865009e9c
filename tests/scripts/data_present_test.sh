#!/usr/bin/env bash
# Multi30k in the folder the tests read (the configured NMT_DATA_DIR, or $NMT_DATA_DIR now): every
# split the tests and the quickstart use, gzipped and readable. Missing: a skip (77) naming the
# folder, or a failure where the data is required (NMT_REQUIRE_DATA=1, as in CI), so that the data
# tests cannot all skip unseen.
# Usage: data_present_test.sh CONFIGURED_DATA_DIR
set -euo pipefail
data=${NMT_DATA_DIR:-$1}
missing=()
for split in train val test_2016_flickr; do
  for lang in en de; do
    file=$data/$split.$lang.gz
    [[ -r "$file" ]] && gzip -t "$file" 2> /dev/null || missing+=("$file")
  done
done
((${#missing[@]} == 0)) && { echo "Multi30k found in $data"; exit 0; }
echo "Multi30k not found or unreadable: ${missing[*]} (set NMT_DATA_DIR, or put it at" \
  "../shared/data/multi30k beside the checkout)"
[[ "${NMT_REQUIRE_DATA:-0}" == 1 ]] && { echo "FAIL: NMT_REQUIRE_DATA=1: the data tests need it"; exit 1; }
exit 77
