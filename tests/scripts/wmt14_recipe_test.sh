#!/usr/bin/env bash
# The WMT14 recipe (jobs/wmt14/) end to end on a miniature WMT tree, through the very scripts a
# GPU cluster runs:
#   make_mini_wmt.py -> a file:// mirror of WMT14's archives (their names, members and formats)
#   get-data.sh en-de from the mirror: sizes and SHA-256 checked, two files trusted on first use;
#     again: everything skipped and re-checked; en-fr into the same folder: shared archives
#     skipped, a partial download resumed; refusals: a corrupted file (SHA-256), a truncated one
#     (size), a changed file whose SHA-256 was recorded at its first download, each named
#   configs/preprocess/wmt14-en-fr.yaml read against the extracted en-fr layout
#   run.sh en-de base with a tiny model on 2 MPI ranks: preprocess (plus a TSV corpus), train,
#     average, decode newstest2014, nmt-bleu, nmt-evaluate, the tracker, the table
# and asserts what could fail: the files, the layout, BLEU above a floor a broken pipeline cannot
# reach (the pair is learnable: 300 updates scored 73 here; the floor is 30), the run and both
# evals in a real nmt-trackerd (through nmt-tracker and the HTTP API), the table beside the
# paper's figures.
# Usage: wmt14_recipe_test.sh BUILD_DIR [PYTHON]
set -euo pipefail
build=$(realpath "$1") python=${2:-python3}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
getdata=$root/jobs/wmt14/get-data.sh
work=$(mktemp -d)
tracker_pid=''
cleanup() {
  [[ -n "$tracker_pid" ]] && kill "$tracker_pid" 2> /dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }
start=$(date +%s)
step() { echo "-- $* ($(($(date +%s) - start)) s)"; }
for tool in nmt-preprocess nmt-train nmt-average nmt-translate nmt-bleu nmt-evaluate nmt-tracker nmt-trackerd; do
  [[ -x "$build/apps/$tool" ]] || fail "$build/apps/$tool is not built"
done

step "the miniature WMT tree"
"$python" "$root/tests/scripts/make_mini_wmt.py" "$work/mini" > /dev/null
mirror=$work/mini/mirror sums=$work/mini/checksums.txt raw=$work/raw
for f in training-parallel-europarl-v7.tgz training-parallel-commoncrawl.tgz training-parallel-nc-v9.tgz \
  training-parallel-un.tgz training-giga-fren.tar dev.tgz test-full.tgz; do
  [[ -s "$mirror/$f" ]] || fail "the generator wrote no $f"
done

step "get-data.sh en-de from file://$mirror"
"$getdata" en-de "$raw" --mirror "file://$mirror" --checksums "$sums" > "$work/get1.txt" 2>&1 ||
  { cat "$work/get1.txt"; fail "get-data.sh en-de"; }
for f in training-parallel-europarl-v7.tgz training-parallel-commoncrawl.tgz training-parallel-nc-v9.tgz; do
  grep -q "$f: downloaded, .*(size and SHA-256 as published)" "$work/get1.txt" || fail "$f not checked"
done
for f in dev.tgz test-full.tgz; do
  grep -q "TRUST ON FIRST USE: $f" "$work/get1.txt" || fail "$f not trusted on first use, loudly"
done
grep -q "test-full.tgz: downloaded, .*MD5 as published" "$work/get1.txt" || fail "test-full.tgz's MD5 not checked"
[[ $(wc -l < "$raw/downloads/trusted-on-first-use.sha256") -eq 2 ]] || fail "not 2 first-use records"
(cd "$raw/downloads" && sha256sum --quiet -c trusted-on-first-use.sha256) || fail "the first-use record is not sha256sum's format"
# The layout configs/preprocess/wmt14-en-de.yaml reads.
for f in training/europarl-v7.de-en.en training/europarl-v7.de-en.de commoncrawl.de-en.en \
  training/news-commentary-v9.de-en.de dev/newstest2013-src.en.sgm dev/newstest2013-ref.de.sgm \
  test-full/newstest2014-deen-src.en.sgm test-full/newstest2014-deen-ref.de.sgm; do
  [[ -s "$raw/$f" ]] || fail "not extracted: $f"
  grep -q "$f" "$root/configs/preprocess/wmt14-en-de.yaml" || fail "wmt14-en-de.yaml does not read $f"
done
[[ ! -e "$raw/training/europarl-v7.fr-en.fr" ]] || fail "en-de extracted en-fr's files"

step "again: nothing downloaded, everything checked"
"$getdata" en-de "$raw" --mirror "$mirror" --checksums "$sums" > "$work/get2.txt" 2>&1 ||
  { cat "$work/get2.txt"; fail "get-data.sh en-de, second run"; }
grep -q "downloading" "$work/get2.txt" && fail "the second run downloaded again"
[[ $(grep -c ": have it (" "$work/get2.txt") -eq 5 ]] || fail "the second run did not re-check all 5 files"
grep -q "dev.tgz: have it (SHA-256 as recorded at its first download" "$work/get2.txt" || fail "dev.tgz not checked against its first-use record"
grep -q "TRUST ON FIRST USE" "$work/get2.txt" && fail "trusted on first use twice"

step "en-fr into the same folder, resuming a partial download"
un=training-parallel-un.tgz
head -c $(($(stat -c %s "$mirror/$un") / 2)) "$mirror/$un" > "$raw/downloads/$un.part"
"$getdata" en-fr "$raw" --mirror "$mirror" --checksums "$sums" > "$work/get3.txt" 2>&1 ||
  { cat "$work/get3.txt"; fail "get-data.sh en-fr"; }
grep -q "$un: resuming at [1-9][0-9]* bytes" "$work/get3.txt" || fail "the partial $un was not resumed"
cmp -s "$mirror/$un" "$raw/downloads/$un" || fail "the resumed $un differs from the mirror's"
grep -q "training-parallel-europarl-v7.tgz: have it" "$work/get3.txt" || fail "the shared archive was downloaded again"
grep -q "training-giga-fren.tar: downloaded" "$work/get3.txt" || fail "giga-fren not downloaded"
for f in training/europarl-v7.fr-en.fr commoncrawl.fr-en.fr un/undoc.2000.fr-en.fr \
  training/news-commentary-v9.fr-en.fr giga-fren.release2.fixed.fr.gz dev/newstest2013-ref.fr.sgm \
  test-full/newstest2014-fren-ref.fr.sgm; do
  [[ -s "$raw/$f" ]] || fail "not extracted: $f"
done
# configs/preprocess/wmt14-en-fr.yaml reads that layout as it is (paths relative to the raw folder).
(cd "$raw" && "$build/apps/nmt-preprocess" --config "$root/configs/preprocess/wmt14-en-fr.yaml" \
  --out "$work/shards-en-fr" --set vocab.size=600 --set vocab.threads=1 --set vocab.sample_sentences=20000 \
  --threads 1 --log-level warn > "$work/pre-fr.txt" 2>&1) || { cat "$work/pre-fr.txt"; fail "wmt14-en-fr.yaml on the en-fr layout"; }
"$python" - "$work/shards-en-fr/manifest.json" <<'PY' || fail "en-fr manifest"
import json, sys
m = json.load(open(sys.argv[1]))
sources = json.dumps(m["splits"]["train"])
for corpus in ("europarl-v7.fr-en", "commoncrawl.fr-en", "undoc.2000.fr-en", "news-commentary-v9.fr-en",
               "giga-fren.release2.fixed"):
    assert corpus in sources, corpus
assert m["splits"]["test"]["pairs"] == 200 and m["splits"]["valid"]["pairs"] == 150, m["splits"]
PY

step "refusals: a corrupted file, a truncated one, a changed first-use file"
cp -r "$mirror" "$work/bad"
nc=training-parallel-nc-v9.tgz
printf 'X' | dd of="$work/bad/$nc" bs=1 seek=1000 conv=notrunc status=none  # same size, other bytes
if "$getdata" en-de "$work/raw-bad" --mirror "$work/bad" --checksums "$sums" > "$work/bad1.txt" 2>&1; then
  fail "a corrupted $nc was accepted"
fi
grep -q "$nc: SHA-256 [0-9a-f]*, expected" "$work/bad1.txt" || fail "the SHA-256 refusal names no file: $(tail -3 "$work/bad1.txt")"
grep -q "$nc: the download .* refused and removed" "$work/bad1.txt" || fail "no refusal line for $nc"
[[ ! -e "$work/raw-bad/downloads/$nc" && ! -e "$work/raw-bad/downloads/$nc.part" ]] || fail "the refused $nc was kept"
cp "$mirror/$nc" "$work/bad/$nc"
eu=training-parallel-europarl-v7.tgz
head -c 5000 "$mirror/$eu" > "$work/bad/$eu"
"$getdata" en-de "$work/raw-bad2" --mirror "$work/bad" --checksums "$sums" > "$work/bad2.txt" 2>&1 &&
  fail "a truncated $eu was accepted"
grep -q "$eu: 5000 bytes, expected [0-9]*" "$work/bad2.txt" || fail "the size refusal names no file: $(tail -3 "$work/bad2.txt")"
cp "$mirror/$eu" "$work/bad/$eu"
printf 'X' | dd of="$work/bad/dev.tgz" bs=1 seek=2000 conv=notrunc status=none
rm "$raw/downloads/dev.tgz"  # its first-use record stays
"$getdata" en-de "$raw" --mirror "$work/bad" --checksums "$sums" > "$work/bad3.txt" 2>&1 &&
  fail "a dev.tgz other than the one first trusted was accepted"
grep -q "dev.tgz: SHA-256 [0-9a-f]* differs from the one recorded at its first download" "$work/bad3.txt" ||
  fail "the first-use refusal names no file: $(tail -3 "$work/bad3.txt")"
"$getdata" en-de "$raw" --mirror "$mirror" --checksums "$sums" > "$work/get4.txt" 2>&1 ||
  { cat "$work/get4.txt"; fail "get-data.sh after the refusals"; }
# The script's own table: every file of both pairs listed, with a URL; unknowns are '-'.
"$getdata" en-fr --list > "$work/list.txt" || fail "--list"
[[ $(grep -c 'https://www.statmt.org/' "$work/list.txt") -eq 7 ]] || fail "--list: not 7 statmt.org files"

step "nmt-trackerd"
"$build/apps/nmt-trackerd" --db "$work/tracker.db" --port 0 --port-file "$work/tracker.port" \
  --log-level warn > "$work/trackerd.out" 2>&1 &
tracker_pid=$!
# Until it writes its port, or ends; 120 s at most (a loaded machine starts it slowly).
for _ in $(seq 1 1200); do
  [[ -s "$work/tracker.port" ]] && break
  kill -0 "$tracker_pid" 2> /dev/null || break
  sleep 0.1
done
[[ -s "$work/tracker.port" ]] || fail "nmt-trackerd did not start: $(cat "$work/trackerd.out")"
url=http://127.0.0.1:$(cat "$work/tracker.port")

step "jobs/wmt14/run.sh en-de base, tiny, 2 MPI ranks"
# The TSV corpus in news-commentary v14's layout (German first): WMT14 ships none.
tsv=$work/mini/extra/news-commentary-v14.de-en.tsv.gz
NMT_BUILD_DIR=$build NMT_WMT14_RAW=$raw NMT_WMT14_SHARDS=$work/shards NMT_WMT14_WORK=$work/runs \
NMT_TRACKER_PORT_FILE=$work/tracker.port NMT_WMT14_RANKS=2 NMT_DEVICE=cpu NMT_WMT14_DECODE_DEVICE=cpu \
NMT_WMT14_THREADS=2 NMT_WMT14_DEV_SENTENCES=40 \
NMT_WMT14_PREPROCESS_SET="vocab.size=800 vocab.threads=2 threads=2" \
NMT_WMT14_PREPROCESS_ARGS="--train $tsv --tsv-columns 1,0" NMT_WMT14_STEPS=300 \
NMT_WMT14_CONFIG_SET="model.layers=1 model.d_model=64 model.d_ff=256 model.heads=4 model.d_k=16 \
model.d_v=16 model.dropout=0 data.max_src_tokens=1000 data.max_tgt_tokens=1000 train.update_batches=2 \
train.warmup_steps=60 train.validate_every=100 train.log_every=50 checkpoint.every_steps=20 \
checkpoint.every_minutes=0 checkpoint.keep_last=6 decode.average_last=4" \
  "$root/jobs/wmt14/run.sh" en-de base > "$work/run.txt" 2>&1 || { tail -40 "$work/run.txt"; fail "run.sh"; }
run=$work/runs/en-de-base
# Preprocessing: the three splits, WMT's quirks counted, the TSV corpus read.
"$python" - "$work/shards/manifest.json" <<'PY' || fail "en-de manifest"
import json, sys
m = json.load(open(sys.argv[1]))
train = m["splits"]["train"]
assert any(s.endswith("news-commentary-v14.de-en.tsv.gz [1,0] (tsv)") for s in train["sources"]), \
    "the TSV corpus was not read"
dropped = train["cleaning"]["dropped"]
for reason in ("empty", "duplicate", "length_ratio"):  # Europarl's, the repeats', Common Crawl's
    assert dropped.get(reason, 0) > 0, (reason, dropped)
assert m["splits"]["test"]["pairs"] == 200 and m["splits"]["valid"]["pairs"] == 150, m["splits"]
PY
# Training on 2 ranks, its checkpoints, the average of decode.average_last of them.
grep -q "trained 300 steps.* 2 rank(s)" "$work/run.txt" || fail "not 300 steps on 2 ranks"
[[ $(find "$run/train/checkpoints" -name 'step-*.h5' | wc -l) -eq 6 ]] || fail "not the 6 last checkpoints"
grep -q "averaged.h5 (average of 4 checkpoints)" "$work/run.txt" || fail "not decode.average_last=4"
# Decoding: newstest2014 as sacreBLEU reads it (entities kept, blanks collapsed), one line each.
[[ $(wc -l < "$run/newstest2014.hyp") -eq 200 && $(wc -l < "$run/newstest2014.ref") -eq 200 ]] ||
  fail "newstest2014: $(wc -l < "$run/newstest2014.hyp") translations of 200"
grep -q '&amp;' "$run/newstest2014.ref" || fail "the reference lost its entities (sacreBLEU keeps them)"
grep -qE '^ | $|  |'$'\t' "$run/newstest2014.ref" "$run/newstest2014.src" && fail "blanks not collapsed"
grep -q "nmt-translate.*beam 4, alpha 0.6" "$work/run.txt" || fail "not the paper's beam 4, alpha 0.6"
# Scores: BLEU a number above the floor; results.json agrees with nmt-bleu.
bleu=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["test"]["bleu"])' "$run/results.json")
"$python" -c 'import sys; b = float(sys.argv[1]); sys.exit(0 if 30 <= b <= 100 else 1)' "$bleu" ||
  fail "BLEU $bleu below the floor of 30"
grep -q "newstest2014: BLEU $bleu, chrF2 .*(nrefs:1|case:mixed|eff:no|tok:13a" "$work/run.txt" || fail "no score line"
# The tracker: the run finished, with its test eval (sacreBLEU's signature) and dev eval.
"$build/apps/nmt-tracker" --port-file "$work/tracker.port" runs --experiment wmt14 --name en-de-base \
  --json > "$work/runs.json" || fail "nmt-tracker runs"
run_id=$("$python" -c 'import json, sys; r = json.load(open(sys.argv[1]))["runs"]; assert len(r) == 1, r; print(r[0]["run_id"])' "$work/runs.json") ||
  fail "the run is not in the tracker once: $(cat "$work/runs.json")"
"$python" - "$url" "$run_id" "$bleu" <<'PY' || fail "the tracker's run and evals"
import json, sys, urllib.request
run = json.load(urllib.request.urlopen(f"{sys.argv[1]}/api/runs/{sys.argv[2]}"))
assert run["status"] == "finished", run["status"]
evals = {e["split"]: e for e in run["evals"]}
assert abs(evals["test"]["bleu"] - float(sys.argv[3])) < 1e-6, evals
assert evals["test"]["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a"), evals["test"]
assert evals["test"]["checkpoint"].endswith("averaged.h5"), evals["test"]
assert evals["valid"]["perplexity"] > 1 and evals["valid"]["bleu"] > 0, evals["valid"]
PY
"$build/apps/nmt-tracker" --port-file "$work/tracker.port" show "$run_id" > "$work/show.txt" ||
  fail "nmt-tracker show"
grep -q "test" "$work/show.txt" || fail "nmt-tracker show lists no test eval"
# The table beside the paper's Table 2.
grep -qF "| Transformer (base model) | **$bleu** (en-de-base, 300 steps) | 27.3 | not run | 38.1 |" "$work/run.txt" ||
  fail "the table: $(grep -A4 '^| model' "$work/run.txt")"
grep -q "| Transformer (big) | not run | 28.4 | not run | 41.8 |" "$work/run.txt" || fail "the table's big row"
# Again: the shards are reused and the table alone prints.
NMT_BUILD_DIR=$build NMT_WMT14_RAW=$raw NMT_WMT14_SHARDS=$work/shards NMT_WMT14_WORK=$work/runs \
  "$root/jobs/wmt14/run.sh" en-de base preprocess table > "$work/run2.txt" 2>&1 ||
  { cat "$work/run2.txt"; fail "run.sh preprocess table"; }
grep -q "reusing $work/shards" "$work/run2.txt" || fail "the shards were not reused"
grep "^== wmt14" "$work/run.txt"; sed -n '/^WMT14 newstest2014/,$p' "$work/run.txt"
echo "wmt14 recipe on the miniature tree: all checks passed in $(($(date +%s) - start)) s (BLEU $bleu)"
