#!/usr/bin/env bash
# The quickstart, shrunk: the same jobs/quickstart.sh on a few hundred Multi30k pairs with a tiny
# model, asserting every stage's output. The test split is taken from the training pairs, so a
# working pipeline memorises it and scores far above what a broken one could reach.
# Usage: quickstart_e2e_test.sh BUILD_DIR PYTHON DATA_DIR
# NMT_RANKS in the environment (as the quickstart reads it): train on that many MPI ranks.
set -euo pipefail
build=$1 python=$2 data=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
[[ -f "$data/train.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
tracker_pids=()
cleanup() {
  for pid in "${tracker_pids[@]+"${tracker_pids[@]}"}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
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
  --set checkpoint.every_steps=10 --set train.threads=2 --set decode.average_last=3 \
  --set decode.beam=3 --set decode.alpha=1.5" \
  "$root/jobs/quickstart.sh" > "$work/out.txt" 2>&1 || { tail -40 "$work/out.txt"; exit 1; }
tail -20 "$work/out.txt"

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
if ((${NMT_RANKS:-1} > 1)); then
  grep -q "trained 300 steps.* ${NMT_RANKS} rank(s)" "$work/out.txt" || fail "not trained on $NMT_RANKS ranks"
fi
# The config's decode section chose the averaging, the beam and the length penalty.
grep -q 'averaged.h5 (average of 3 checkpoints)' "$work/out.txt" || fail "not decode.average_last"
grep -q 'nmt-translate.*beam 3, alpha 1.5' "$work/out.txt" || fail "not decode.beam and alpha"
# Translation: one line per input line.
[[ $(wc -l < "$run/test.hyp.de") -eq 60 ]] || fail "hypotheses: $(wc -l < "$run/test.hyp.de") lines"
# Scores: BLEU far above a broken pipeline's (memorised test lines).
bleu=$("$python" -c "import json; print([m['score'] for m in json.load(open('$run/scores.json')) if m['name'] == 'BLEU'][0])")
"$python" -c "import sys; sys.exit(0 if $bleu >= 20 else 1)" || fail "BLEU $bleu below the floor of 20"
# Tracker: the quickstart's daemon is still running after it ended, and the queries its summary
# prints work as printed; stopped, it starts again with the printed command on the same database
# and the same URL.
summary=$(sed -n '/quickstart summary/,$p' "$work/out.txt")
pid=$(sed -n 's/.*nmt-trackerd pid \([0-9]*\), still running.*/\1/p' <<< "$summary")
[[ -n "$pid" ]] || fail "the summary names no running tracker"
tracker_pids+=("$pid")
kill -0 "$pid" || fail "nmt-trackerd $pid is not running after the quickstart ended"
url=$(sed -n 's/^  tracker: *\(http:[^ ]*\) .*/\1/p' <<< "$summary")
# The query lines: from "query:" to the closing rule, without their labels.
mapfile -t queries < <(sed -n '/^  query:/,/^====/p' <<< "$summary" | grep -v '^====' |
  sed 's/^  query: *//; s/^ *//')
((${#queries[@]} >= 2)) || fail "the summary prints no queries"
run_queries() {
  (
    for line in "${queries[@]}"; do
      eval "$line" > "$work/query.out" 2>&1 || { cat "$work/query.out"; exit 1; }
      if [[ "$line" == *" show "* ]]; then grep -q quickstart "$work/query.out" || exit 1; fi
      if [[ "$line" == *" metrics "* ]]; then (($(wc -l < "$work/query.out") > 2)) || exit 1; fi
    done
  )
}
run_queries || fail "a printed query failed against the running tracker"
"$build/apps/nmt-tracker" --url "$url" runs --experiment quickstart --json > "$work/runs.json"
run_id=$("$python" -c "import json; print(json.load(open('$work/runs.json'))['runs'][0]['run_id'])")
"$build/apps/nmt-tracker" --url "$url" show "$run_id" --json > "$work/show.json"
kill "$pid"
# Stopped once it no longer answers (not kill -0: an exited orphan may linger as a zombie). The
# waits for the daemon are bounded at 120 s: a loaded machine stops and starts it slowly.
answers() { "$build/apps/nmt-tracker" --url "$url" runs > /dev/null 2>&1; }
deadline=$((SECONDS + 120))
while answers && ((SECONDS < deadline)); do sleep 0.1; done
start=$(sed -n 's/^  start again: *\(.*&\) .*/\1/p' <<< "$summary")
[[ -n "$start" ]] || fail "the summary says not how to start the tracker again"
eval "$start"
tracker_pids+=("$!")
deadline=$((SECONDS + 120))
until answers || ((SECONDS >= deadline)); do sleep 0.1; done
run_queries || fail "a printed query failed against the tracker started again as printed"
"$python" - "$work/show.json" "$bleu" <<'PY' || fail "tracker records"
import json, sys
run = json.load(open(sys.argv[1]))
assert run["status"] == "finished", run["status"]
evals = [e for e in run["evals"] if e["split"] == "test"]
assert evals and abs(evals[-1]["bleu"] - float(sys.argv[2])) < 1e-6, evals
assert evals[-1]["signature"].startswith("nrefs:1|case:mixed"), evals[-1]
assert "train/loss" in run["metric_keys"], run["metric_keys"]
analyses = [a for a in run["artifacts"] if a["kind"] == "analysis"]
assert analyses and analyses[-1]["path"].endswith("analysis.md"), run["artifacts"]
averaged = [a for a in run["artifacts"] if a["kind"] == "averaged"]
assert [a["averaged_from"] for a in averaged] == [3], run["artifacts"]
assert averaged[0]["path"].endswith("/averaged.h5"), averaged
assert any(a["kind"] == "checkpoint" for a in run["artifacts"]), run["artifacts"]
PY
"$python" -c "import json, sys; a = json.load(open(sys.argv[1])); assert a['format'] == 'nmt-analysis', a.keys()" \
  "$run/analysis/analysis.json" || fail "the quickstart's error analysis"
# jobs/decode_grid.sh on the run: every point scored on val, the best chosen, a too-large K skipped.
NMT_BUILD_DIR=$build "$root/jobs/decode_grid.sh" "$run/train" --last "2 3 99" --beam "1 2" \
  --alpha "0.6 1.0" > "$work/grid.txt" 2>&1 || { cat "$work/grid.txt"; fail "decode_grid.sh"; }
grep -q 'average of 99: skipped' "$work/grid.txt" || fail "decode_grid.sh did not skip K=99"
"$python" - "$run/train/decode-grid/results.tsv" "$work/grid.txt" <<'PY' || fail "decode grid"
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])][1:]
# Stage 1: K 2 and 3 at the config's beam 3, alpha 1.5; stage 2: beam {1, 2} x alpha {0.6, 1.0}.
assert [(r[0], r[1], r[2]) for r in rows[:2]] == [("2", "3", "1.5"), ("3", "3", "1.5")], rows
assert len(rows) == 6 and {(r[1], r[2]) for r in rows[2:]} == {
    ("1", "0.6"), ("1", "1.0"), ("2", "0.6"), ("2", "1.0")}, rows
out = open(sys.argv[2]).read().splitlines()
chosen = out[out.index("decode:") + 1:]
pick = {line.split(":")[0].strip(): line.split(":")[1].strip() for line in chosen[:3]}
# The rule: a point replaces the choice so far only when it gains at least --min-gain (0.2).
best, winner = -1.0, None
for r in rows:
    if best < 0 or float(r[3]) >= best + 0.2:
        best, winner = float(r[3]), r[:3]
assert (pick["average_last"], pick["beam"], pick["alpha"]) == tuple(winner), (pick, winner)
PY
echo "quickstart end to end: BLEU $bleu, all stages checked"
