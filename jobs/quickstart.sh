#!/usr/bin/env bash
# The main job: set-up and build when needed, then the pipeline on Multi30k English-German.
# Stages that exist today: machine report, preprocessing (joint BPE vocabulary + HDF5 shards).
# Training, averaging, translation, scoring and tracking join here as their issues land.
#   NMT_DATA_DIR   Multi30k directory (default ../shared/data/multi30k beside the checkout)
#   NMT_WORK_DIR   where data and runs go (default runs/ in the checkout)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=$(realpath -m "${NMT_DATA_DIR:-$root/../shared/data/multi30k}")
work=${NMT_WORK_DIR:-$root/runs}
run_dir=$work/quickstart-$(date +%Y%m%d-%H%M%S)
shards=$work/data/multi30k-bpe8000

stage() { printf '\n== %s\n' "$*"; }
fail() { echo "quickstart: $*" >&2; exit 1; }

stage "1/4 set-up"
"$root/jobs/setup.sh" || fail "set-up failed"

stage "2/4 build"
"$root/jobs/build.sh" || fail "build failed"
bin=${NMT_BUILD_DIR:-$root/build}/apps

stage "3/4 machine report"
for split in train val test_2016_flickr; do
  for lang in en de; do
    [[ -f "$data/$split.$lang.gz" ]] || fail "missing $data/$split.$lang.gz (set NMT_DATA_DIR)"
  done
done
mkdir -p "$run_dir"
"$bin/nmt-sysinfo" --json > "$run_dir/sysinfo.json" || fail "nmt-sysinfo failed"
"$bin/nmt-sysinfo" --matmul-size 0

stage "4/4 preprocess Multi30k (joint BPE, HDF5 shards)"
if [[ -f "$shards/manifest.json" ]]; then
  echo "reusing $shards"
else
  "$bin/nmt-preprocess" --config "$root/configs/preprocess/multi30k.yaml" --out "$shards" \
    --train "$data/train.en.gz" "$data/train.de.gz" \
    --valid "$data/val.en.gz" "$data/val.de.gz" \
    --test "$data/test_2016_flickr.en.gz" "$data/test_2016_flickr.de.gz" \
    || fail "preprocessing failed"
fi

echo
echo "quickstart: shards and vocabulary in $shards (manifest.json lists splits, counts, checksums)"
echo "quickstart: machine report in $run_dir/sysinfo.json"
