#!/usr/bin/env bash
# nmt-analyze through its command line: a report from planted errors (its JSON and SVG read back
# by Python's parsers), gzipped input, exit status 1 for input problems naming file and line and 2
# for argument errors, no terminal control characters from the data on stdout, and --record-run
# against a real nmt-trackerd (the report and its chart then show in the run, their text served).
# Usage: analyze_cli_test.sh NMT_ANALYZE NMT_TRACKERD PYTHON
set -euo pipefail
analyze=$(realpath "$1") trackerd=$(realpath "$2") python=$3
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
work=$(mktemp -d)
tracker_pid=
trap 'stop_local_tracker; rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
cd "$work"

# 40 sentences; the system is right except for a planted garbage line (5), a repetition (9), an
# omission (14), a copy of the source (20) and a terminal escape sequence (25).
"$python" - <<'PY'
src, ref, hyp = [], [], []
for i in range(40):
    n = 4 + i % 9
    src.append(" ".join(["the", "small", "dog", "runs", "over", "a", "green", "field", "by",
                         "old", "houses", "now", "today"][:n]) + f" {i} .")
    ref.append(" ".join(["Der", "kleine", "Hund", "rennt", "über", "eine", "grüne", "Wiese",
                         "bei", "alten", "Häusern", "jetzt", "heute"][:n]) + f" {i} .")
    hyp.append(ref[-1])
hyp[4] = "zzz qqq xxx yyy jjj vvv zzq"
hyp[8] = "Der Der Der " + ref[8]
hyp[13] = "Der"
hyp[19] = src[19]
hyp[24] = ref[24] + " \x1b[31mred\x1b[0m |pipe|"
for name, lines in (("src.en", src), ("ref.de", ref), ("hyp.de", hyp)):
    open(name, "w").write("\n".join(lines) + "\n")
other = list(hyp)
other[30] = "vvv"
open("other.de", "w").write("\n".join(other) + "\n")
PY
gzip -k src.en

"$analyze" --src src.en.gz --ref ref.de --hyp hyp.de --hyp other.de --out report --worst 5 \
  > out.txt 2> err.txt || { cat err.txt; fail "nmt-analyze on good input"; }
if grep -q $'\x1b' out.txt err.txt; then fail "an escape character reached the terminal"; fi
grep -q '^hyp.de: BLEU' out.txt || fail "no summary line for hyp.de: $(cat out.txt)"
ls report/analysis.md report/analysis.json report/analysis.svg > /dev/null || fail "report files"
"$python" - <<'PY' || fail "report contents"
import json, xml.etree.ElementTree as ET
j = json.load(open("report/analysis.json"))
assert j["format"] == "nmt-analysis" and j["sentences"] == 40, j["sentences"]
s = j["systems"][0]
assert s["name"] == "hyp.de" and len(s["sentences"]) == 40
assert s["worst"][0]["line"] == 5, s["worst"][0]
assert s["repetitions"] == [9], s["repetitions"]
assert s["omissions"] == [14], s["omissions"]
assert s["copies"] == [20], s["copies"]
assert sum(b["sentences"] for b in j["buckets"]) == 40
assert s["sentences"][0]["chrf"] == 100.0
assert j["differences"][0]["sentences"][0]["line"] == 31, j["differences"][0]["sentences"][0]
root = ET.parse("report/analysis.svg").getroot()
assert root.tag.endswith("svg")
rects = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.find("{http://www.w3.org/2000/svg}title") is not None]
assert rects, "no bars"
md = open("report/analysis.md", encoding="utf-8").read()
assert "\\|pipe\\|" in md and "\x1b" not in md, "Markdown cells not escaped"
PY

expect_error() {  # STATUS PATTERN ARGS...: the status and a message on stderr
  local status=$1 pattern=$2
  shift 2
  local got=0
  "$analyze" "$@" > /dev/null 2> err.txt || got=$?
  [[ $got -eq $status ]] || fail "nmt-analyze $*: exit $got, expected $status ($(cat err.txt))"
  grep -q -- "$pattern" err.txt || fail "nmt-analyze $*: no '$pattern' in: $(cat err.txt)"
}
head -39 hyp.de > short.de
expect_error 1 "source 'src.en' has 40 lines, hypothesis 'short.de' has 39" \
  --src src.en --ref ref.de --hyp short.de --out bad
printf 'fine\n\xff broken\n' > bad_utf8.de
head -40 ref.de | tail -38 >> bad_utf8.de
expect_error 1 "bad_utf8.de.*line 2" --src src.en --ref ref.de --hyp bad_utf8.de --out bad
sed '7s/.*//' ref.de > empty_line.de
expect_error 1 "reference file 'empty_line.de' line 7 is empty" \
  --src src.en --ref empty_line.de --hyp hyp.de --out bad
expect_error 1 "cannot open hypothesis file 'missing.de'" \
  --src src.en --ref ref.de --hyp missing.de --out bad
expect_error 2 "ascending" --src src.en --ref ref.de --hyp hyp.de --out bad --buckets 10,5
expect_error 2 "one name per hypothesis" --src src.en --ref ref.de --hyp hyp.de --name a --name b \
  --out bad
expect_error 2 "only go with --record-run" --src src.en --ref ref.de --hyp hyp.de --out bad \
  --url http://127.0.0.1:1
env -u NMT_TRACKER_URL "$analyze" --src src.en --ref ref.de --hyp hyp.de --out bad \
  --record-run 1 > /dev/null 2> err.txt && fail "--record-run without a daemon address"
[[ -d bad ]] && fail "a failed run wrote a report"

# --record-run against a real daemon: register a run, record, read the run back.
start_local_tracker "$trackerd" tracker.db tracker.port
url=http://127.0.0.1:$(cat tracker.port)
run_id=$("$python" - "$url" <<'PY'
import json, sys, urllib.request
body = json.dumps({"experiment": "analyze-test", "name": "r"}).encode()
req = urllib.request.Request(sys.argv[1] + "/api/runs", body, {"Content-Type": "application/json"})
print(json.load(urllib.request.urlopen(req))["run_id"])
PY
)
"$analyze" --src src.en --ref ref.de --hyp hyp.de --out recorded --record-run "$run_id" \
  --port-file tracker.port > out.txt 2> err.txt || { cat err.txt; fail "--record-run"; }
grep -q "recorded as artifact .* of run $run_id" out.txt || fail "no record line: $(cat out.txt)"
"$python" - "$url" "$run_id" "$work/recorded/analysis.md" "$work/recorded/analysis.svg" <<'PY' || fail "artifact in the run"
import json, sys, urllib.request
base = f"{sys.argv[1]}/api/runs/{sys.argv[2]}"
run = json.load(urllib.request.urlopen(base))
arts = [a for a in run["artifacts"] if a["kind"] == "analysis"]
assert arts and arts[-1]["path"] == sys.argv[3], run["artifacts"]
# The report's text and the chart's are served back byte for byte, scripts forbidden.
charts = [a for a in run["artifacts"] if a["kind"] == "analysis_chart"]
assert charts and charts[-1]["path"] == sys.argv[4], run["artifacts"]
for art, path, ctype in ((arts[-1], sys.argv[3], "text/markdown; charset=utf-8"),
                         (charts[-1], sys.argv[4], "image/svg+xml")):
    assert art["has_content"] is True and "content" not in art, art
    answer = urllib.request.urlopen(f"{base}/artifacts/{art['artifact_id']}/content")
    assert answer.headers["Content-Type"] == ctype, answer.headers
    assert answer.headers["X-Content-Type-Options"] == "nosniff", answer.headers
    assert "sandbox" in answer.headers["Content-Security-Policy"], answer.headers
    assert answer.read() == open(path, "rb").read(), path
PY
expect_error 1 "POST /api/runs/999/artifacts: 404 unknown run 999" --src src.en --ref ref.de --hyp hyp.de \
  --out unknown_run --record-run 999 --port-file tracker.port
echo "nmt-analyze command line: all checks passed"
