#!/usr/bin/env bash
# nmt-preprocess through its command line, as scripts use it: Multi30k splits in, shards out,
# read back with h5py; then bad input: non-zero exit, a message naming the files, no output;
# SIGINT/SIGTERM mid-run: exit 130/143, no OUT.tmp-PID left; --overwrite onto a directory that is
# not a preprocessing output: refused, untouched; onto a previous output: replaced; leftovers of a
# dead run: removed at the next run.
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

# A signal mid-run. The run is caught mid-way without depending on timing: once its temporary
# directory exists it is frozen (SIGSTOP) and checked to be still unpublished, then signalled and
# resumed. Ten copies of Multi30k train (290,000 pairs) take seconds, far more than the polling.
train10=()
for _ in $(seq 1 10); do train10+=(--train "$data/train.en.gz" "$data/train.de.gz"); done
for sig in INT TERM; do
  out="$work/sig$sig"
  "$tool" --out "$out" --vocab-size 2000 --threads 1 "${train10[@]}" > /dev/null 2> "$work/sig.log" &
  pid=$!
  for _ in $(seq 1 600); do [[ -d "$out.tmp-$pid" ]] && break; sleep 0.05; done
  kill -STOP "$pid"
  if [[ ! -d "$out.tmp-$pid" || -e "$out" ]]; then
    kill -CONT "$pid"; wait "$pid" || true
    echo "the run was not caught mid-way (no $out.tmp-$pid while frozen)"; cat "$work/sig.log"; exit 1
  fi
  kill "-$sig" "$pid"
  kill -CONT "$pid"
  rc=0; wait "$pid" || rc=$?
  want=$([[ $sig == INT ]] && echo 130 || echo 143)
  [[ $rc -eq $want ]] || { echo "SIG$sig: exit $rc, expected $want"; cat "$work/sig.log"; exit 1; }
  grep -q "stopped by SIG$sig: temporary output removed" "$work/sig.log" \
    || { echo "SIG$sig: no stop line"; cat "$work/sig.log"; exit 1; }
  if compgen -G "$work/*.tmp-*" > /dev/null || [[ -e "$out" ]]; then
    echo "SIG$sig left output behind:"; ls "$work"; exit 1
  fi
done

# --overwrite onto a directory that is not a preprocessing output: refused, every file kept.
mkdir "$work/mine"
echo "precious" > "$work/mine/notes.txt"
if "$tool" --out "$work/mine" --overwrite --spm-model "$work/m30k/spm.model" \
     --test "$work/c.tsv" 2> "$work/err3.txt"; then
  echo "--overwrite replaced a directory without a manifest"; exit 1
fi
grep -q "$work/mine: --overwrite refused: it holds no manifest.json" "$work/err3.txt" \
  || { echo "unclear refusal:"; cat "$work/err3.txt"; exit 1; }
[[ $(cat "$work/mine/notes.txt") == precious && $(ls "$work/mine") == notes.txt ]] \
  || { echo "--overwrite touched $work/mine"; ls -la "$work/mine"; exit 1; }
# A previous output with a stranger's file in it: refused too, naming the file.
cp "$work/mine/notes.txt" "$work/tsv/"
if "$tool" --out "$work/tsv" --overwrite --spm-model "$work/m30k/spm.model" \
     --test "$work/c.tsv" 2> "$work/err4.txt"; then
  echo "--overwrite replaced an output holding a foreign file"; exit 1
fi
grep -q "notes.txt" "$work/err4.txt" || { echo "refusal does not name the file"; cat "$work/err4.txt"; exit 1; }
rm "$work/tsv/notes.txt"

# Onto a previous output: replaced (one shard of 50 pairs becomes 50 shards of one), and leftovers
# of a dead run (a PID no process has) are removed on the way.
mkdir "$work/tsv.tmp-999999991"
: > "$work/tsv.tmp-999999991/test.clean.txt"
"$tool" --out "$work/tsv" --overwrite --shard-size 1 --spm-model "$work/m30k/spm.model" \
  --test "$work/c.tsv" --tsv-columns 1,0 > /dev/null 2> "$work/err5.txt"
[[ $(ls "$work/tsv" | grep -c '^test-.*\.h5$') -eq 50 ]] || { echo "not replaced"; ls "$work/tsv"; exit 1; }
grep -q "tsv.tmp-999999991: removed the temporary output of an earlier run" "$work/err5.txt" \
  || { echo "stale temporary not reported"; cat "$work/err5.txt"; exit 1; }
if compgen -G "$work/tsv.*" > /dev/null; then echo "left behind:"; ls "$work"; exit 1; fi
echo "preprocess CLI: all checks passed"
