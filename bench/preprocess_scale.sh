#!/usr/bin/env bash
# Streaming check of nmt-preprocess at WMT scale: generates N synthetic pairs (default 5 million)
# and preprocesses them with the paper's 37k BPE vocabulary learned on a 1M-sentence sample,
# reporting wall time and peak resident memory (target: under 4 GiB).
#   bench/preprocess_scale.sh [PAIRS] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pairs=${1:-5000000}
threads=${2:-2}
work=${NMT_SCALE_DIR:-/tmp/nmt_scale}
mkdir -p "$work"
if [[ ! -f "$work/corpus-$pairs.en" ]]; then
  echo "generating $pairs pairs in $work"
  /usr/bin/python3 "$root/bench/generate_corpus.py" "$pairs" "$work/corpus-$pairs"
fi
rm -rf "$work/out"
/usr/bin/time -v "${NMT_BUILD_DIR:-$root/build}/apps/nmt-preprocess" --out "$work/out" \
  --vocab-size 37000 --threads "$threads" --train "$work/corpus-$pairs.en" "$work/corpus-$pairs.de" \
  2> >(tee "$work/time.txt" >&2)
grep -E "Maximum resident set size|Elapsed \(wall clock\)" "$work/time.txt"
