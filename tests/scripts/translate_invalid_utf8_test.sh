#!/usr/bin/env bash
# nmt-translate on input that is not clean UTF-8 text: invalid UTF-8 on some lines, a NUL byte,
# a line of raw binary. Every input line still gives exactly one output line; each ill-formed byte
# becomes U+FFFD before tokenizing (the line translates as the same line with U+FFFD written out),
# control characters such as NUL are removed; the log warns, naming the first lines of each kind,
# and ends with a count and the lines named.
# Usage: translate_invalid_utf8_test.sh BUILD_DIR DATA_DIR
set -euo pipefail
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
tiny_translation_test_init "$@"
translate=("$bin/nmt-translate" --checkpoint "$work/run/checkpoints/step-00000002.h5" --greedy
           --threads 1)

# Line 2: two bytes that start no UTF-8 sequence; line 3: a NUL byte; line 4: a lead byte without
# its continuation and a truncated three-byte sequence; line 6: binary, no newline at its end.
{
  printf 'A man is riding a bike.\nTwo \xff\xfe women walk.\nA dog\x00 runs.\n'
  printf '\xc3( bad \xe2\x82 end\nThe end.\n\x00\x01\x02\xff\x80\x7f\x1b'
} > "$work/in.txt"
"${translate[@]}" --input "$work/in.txt" > "$work/out.txt" 2> "$work/err.txt"
[[ $(wc -l < "$work/out.txt") -eq 6 ]] \
  || fail "expected 6 output lines for 6 input lines: $(cat -A "$work/out.txt")"
for line in 2 4 6; do
  grep -q "input line $line: invalid UTF-8: [0-9]* byte(s) replaced by U+FFFD" "$work/err.txt" \
    || fail "no warning naming line $line: $(cat "$work/err.txt")"
done
grep -q 'input line [135]: invalid UTF-8' "$work/err.txt" && fail "a valid line was named"
grep -q 'input line 2: invalid UTF-8: 2 byte(s)' "$work/err.txt" || fail "line 2: not 2 bytes"
grep -q 'input line 4: invalid UTF-8: 3 byte(s)' "$work/err.txt" || fail "line 4: not 3 bytes"
grep -q '3 input line(s) held invalid UTF-8 (lines 2, 4, 6)' "$work/err.txt" \
  || fail "no summary naming lines 2, 4 and 6: $(cat "$work/err.txt")"
grep -q 'input line 3: control characters (such as NUL) removed' "$work/err.txt" \
  || fail "no warning naming line 3 (NUL): $(cat "$work/err.txt")"
grep -q '2 input line(s) held control characters (lines 3, 6)' "$work/err.txt" \
  || fail "no summary of the control characters: $(cat "$work/err.txt")"

# What was translated: each ill-formed byte as U+FFFD, the NUL removed.
r=$'\xef\xbf\xbd'
{
  printf 'A man is riding a bike.\nTwo %s%s women walk.\nA dog runs.\n' "$r" "$r"
  printf '%s( bad %s%s end\nThe end.\n%s%s\n' "$r" "$r" "$r" "$r" "$r"
} > "$work/repaired.txt"
"${translate[@]}" --input "$work/repaired.txt" > "$work/expected.txt" 2> "$work/err2.txt"
cmp -s "$work/out.txt" "$work/expected.txt" \
  || fail "not translated as the repaired text: $(diff "$work/out.txt" "$work/expected.txt")"
grep -q 'invalid UTF-8\|control characters' "$work/err2.txt" && fail "clean input warned"

# Many bad lines: the first five are named one by one, all are counted.
for i in $(seq 1 12); do printf 'line %d \xff\n' "$i"; done > "$work/many.txt"
"${translate[@]}" --input "$work/many.txt" > "$work/out3.txt" 2> "$work/err3.txt"
[[ $(wc -l < "$work/out3.txt") -eq 12 ]] || fail "many: $(wc -l < "$work/out3.txt") output lines"
[[ $(grep -c 'input line [0-9]*: invalid UTF-8' "$work/err3.txt") -eq 5 ]] \
  || fail "many: not five lines named: $(cat "$work/err3.txt")"
grep -q '12 input line(s) held invalid UTF-8 (lines 1, 2, 3, 4, 5 and 7 more)' "$work/err3.txt" \
  || fail "many: no summary: $(cat "$work/err3.txt")"
echo ok
