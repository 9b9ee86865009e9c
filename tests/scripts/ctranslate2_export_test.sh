#!/usr/bin/env bash
# nmt-export --format ctranslate2, loaded by the real CTranslate2 (pip package): three tiny models
# that cover what a config can be (post-norm with all embeddings shared, sinusoidal positions;
# pre-norm with no sharing, learned positions and heads x d_k != d_model; post-norm with decoder
# sharing and four heads), each exported and checked by ctranslate2_export_check.py: CTranslate2's
# teacher-forced log-probabilities of 40 reference translations equal the checkpoint's (printed
# by forced_scores), and its greedy translations of 40 sentences equal nmt-translate --greedy's.
# Then the refusals: an existing non-empty OUT_DIR (replaced with --force), a model whose d_k and
# d_v differ (naming them), neither leaving a temporary directory behind.
# CTranslate2 and sentencepiece come from PyPI into a virtual environment made once per build
# folder (VENV_DIR); exit 77 (skipped) only when pip cannot reach the package index, or without
# Multi30k.
# Usage: ctranslate2_export_test.sh BUILD_DIR PYTHON VENV_DIR DATA_DIR FORCED_SCORES
set -euo pipefail
build=$(realpath "$1") python=$2 venv=$(realpath -m "$3") data=$4 forced_scores=$(realpath "$5")
bin=$build/apps
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/scripts/tiny_shards.sh
source "$here/tiny_shards.sh"
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

# shellcheck source=tests/scripts/pip_venv.sh
source "$here/pip_venv.sh"
pip_venv_install "$python" "$venv" ctranslate2 "ctranslate2, sentencepiece" 'ctranslate2>=4,<5' sentencepiece
cd "$work"
echo "CTranslate2 $("$venv/bin/python" -c 'import ctranslate2; print(ctranslate2.__version__)')"

make_tiny_shards "$bin/nmt-preprocess" "$data" shards
# Sentences the models did not train on (test_2016_flickr), else the first of val.
test_en=$data/test_2016_flickr.en.gz test_de=$data/test_2016_flickr.de.gz
[[ -f "$test_en" ]] || test_en=$data/val.en.gz test_de=$data/val.de.gz
(zcat "$test_en" || true) | head -40 > src.txt
(zcat "$test_de" || true) | head -40 > ref.txt

# check_variant NAME NMT_TRAIN_SETTINGS...: trains NAME for 2 updates, exports and compares.
check_variant() {
  local name=$1
  shift
  train_tiny_model "$bin/nmt-train" shards "run-$name" --set model.layers=2 "$@"
  local ckpt
  ckpt=run-$name/$(checkpoint_of 2)
  "$bin/nmt-export" --format ctranslate2 "$ckpt" "ct2-$name" --log-level warn ||
    fail "$name: nmt-export failed"
  for f in model.bin config.json shared_vocabulary.json spm.model; do
    [[ -s "ct2-$name/$f" ]] || fail "$name: no $f in the export"
  done
  "$forced_scores" "$ckpt" src.txt ref.txt > "scores-$name.tsv" ||
    fail "$name: forced_scores failed"
  "$bin/nmt-translate" --checkpoint "$ckpt" --greedy --precision fp32 --threads 1 \
    --input src.txt --output "greedy-$name.txt" --log-level warn ||
    fail "$name: nmt-translate failed"
  echo "$name:"
  "$venv/bin/python" "$here/ctranslate2_export_check.py" "ct2-$name" "scores-$name.tsv" src.txt \
    "greedy-$name.txt" 64 || fail "$name: CTranslate2 disagrees with the checkpoint"
}
check_variant post-all
check_variant pre-none --set model.norm=pre --set model.embedding_sharing=none \
  --set model.positions=learned --set model.heads=4 --set model.d_k=4 --set model.d_v=4
check_variant post-decoder --set model.embedding_sharing=decoder --set model.heads=4 \
  --set model.d_k=8 --set model.d_v=8

# An existing non-empty directory is refused, and kept; --force replaces it.
ckpt=run-post-all/$(checkpoint_of 2)
mkdir taken && echo keep > taken/file
"$bin/nmt-export" --format ctranslate2 "$ckpt" taken > out.txt 2>&1 &&
  fail "export into a non-empty directory succeeded"
grep -q "not empty: pass --force" out.txt || fail "no word of --force: $(cat out.txt)"
[[ "$(cat taken/file)" == keep ]] || fail "the refused directory was changed"
"$bin/nmt-export" --format ctranslate2 "$ckpt" taken --force --log-level warn ||
  fail "--force did not replace the directory"
[[ -f taken/model.bin && ! -e taken/file ]] || fail "--force left the old contents: $(ls taken)"
cmp -s taken/model.bin ct2-post-all/model.bin || fail "the same checkpoint exported differently"

# What CTranslate2 cannot represent is refused by name, before anything is written.
train_tiny_model "$bin/nmt-train" shards run-dv --set model.d_v=8
"$bin/nmt-export" --format ctranslate2 "run-dv/$(checkpoint_of 2)" ct2-dv > out.txt 2>&1 &&
  fail "a model with d_k != d_v was exported"
grep -q "model.d_k = 16 and model.d_v = 8 differ" out.txt || fail "unclear refusal: $(cat out.txt)"
[[ ! -e ct2-dv ]] || fail "a refused export left ct2-dv"
leftovers=$(compgen -G "*.tmp-*" || true)
[[ -z "$leftovers" ]] || fail "temporary directories left behind: $leftovers"
echo "PASSED"
