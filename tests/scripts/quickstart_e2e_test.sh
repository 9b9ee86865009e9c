#!/usr/bin/env bash
# The quickstart, shrunk: the same jobs/quickstart.sh on a few hundred Multi30k pairs with a tiny
# model, asserting every stage's output. The test split is taken from the training pairs, so a
# working pipeline memorises it and scores far above what a broken one could reach.
# Usage: quickstart_e2e_test.sh BUILD_DIR PYTHON DATA_DIR
set -euo pipefail
build=$1 python=$2 data=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
[[ -f "$data/train.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/data"
for lang in en de; do
  (zcat "$data/train.$lang.gz" || true) | head -300 | gzip > "$work/data/train.$lang.gz"
  (zcat "$data/val.$lang.gz" || true) | head -50 | gzip > "$work/data/val.$lang.gz"
  (zcat "$data/train.$lang.gz" || true) | head -60 | gzip > "$work/data/test_2016_flickr.$lang.gz"
done

NMT_SKIP_SETUP=1 NMT_BUILD_DIR=$build NMT_DATA_DIR=$work/data NMT_WORK_DIR=$work/runs NMT_VOCAB_SIZE=400 \
NMT_QUICKSTART_SET="--set model.layers=2 --set model.d_model=64 --set model.d_ff=256 --set model.heads=4 \
  --set model.d_k=16 --set model.d_v=16 --set model.dropout=0.0 --set data.max_src_tokens=1200 \
  --set data.max_tgt_tokens=1200 --set train.max_steps=300 --set train.warmup_steps=60 \
  --set train.lr_factor=0.5 --set train.validate_every=100 --set train.log_every=50 \
  --set checkpoint.every_steps=10 --set train.threads=2" \
  "$root/jobs/quickstart.sh" > "$work/out.txt" 2>&1 || { tail -40 "$work/out.txt"; exit 1; }
tail -16 "$work/out.txt"

shards=$work/runs/data/multi30k-bpe400
run=$(ls -d "$work"/runs/quickstart-* | head -1)
fail() { echo "FAILED: $*"; exit 1; }
# Preprocessing: manifest with the three splits, shards on disk.
"$python" - "$shards/manifest.json" <<'PY' || fail "manifest"
import json, sys
m = json.load(open(sys.argv[1]))
assert set(m["splits"]) == {"train", "valid", "test"}, m["splits"].keys()
assert m["splits"]["train"]["pairs"] > 250 and m["splits"]["test"]["pairs"] == 60
PY
ls "$shards"/train-00000.h5 "$shards"/spm.model > /dev/null || fail "shards"
# Training: the last 5 step checkpoints kept, and the averaged checkpoint.
[[ $(ls "$run/train/checkpoints" | grep -c '^step-') -eq 5 ]] || fail "checkpoints"
[[ -s "$run/averaged.h5" ]] || fail "averaged checkpoint"
# Translation: one line per input line.
[[ $(wc -l < "$run/test.hyp.de") -eq 60 ]] || fail "hypotheses: $(wc -l < "$run/test.hyp.de") lines"
# Scores: BLEU far above a broken pipeline's (memorised test lines).
bleu=$("$python" -c "import json; print([m['score'] for m in json.load(open('$run/scores.json')) if m['name'] == 'BLEU'][0])")
"$python" -c "import sys; sys.exit(0 if $bleu >= 20 else 1)" || fail "BLEU $bleu below the floor of 20"
# Tracker: the run and its eval, in the database the quickstart created.
port_file=$work/port
"$build/apps/nmt-trackerd" --db "$work/runs/tracker.db" --port 0 --port-file "$port_file" --log-level warn &
pid=$!
for _ in $(seq 1 300); do [[ -s "$port_file" ]] && break; sleep 0.1; done
[[ -s "$port_file" ]] || fail "nmt-trackerd wrote no port file within 30 s"
"$build/apps/nmt-tracker" --port-file "$port_file" runs --experiment quickstart --json > "$work/runs.json"
run_id=$("$python" -c "import json; print(json.load(open('$work/runs.json'))['runs'][0]['run_id'])")
"$build/apps/nmt-tracker" --port-file "$port_file" show "$run_id" --json > "$work/show.json"
kill "$pid"; wait "$pid" 2>/dev/null || true
"$python" - "$work/show.json" "$bleu" <<'PY' || fail "tracker records"
import json, sys
run = json.load(open(sys.argv[1]))
assert run["status"] == "finished", run["status"]
evals = [e for e in run["evals"] if e["split"] == "test"]
assert evals and abs(evals[-1]["bleu"] - float(sys.argv[2])) < 1e-6, evals
assert evals[-1]["signature"].startswith("nrefs:1|case:mixed"), evals[-1]
assert "train/loss" in run["metric_keys"], run["metric_keys"]
PY
echo "quickstart end to end: BLEU $bleu, all stages checked"
