#!/usr/bin/env bash
# nmt-translate as people use it:
#   1. self-contained checkpoints: a trained and an averaged checkpoint, copied to another folder
#      with the data moved away, translate with nothing but --checkpoint (they carry their
#      SentencePiece model); --split reads the checkpoint's own data folder without --data;
#   2. blank lines: an empty or blank input line gives an empty output line, and the other lines
#      translate as they do without them;
#   3. streaming: fed through a FIFO one line at a time, each line's translation is printed before
#      the next line is sent (every wait is bounded, for a condition, never a fixed sleep);
#   4. the decoding strategies from the command line: sampling reproducible by seed, diverse beam
#      n-best lists, the n-gram ban reaching the decoder, conflicting flags refused with exit 2.
# Usage: translate_stream_test.sh BUILD_DIR DATA_DIR
set -euo pipefail
build=$1 data=$2
bin=$build/apps
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
translator_pid=
cleanup() {
  [[ -n "$translator_pid" ]] && kill "$translator_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
train_tiny_model "$bin/nmt-train" "$work/shards" "$work/run" --set checkpoint.every_steps=1
"$bin/nmt-average" --run-dir "$work/run" --last 2 --output "$work/run/averaged.h5" --log-level warn
translate=("$bin/nmt-translate" --greedy --threads 1 --log-level warn)
printf 'A man is riding a bike.\nTwo women walk.\nA dog runs in the park.\n' > "$work/in.txt"
"${translate[@]}" --checkpoint "$work/run/checkpoints/step-00000002.h5" --input "$work/in.txt" \
  > "$work/expected.txt"

# 1. Elsewhere, without the data folder: the checkpoint's own SentencePiece model.
mkdir -p "$work/elsewhere"
cp "$work/run/checkpoints/step-00000002.h5" "$work/run/averaged.h5" "$work/elsewhere/"
mv "$work/shards" "$work/shards.moved"
for checkpoint in step-00000002.h5 averaged.h5; do
  (cd "$work/elsewhere" && "${translate[@]}" --checkpoint "$checkpoint" --input ../in.txt) \
    > "$work/elsewhere.out" 2> "$work/elsewhere.err" \
    || fail "$checkpoint without its data folder: $(cat "$work/elsewhere.err")"
  [[ $(wc -l < "$work/elsewhere.out") -eq 3 ]] || fail "$checkpoint: $(cat "$work/elsewhere.out")"
done
cmp -s <(cd "$work/elsewhere" && "${translate[@]}" --checkpoint step-00000002.h5 --input ../in.txt) \
  "$work/expected.txt" || fail "the embedded vocabulary translates differently"
mv "$work/shards.moved" "$work/shards"
# --split without --data: the checkpoint's data.dir (its valid split has 1,014 pairs).
"${translate[@]}" --checkpoint "$work/run/checkpoints/step-00000002.h5" --split valid \
  --max-len-offset 5 > "$work/split.out" || fail "--split without --data"
[[ $(wc -l < "$work/split.out") -eq 1014 ]] || fail "--split valid: $(wc -l < "$work/split.out") lines"

# 2. Blank lines in, empty lines out; the others unchanged.
printf 'A man is riding a bike.\n\nTwo women walk.\n   \t \nA dog runs in the park.\n' > "$work/blank.txt"
"${translate[@]}" --checkpoint "$work/run/checkpoints/step-00000002.h5" --input "$work/blank.txt" \
  > "$work/blank.out"
[[ $(wc -l < "$work/blank.out") -eq 5 ]] || fail "blank lines: $(wc -l < "$work/blank.out") lines out"
[[ -z "$(sed -n 2p "$work/blank.out")" && -z "$(sed -n 4p "$work/blank.out")" ]] \
  || fail "a blank line was translated: $(sed -n '2p;4p' "$work/blank.out")"
cmp -s <(sed -n '1p;3p;5p' "$work/blank.out") "$work/expected.txt" \
  || fail "blank lines changed the other translations"

# 3. Streaming: one line in, its translation out, before the next line is written.
mkfifo "$work/fifo"
"${translate[@]}" --checkpoint "$work/run/checkpoints/step-00000002.h5" < "$work/fifo" \
  > "$work/stream.out" 2> "$work/stream.err" &
translator_pid=$!
exec 3> "$work/fifo"
wait_for_lines() {  # N: until the output has N lines, at most 120 s
  for _ in $(seq 1 1200); do
    (($(wc -l < "$work/stream.out") >= $1)) && return 0
    kill -0 "$translator_pid" 2>/dev/null || fail "nmt-translate exited: $(cat "$work/stream.err")"
    sleep 0.1
  done
  fail "line $1 was not translated before the next one came (output: $(cat "$work/stream.out"))"
}
n=0
while IFS= read -r line; do
  printf '%s\n' "$line" >&3
  n=$((n + 1))
  wait_for_lines "$n"
done < "$work/in.txt"
exec 3>&-
wait "$translator_pid" || fail "nmt-translate failed at the end of the stream"
translator_pid=
"${translate[@]}" --checkpoint "$work/run/checkpoints/step-00000002.h5" --input "$work/in.txt" \
  --batch-window 1 > "$work/one-by-one.txt"
cmp -s "$work/stream.out" "$work/one-by-one.txt" || fail "streamed translations differ from the lines translated one by one"

# 4. Strategies (docs/decoding.md).
ckpt=$work/run/checkpoints/step-00000002.h5
sample=("$bin/nmt-translate" --checkpoint "$ckpt" --input "$work/in.txt" --threads 1 --log-level warn
  --strategy sample --top-k 50 --temperature 1.5)
"${sample[@]}" --seed 7 > "$work/sample-a.txt"
"${sample[@]}" --seed 7 > "$work/sample-b.txt"
"${sample[@]}" --seed 8 > "$work/sample-c.txt"
cmp -s "$work/sample-a.txt" "$work/sample-b.txt" || fail "the same seed sampled differently"
# A line's samples do not depend on its batch: one line a window samples as the whole file does.
"${sample[@]}" --seed 7 --batch-window 1 > "$work/sample-d.txt"
cmp -s "$work/sample-a.txt" "$work/sample-d.txt" || fail "sampling depends on the batch window"
cmp -s "$work/sample-a.txt" "$work/sample-c.txt" && fail "two seeds sampled the same 3 lines"
"$bin/nmt-translate" --checkpoint "$ckpt" --input "$work/in.txt" --threads 1 --log-level warn \
  --strategy diverse-beam --beam 4 --groups 2 --nbest 4 > "$work/diverse.txt"
[[ $(wc -l < "$work/diverse.txt") -eq 12 ]] || fail "diverse beam: $(wc -l < "$work/diverse.txt") n-best lines for 3 x 4"
[[ $(grep -c '^1 ||| ' "$work/diverse.txt") -eq 4 ]] || fail "diverse beam: not 4 hypotheses of line 1"
"${translate[@]}" --checkpoint "$ckpt" --input "$work/in.txt" --no-repeat-ngram-size 2 > "$work/norepeat.txt"
# (That no piece bigram repeats is decode_strategies_test's; here: the flag reaches the decoder.)
cmp -s "$work/norepeat.txt" "$work/expected.txt" && fail "--no-repeat-ngram-size 2 changed nothing on a model that repeats"
rc=0
"$bin/nmt-translate" --checkpoint "$ckpt" --input "$work/in.txt" --greedy --strategy sample \
  > /dev/null 2>&1 || rc=$?
((rc == 2)) || fail "--greedy --strategy sample: exit $rc, expected 2"
rc=0
"$bin/nmt-translate" --checkpoint "$ckpt" --input "$work/in.txt" --strategy diverse-beam --beam 4 \
  --groups 3 > /dev/null 2> "$work/groups.err" || rc=$?
((rc == 2)) || fail "--groups 3 with --beam 4: exit $rc, expected 2"
grep -q 'groups' "$work/groups.err" || fail "the error names no field: $(cat "$work/groups.err")"
echo ok
