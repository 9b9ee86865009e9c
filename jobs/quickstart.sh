#!/usr/bin/env bash
# The main job. Sets up and builds what is needed, then runs the pipeline on Multi30k.
# Today the pipeline's first stage exists: it reports the machine the run would use (libraries,
# BLAS backend, measured matrix-multiply throughput). Preprocessing, training, averaging,
# translation, scoring and tracking join here as their issues land.
#   NMT_DATA_DIR   Multi30k directory (default ../shared/data/multi30k beside the checkout)
#   NMT_OUT_DIR    where outputs go (default runs/quickstart-<timestamp>)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=${NMT_DATA_DIR:-$root/../shared/data/multi30k}
out=${NMT_OUT_DIR:-$root/runs/quickstart-$(date +%Y%m%d-%H%M%S)}

stage() { printf '\n== %s\n' "$*"; }

stage "1/3 set-up"
"$root/jobs/setup.sh"
stage "2/3 build"
"$root/jobs/build.sh"
bin=${NMT_BUILD_DIR:-$root/build}/apps

stage "3/3 machine report"
for split in train val test_2016_flickr; do
  for lang in en de; do
    [[ -f "$data/$split.$lang.gz" ]] || { echo "quickstart: missing $data/$split.$lang.gz (set NMT_DATA_DIR)" >&2; exit 1; }
  done
done
mkdir -p "$out"
"$bin/nmt-sysinfo" --json > "$out/sysinfo.json"
"$bin/nmt-sysinfo" --matmul-size 0
echo
echo "quickstart: Multi30k found at $data ($(zcat "$data/train.en.gz" | wc -l) training pairs)"
echo "quickstart: machine report written to $out/sysinfo.json"
