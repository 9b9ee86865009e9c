#!/usr/bin/env bash
# nmt-translate on an input line longer than the model's source positions: the line is still
# translated (its first positions) and a warning names the line, its length and the limit. With
# --long-inputs split, long lines are cut into pieces that fit and translated whole: still one
# output line per input line, and the log says which lines were split. And a SentencePiece model
# other than the checkpoint's (same size, another sample) is refused, naming both hashes.
# Usage: translate_truncation_test.sh BUILD_DIR DATA_DIR
set -euo pipefail
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
tiny_translation_test_init "$@"
{
  echo "A man is riding a bike."
  for _ in $(seq 1 200); do printf 'dog '; done
  echo
  echo "Two women walk."
} > "$work/in.txt"
"$bin/nmt-translate" --checkpoint "$work/run/checkpoints/step-00000002.h5" --data "$work/shards" \
  --input "$work/in.txt" --greedy --threads 1 > "$work/out.txt" 2> "$work/err.txt"
[[ $(wc -l < "$work/out.txt") -eq 3 ]] || fail "expected 3 output lines: $(cat "$work/out.txt")"
grep -q 'input line 2: [0-9]* word pieces, more than the model.s 64 source positions hold: only the first 63 are translated' \
  "$work/err.txt" || fail "no truncation warning naming line 2: $(cat "$work/err.txt")"
grep -q 'input line [13]:' "$work/err.txt" && fail "a warning for a line that fits"
grep -q '1 input line(s) truncated' "$work/err.txt" || fail "no summary: $(cat "$work/err.txt")"

# Split mode: two long lines (one of words only, one of sentences) among short ones.
{
  echo "A man is riding a bike."
  for _ in $(seq 1 200); do printf 'dog '; done
  echo
  for _ in $(seq 1 30); do printf 'Two women walk. A dog runs! '; done
  echo
  echo "Two women walk."
} > "$work/in2.txt"
"$bin/nmt-translate" --checkpoint "$work/run/checkpoints/step-00000002.h5" --data "$work/shards" \
  --input "$work/in2.txt" --greedy --threads 1 --long-inputs split > "$work/out2.txt" 2> "$work/err2.txt"
[[ $(wc -l < "$work/out2.txt") -eq $(wc -l < "$work/in2.txt") ]] \
  || fail "split: $(wc -l < "$work/out2.txt") output lines for 4 input lines: $(cat "$work/out2.txt")"
for line in 2 3; do
  grep -q "input line $line: [0-9]* word pieces, more than the model.s 64 source positions hold: translated in [2-9][0-9]* pieces" \
    "$work/err2.txt" || fail "split: line $line not reported as split: $(cat "$work/err2.txt")"
done
grep -q 'input line [14]:' "$work/err2.txt" && fail "split: a line that fits was reported"
grep -q 'only the first' "$work/err2.txt" && fail "split: a line was truncated"
grep -q '2 input line(s) split into pieces' "$work/err2.txt" || fail "split: no summary: $(cat "$work/err2.txt")"
# The choice is checked: a typo is an error naming the choices.
if "$bin/nmt-translate" --checkpoint "$work/run/checkpoints/step-00000002.h5" --data "$work/shards" \
     --input "$work/in2.txt" --long-inputs spilt > /dev/null 2> "$work/err3.txt"; then
  fail "--long-inputs spilt accepted"
fi
grep -q "unknown --long-inputs 'spilt' (expected truncate, split)" "$work/err3.txt" \
  || fail "unclear error: $(cat "$work/err3.txt")"

# Another vocabulary of the same size: refused with both SHA-256 hashes, nothing written.
make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/other" 300
cmp -s "$work/shards/spm.model" "$work/other/spm.model" && fail "the two vocabularies are equal"
rc=0
"$bin/nmt-translate" --checkpoint "$work/run/checkpoints/step-00000002.h5" \
  --spm-model "$work/other/spm.model" --input "$work/in.txt" --output "$work/out4.txt" \
  > /dev/null 2> "$work/err4.txt" || rc=$?
[[ $rc -eq 1 ]] || fail "another vocabulary: exit $rc, expected 1"
ours=$(sha256sum < "$work/shards/spm.model" | cut -d' ' -f1)
theirs=$(sha256sum < "$work/other/spm.model" | cut -d' ' -f1)
grep -q "$ours" "$work/err4.txt" && grep -q "$theirs" "$work/err4.txt" \
  || fail "the error does not name both hashes ($ours, $theirs): $(cat "$work/err4.txt")"
[[ ! -e "$work/out4.txt" ]] || fail "an output was written"
# Its own vocabulary, given the same way, translates into --output.
"$bin/nmt-translate" --checkpoint "$work/run/checkpoints/step-00000002.h5" \
  --spm-model "$work/shards/spm.model" --input "$work/in.txt" --output "$work/out5.txt" \
  --greedy --threads 1 2> /dev/null
[[ $(wc -l < "$work/out5.txt") -eq 3 ]] || fail "--output: $(cat "$work/out5.txt")"
echo ok
